"""Running turns on a thread: SQLite persistence, crash resume, streamed events.

Every entry point (terminal, examples) goes through `run_turn`, which first
finishes a step a crash left unfinished (docs/ARCHITECTURE.md, invariant 8: a step whose writes were
saved shows in `get_state().tasks` but not in `.next`, and sending new input
instead of resuming would drop them), then sends the new message with
`durability="sync"` so a killed run resumes without losing a step.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from ..nodes.briefing.writer import STATE_DIR
from ..state import HandoverContext
from .locking import one_writer

CHECKPOINT_FILE = "checkpoints.sqlite"

Event = tuple[str, dict[str, Any]]


def default_checkpoint_path(project_root: str) -> str:
    """`<project_root>/.a0proj/checkpoints.sqlite`."""
    return os.path.join(project_root, STATE_DIR, CHECKPOINT_FILE)


def sqlite_checkpointer(path: str) -> SqliteSaver:
    """A durable SQLite checkpointer at `path` (its folder is created)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.islink(folder):
        raise ValueError(f"refusing to keep checkpoints in a symlinked folder: {folder}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    # owner-only: the conversation is in there
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    os.chmod(path, 0o600)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def thread_config(thread_id: str) -> dict[str, Any]:
    """The config of a conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def has_unfinished_step(graph: CompiledStateGraph, config: dict[str, Any]) -> bool:
    """True when a crash left a step to finish (`.next` or `.tasks` non-empty)."""
    snapshot = graph.get_state(config)
    return bool(snapshot.next or snapshot.tasks)


def pending_message(snapshot: Any) -> str | None:
    """The text of a user message the thread stores but has not answered yet, if any."""
    messages = (snapshot.values or {}).get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage):
        content = messages[-1].content
        return content if isinstance(content, str) else None
    return None


def stream_turn(
    graph: CompiledStateGraph,
    text: str | None,
    *,
    thread_id: str,
    context: HandoverContext,
) -> Iterator[Event]:
    """Resume anything unfinished, then run one user turn; yield (node, update) events.

    When the unfinished step was this very message (a run that failed before
    answering it), resuming answers it and the message is not sent twice.
    """
    config = thread_config(thread_id)
    with one_writer(graph.checkpointer, config):  # resume and send as one run of the thread
        snapshot = graph.get_state(config)
        if snapshot.next or snapshot.tasks:
            pending = pending_message(snapshot)
            yield ("resume", {"pending": pending})
            yield from _updates(graph, None, config, context)
            if text is not None and text == pending:
                return
        if text is not None:
            message = HumanMessage(content=text)
            yield from _updates(graph, {"messages": [message]}, config, context)


def _updates(graph, payload, config, context) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    for chunk in graph.stream(
        payload, config, context=context, stream_mode="updates", durability="sync"
    ):
        for node, update in chunk.items():
            yield node, update or {}


def run_turn(
    graph: CompiledStateGraph,
    text: str | None,
    *,
    thread_id: str,
    context: HandoverContext,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run one turn (after resuming a crashed one) and return the thread's state values."""
    for node, update in stream_turn(graph, text, thread_id=thread_id, context=context):
        if on_event:
            on_event(node, update)
    return graph.get_state(thread_config(thread_id)).values
