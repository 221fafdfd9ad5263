"""The working window: what a run loads stays bounded, and the whole thread stays readable.

The state keeps the newest WINDOW_MESSAGES..WINDOW_MESSAGES + WINDOW_SLACK messages and
the newest TRAIL_WINDOW trail records; older ones are archived in the checkpointer's write
log, where `HandoverGraph.transcript` / `.trail`, stage 2 and `handover transcript` read them.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from specialist_handover.graph import build_graph
from specialist_handover.nodes.history.archive import ARCHIVED, archive_removals
from specialist_handover.state.defaults import TRAIL_WINDOW, WINDOW_MESSAGES, WINDOW_SLACK
from tests.support.models import ScriptedChatModel, check_tool_history, system_text

REPO = Path(__file__).resolve().parents[1]
SPECIALISTS = ["frontend_designer", "solution_architect", "test_debug_engineer"]


def _tools(request_kwargs_tools: list[dict]) -> set[str]:
    return {t["function"]["name"] for t in request_kwargs_tools}


class HandingOver(ScriptedChatModel):
    """Orchestrator: every user message handed to a specialist (after_reply). Specialist: one
    reply, or stage 2 first when the user asks for 'the full history'."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self._record(messages, kwargs)
        names = _tools(kwargs.get("tools") or [])
        last = messages[-1]
        n = len(self.requests)
        if "return_to_orchestrator" not in names and isinstance(last, HumanMessage):
            turn = int(last.text.rsplit("#", 1)[1])
            args = {
                "specialist_profile": SPECIALISTS[turn % 3],
                "topic": f"topic-{turn}",
                "summary": f"Turn {turn}.",
                "return_condition": "after_reply",
                "handover_reason": "their field",
            }
            reply = AIMessage(
                content="",
                tool_calls=[{"name": "handover_to_specialist", "args": args, "id": f"c{n}"}],
            )
        elif (
            "request_full_history" in names
            and "full history" in system_text(messages) + "".join(m.text for m in messages)
            and not isinstance(last, ToolMessage)
        ):
            reply = AIMessage(
                content="", tool_calls=[{"name": "request_full_history", "args": {}, "id": f"c{n}"}]
            )
        elif isinstance(last, ToolMessage) and last.name == "request_full_history":
            reply = AIMessage(content=f"HISTORY SEEN: {last.text}")
        else:
            reply = AIMessage(content=f"Answer {n}.")
        from langchain_core.outputs import ChatGeneration, ChatResult

        return ChatResult(generations=[ChatGeneration(message=reply)])


def _say(graph, text: str, ctx: dict, thread: str = "t") -> dict:
    return graph.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
        durability="sync",
    )


def _saver(path: Path) -> SqliteSaver:
    saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
    saver.setup()
    return saver


@pytest.fixture(scope="module")
def long_thread(tmp_path_factory):
    """120 turns, each a handover and a return: 480 messages and 240 trail records (the
    stage-2 test, last, adds a turn)."""
    tmp_path = tmp_path_factory.mktemp("long")
    saver = _saver(tmp_path / "c.sqlite")
    graph = build_graph(checkpointer=saver, model=HandingOver())
    ctx = {"project_root": str(tmp_path), "model": "offline"}
    for turn in range(120):
        _say(graph, f"Request #{turn}", ctx)
    yield graph, ctx, tmp_path
    saver.conn.close()


def test_the_state_keeps_a_window_and_the_transcript_keeps_everything(long_thread):
    graph, _, _ = long_thread
    cfg = {"configurable": {"thread_id": "t"}}
    window = graph.get_state(cfg).values["messages"]
    assert WINDOW_MESSAGES <= len(window) <= WINDOW_MESSAGES + WINDOW_SLACK
    assert isinstance(window[0], HumanMessage)  # the window opens on a whole turn
    check_tool_history(window)

    transcript = graph.transcript(cfg)
    # five messages a turn: the request, the call, its answer, the reply, the hand-back note
    assert len(transcript) == 600 and len({m.id for m in transcript}) == 600
    users = [m.text for m in transcript if isinstance(m, HumanMessage)]
    assert users == [f"Request #{t}" for t in range(120)]
    check_tool_history(transcript)
    assert [m.id for m in transcript[-len(window) :]] == [m.id for m in window]
    assert not any(m.type == "remove" for m in transcript)


def test_the_trail_keeps_its_newest_records_and_the_whole_trail_stays_readable(long_thread):
    graph, _, _ = long_thread
    cfg = {"configurable": {"thread_id": "t"}}
    kept = graph.get_state(cfg).values["handovers"]
    trail = graph.trail(cfg)
    assert len(kept) == TRAIL_WINDOW
    assert len(trail) == 240
    assert [r["kind"] for r in trail[:2]] == ["handover", "return"]
    assert trail[0]["topic"] == "topic-0" and trail[-2]["topic"] == "topic-119"
    assert trail[-TRAIL_WINDOW:] == kept


