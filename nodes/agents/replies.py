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
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, message_chunk_to_message
from pydantic import ValidationError

CALL_IDS_KEY = "specialist_handover_call_ids"
"""Run-config key (`configurable`) holding the tool-call ids the stored conversation uses."""

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


def make_reply_safe(reply: AIMessage, taken: set[str]) -> AIMessage:
    """The reply with unique ids, valid names, and non-object arguments moved to invalid calls."""
    seen = set(taken)

    def unique(call_id: Any) -> str:
        fresh = call_id if isinstance(call_id, str) and call_id and call_id not in seen else None
        fresh = fresh or new_call_id()
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


def _streaming(model: BaseChatModel) -> BaseChatModel:
    """The same model with streaming switched on, whatever the instance said."""
    fields = type(model).model_fields
    update = {k: v for k, v in (("streaming", True), ("disable_streaming", False)) if k in fields}
    return model.model_copy(update=update) if update else model


def invoke_readably(
    model: BaseChatModel, tools: list[Any], request: list[BaseMessage], config: Any
) -> AIMessage:
    """Invoke the model bound to `tools`; when its client cannot parse the reply's tool calls,
    ask once more, streaming, where LangChain keeps such calls as invalid ones instead."""
    bound = model.bind_tools(tools) if tools else model
    reply: Any
    try:
        reply = bound.invoke(request, config)
    except ValidationError as exc:
        if not is_unreadable_tool_call(exc):
            raise
        streaming = _streaming(model)
        rebound = streaming.bind_tools(tools) if tools else streaming
        reply = None
        for chunk in rebound.stream(request, config):
            reply = chunk if reply is None else reply + chunk
        if reply is None:
            raise
        reply = message_chunk_to_message(reply)
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=str(getattr(reply, "content", reply)))
    return reply
