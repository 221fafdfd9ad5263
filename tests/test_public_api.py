"""Public API only: the package names no private LangGraph or LangChain internal, but in
`state/langgraph_internals.py`, whose every assumption is checked here (an upgrade that
moves one fails these tests by name, not a user's thread)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import ParentCommand
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import open_sqlite_saver
from specialist_handover.graph.handover_graph import HandoverGraph
from specialist_handover.nodes.history.archive import _sqlite_history, _walked_history
from specialist_handover.state.langgraph_internals import (
    command_of,
    recompiled,
    run_checkpointer,
    sqlite_checkpoints,
)

REPO = Path(__file__).resolve().parents[1]
ADAPTER = REPO / "state" / "langgraph_internals.py"
PACKAGE = [
    REPO / "__init__.py",
    *(
        p
        for folder in ("graph", "nodes", "specialists", "state")
        for p in (REPO / folder).rglob("*.py")
    ),
]
PRIVATE = [
    (r"from (?:langgraph|langchain)[\w.]* import [^\n]*\b_[A-Za-z]", "a private name imported"),
    (r"(?:langgraph|langchain[\w]*)\._", "a private module"),
    (r"\bCONFIG_KEY_[A-Z_]+", "a config key LangGraph keeps for itself"),
    (r"\._identifying_params|_DeltaSnapshot|_messages_delta_reducer", "a private name"),
    (r"(?<!checkpoint)\.serde\b", "a saver's serializer"),
    (
        r"(?:FROM|INTO|UPDATE) (?:checkpoints|writes|checkpoint_\w+)\b",
        "SQL against a saver's tables",
    ),
    (r"compiled\.__dict__|\.args\[0\]", "an object's internals"),
]


def test_the_package_names_no_framework_internal_outside_the_adapter():
    found = []
    for path in PACKAGE:
        if path == ADAPTER:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern, what in PRIVATE:
            for match in re.finditer(pattern, text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {what}: {match.group(0)}")
    assert found == []


def test_the_scan_would_see_each_internal_it_looks_for():
    adapter = ADAPTER.read_text(encoding="utf-8")
    samples = [
        "from langgraph.graph.message import _messages_delta_reducer",
        "import langgraph._internal._runnable",
        "CONFIG_KEY_CHECKPOINTER",
        "model._identifying_params",
        "saver.serde.loads_typed(x)",
        'cur.execute("SELECT type FROM checkpoints")',
        "exc.args[0]",
    ]
    for sample in samples:
        assert any(re.search(pattern, sample) for pattern, _ in PRIVATE), sample
    assert re.search(PRIVATE[2][0], adapter) and re.search(PRIVATE[5][0], adapter)


# --- each internal the adapter holds still does what it relies on ------------------------------


class Seen(TypedDict, total=False):
    saver: bool


def test_run_checkpointer_finds_the_runs_checkpointer_in_its_config():
    saver = InMemorySaver()

    def look(state: Seen, config) -> Seen:  # type: ignore[no-untyped-def]
        return {"saver": run_checkpointer(config) is saver}

    builder = StateGraph(Seen)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    out = builder.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "x"}})
    assert out["saver"] is True, "LangGraph no longer passes the run's checkpointer in config"


def test_command_of_reads_the_command_a_parent_command_carries():
    command = Command(graph=Command.PARENT, update={"k": 1})
    assert command_of(ParentCommand(command)) is command
    assert command_of(ParentCommand.__new__(ParentCommand)) is None


def test_recompiled_makes_our_subclass_from_langgraphs_compiled_graph(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    assert isinstance(graph, HandoverGraph)
    again = recompiled(HandoverGraph, graph)  # its own attributes hold handover_models too
    assert set(again.nodes) == set(graph.nodes) and again.checkpointer is graph.checkpointer
    assert again.handover_models is graph.handover_models
    out = again.invoke(
        {"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "r"}}, context=ctx
    )
    assert out["messages"][-1].type == "ai"


def test_the_sqlite_tables_have_what_the_archive_reads_and_read_as_the_walk_does(tmp_path, ctx):
    path = tmp_path / "cp.sqlite"
    saver = open_sqlite_saver(str(path))
    graph = build_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": "s"}}
    for text in ["Which architecture should we pick?", "and caching?", "back to you", "ok"]:
        graph.invoke({"messages": [HumanMessage(text)]}, config, context=ctx)
    with sqlite3.connect(path) as db:
        columns = {
            table: {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            for table in ("checkpoints", "writes")
        }
    assert {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "metadata",
        "type",
        "checkpoint",
    } <= columns["checkpoints"]
    assert {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "task_path",
        "idx",
        "channel",
        "type",
        "value",
    } <= columns["writes"]
    root = {"configurable": {"thread_id": "s", "checkpoint_ns": ""}}
    assert sqlite_checkpoints(saver, "s")
    assert sqlite_checkpoints(InMemorySaver(), "s") is None
    for channel in ("messages", "handovers"):
        fast = _sqlite_history(saver, root, channel)
        walked = _walked_history(saver, root, channel)
        assert fast is not None and len(fast) == len(walked) > 0
        assert [kind for kind, _ in fast] == [kind for kind, _ in walked]


@pytest.mark.parametrize("name", ["run_checkpointer", "command_of", "recompiled"])
def test_the_architecture_doc_names_each_internal_and_why(name):
    doc = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert "state/langgraph_internals.py" in doc and f"`{name}`" in doc
