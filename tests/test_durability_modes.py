"""Every durability mode keeps a thread whole: `sync`, `async` and `exit`.

LangGraph's `durability="exit"` saves a run's checkpoint only when it ends. Its
writes to a `DeltaChannel` (our `messages` and `handovers`) are stored at the
run's parent checkpoint, except for a channel that takes a snapshot at that
point: then the snapshot alone holds what the run wrote. A reader of the
archive that replays writes only loses those runs (before, over 72 turns the
transcript returned user turns out of order and the trail repeated records).
Over a long thread (72 turns) with handovers, returns and consults, past the message
window, each mode must give every user turn once and in order, every trail
record once, and one briefing entry per handover or consult entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import open_sqlite_saver
from specialist_handover.state.defaults import WINDOW_MESSAGES, WINDOW_SLACK
from tests.support.graphs import REQUESTS
from tests.support.models import check_tool_history
from tests.test_consults import ASK

SPECIALISTS = ["solution_architect", "test_debug_engineer", "frontend_designer"]
ROUNDS = 18  # four turns a round: 72 turns, about 300 messages (the window keeps 200-250)


def turns() -> list[str]:
    out = []
    for i in range(ROUNDS):
        out += [
            f"[{i}] {REQUESTS[SPECIALISTS[i % len(SPECIALISTS)]]}",
            f"[{i}] Thanks, and what about the edge cases?",
            f"[{i}] That's all, thanks. Back to the orchestrator.",
            f"[{i}] {ASK}",
        ]
    return out


def play(saver, mode: str, root: Path) -> tuple[list[str], list[dict], int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    graph = build_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": f"t-{mode}"}}
    ctx = {"project_root": str(root), "model": "offline"}
    for text in turns():
        graph.invoke({"messages": [HumanMessage(text)]}, config, context=ctx, durability=mode)
    transcript = graph.transcript(config)
    check_tool_history(transcript)
    users = [str(m.content) for m in transcript if m.type == "human"]
    window = len(graph.get_state(config).values["messages"])
    assert len(transcript) > WINDOW_MESSAGES + WINDOW_SLACK > window  # past the window
    texts = [p.read_text(encoding="utf-8") for p in (root / ".a0proj" / "handover").glob("*.md")]
    entries = sum(t.count("<!-- handover-id:") for t in texts)
    outcomes = sum(t.count("\n## Outcome ") for t in texts)
    return users, graph.trail(config), window, (entries - outcomes, outcomes)


def shape(trail: list[dict]) -> list[tuple]:
    return [(r["kind"], r["from_agent"], r["to_agent"], r.get("topic")) for r in trail]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[list[str], list[dict], int, tuple[int, int]]:
    """The thread as `sync` keeps it, on SQLite."""
    root = tmp_path_factory.mktemp("sync")
    saver = open_sqlite_saver(str(root / "cp.sqlite"))
    return play(saver, "sync", root)


def test_sync_keeps_the_thread_whole_past_the_window(reference):
    users, trail, window, briefings = reference
    assert users == turns()
    assert len(users) == 4 * ROUNDS
    assert window <= WINDOW_MESSAGES + WINDOW_SLACK
    kinds = [r["kind"] for r in trail]
    assert kinds.count("handover") >= ROUNDS and kinds.count("return") >= ROUNDS
    assert kinds.count("consult") >= ROUNDS
    handed = [r for r in trail if r["kind"] in ("handover", "consult")]
    # one briefing entry per handover and consult entry, one outcome entry per return
    assert briefings == (len(handed), kinds.count("return"))


@pytest.mark.parametrize(
    ("saver", "mode"),
    [("sqlite", "async"), ("sqlite", "exit"), ("memory", "exit")],
)
def test_every_durability_mode_keeps_the_thread_as_sync_does(reference, tmp_path, saver, mode):
    made = InMemorySaver() if saver == "memory" else open_sqlite_saver(str(tmp_path / "cp.sqlite"))
    users, trail, window, briefings = play(made, mode, tmp_path)
    ref_users, ref_trail, _, ref_briefings = reference
    assert users == ref_users  # every user turn once, in order
    assert shape(trail) == shape(ref_trail)  # every record once, in order
    assert briefings == ref_briefings
    assert window <= WINDOW_MESSAGES + WINDOW_SLACK
