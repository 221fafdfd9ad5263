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
the latest checkpoint keeps only the window). Under `durability="exit"` a run's
writes to a channel that takes its `DeltaChannel` snapshot when the run ends are
stored in that snapshot alone: the reader replays a snapshot wherever the
checkpoint before it holds no writes to the channel (`_seed_needed`).

The cut falls before a user message, so the window opens on a whole turn with
a valid tool-call history; in a long run of tool steps with no user message it
falls before an assistant message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph.checkpoint.base import BaseCheckpointSaver

from ...state.defaults import WINDOW_MESSAGES, WINDOW_SLACK
from ...state.langgraph_internals import (
    sqlite_channel_value,
    sqlite_checkpoints,
    sqlite_decode,
    sqlite_writes,
)
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
    writes = [  # a value stored whole (update_state) merges like a write: what it adds
        _seed_messages(value) if kind == "seed" else _without_archival(value)
        for kind, value in _channel_history(checkpointer, config, "messages")
    ]
    merged = merge_messages([], [*writes, list(window)])  # one pass, however long the thread
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
    for kind, value in _channel_history(checkpointer, config, "handovers"):
        if kind == "seed":
            stored = _joined(stored, _seed_messages(value))
        else:
            stored.extend(append_trail([], [value]))
    return _joined(stored, list(window))


def _joined(stored: list[dict[str, Any]], window: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`stored` and then what `window` (the newest records) adds after their overlap."""
    overlaps = range(min(len(stored), len(window)), 0, -1)  # the longest first
    overlap = next((n for n in overlaps if stored[-n:] == window[:n]), 0)
    return stored + window[overlap:]


def _seed_messages(value: Any) -> list[Any]:
    """The list a stored channel value holds (a `DeltaChannel` snapshot or a plain list)."""
    value = getattr(value, "value", value)
    return list(value) if isinstance(value, list) else []


def _root_config(config: Mapping[str, Any]) -> dict[str, Any]:
    configurable = dict(config.get("configurable") or {})
    out = {"thread_id": configurable.get("thread_id"), "checkpoint_ns": ""}
    if configurable.get("checkpoint_id") and not configurable.get("checkpoint_ns"):
        out["checkpoint_id"] = configurable["checkpoint_id"]
    return {"configurable": out}


SEEDED = ("update", "fork")
"""Checkpoints whose channel values were stored whole (`update_state`, a fork) rather than
written by a step: their values may hold messages no write holds."""


def _channel_history(
    checkpointer: BaseCheckpointSaver | None, config: Mapping[str, Any], channel: str
) -> list[tuple[str, Any]]:
    """What built `channel` along the chain ending at the config's checkpoint, oldest first:
    ("seed", value) for a value stored whole, ("write", value) for each write, in the order
    LangGraph applied them (none without a checkpointer)."""
    root = _root_config(config)
    if checkpointer is None or root["configurable"]["thread_id"] is None:
        return []
    fast = _sqlite_history(checkpointer, root, channel)
    return fast if fast is not None else _walked_history(checkpointer, root, channel)


def _walked_history(
    checkpointer: BaseCheckpointSaver, config: dict[str, Any], channel: str
) -> list[tuple[str, Any]]:
    """Any saver: walk `get_tuple` and `parent_config` from the head (each checkpoint's
    pending writes are the step that follows it, in LangGraph's order)."""
    found = checkpointer.get_tuple(config)  # type: ignore[arg-type]
    chain = []
    while found is not None:
        chain.append(found)
        parent = found.parent_config
        found = checkpointer.get_tuple(parent) if parent is not None else None
    chain.reverse()  # oldest first
    out: list[tuple[str, Any]] = []
    wrote = False  # whether the checkpoint before this one holds writes to `channel`
    for index, found in enumerate(chain):
        value = found.checkpoint["channel_values"].get(channel)
        if value is not None and _seed_needed(found.metadata, wrote):
            out.append(("seed", value))
        head = index == len(chain) - 1  # the head's own writes are not applied yet
        writes = [] if head else [w for w in found.pending_writes or [] if w[1] == channel]
        out += [("write", w[2]) for w in writes]
        wrote = bool(writes)
    return out


def _seed_needed(metadata: Any, parent_wrote: bool) -> bool:
    """Whether a checkpoint's stored value of a channel must be replayed: it was stored whole
    (`update_state`, a fork), or it is a `DeltaChannel` snapshot that no write before it
    holds (`durability="exit"` stores a run's writes to a channel that snapshots at its end
    in the snapshot alone). A snapshot whose writes are stored adds nothing to them."""
    source = (metadata or {}).get("source") if isinstance(metadata, Mapping) else None
    return source in SEEDED or not parent_wrote


def _sqlite_history(
    checkpointer: BaseCheckpointSaver, config: dict[str, Any], channel: str
) -> list[tuple[str, Any]] | None:
    """`SqliteSaver`: its tables read in a few queries (the chain's ids and metadata, the
    chain's writes to `channel`, the values of the checkpoints that must seed it) instead of
    a `get_tuple` per checkpoint; None for other savers."""
    thread = str(config["configurable"]["thread_id"])
    found = sqlite_checkpoints(checkpointer, thread)
    if found is None:
        return None
    if not found:
        return []
    wanted = config["configurable"].get("checkpoint_id")
    head = wanted if wanted in found else max(found)
    on_chain: set[str] = set()
    cursor: str | None = head
    while cursor is not None and cursor not in on_chain:
        on_chain.add(cursor)
        cursor = found[cursor][0] if cursor in found else None
    items: list[tuple[str, str, str, int, str, Any]] = []  # sort key, then the item
    wrote: set[str] = set()
    for cid, path, task, idx, value in sqlite_writes(checkpointer, thread, channel):
        if cid in on_chain and cid != head:  # the head's own writes are not applied yet
            # a checkpoint's writes build its child: they come after its own seed
            items.append((cid, path, task, idx, "write", value))
            wrote.add(cid)
    for cid in on_chain:
        parent, metadata = found[cid]
        if _may_store(metadata, channel) and _seed_needed(metadata, parent in wrote):
            value = sqlite_channel_value(checkpointer, thread, cid, channel)
            if value is not None:
                items.append((cid, "", "", -1, "seed", value))
    items.sort(key=lambda i: (i[0], i[1], i[2], i[3]))
    return [
        (kind, sqlite_decode(checkpointer, value) if kind == "write" else value)
        for *_, kind, value in items
    ]


def _may_store(metadata: dict[str, Any], channel: str) -> bool:
    """Whether a checkpoint may hold a stored value of `channel` (read from its metadata, so
    only those checkpoints are loaded): one stored whole, or one where the channel's
    `DeltaChannel` took a snapshot (its count since the last snapshot starts again: the
    channel leaves `counters_since_delta_snapshot`)."""
    if metadata.get("source") in SEEDED:
        return True
    counters = metadata.get("counters_since_delta_snapshot")
    return not isinstance(counters, dict) or channel not in counters
