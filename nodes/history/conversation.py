"""Reading the stored conversation: turns, segments, windows, tool-call bookkeeping.

Nothing here changes stored history (docs/ARCHITECTURE.md, invariant 3): every function returns new
lists (and new message objects where a request needs a reshaped copy).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from itertools import islice
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage

from ...specialists import Profile
from ...state import message_text
from ...state.messages import SPEAKER_LABEL, speaker_label


def speaker(message: BaseMessage) -> str:
    """Who said it: `user`, or the agent's name for assistant messages."""
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return message.name or "assistant"
    return message.type


def is_turn(message: BaseMessage) -> bool:
    """A user message or an assistant message with text (tool plumbing is not a turn, nor a
    message for readers only)."""
    return (
        isinstance(message, HumanMessage | AIMessage)
        and not for_readers(message)
        and bool(message_text(message).strip())
    )


def for_readers(message: BaseMessage) -> bool:
    """A message written for the person reading only (`FOR_READERS`): no model request holds
    it, neither a view, a package's turns nor the full history."""
    return bool((getattr(message, "response_metadata", None) or {}).get(FOR_READERS))


def recent_turns(messages: Sequence[BaseMessage], n: int) -> list[str]:
    """The last `n` turns, oldest first, verbatim as the package carries them (`user: ...`,
    `frontend_designer: ...`); reads only as far back as needed."""
    newest = (f"{speaker(m)}: {message_text(m).strip()}" for m in reversed(messages) if is_turn(m))
    return list(islice(newest, max(n, 0)))[::-1]


def messages_since(messages: Sequence[AnyMessage], anchor_id: str | None) -> list[AnyMessage]:
    """Messages after the anchor (a handover's tool message); [] when the anchor is last or
    there is none; all of them when the anchor was archived (it is older than the window)."""
    found = (i for i in range(len(messages) - 1, -1, -1) if messages[i].id == anchor_id)
    return list(messages[next(found, -1) + 1 :]) if anchor_id else []


def last_ai_index(messages: Sequence[BaseMessage]) -> int:
    """Index of the last assistant message; -1 when none."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), -1
    )


def pending_tool_calls(messages: Sequence[BaseMessage]) -> list[Any]:
    """Tool calls of the last assistant message that no tool message answers yet."""
    i = last_ai_index(messages)
    if i < 0:
        return []
    ai = messages[i]
    assert isinstance(ai, AIMessage)
    answered = {m.tool_call_id for m in messages[i + 1 :] if isinstance(m, ToolMessage)}
    return [call for call in ai.tool_calls if call.get("id") not in answered]


def valid_tool_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """A copy safe to send: unanswered tool calls and orphan tool messages are left out.

    Stored history is already valid (every node answers its calls); this is the
    last guard that no request ever carries a dangling call (docs/ARCHITECTURE.md, invariant 1).
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[BaseMessage] = []
    open_ids: set[Any] = set()
    for m in messages:
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            # unparsable calls are sent as tool calls too, so they need answers as well
            calls = [c for c in m.tool_calls if (c.get("id") or "") in answered]
            bad = [c for c in m.invalid_tool_calls if (c.get("id") or "") in answered]
            if len(calls) != len(m.tool_calls) or len(bad) != len(m.invalid_tool_calls):
                m = m.model_copy(update={"tool_calls": calls, "invalid_tool_calls": bad})
            open_ids = {c["id"] for c in [*calls, *bad] if c.get("id")}
            if calls or bad or message_text(m).strip():  # else nothing is left of it
                out.append(m)
        elif not isinstance(m, ToolMessage):
            open_ids = set()
            out.append(m)
        elif m.tool_call_id in open_ids:
            open_ids.discard(m.tool_call_id)
            out.append(m)
    return out


def strip_tool_plumbing(message: BaseMessage) -> BaseMessage | None:
    """Another agent's message as a bystander sees it: text only, no tool calls."""
    if isinstance(message, ToolMessage):
        return None
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        text = message_text(message).strip()
        for call in message.tool_calls:
            if call["name"] == "return_to_orchestrator":
                summary = str((call.get("args") or {}).get("summary") or "").strip()
                text = f"{text}\n[returned to the orchestrator] {summary}".strip()
        return AIMessage(content=text, name=message.name, id=message.id) if text else None
    return message


def window_of_turns(messages: Sequence[BaseMessage], user_turns: int) -> tuple[int, list]:
    """The last `user_turns` whole turns (each starting at a user message) and where they start."""
    starts = (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage))
    start = next(islice(starts, user_turns - 1, None), 0)  # user_turns >= 1
    return start, list(messages[start:])


def unlabeled(message: AIMessage) -> AIMessage:
    """A reply without the speaker label it may open with (a model never sees labels, so it
    does not learn to write them)."""
    if isinstance(message.content, str) and SPEAKER_LABEL.match(message.content):
        return message.model_copy(update={"content": SPEAKER_LABEL.sub("", message.content, 1)})
    return message


def own_view(messages: Sequence[BaseMessage], agent: str) -> list[BaseMessage]:
    """Messages as `agent` sees them: its own tool calls kept whole, others' plumbing stripped."""
    owner: dict[str, str | None] = {}
    out: list[BaseMessage] = []
    for m in messages:
        if for_readers(m):
            continue  # said for the person reading, not for a model
        if isinstance(m, AIMessage):
            for call in [*m.tool_calls, *m.invalid_tool_calls]:
                owner[call.get("id") or ""] = m.name
            if m.name == agent:
                out.append(unlabeled(m))
                continue
        elif isinstance(m, ToolMessage) and owner.get(m.tool_call_id) == agent:
            out.append(m)
            continue
        kept = strip_tool_plumbing(m)
        if kept is not None:
            out.append(kept)
    return out


FOR_READERS = "for_readers"
"""Metadata flag of a message written for the person reading the chat, which no model's view
holds (`own_view`): the note that a specialist handed the conversation back (`after_reply`),
and each consulted specialist's answer shown under its name (the orchestrator reads the
answers in the consult's tool message)."""
GRAPH_MADE = "handover_graph_reply"
"""Metadata flag of every reply the graph writes itself: no model call made it."""


def graph_reply(
    agent: str,
    profile: Profile,
    content: str,
    flag: str,
    *,
    label: bool = False,
    message_id: str | None = None,
) -> AIMessage:
    """A reply the graph writes for an agent (no model asked), marked with `flag`; opened by
    the speaker's label when `label` (the graph labels replies for chat UIs)."""
    return AIMessage(
        content=speaker_label(profile.emoji, agent) + content if label else content,
        name=agent,
        id=message_id or f"msg-{uuid.uuid4().hex}",
        response_metadata={
            "persona_marker": profile.marker,
            "persona_emoji": profile.emoji,
            flag: True,
            GRAPH_MADE: True,
        },
    )
