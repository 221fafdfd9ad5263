"""A run decodes each stored window snapshot once per process (`graph/snapshots.py`).

The window (200-250 messages) is rebuilt at the start of every run from the newest
snapshot and the writes after it; the same snapshot serves the next few turns. The
clone of the saver a run is lent decodes it once and hands out fresh containers;
the caller's saver, what is stored and every other read stay as they were.
"""

from __future__ import annotations

import asyncio
import copy
import re
import statistics

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.constants import CONFIG_KEY_CHECKPOINTER

from specialist_handover import build_graph
from specialist_handover.graph import snapshots
from specialist_handover.graph.session import run_turn, sqlite_checkpointer, thread_config
from specialist_handover.graph.snapshots import (
    MIN_BYTES,
    SnapshotReuse,
    reuse_snapshots,
    with_snapshot_reuse,
)
from tests.support.histories import MessageCount

IDS = re.compile(r"call_[0-9a-f]+|[0-9a-f]{8}-[0-9a-f-]{27}")

SCRIPT = [
    "We decided to keep invoice ids stable; the billing code is in src/billing.py.",
    "Please design the landing page hero with bold typography.",
    "Make the call-to-action stand out more on mobile.",
    "Thanks, that's all. Go back to the orchestrator please.",
    "Which architecture should we pick for the billing service: microservices or a monolith?",
    "Thanks, go back to the orchestrator.",
]


def _snapshot_blob(count: int = 120) -> tuple[str, bytes]:
    messages = [HumanMessage(f"message {i} " + "x" * 200, id=f"m{i}") for i in range(count)]
    checkpoint = {
        "v": 4,
        "id": "c1",
        "channel_values": {"messages": _DeltaSnapshot(messages), "active_agent": "orchestrator"},
        "channel_versions": {"messages": "00001"},
        "versions_seen": {"orchestrator": {"messages": "00001"}},
    }
    typed = JsonPlusSerializer().dumps_typed(checkpoint)
    assert len(typed[1]) >= MIN_BYTES
    return typed


def _read_for_run(serde: SnapshotReuse, data: tuple[str, bytes]):  # type: ignore[no-untyped-def]
    token = snapshots._reading_for_run.set(True)
    try:
        return serde.loads_typed(data)
    finally:
        snapshots._reading_for_run.reset(token)


def test_a_snapshot_blob_is_decoded_once_and_each_read_gets_fresh_containers():
    serde = SnapshotReuse(JsonPlusSerializer())
    blob = _snapshot_blob()
    first = _read_for_run(serde, blob)
    second = _read_for_run(serde, (blob[0], bytes(blob[1])))  # the same bytes, a new object
    assert (serde.misses, serde.hits) == (1, 1)
    assert first == second
    assert first is not second
    assert first["channel_values"] is not second["channel_values"]
    one, two = first["channel_values"]["messages"], second["channel_values"]["messages"]
    assert one.value is not two.value and one.value == two.value
    # what a reader does to its containers never reaches the next read
    one.value.append(HumanMessage("appended"))
    first["channel_versions"]["messages"] = "00009"
    first["versions_seen"]["orchestrator"]["messages"] = "00009"
    third = _read_for_run(serde, blob)
    assert len(third["channel_values"]["messages"].value) == 120
    assert third["channel_versions"] == {"messages": "00001"}
    assert third["versions_seen"] == {"orchestrator": {"messages": "00001"}}


def test_only_large_blobs_read_for_delta_history_are_kept_and_only_a_few():
    serde = SnapshotReuse(JsonPlusSerializer(), entries=2)
    blob = _snapshot_blob()
    serde.loads_typed(blob)  # a read outside a run (the caller's get_state): not kept
    serde.loads_typed(blob)
    assert (serde.hits, serde.misses) == (0, 0)
    small = JsonPlusSerializer().dumps_typed({"channel_values": {"a": 1}})
    _read_for_run(serde, small)
    assert (serde.hits, serde.misses) == (0, 0)
    blobs = [_snapshot_blob(120 + i) for i in range(3)]
    for each in blobs:
        _read_for_run(serde, each)
    assert len(serde._decoded) == 2  # the oldest was dropped
    _read_for_run(serde, blobs[0])
    assert serde.misses == 4


