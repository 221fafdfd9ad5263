"""The conversation channel's reducer, and the one message-to-text helper.

LangGraph stores an input write before its reducer runs, so a malformed
message that reaches the channel is saved and then fails every later read of
the thread. `writes.py` refuses such writes before anything is stored; the
reducer is the second line: a write that is already stored (by an older
version, or straight through the checkpointer) is read with its unusable items
left out, so the thread answers its next message. `merge_messages` is the
conversation's reducer (a batch reducer: the channel is a `DeltaChannel`, which
stores each step's writes and replays them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, convert_to_messages
from langgraph.graph.message import REMOVE_ALL_MESSAGES


def _usable(items: Any) -> list[Any]:
    """The items of a write that convert to messages; the rest are left out."""
    if isinstance(items, BaseMessage | str | tuple | Mapping):
        items = [items]
    kept: list[Any] = []
    for item in items if isinstance(items, Sequence) else []:
        try:
            kept.extend(convert_to_messages([item]))
        except Exception:  # noqa: BLE001 - an unusable stored item is skipped, not fatal
            continue
    return kept


def merge_messages(state: Any, writes: Sequence[Any]) -> Any:
    """The conversation channel's batch reducer (for `DeltaChannel`), with the unusable items
    of a stored write left out, item by item, so the result is the same however the writes
    are batched."""
    try:
        return _merged(state or [], list(writes))
    except Exception:  # noqa: BLE001 - see the module docstring
        return _merged(_usable(state), [_usable(w) for w in writes])


def _merged(state: Any, writes: list[Any]) -> list[BaseMessage]:
    """`add_messages` for a batch of writes in one linear pass (`DeltaChannel` replays many
    at once; folding `add_messages` would index the list once per write): a message with a
    known id replaces it in place, a new one is appended, `RemoveMessage` drops its id (an
    unknown id is no error: a replay may start after it), `REMOVE_ALL_MESSAGES` drops all
    before it. Batching-invariant: `_merged(_merged(s, xs), ys) == _merged(s, xs + ys)`."""
    flat = [item for write in writes for item in (write if isinstance(write, list) else [write])]
    typed = bool(state) and isinstance(state[0], BaseMessage)  # the reducer's own output
    kept: list[BaseMessage | None] = list(state if typed else convert_to_messages(state))
    items = list(convert_to_messages(flat))
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, RemoveMessage) and item.id == REMOVE_ALL_MESSAGES:
            kept, items = [], items[index + 1 :]
            break
    where = {m.id: i for i, m in enumerate(kept) if m is not None and m.id is not None}
    for item in items:
        if item.id is None:
            kept.append(item)
        elif isinstance(item, RemoveMessage):
            if item.id in where:
                kept[where.pop(item.id)] = None
        elif item.id in where:
            kept[where[item.id]] = item
        else:
            where[item.id] = len(kept)
            kept.append(item)
    return [m for m in kept if m is not None]


SPEAKER_LABEL = re.compile(r"\A[^\s*]{1,8} \*\*[a-z0-9][a-z0-9 ]{0,62}\*\*\n\n")
"""The label a reply may open with, for chat UIs that show text only (`speaker_label`)."""


def speaker_label(emoji: str, agent: str) -> str:
    """`🖌️ **frontend designer**` and a blank line: who is speaking, as Markdown."""
    return f"{emoji} **{agent.replace('_', ' ')}**\n\n"


def message_text(message: Any) -> str:
    """The text of a message (or chunk): its string content, or its text blocks joined, without
    the speaker label a reply may open with.

    The project's one message-to-text helper; LangChain's own `.text` does the work.
    """
    text = getattr(message, "text", "")
    text = str(text) if text is not None else ""
    if getattr(message, "type", "") == "ai":
        text = SPEAKER_LABEL.sub("", text, count=1)
    return text
