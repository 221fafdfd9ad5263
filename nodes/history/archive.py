"""The working window and the archive: why a turn's cost does not grow with the thread.

The graph state keeps a bounded working window of the conversation: at least
`WINDOW_MESSAGES` recent messages, at most `WINDOW_MESSAGES + WINDOW_SLACK`.
When an agent's step would leave more, its update also removes the oldest
whole turns with `RemoveMessage`s named `ARCHIVED` (`archive_removals`). Every
run loads only the window (a `DeltaChannel` snapshot of it plus the writes
since), so loading a thread costs the same at turn 10 and at turn 1,000.

Nothing is deleted. Every message was stored once, as a write of the step that
added it, in the checkpointer's write log, and an archival removal is a write
too. `stored_transcript` reads the thread's `messages` writes along its
checkpoint chain, oldest first, and replays them without the archival
removals: the whole conversation, as it was, for stage 2
(`request_full_history`), `handover transcript` and `HandoverGraph.transcript`.
It is as durable as the checkpoints themselves (a kill loses nothing), and as
long as the checkpointer keeps the thread's history (a saver that keeps only
the latest checkpoint keeps only the window).

The cut falls before a user message, so the window opens on a whole turn with
a valid tool-call history; in a long run of tool steps with no user message it
falls before an assistant message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.checkpoint.base import BaseCheckpointSaver

from ...state.defaults import WINDOW_MESSAGES, WINDOW_SLACK
from ...state.messages import merge_messages
from ...state.schema import append_trail

ARCHIVED = "archived"
"""The name of a `RemoveMessage` that moves a message from the window to the archive."""


def archive_removals(
    messages: Sequence[BaseMessage],
    adding: int = 0,
    *,
    keep: int = WINDOW_MESSAGES,
    slack: int = WINDOW_SLACK,
) -> list[RemoveMessage]:
    """The removals that bring the window (`messages`, with `adding` more to come) back to
    at least `keep` messages, cut before a user message; none while it holds at most
    `keep + slack`."""
    total = len(messages) + adding
    if total <= keep + slack:
        return []
    limit = min(total - keep, len(messages) - 1)  # the cut: the first message kept
    cut = next((i for i in range(limit, 0, -1) if isinstance(messages[i], HumanMessage)), 0)
    if not cut:
        cut = next((i for i in range(limit, 0, -1) if not isinstance(messages[i], ToolMessage)), 0)
    return [RemoveMessage(id=m.id, name=ARCHIVED) for m in messages[:cut] if m.id]


def is_archival(item: Any) -> bool:
    """An archival removal (as written, or as a stored dict)."""
    if isinstance(item, RemoveMessage):
        return item.name == ARCHIVED
    return (
        isinstance(item, Mapping) and item.get("type") == "remove" and item.get("name") == ARCHIVED
    )


def _without_archival(write: Any) -> Any:
    if isinstance(write, list):
        return [item for item in write if not is_archival(item)]
    return [] if is_archival(write) else write


def stored_transcript(
    checkpointer: BaseCheckpointSaver | None,
    config: Mapping[str, Any],
    window: Sequence[BaseMessage] = (),
) -> list[BaseMessage]:
    """The whole conversation of the thread in `config`: every `messages` write along its
    checkpoint chain (root namespace, up to the checkpoint in `config` or the latest),
    replayed without the archival removals, then `window` (the state's current messages,
    which may be newer than the last checkpoint) merged in by id."""
    writes: list[Any] = []
    if checkpointer is not None:
        writes = [_without_archival(w) for w in _channel_writes(checkpointer, config, "messages")]
    merged = merge_messages([], [*writes, list(window)])
    return list(convert_to_messages(merged)) if merged else []


def stored_trail(
    checkpointer: BaseCheckpointSaver | None,
    config: Mapping[str, Any],
    window: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The whole handover trail of the thread in `config` (the state keeps the newest
    `TRAIL_WINDOW` records): every `handovers` write along the checkpoint chain, then the
    records of `window` (the state's) that the stored ones do not end with."""
    stored: list[dict[str, Any]] = []
    if checkpointer is not None:
        stored = append_trail([], _channel_writes(checkpointer, config, "handovers"))
    window = list(window)
    for overlap in range(min(len(stored), len(window)), 0, -1):
        if stored[-overlap:] == window[:overlap]:
            return stored + window[overlap:]
    return stored + window


def config_checkpointer(config: Mapping[str, Any]) -> BaseCheckpointSaver | None:
    """The checkpointer of the run whose config this is (None without one)."""
    found = (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER)
    return found if isinstance(found, BaseCheckpointSaver) else None


def _root_config(config: Mapping[str, Any]) -> dict[str, Any]:
    configurable = dict(config.get("configurable") or {})
    out = {"thread_id": configurable.get("thread_id"), "checkpoint_ns": ""}
    if configurable.get("checkpoint_id") and not configurable.get("checkpoint_ns"):
        out["checkpoint_id"] = configurable["checkpoint_id"]
    return {"configurable": out}


def _channel_writes(
    checkpointer: BaseCheckpointSaver, config: Mapping[str, Any], channel: str
) -> list[Any]:
    """The values written to `channel` along the chain ending at the config's checkpoint,
    oldest first, in the order LangGraph applied them."""
    root = _root_config(config)
    if root["configurable"]["thread_id"] is None:
        return []
    fast = _sqlite_writes(checkpointer, root, channel)
    if fast is not None:
        return fast
    return list(_walked_writes(checkpointer, root, channel))


def _walked_writes(
    checkpointer: BaseCheckpointSaver, config: dict[str, Any], channel: str
) -> Iterator[Any]:
    """Any saver: walk `get_tuple` and `parent_config` from the head (each checkpoint's
    pending writes are the step that follows it, in LangGraph's order)."""
    chain: list[list[Any]] = []
    head = checkpointer.get_tuple(config)  # type: ignore[arg-type]
    cursor = head.parent_config if head is not None else None
    while cursor is not None:
        found = checkpointer.get_tuple(cursor)
        if found is None:
            break
        chain.append([w[2] for w in found.pending_writes or [] if w[1] == channel])
        cursor = found.parent_config
    for step in reversed(chain):
        yield from step


def _sqlite_writes(
    checkpointer: BaseCheckpointSaver, config: dict[str, Any], channel: str
) -> list[Any] | None:
    """`SqliteSaver`: two queries (the chain's ids, then its writes to `channel`) instead of a
    `get_tuple` per checkpoint; None for other savers."""
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:  # pragma: no cover - the sqlite saver is a dependency
        return None
    if not isinstance(checkpointer, SqliteSaver):
        return None
    thread = str(config["configurable"]["thread_id"])
    wanted = config["configurable"].get("checkpoint_id")
    with checkpointer.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread,),
        )
        parents = dict(cur.fetchall())
        if not parents:
            return []
        head = wanted if wanted in parents else max(parents)
        chain: set[str] = set()
        cursor = parents.get(head)  # the head's own writes are not applied yet
        while cursor is not None and cursor not in chain:
            chain.add(cursor)
            cursor = parents.get(cursor)
        cur.execute(
            "SELECT checkpoint_id, task_path, task_id, idx, type, value FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ?",
            (thread, channel),
        )
        rows = [row for row in cur.fetchall() if row[0] in chain]
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    return [checkpointer.serde.loads_typed((r[4], r[5])) for r in rows]
