"""Storage grows linearly: the conversation and the trail are DeltaChannels.

A checkpoint stores the step's writes (and, now and then, a snapshot of the
working window), not the whole list again; every stored message has a stable id;
`get_state` and `get_state_history` return the window, `transcript()` every
message.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.channels import DeltaChannel

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import run_turn, thread_config
from specialist_handover.state.defaults import WINDOW_MESSAGES, WINDOW_SLACK
from tests.support.histories import MessageCount

pytestmark = pytest.mark.slow

SCRIPT = [
    "We decided to keep invoice ids stable; the billing code is in src/billing.py.",
    "Please design the landing page hero with bold typography.",
    "Make the call-to-action stand out more on mobile.",
    "Thanks, that's all. Go back to the orchestrator please.",
    "Quick question: the unit test in tests/test_landing.py is flaky, what should I check?",
    "Which architecture should we pick for the billing service: microservices or a monolith?",
    "Thanks, go back to the orchestrator.",
]


def db_bytes(path: Path) -> int:
    return sum(
        os.path.getsize(f"{path}{s}")
        for s in ("", "-wal", "-journal")
        if os.path.exists(f"{path}{s}")
    )


def test_the_conversation_and_the_trail_are_delta_channels():
    graph = build_graph()
    assert isinstance(graph.channels["messages"], DeltaChannel)
    assert isinstance(graph.channels["handovers"], DeltaChannel)


def test_300_turns_take_at_most_3_5_times_the_bytes_of_100_and_a_turn_does_not_grow(
    tmp_path, monkeypatch
):
    """Storage grows linearly, and the work of a turn does not grow with the thread: the
    message objects a turn builds (loading the thread, views, replies) are counted, not
    timed, and stay flat once the working window is full."""
    root = tmp_path / "project"
    root.mkdir()
    db = tmp_path / "cp.sqlite"
    graph = build_graph(checkpointer=sqlite_checkpointer(str(db)))
    context = {"project_root": str(root), "model": "offline"}
    count = MessageCount().install(monkeypatch)
    sizes, work = {}, {}
    for turn in range(1, 301):
        count.built = 0
        run_turn(
            graph, f"(turn {turn}) {SCRIPT[turn % len(SCRIPT)]}", thread_id="t", context=context
        )
        work[turn] = count.built
        if turn in (100, 300):
            sizes[turn] = db_bytes(db)
    ratio = sizes[300] / sizes[100]
    print(f"storage: {sizes[100]:,} B after 100 turns, {sizes[300]:,} B after 300: {ratio:.2f}x")
    assert ratio <= 3.5  # quadratic growth would give about 9

    def around(turn: int) -> float:
        return statistics.median(work[t] for t in range(turn - 13, turn + 1))  # two scripts

    print(f"messages built a turn: {around(14)} at turn 14, {around(150)}, {around(300)}")
    assert around(300) <= 1.1 * around(150)  # before the window: about 2x (the list doubled)
    # a turn builds the window a few times at most (the thread holds over 1,000 messages)
    assert around(300) <= 3 * (WINDOW_MESSAGES + WINDOW_SLACK)
    values = graph.get_state(thread_config("t")).values
    assert len(values["messages"]) <= WINDOW_MESSAGES + WINDOW_SLACK
    asked = [m for m in graph.transcript(thread_config("t")) if isinstance(m, HumanMessage)]
    assert len(asked) == 300  # every message is still there, archived or in the window


def test_every_stored_message_has_a_stable_id_and_history_returns_every_message(tmp_path, ctx):
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")))
    config = thread_config("t")
    # a caller writing straight into the state, without ids
    graph.update_state(
        config, {"messages": [HumanMessage("seeded"), AIMessage("noted")]}, as_node="orchestrator"
    )
    for text in SCRIPT[:5]:
        run_turn(graph, text, thread_id="t", context=ctx)
    first = [m.id for m in graph.get_state(config).values["messages"]]
    second = [m.id for m in graph.get_state(config).values["messages"]]
    assert first == second and all(first) and len(set(first)) == len(first)
    history = list(graph.get_state_history(config))
    assert len(history) > 10
    for snapshot in history:  # each checkpoint holds a prefix of the conversation
        ids = [m.id for m in snapshot.values.get("messages", [])]
        assert ids == first[: len(ids)]
    assert {len(s.values.get("messages", [])) for s in history} >= {2, len(first)}


def test_a_handover_adds_one_line_to_the_history_and_keeps_the_package_in_the_state(ctx, tmp_path):
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")))
    run_turn(graph, SCRIPT[1], thread_id="t", context=ctx)
    values = graph.get_state(thread_config("t")).values
    (answer,) = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert answer.content.count("\n") == 0 and len(answer.content) < 400
    handover_id = values["handover"]["handover_id"]
    assert f"handover_id={handover_id};" in answer.content
    assert "HANDOVER PACKAGE (stage 1)" in values["handover"]["rendered"]
