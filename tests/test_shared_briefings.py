"""Briefings across replicas: with a store, every entry is also put there and read from there."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from specialist_handover import build_graph
from specialist_handover.nodes.briefing.shared import read_briefing_from_store
from specialist_handover.state import TokenCounter
from tests.support.graphs import say, state_of

HERO = "Please design the landing page hero with bold typography."
BRIEFING = "What did we decide before? Check your briefing."


def replica(tmp_path: Path, name: str, store):  # type: ignore[no-untyped-def]
    root = tmp_path / name
    root.mkdir()
    graph = build_graph(checkpointer=InMemorySaver(), store=store)
    return graph, {"project_root": str(root), "model": "offline"}


def stored_entries(store, specialist: str) -> list:  # type: ignore[no-untyped-def]
    return store.search(("briefings", specialist), limit=100)


def test_each_briefing_entry_is_also_put_into_the_store(tmp_path):
    store = InMemoryStore()
    graph, ctx = replica(tmp_path, "a", store)
    say(graph, HERO, ctx)
    handover = state_of(graph)["handover"]
    (item,) = stored_entries(store, "frontend_designer")
    assert item.key == handover["handover_id"]
    assert set(item.value) == {"topic", "handover_id", "markdown", "created_at", "from_agent"}
    assert item.value["topic"] == handover["topic"] and item.value["from_agent"] == "orchestrator"
    file_text = Path(handover["briefing_file"]).read_text(encoding="utf-8")
    assert item.value["markdown"].strip() in file_text  # the same entry as the file's
    assert Path(handover["briefing_file"]).is_file()  # the file stays


def test_a_specialist_on_replica_b_reads_what_replica_a_wrote(tmp_path):
    store = InMemoryStore()
    graph_a, ctx_a = replica(tmp_path, "a", store)
    graph_b, ctx_b = replica(tmp_path, "b", store)
    say(graph_a, HERO, ctx_a)
    written_on_a = state_of(graph_a)["handover"]["handover_id"]
    say(graph_b, HERO, ctx_b, thread="b")
    values = say(graph_b, BRIEFING, ctx_b, thread="b")
    answer = next(
        m
        for m in reversed(values["messages"])
        if isinstance(m, ToolMessage) and m.name == "read_briefing"
    )
    assert "2 of 2 entries" in answer.content
    assert f"`{written_on_a}`" in answer.content  # A's entry, read on B
    local_on_b = "".join(
        p.read_text(encoding="utf-8") for p in (tmp_path / "b" / ".a0proj" / "handover").glob("*")
    )
    assert written_on_a not in local_on_b  # so it came from the store, not B's own file


def test_a_resumed_handover_puts_the_same_entry_once(tmp_path, monkeypatch):
    import specialist_handover.nodes.handover.node as node

    store = InMemoryStore()
    graph, ctx = replica(tmp_path, "a", store)
    real = node.run_handover
    crashed = {"once": False}

    def crash_after(*args, **kwargs):  # type: ignore[no-untyped-def]
        update = real(*args, **kwargs)
        if not crashed["once"]:
            crashed["once"] = True
            raise RuntimeError("killed after the briefing was written")
        return update

    monkeypatch.setattr(node, "run_handover", crash_after)
    with pytest.raises(RuntimeError):
        say(graph, HERO, ctx)
    graph.invoke(None, {"configurable": {"thread_id": "t"}}, context=ctx)
    assert len(stored_entries(store, "frontend_designer")) == 1


def test_the_store_reader_keeps_the_cap_and_the_order(tmp_path):
    store = InMemoryStore()
    graph, ctx = replica(tmp_path, "a", store)
    for i in range(6):
        say(graph, f"{HERO} Variant {i}.", ctx, thread=f"t{i}")
    counter = TokenCounter()
    text = read_briefing_from_store(
        store,
        project_root=ctx["project_root"],
        specialist="frontend_designer",
        topic=None,
        max_tokens=600,
        counter=counter,
    )
    assert counter.count_text(text) <= 600
    assert text.startswith("BRIEFING (stage 3) for frontend_designer, all topics:")
    assert "older entries left out to stay within the 600-token cap" in text
    whens = [line for line in text.splitlines() if line.startswith("## Handover ")]
    assert whens == sorted(whens, reverse=True)
    assert (
        read_briefing_from_store(
            store,
            project_root=ctx["project_root"],
            specialist="frontend_designer",
            topic="no-such-topic",
            max_tokens=600,
            counter=counter,
        )
        == "No briefing entries for frontend_designer on topic 'no-such-topic' yet."
    )
    assert read_briefing_from_store(
        store,
        project_root="relative",
        specialist="frontend_designer",
        topic=None,
        max_tokens=600,
        counter=counter,
    ).startswith("ERROR: project_root must be absolute")