def test_a_fork_reads_the_transcript_up_to_its_checkpoint(long_thread):
    graph, _, _ = long_thread
    cfg = {"configurable": {"thread_id": "t"}}
    history = list(graph.get_state_history(cfg))
    old = next(s for s in history if len(graph.transcript(s.config)) == 375)
    assert [m.text for m in graph.transcript(old.config) if isinstance(m, HumanMessage)] == [
        f"Request #{t}" for t in range(75)
    ]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specialist_handover.graph.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO.parent,
        env={"PYTHONPATH": str(REPO.parent), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_handover_transcript_prints_the_whole_conversation(long_thread):
    graph, _, root = long_thread
    common = ["--db", str(root / "c.sqlite"), "--thread", "t", "--project-root", str(root)]
    out = _cli("transcript", "--json", *common)
    assert out.returncode == 0, out.stderr
    dicts = json.loads(out.stdout[out.stdout.index("[") :])
    assert len(dicts) == 600
    assert dicts[0]["data"]["content"] == "Request #0"
    trail = _cli("trail", *common)
    assert trail.returncode == 0, trail.stderr
    assert "(240 events)" in trail.stdout and "topic=topic-0 " in trail.stdout
    text = _cli("transcript", *common)
    assert text.returncode == 0, text.stderr
    assert "(600 messages)" in text.stdout
    assert "\n   1. user: Request #0\n" in text.stdout
    assert "\n 599. test_debug_engineer: Answer 240.\n" in text.stdout
    assert text.stdout.endswith(
        "\n 600. orchestrator: ↩️ The test debug engineer handed the "
        "conversation back: your next message comes to me, the "
        "orchestrator.\n"
    )


def test_stage_2_reads_the_archived_turns(long_thread):
    graph, ctx, _ = long_thread
    values = _say(graph, "Please read the full history #120", ctx)
    answer = values["messages"][-2]  # before the hand-back note
    assert "HISTORY SEEN" in answer.text
    assert "Request #0" in answer.text or "Request #1" in answer.text  # archived long ago


def test_the_window_survives_a_new_process_and_the_archive_is_in_the_checkpoints(tmp_path):
    db = tmp_path / "c.sqlite"
    ctx = {"project_root": str(tmp_path), "model": "offline"}
    first = _saver(db)
    graph = build_graph(checkpointer=first, model=HandingOver())
    for turn in range(70):
        _say(graph, f"Request #{turn}", ctx)
    first.conn.close()
    second = _saver(db)  # another process would see the same file
    graph = build_graph(checkpointer=second, model=HandingOver())
    _say(graph, "Request #70", ctx)
    transcript = graph.transcript({"configurable": {"thread_id": "t"}})
    assert [m.text for m in transcript if isinstance(m, HumanMessage)] == [
        f"Request #{t}" for t in range(71)
    ]
    second.conn.close()


def test_any_saver_reads_the_archive(tmp_path):
    graph = build_graph(checkpointer=InMemorySaver(), model=HandingOver())
    ctx = {"project_root": str(tmp_path), "model": "offline"}
    for turn in range(70):
        _say(graph, f"Request #{turn}", ctx)
    cfg = {"configurable": {"thread_id": "t"}}
    assert len(graph.get_state(cfg).values["messages"]) < 280
    assert len(graph.transcript(cfg)) == 350


def _msgs(kinds: str) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i, k in enumerate(kinds):
        if k == "u":
            out.append(HumanMessage("u", id=f"m{i}"))
        elif k == "c":
            out.append(
                AIMessage("", id=f"m{i}", tool_calls=[{"name": "x", "args": {}, "id": f"t{i}"}])
            )
        elif k == "t":
            out.append(ToolMessage("r", id=f"m{i}", tool_call_id=f"t{i - 1}"))
        else:
            out.append(AIMessage("a", id=f"m{i}"))
    return out


def test_archive_removals_cut_before_a_user_message_and_keep_at_least_the_window():
    messages = _msgs("ucta" * 20)  # 80 messages, a user message every 4
    assert archive_removals(messages, keep=40, slack=40) == []
    removals = archive_removals(messages, 1, keep=40, slack=39)
    assert all(r.name == ARCHIVED for r in removals)
    kept = messages[len(removals) :]
    assert len(kept) + 1 >= 40 and isinstance(kept[0], HumanMessage)
    # no user message to cut before: the cut falls before an assistant message, never a tool one
    messages = _msgs("u" + "ct" * 40)
    removals = archive_removals(messages, keep=30, slack=10)
    kept = messages[len(removals) :]
    assert len(kept) >= 30 and isinstance(kept[0], AIMessage)


@pytest.mark.parametrize("saver", ["sqlite", "memory"])
def test_messages_written_with_update_state_are_in_the_transcript(tmp_path, saver):
    """update_state stores its value whole (no write holds it): the transcript reads it too."""
    checkpointer = _saver(tmp_path / "c.sqlite") if saver == "sqlite" else InMemorySaver()
    graph = build_graph(checkpointer=checkpointer, model=HandingOver())
    cfg = {"configurable": {"thread_id": "t"}}
    seeded = []
    for i in range(300):
        seeded += [HumanMessage(f"point {i}"), AIMessage(f"noted {i}", name="orchestrator")]
    graph.update_state(cfg, {"messages": seeded}, as_node="orchestrator")
    _say(graph, "Request #0", {"project_root": str(tmp_path), "model": "offline"})
    assert len(graph.get_state(cfg).values["messages"]) <= WINDOW_MESSAGES + WINDOW_SLACK
    texts = [m.text for m in graph.transcript(cfg)]
    assert texts[:600] == [m.text for m in seeded]
    assert texts[600] == "Request #0" and len(texts) == 605
