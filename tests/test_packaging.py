"""One import name: an installed copy holds `specialist_handover` and nothing else of ours."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def test_pip_install_target_holds_only_specialist_handover(tmp_path):
    target = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    packages = sorted(
        p.name for p in target.iterdir() if not p.name.endswith(".dist-info") and p.name != "bin"
    )
    assert packages == ["specialist_handover"]
    for clash in ("graph", "nodes", "state", "specialists", "tests", "bench", "examples"):
        assert not (target / clash).exists()
        assert not (target / f"{clash}.py").exists()
    installed = target / "specialist_handover"
    assert (installed / "py.typed").exists()
    assert len(list((installed / "specialists" / "profiles").glob("*.md"))) == 13
    # every subpackage was installed: the installed copy builds and runs the graph
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(target)
    script = (
        "import specialist_handover, sys\n"
        "from specialist_handover import build_graph, HandoverContext, Profile\n"
        "assert specialist_handover.__file__.startswith(sys.argv[1]), specialist_handover.__file__\n"
        "g = build_graph()\n"
        "out = g.invoke({'messages': [('user', 'Please design the landing page hero.')]},\n"
        "               context={'project_root': sys.argv[2], 'model': 'offline'})\n"
        "print(out['active_agent'])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(target), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "frontend_designer"


def test_a_users_own_graph_module_does_not_clash_with_ours(tmp_path):
    """A user app with its own graph.py and state.py imports our build_graph by its name."""
    (tmp_path / "graph.py").write_text(
        "from specialist_handover import build_graph\nGRAPH = build_graph()\n", encoding="utf-8"
    )
    (tmp_path / "state.py").write_text("MY_STATE = 1\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import graph, state; print(type(graph.GRAPH).__name__, state.MY_STATE)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["HandoverGraph", "1"]
