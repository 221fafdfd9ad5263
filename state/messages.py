"""The conversation channel's reducer, and the checks a user's input passes before it is stored.

LangGraph stores an input write before its reducer runs, so a malformed
message that reaches the channel is saved and then fails every later read of
the thread. `check_input` refuses such input before anything is written, for
every caller of the compiled graph. The reducers are the second line: a write
that is already stored (by an older version, or straight through the
checkpointer) is read with its unusable items left out, so the thread answers
its next message. `merge_messages` is the conversation's reducer (a batch
reducer: the channel is a `DeltaChannel`, which stores each step's writes and
replays them).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
)
from langgraph.graph.message import _messages_delta_reducer
from langgraph.types import Command

from .tokens import TokenCounter

INPUT_KEYS = ("messages",)


class InputError(ValueError):
    """Input the graph refuses before storing anything; the message names the problem."""


def _usable(items: Any) -> list[Any]:
    """The items of a write that convert to messages; the rest are left out."""
    if items is None:
        return []
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
    """The conversation channel's batch reducer (for `DeltaChannel`): LangGraph's own,
    with the unusable items of a stored write left out, item by item, so the result is
    the same however the writes are batched."""
    try:
        return _messages_delta_reducer(state or [], list(writes))
    except Exception:  # noqa: BLE001 - see the module docstring
        return _messages_delta_reducer(_usable(state), [_usable(w) for w in writes])


def message_text(message: Any) -> str:
    """The text of a message (or chunk): its string content, or its text blocks joined.

    The project's one message-to-text helper; LangChain's own `.text` does the work.
    """
    text = getattr(message, "text", "")
    return str(text) if text is not None else ""


def _check_message(index: int, item: Any, max_tokens: int, counter: TokenCounter) -> BaseMessage:
    where = f"messages[{index}]"
    if item is None:
        raise InputError(
            f"{where} is None; send a message such as {{'role': 'user', 'content': '...'}}"
        )
    try:
        (message,) = convert_to_messages([item])
    except Exception as exc:  # noqa: BLE001 - LangChain raises several kinds here
        detail = str(exc).splitlines()[0]
        raise InputError(f"{where} is not a chat message ({detail})") from None
    if isinstance(message, AIMessage):
        if message.tool_calls or message.invalid_tool_calls:
            raise InputError(
                f"{where}: an assistant message with tool calls cannot be sent as input"
            )
    elif not isinstance(message, HumanMessage):
        raise InputError(
            f"{where} has role {message.type!r}; input messages come from the user "
            "(role 'user'), or are plain assistant replies"
        )
    if not isinstance(message.content, str | list):
        raise InputError(f"{where}: content must be text")
    text = message_text(message)
    if "\x00" in text:
        raise InputError(f"{where} holds a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{where} is not valid text (it holds a lone surrogate)") from None
    if not text.strip() and isinstance(message, HumanMessage):
        raise InputError(f"{where} is empty")
    if counter.exceeds(text, max_tokens):
        raise InputError(
            f"{where} is over max_input_tokens={max_tokens:,} tokens; send a shorter message "
            "or a file path the specialists can read"
        )
    if not message.id:
        message = message.model_copy(update={"id": f"{message.type}-{uuid.uuid4().hex}"})
    return message


def check_input(payload: Any, *, max_tokens: int, counter: TokenCounter) -> Any:
    """The input as the graph stores it, or InputError naming what is wrong (nothing stored).

    `None` (resume) passes; a `Command` passes, its `update` checked like input.
    """
    if payload is None:
        return None
    if isinstance(payload, Command):
        if payload.update is None and payload.resume is None and not payload.goto:
            raise InputError(
                "the Command carries nothing: resume a paused run with "
                "Command(resume=...), e.g. {'action': 'approve'}"
            )
        if payload.update is not None:
            update = payload.update
            if isinstance(update, Mapping) and "messages" in update:
                checked = check_input(dict(update), max_tokens=max_tokens, counter=counter)
                return Command(
                    graph=payload.graph,
                    update={**update, **checked},
                    resume=payload.resume,
                    goto=payload.goto,
                )
        return payload
    if not isinstance(payload, Mapping):
        raise InputError(
            f"input must be a dict like {{'messages': [{{'role': 'user', 'content': '...'}}]}}, "
            f"got {type(payload).__name__}"
        )
    unknown = sorted(str(k) for k in payload if k not in INPUT_KEYS)
    if unknown:
        raise InputError(
            f"unknown input key(s) {', '.join(unknown)}; the graph takes: {', '.join(INPUT_KEYS)}"
        )
    if "messages" not in payload:
        raise InputError("input has no 'messages'; send {'messages': [...]}")
    items = payload["messages"]
    if isinstance(items, BaseMessage | str | tuple | Mapping):
        items = [items]
    if not isinstance(items, list) or not items:
        raise InputError(
            f"'messages' must be a non-empty list of messages, got {type(items).__name__}"
            if not isinstance(items, list)
            else "'messages' is empty; send at least one user message"
        )
    return {
        "messages": [_check_message(i, item, max_tokens, counter) for i, item in enumerate(items)]
    }
