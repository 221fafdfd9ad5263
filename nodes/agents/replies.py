"""A model's reply made safe to store: every call answerable, every message valid for OpenAI.

Models misbehave: two calls sharing one id, calls without an id, arguments that
are not a JSON object, tool names no API accepts. Stored as they are, such a
reply poisons every later request on the thread (OpenAI answers HTTP 400). So
before a reply is stored: missing and duplicate ids get fresh ones, names are
made valid, and calls whose arguments are not a JSON object join the
unparsable ones, which the agent's model step answers with an `ERROR:`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from pydantic import ValidationError

from ...specialists import Profile
from ...state import message_text, speaker_label
from ..briefing.writer import now_utc
from ..tools.names import CONSULT, FULL_HISTORY, HANDOVER, RETURN

TRANSFER_NAMES = (HANDOVER, RETURN, CONSULT)

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Function names OpenAI accepts (the same pattern applies to message names)."""


def new_call_id() -> str:
    """A fresh tool-call id."""
    return f"call_{uuid.uuid4().hex[:24]}"


def safe_tool_name(name: Any) -> str:
    """A name OpenAI accepts: `read file!` -> `read_file_`; nothing usable -> `unnamed_tool`."""
    text = name if isinstance(name, str) else ""
    if TOOL_NAME.match(text):
        return text
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", text)[:64]
    return cleaned if cleaned.strip("_") else "unnamed_tool"


def used_call_ids(messages: Iterable[BaseMessage]) -> set[str]:
    """Every tool-call id already in these messages."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            ids.update(
                c.get("id") or "" for c in [*message.tool_calls, *message.invalid_tool_calls]
            )
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    ids.discard("")
    return ids


def make_reply_safe(
    reply: AIMessage, taken: set[str], renamed: dict[str, str] | None = None
) -> AIMessage:
    """The reply with unique ids, valid names, and non-object arguments moved to invalid calls.

    `renamed` (when given) records each id replaced because `taken` held it already.
    """
    seen = set(taken)

    def unique(call_id: Any) -> str:
        fresh = call_id if isinstance(call_id, str) and call_id and call_id not in seen else None
        if fresh is None:
            fresh = new_call_id()
            if renamed is not None and call_id in taken:
                renamed.setdefault(call_id, fresh)
        seen.add(fresh)
        return fresh

    calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    for call in reply.tool_calls:
        args = call.get("args")
        fixed = {**call, "id": unique(call.get("id")), "name": safe_tool_name(call.get("name"))}
        if isinstance(args, dict):
            calls.append(fixed)
        else:
            invalid.append(_invalid(fixed, args, "the arguments are not a JSON object"))
    for bad in reply.invalid_tool_calls:
        fixed = {**bad, "id": unique(bad.get("id")), "name": safe_tool_name(bad.get("name"))}
        invalid.append(_invalid(fixed, bad.get("args"), bad.get("error") or _why(bad.get("args"))))
    changed = calls != list(reply.tool_calls) or invalid != list(reply.invalid_tool_calls)
    if not changed:
        return reply
    extra = {
        k: v for k, v in reply.additional_kwargs.items() if k not in ("tool_calls", "function_call")
    }
    return reply.model_copy(
        update={"tool_calls": calls, "invalid_tool_calls": invalid, "additional_kwargs": extra}
    )


def _invalid(call: dict[str, Any], args: Any, error: Any) -> dict[str, Any]:
    if args is None:
        args = ""  # OpenAI wants the arguments as a string, even when there were none
    elif not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False, default=str)
    return {
        "type": "invalid_tool_call",
        "id": call["id"],
        "name": call["name"],
        "args": args,
        "error": error if isinstance(error, str) else None,
    }


def _why(args: Any) -> str:
    """Why arguments a client could not use are unusable: not JSON, or JSON but not an object."""
    try:
        parsed = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return "the arguments are not valid JSON"
    if isinstance(parsed, dict):
        return "the arguments could not be used"
    return "the arguments are not a JSON object"


def unparsable_answers(reply: AIMessage) -> list[ToolMessage]:
    """An `ERROR:` tool result for each call whose arguments could not be read."""
    return [
        ToolMessage(
            content=f"ERROR: the call to {bad.get('name') or 'a tool'} could not be read "
            f"({_reason(bad)}); call it again with a JSON object of arguments.",
            tool_call_id=bad["id"],
            name=bad.get("name") or "unknown",
            id=f"tool-{uuid.uuid4().hex}",
            status="error",
        )
        for bad in reply.invalid_tool_calls
    ]


def _reason(bad: Any) -> str:
    error = bad.get("error") or ""
    if "not a JSON object" in error:
        return "the arguments are not a JSON object"
    if not error or "not valid JSON" in error:
        return "the arguments are not valid JSON"
    return error.splitlines()[0][:200]


def is_unreadable_tool_call(exc: BaseException) -> bool:
    """A client's parser gave up on a reply whose tool-call arguments are not an object."""
    if not isinstance(exc, ValidationError):
        return False
    return any("tool_calls" in [str(p) for p in err.get("loc", ())] for err in exc.errors())


def streaming_copy(model: BaseChatModel) -> BaseChatModel:
    """The same model with streaming switched on, whatever the instance said (a client that
    cannot parse a reply's tool-call arguments keeps them as invalid calls when it streams)."""
    fields = type(model).model_fields
    update = {k: v for k, v in (("streaming", True), ("disable_streaming", False)) if k in fields}
    return model.model_copy(update=update) if update else model


