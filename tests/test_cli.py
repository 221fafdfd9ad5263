"""The `handover` terminal command: demo, run, trail, and usage errors."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specialist_handover.graph.cli import main


@pytest.fixture
def root(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.chdir(project)
    return project


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_demo_shows_a_handover_a_specialist_turn_and_a_return(root):
    code, text = run_cli("demo", "--thread", "d1")
    assert code == 0
    assert "Model: offline — the built-in deterministic model (no OPENAI_API_KEY is set)" in text
    assert "🔄 Handoff to: frontend_designer" in text
    assert "📝 Reason: " in text
    assert "📦 Package: " in text and " tokens" in text
    assert str(root / ".a0proj" / "handover") in text
    assert "🖌️ [frontend designer] I'm the frontend designer" in text
    assert "↩️  frontend_designer hands back to the orchestrator" in text
    assert "🧭 [a0 software orchestrator] Back with the orchestrator." in text
    assert "💬 Consult: solution_architect is asked: should the hero render" in text
    assert "🧭 [a0 software orchestrator] I asked the specialists at once." in text
    assert "Handover trail of thread 'd1'" in text
    # the savings line of each handover and consult, the usage of each hold, the stats
    assert re.search(r"📉 [\d,]+ tokens sent instead of [\d,]+ for the full history", text)
    assert re.search(
        r"🧮 3 model calls, [\d,]+ tokens in, [\d,]+ out while frontend_designer", text
    )
    assert "Handover costs of thread 'd1': 2 handovers, 2 specialists consulted, 2 returns" in text
    briefings = list((root / ".a0proj" / "handover").glob("frontend-designer-*.md"))
    assert len(briefings) == 2  # the handover's, and the consult's
    assert sum("- **Kind:** consult" in b.read_text() for b in briefings) == 1


def test_run_then_trail_prints_handovers_with_tokens_and_paths(root):
    code, _ = run_cli("run", "Please design the landing page hero.", "--thread", "x")
    assert code == 0
    code, text = run_cli("trail", "--thread", "x")
    assert code == 0
    assert "🔄 orchestrator -> frontend_designer topic=landing-page-hero" in text
    assert "tokens=" in text and ".a0proj/handover/frontend-designer-landing-page-hero-" in text
    assert "Active agent: frontend_designer" in text


def test_trail_of_unknown_thread_says_so(root):
    code, text = run_cli("trail", "--thread", "nope")
    assert code == 1 and "No conversation on thread 'nope' yet." in text


@pytest.mark.parametrize(
    "argv",
    [[], ["fly"], ["run"], ["run", "hi", "--bogus"], ["demo", "--thread"]],
)
def test_bad_arguments_exit_2_with_usage_not_a_traceback(argv, root, capsys):
    code, _ = run_cli(*argv)
    assert code == 2
    err = capsys.readouterr().err
    assert "usage: handover" in err and "Traceback" not in err


def test_relative_project_root_is_a_clear_error(root, capsys):
    code, _ = run_cli("run", "hi", "--project-root", "relative/dir")
    assert code == 2
    assert "project_root must be absolute" in capsys.readouterr().err


def test_missing_project_root_is_a_clear_error(root, capsys, tmp_path):
    code, _ = run_cli("run", "hi", "--project-root", str(tmp_path / "missing"))
    assert code == 2
    assert "is not a folder" in capsys.readouterr().err


def test_console_script_is_installed_and_runs(root):
    exe = shutil.which("handover") or str(Path(sys.executable).with_name("handover"))
    assert os.path.exists(exe), "the `handover` console script is not installed"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [exe, "run", "Hello!", "--thread", "c"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "🧭 [a0 software orchestrator]" in done.stdout
    bad = subprocess.run([exe, "nonsense"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_deep_demo_shows_stage_2_a_chain_and_a_return(root):
    code, text = run_cli("demo", "--scenario", "deep", "--thread", "deep")
    assert code == 0
    assert "seeded an earlier conversation of 1000 messages" in text
    assert "🔄 Handoff to: solution_architect" in text
    stage2 = next(line for line in text.splitlines() if "📚 request_full_history:" in line)
    assert "compacted" in stage2 and "(cap 3,000)" in stage2
    assert "🔄 Handoff to: security_data_engineer" in text
    assert "↩️  security_data_engineer hands back to the orchestrator" in text
    assert "🧭 [a0 software orchestrator] Back with the orchestrator." in text


def test_a_model_that_cannot_be_used_is_refused_before_the_message_is_stored(root, capsys):
    code, _ = run_cli("run", "hello", "--model", "nosuch:model", "--thread", "m")
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("handover: error: the model 'nosuch:model' cannot be used:")
    assert "Traceback" not in err
    # nothing was stored, so the same command with a usable model stores "hello" once
    code, text = run_cli("run", "hello", "--model", "offline", "--thread", "m")
    assert code == 0 and "🧭 [a0 software orchestrator]" in text
    code, trail = run_cli("trail", "--thread", "m")
    from specialist_handover import build_graph
    from specialist_handover.graph.checkpointers import sqlite_checkpointer
    from specialist_handover.graph.turns import thread_config

    graph = build_graph(
        checkpointer=sqlite_checkpointer(str(root / ".a0proj" / "checkpoints.sqlite"))
    )
    asked = [
        m.content
        for m in graph.get_state(thread_config("m")).values["messages"]
        if m.type == "human"
    ]
    assert asked == ["hello"]


def test_an_openai_model_without_a_key_is_refused_before_the_message_is_stored(
    root, capsys, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _ = run_cli("run", "hello", "--model", "openai:gpt-4o", "--thread", "k")
    assert code == 2
    assert "the model 'openai:gpt-4o' cannot be used" in capsys.readouterr().err
    assert not (root / ".a0proj" / "checkpoints.sqlite").exists()  # nothing stored


def test_chat_reads_messages_until_exit(root):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [sys.executable, "-m", "specialist_handover.graph.cli", "chat", "--thread", "chat1"],
        cwd=root,
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        input="Please design the landing page hero.\nMake it darker.\ntrail\nexit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "🔄 Handoff to: frontend_designer" in done.stdout
    assert "🖌️ [frontend designer] Continuing on" in done.stdout
    assert "Handover trail of thread 'chat1' (1 event)" in done.stdout


def test_printer_shows_handoffs_refusals_and_returns_in_the_documented_words():
    from specialist_handover.graph.cli import Printer
    from specialist_handover.nodes.handover.node import trail_record

    out = io.StringIO()
    printer = Printer(out)
    printer(
        "handover",
        {
            "handovers": [
                trail_record(
                    "handover",
                    from_agent="orchestrator",
                    to_agent="hacker",
                    reason="a pentest",
                    topic="login",
                    return_condition="user_request",
                    estimated_tokens=321,
                    briefing_path="/p/.a0proj/handover/hacker-login-2026-01-01.md",
                ),
                trail_record(
                    "refused",
                    from_agent="hacker",
                    to_agent="hacker",
                    error="ERROR: hacker cannot hand over to itself; pick another specialist.",
                ),
            ]
        },
    )
    text = out.getvalue()
    assert "🔄 Handoff to: hacker\n📝 Reason: a pentest\n" in text
    assert "📦 Package: 321 tokens, return condition user_request;" in text
    assert "⛔ Handoff to hacker refused: ERROR: hacker cannot hand over to itself" in text
