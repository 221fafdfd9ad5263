"""Crash safety: SQLite checkpoints, resume after a crash or a process exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import specialist_handover.nodes.handover.node as handover_module
from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import run_turn, thread_config
from specialist_handover.state import HandoverContext
from tests.support.models import RecordingOfflineModel, check_tool_history

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
HERO = "Please design the landing page hero with bold typography."


class Crash(Exception):
    """Stands for the process dying mid-step."""


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return HandoverContext(project_root=str(root), model="offline")


def crash_once_after_the_append(monkeypatch) -> None:
    """The first handover dies right after its briefing entry is written, before the checkpoint."""
    real = handover_module.perform_handover
    calls = {"n": 0}

    def crash_after_append(*args, **kwargs):
        calls["n"] += 1
        outcome = real(*args, **kwargs)
        if calls["n"] == 1:
            raise Crash("killed after the briefing was written")
        return outcome

    monkeypatch.setattr(handover_module, "perform_handover", crash_after_append)


def briefing_entries(root: str) -> list[str]:
    found = []
    for path in Path(root, ".a0proj", "handover").glob("*.md"):
        found += [
            line for line in path.read_text().splitlines() if line.startswith("<!-- handover-id:")
        ]
    return found


def test_handover_crashing_after_the_append_resumes_with_one_entry_and_one_package(
    ctx, tmp_path, monkeypatch
):
    crash_once_after_the_append(monkeypatch)
    model = RecordingOfflineModel()
    saver = sqlite_checkpointer(str(tmp_path / "cp.sqlite"))
    graph = build_graph(checkpointer=saver, model=model)
    with pytest.raises(Crash):
        run_turn(graph, HERO, thread_id="t", context=ctx)
    assert len(briefing_entries(ctx.project_root)) == 1
    snapshot = graph.get_state(thread_config("t"))
    assert snapshot.next == ("handover",)

    # a fresh process: new connection, new graph; the next user message just works
    graph2 = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")), model=model)
    values = run_turn(graph2, "Make the button bigger.", thread_id="t", context=ctx)
    assert len(briefing_entries(ctx.project_root)) == 1  # not appended twice
    assert [r["kind"] for r in values["handovers"]] == ["handover"]
    packages = [
        m
        for m in values["messages"]
        if isinstance(m, ToolMessage) and m.name == "handover_to_specialist"
    ]
    assert len(packages) == 1
    check_tool_history(values["messages"])
    # the pending call was answered before the new user message
    human_after = [i for i, m in enumerate(values["messages"]) if isinstance(m, HumanMessage)]
    tool_index = values["messages"].index(packages[0])
    assert tool_index < human_after[-1]
    assert values["active_agent"] == "frontend_designer"


def test_unfinished_step_is_resumed_before_new_input(ctx, tmp_path, monkeypatch):
    """New input never lands on a thread with an unanswered tool call."""
    real = handover_module.run_handover
    state = {"crash": True}

    def flaky(*args, **kwargs):
        if state["crash"]:
            raise Crash("killed before anything was written")
        return real(*args, **kwargs)

    monkeypatch.setattr(handover_module, "run_handover", flaky)
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")), model=model)
    with pytest.raises(Crash):
        run_turn(graph, HERO, thread_id="t", context=ctx)
    last = graph.get_state(thread_config("t")).values["messages"][-1]
    assert isinstance(last, AIMessage) and last.tool_calls  # dangling in storage
    state["crash"] = False
    values = run_turn(graph, "hello again", thread_id="t", context=ctx)
    check_tool_history(values["messages"])
    assert not graph.get_state(thread_config("t")).next
    # every request any model received was valid (the recorder checks each one)
    assert model.requests


def _run_cli(args, cwd, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "specialist_handover.graph.cli", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_same_thread_continues_with_the_same_agent_after_the_process_exits(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    first = _run_cli(["run", HERO, "--thread", "t1", "--project-root", str(root)], cwd=root)
    assert first.returncode == 0, first.stderr
    assert "🔄 Handoff to: frontend_designer" in first.stdout
    assert (root / ".a0proj" / "checkpoints.sqlite").exists()
    second = _run_cli(
        ["run", "Make it darker.", "--thread", "t1", "--project-root", str(root)], cwd=root
    )
    assert second.returncode == 0, second.stderr
    assert "🖌️ [frontend designer] Continuing on" in second.stdout
    assert "Handoff to" not in second.stdout
    other = _run_cli(
        ["run", "Make it darker.", "--thread", "t2", "--project-root", str(root)], cwd=root
    )
    # a new thread starts with the orchestrator, which hands over afresh
    assert "Continuing on" not in other.stdout
    assert "🔄 Handoff to: frontend_designer" in other.stdout


def test_a_killed_process_resumes_on_the_next_message(tmp_path):
    """A real kill (os._exit) inside the handover step, then a new process continues."""
    root = tmp_path / "project"
    root.mkdir()
    db = tmp_path / "cp.sqlite"
    script = textwrap.dedent(
        f"""
        import os, specialist_handover.nodes.handover.node as h
        real = h.perform_handover
        def die(*a, **k):
            real(*a, **k)
            os._exit(9)
        h.perform_handover = die
        from specialist_handover.graph import build_graph
        from specialist_handover.graph.turns import run_turn
        from specialist_handover.graph.checkpointers import sqlite_checkpointer
        from specialist_handover.state import HandoverContext
        g = build_graph(checkpointer=sqlite_checkpointer({str(db)!r}))
        run_turn(g, {HERO!r}, thread_id="k", context=HandoverContext(project_root={str(root)!r}, model="offline"))
        """
    )
    killed = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == 9, killed.stderr
    assert len(briefing_entries(str(root))) == 1
    resumed = _run_cli(
        ["run", "Make it darker.", "--thread", "k", "--project-root", str(root), "--db", str(db)],
        cwd=root,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "♻️" in resumed.stdout
    assert len(briefing_entries(str(root))) == 1
    assert "🖌️ [frontend designer]" in resumed.stdout


def test_a_handover_resumed_after_midnight_keeps_its_date_and_single_entry(
    ctx, tmp_path, monkeypatch
):
    from datetime import timedelta

    import specialist_handover.nodes.handover.handover_to_specialist as tool_module
    from specialist_handover.nodes.briefing.writer import now_utc

    crash_once_after_the_append(monkeypatch)
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")))
    with pytest.raises(Crash):
        run_turn(graph, HERO, thread_id="t", context=ctx)
    tomorrow = now_utc() + timedelta(days=1)
    monkeypatch.setattr(tool_module, "now_utc", lambda: tomorrow)
    values = run_turn(graph, None, thread_id="t", context=ctx)
    files = list(Path(ctx.project_root, ".a0proj", "handover").glob("*.md"))
    assert len(files) == 1 and len(briefing_entries(ctx.project_root)) == 1
    assert values["handover"]["briefing_file"] == str(files[0])
