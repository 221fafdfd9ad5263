"""One agent's turn: call the model, run its local tools, stop at max_turns.

Shared by the orchestrator and every specialist. Local tools (return, stage 2,
stage 3, unknown names) are answered here, so the history stays valid; a
`handover_to_specialist` call is left for the handover node, which answers it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from ...specialists import Profile
from ..briefing.writer import now_utc
from ..history.conversation import valid_tool_history
from ..tools.schemas import HANDOVER, RETURN

LocalTool = Callable[[dict[str, Any]], str]


@dataclass
class TurnResult:
    """What one activation of an agent produced."""

    messages: list[BaseMessage] = field(default_factory=list)
    turns: int = 0
    returned_summary: str | None = None
    handover_pending: bool = False
    stopped: bool = False


def tag_reply(message: AIMessage, agent: str, profile: Profile) -> AIMessage:
    """The reply as stored: named by the agent, persona marker in its metadata."""
    metadata = dict(message.response_metadata or {})
    metadata.update(
        {
            "persona_marker": profile.marker,
            "persona_emoji": profile.emoji,
            # when the agent asked: a handover resumed after a crash keeps this time and date
            "created_at": now_utc().isoformat(),
        }
    )
    return message.model_copy(
        update={
            "name": agent,
            "response_metadata": metadata,
            "id": message.id or f"msg-{uuid.uuid4().hex}",
        }
    )


def _tool_message(call: dict[str, Any], content: str) -> ToolMessage:
    return ToolMessage(
        content=content,
        tool_call_id=call["id"],
        name=call["name"],
        id=f"tool-{uuid.uuid4().hex}",
    )


def run_agent_turn(
    *,
    agent: str,
    profile: Profile,
    model: BaseChatModel,
    system_prompt: str,
    history: Sequence[BaseMessage],
    tools: list[dict[str, Any]],
    local_tools: dict[str, LocalTool],
    turns_so_far: int,
    max_turns: int,
) -> TurnResult:
    """Run the agent until it replies, hands over, returns, or reaches max_turns."""
    bound = model.bind_tools(tools) if tools else model
    result = TurnResult(turns=turns_so_far)
    while True:
        if result.turns >= max_turns:
            result.stopped = True
            result.messages.append(
                AIMessage(
                    content=f"⚠️ {profile.label} stopped after {result.turns} model calls in a "
                    f"row without finishing (max_turns={max_turns}). Nothing was lost: ask "
                    "again or rephrase, and the conversation continues from here.",
                    name=agent,
                    id=f"msg-{uuid.uuid4().hex}",
                    response_metadata={
                        "persona_marker": profile.marker,
                        "persona_emoji": profile.emoji,
                        "max_turns_reached": True,
                    },
                )
            )
            return result
        request = [
            SystemMessage(content=system_prompt),
            *valid_tool_history([*history, *result.messages]),
        ]
        # streamed chunks carry who speaks in their metadata (stream_mode="messages")
        reply = bound.invoke(
            request,
            config={"metadata": {"agent": agent, "persona_marker": profile.marker}},
        )
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        reply = tag_reply(reply, agent, profile)
        result.turns += 1
        if any(not bad.get("id") for bad in reply.invalid_tool_calls):
            # a call without an id cannot be answered: keep it out of the history
            kept = [bad for bad in reply.invalid_tool_calls if bad.get("id")]
            reply = reply.model_copy(update={"invalid_tool_calls": kept})
        result.messages.append(reply)
        # calls whose arguments did not parse are still sent back to the API as tool calls,
        # so each gets its ERROR answer and the model tries again
        for bad in reply.invalid_tool_calls:
            result.messages.append(
                ToolMessage(
                    content=f"ERROR: the call to {bad.get('name') or 'a tool'} could not be "
                    f"read ({bad.get('error') or 'invalid JSON arguments'}); call it again "
                    "with valid JSON arguments.",
                    tool_call_id=bad["id"],
                    name=bad.get("name") or "unknown",
                    id=f"tool-{uuid.uuid4().hex}",
                )
            )
        if not reply.tool_calls:
            if reply.invalid_tool_calls:
                continue
            return result
        returning = RETURN in local_tools and any(c["name"] == RETURN for c in reply.tool_calls)
        for call in reply.tool_calls:
            if call["name"] == HANDOVER and not returning:
                result.handover_pending = True
                continue
            result.messages.append(_tool_message(call, _run_local(call, local_tools, returning)))
            if returning and call["name"] == RETURN and result.returned_summary is None:
                result.returned_summary = str(call["args"].get("summary") or "").strip()
        if result.handover_pending or returning:
            return result


def _run_local(call: dict[str, Any], local_tools: dict[str, LocalTool], returning: bool) -> str:
    name = call["name"]
    if name == HANDOVER and returning:
        return "ERROR: cannot hand over and return to the orchestrator in the same turn; returned."
    tool = local_tools.get(name)
    if tool is None:
        available = ", ".join(sorted({*local_tools, HANDOVER}))
        return f"ERROR: unknown tool '{name}'. Available tools: {available}"
    try:
        return tool(call.get("args") or {})
    except Exception as exc:  # a tool failure is a result the agent can act on
        return f"ERROR: {name} failed: {type(exc).__name__}: {exc}"