def test_the_callers_saver_is_left_as_it_was_and_a_lent_saver_is_kept(monkeypatch):
    saver = InMemorySaver()
    serde = saver.serde
    graph = build_graph(checkpointer=saver)
    assert graph.checkpointer is saver and saver.serde is serde
    config = with_snapshot_reuse(thread_config("t"), saver)
    clone = config["configurable"][CONFIG_KEY_CHECKPOINTER]
    assert clone is not saver and isinstance(clone, InMemorySaver)
    assert isinstance(clone.serde, SnapshotReuse) and clone.serde.inner is serde
    assert clone.storage is saver.storage  # the same stored data
    assert (
        with_snapshot_reuse(thread_config("u"), saver)["configurable"][CONFIG_KEY_CHECKPOINTER]
        is clone
    )  # one clone a saver
    assert with_snapshot_reuse(config, InMemorySaver()) is config  # a lent saver stays
    assert with_snapshot_reuse(thread_config("t"), None) == thread_config("t")
    strict = thread_config("t")
    monkeypatch.setattr(snapshots, "STRICT_MSGPACK", True)  # LangGraph's strict msgpack mode
    assert with_snapshot_reuse(strict, saver) is strict
    assert reuse_snapshots(clone) is clone
    assert copy.copy(clone.serde).inner is serde  # copies (LangGraph clones savers) work


def _built_per_turn(monkeypatch, graph, turns: int, thread: str, root) -> list[int]:  # type: ignore[no-untyped-def]
    count = MessageCount().install(monkeypatch)
    context = {"project_root": str(root), "model": "offline"}
    work = []
    for turn in range(1, turns + 1):
        count.built = 0
        run_turn(
            graph, f"(turn {turn}) {SCRIPT[turn % len(SCRIPT)]}", thread_id=thread, context=context
        )
        work.append(count.built)
    count.uninstall()
    return work


@pytest.mark.slow
def test_a_full_window_is_not_decoded_again_every_turn_and_the_state_is_the_same(
    tmp_path, monkeypatch
):
    root = tmp_path / "project"
    root.mkdir()
    turns = 120
    saver = sqlite_checkpointer(str(tmp_path / "on.sqlite"))
    reused = _built_per_turn(monkeypatch, build_graph(checkpointer=saver), turns, "t", root)
    monkeypatch.setattr(
        "specialist_handover.graph.compiled.with_snapshot_reuse", lambda config, saver: config
    )
    plain_saver = sqlite_checkpointer(str(tmp_path / "off.sqlite"))
    plain = _built_per_turn(monkeypatch, build_graph(checkpointer=plain_saver), turns, "t", root)
    late_reused, late_plain = statistics.median(reused[-30:]), statistics.median(plain[-30:])
    print(f"messages built a turn, turns {turns - 29}-{turns}: {late_reused} against {late_plain}")
    assert late_reused <= late_plain - 100  # the window holds well over 100 messages by then
    clone = snapshots._clones[saver]
    assert clone.serde.hits > clone.serde.misses > 0

    def stored(saver):  # type: ignore[no-untyped-def]
        values = build_graph(checkpointer=saver).get_state(thread_config("t")).values
        texts = [(type(m), IDS.sub("<id>", str(m.content))) for m in values["messages"]]
        return texts, values["handovers"]

    # the same conversation either way (ids and times aside)
    on_messages, on_trail = stored(saver)
    off_messages, off_trail = stored(plain_saver)
    assert on_messages == off_messages and len(on_messages) > 100
    assert [(r["kind"], r["from_agent"], r["to_agent"], r["topic"]) for r in on_trail] == [
        (r["kind"], r["from_agent"], r["to_agent"], r["topic"]) for r in off_trail
    ]
    assert len(on_trail) > 10


def test_async_runs_reuse_snapshots_too(tmp_path):
    saver = InMemorySaver()
    graph = build_graph(checkpointer=saver)
    context = {"project_root": str(tmp_path), "model": "offline"}
    config = thread_config("a")

    async def talk() -> None:
        for turn in range(1, 41):
            text = f"(turn {turn}) {SCRIPT[turn % len(SCRIPT)]}"
            await graph.ainvoke(
                {"messages": [HumanMessage(text)]}, config, context=context, durability="sync"
            )

    asyncio.run(talk())
    clone = snapshots._clones[saver]
    assert clone.serde.hits > 0
    messages = graph.get_state(config).values["messages"]
    assert sum(isinstance(m, HumanMessage) for m in messages) == 40
    assert isinstance(messages[-1], AIMessage)
