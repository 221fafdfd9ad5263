"""The examples/ scripts run as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_python_caller_example_runs_two_turns_and_prints_the_trail(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python_caller.py"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "frontend_designer: I'm the frontend designer" in out
    assert "frontend_designer: Continuing on" in out
    assert "handover: orchestrator -> frontend_designer" in out
    assert str(tmp_path / ".a0proj" / "handover") in out
    assert "active agent: frontend_designer" in out
    assert (tmp_path / ".a0proj" / "checkpoints.sqlite").exists()


def test_custom_specialist_example_hands_over_to_the_users_specialist_which_uses_its_tool(
    tmp_path,
):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "custom_specialist.py"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[tool handover_to_specialist] Handed over to data_analyst [data analyst]" in out
    assert "[tool summarize_csv] data/sales.csv: 3 rows, columns: month, units, revenue" in out
    assert "mean revenue = 2816.67" in out
    assert "trail: handover orchestrator -> data_analyst" in out
    assert "trail: return data_analyst -> orchestrator" in out
    assert list((tmp_path / ".a0proj" / "handover").glob("data-analyst-*.md"))


def test_bring_your_own_agent_example_hands_over_to_your_create_agent_and_back(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "bring_your_own_agent.py"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[tool handover_to_specialist] Handed over to docs_writer [docs writer]" in out
    assert "[tool count_words] 14 words" in out
    assert "docs_writer: From count_words:" in out
    assert "[tool return_to_orchestrator] Returned to the orchestrator." in out
    assert "orchestrator: Back with the orchestrator. 📘 [docs writer] reported:" in out
    assert "trail: handover orchestrator -> docs_writer" in out
    assert "trail: return docs_writer -> orchestrator" in out
    assert list((tmp_path / ".a0proj" / "handover").glob("docs-writer-*.md"))