def tag_reply(message: AIMessage, agent: str, profile: Profile) -> AIMessage:
    """A reply as stored: named by the agent, its persona marker in its metadata, and when it
    was made (a handover resumed after a crash keeps that time and its file's date)."""
    metadata = dict(message.response_metadata or {})
    metadata.update({"persona_marker": profile.marker, "persona_emoji": profile.emoji})
    metadata.setdefault("created_at", now_utc().isoformat())
    return message.model_copy(
        update={
            "name": agent,
            "response_metadata": metadata,
            "id": message.id or f"msg-{uuid.uuid4().hex}",
        }
    )


GRAPH_MADE = "handover_graph_reply"
"""Metadata flag of every reply the graph writes itself: no model call made it."""


def graph_reply(agent: str, profile: Profile, content: str, flag: str) -> AIMessage:
    """A reply the graph writes for an agent (no model asked), marked with `flag`."""
    return AIMessage(
        content=content,
        name=agent,
        id=f"msg-{uuid.uuid4().hex}",
        response_metadata={
            "persona_marker": profile.marker,
            "persona_emoji": profile.emoji,
            flag: True,
            GRAPH_MADE: True,
        },
    )


def stop_message(agent: str, profile: Profile, turns: int, max_turns: int) -> AIMessage:
    """What an agent says when it reaches max_turns model calls in a row."""
    return graph_reply(
        agent,
        profile,
        f"⚠️ {profile.label} stopped after {turns} model calls in a row without finishing "
        f"(max_turns={max_turns}). Nothing was lost: ask again or rephrase, and the "
        "conversation continues from here.",
        MAX_TURNS_REACHED,
    )


MAX_TURNS_REACHED = "max_turns_reached"
"""Metadata flag of the message an agent stops with at `max_turns`."""


def stored_replies(
    added: list[BaseMessage],
    *,
    agent: str,
    profile: Profile,
    taken: set[str],
    stored_ids: set[str | None] = frozenset(),  # type: ignore[assignment]
    label: bool = False,
) -> list[BaseMessage]:
    """What an agent added, as the conversation stores it: its replies and tool results only,
    replies named and tagged, every tool-call id unique in the thread (a repeated one is
    renamed, in its results too), every message id new (a reused one would overwrite a stored
    message), and calls no result answers closed with an `ERROR:` (the last reply's transfer
    calls excepted: the handover node answers them)."""
    seen = set(taken)
    renamed: dict[str, str] = {}
    out: list[BaseMessage] = []
    for message in added:
        if message.id in stored_ids:
            message = message.model_copy(update={"id": f"{message.type}-{uuid.uuid4().hex}"})
        if isinstance(message, AIMessage):
            safe = make_reply_safe(tag_reply(message, agent, profile), seen, renamed)
            seen.update(c["id"] or "" for c in [*safe.tool_calls, *safe.invalid_tool_calls])
            out.append(labeled(safe, agent, profile) if label else safe)
        elif isinstance(message, ToolMessage):
            call_id = renamed.get(message.tool_call_id, message.tool_call_id)
            update: dict[str, Any] = {"tool_call_id": call_id}
            if message.name == FULL_HISTORY and len(message.text) > STAGE_2_STORED_CHARS:
                update["content"] = stage_2_record(message.text, agent)
            out.append(message.model_copy(update=update))
    return _close_pending(out)


STAGE_2_STORED_CHARS = 2000
"""A `request_full_history` result longer than this is stored as its record (below)."""


def stage_2_record(text: str, agent: str) -> str:
    """What the conversation keeps of a stage-2 result: its header line and a note. The agent
    had the whole text in the turn it asked; storing up to 50,000 tokens of a history the
    thread already holds would make every later load and view carry it."""
    header = text.splitlines()[0] if text else ""
    return (
        f"{header[:300]}\n(the full history was given to {agent} in this turn and is not "
        f"stored again; request_full_history gives it anew)"
    )


def labeled(reply: AIMessage, agent: str, profile: Profile) -> AIMessage:
    """The reply opened by its speaker's label (`🖌️ **frontend designer**`), for chat UIs that
    show message text only; a reply without text, or labelled already, stays as it is."""
    text = message_text(reply)
    if not text.strip() or text != reply.text:  # no text, or the label is there
        return reply
    label = speaker_label(profile.emoji, agent)
    if isinstance(reply.content, str):
        return reply.model_copy(update={"content": label + reply.content})
    return reply.model_copy(update={"content": [{"type": "text", "text": label}, *reply.content]})


def _close_pending(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Answer the calls no tool message answers, but the last reply's transfer calls."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    out: list[BaseMessage] = []
    for i, message in enumerate(messages):
        out.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in [*message.tool_calls, *message.invalid_tool_calls]:
            if call["id"] in answered or (i == last and call.get("name") in TRANSFER_NAMES):
                continue
            out.append(
                ToolMessage(
                    content=f"ERROR: {call.get('name') or 'the tool'} was not answered.",
                    tool_call_id=call["id"],
                    name=call.get("name") or "unknown",
                    id=f"tool-{uuid.uuid4().hex}",
                    status="error",
                )
            )
    return out
