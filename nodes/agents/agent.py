"""One agent as a LangGraph subgraph: a model step and a tool step, each its own checkpoint.

    START -> model --tool calls--> tools (one task per call) --> model ... --> END

The loop starts from the bounded `view` its node gives it and collects only
what this activation adds (`state/agent.py`). It ends when the model answers
without tool calls, when it calls `handover_to_specialist` (left unanswered
for the graph's handover node, which answers it), after a tool step that ran
`return_to_orchestrator`, or when the agent reaches `max_turns` model calls in
a row, with a clear message instead of a runaway loop.

Every request the model receives has a valid tool-call history: each
assistant tool call is answered by exactly one tool message before anything
else. A reply is made safe before it is stored (`replies.py`: unique ids,
valid names), and calls that cannot run are answered with an `ERROR:` the
model can act on: unparsable or non-object arguments (at the model step, then
the model tries again), unknown tool names and failing tools (at the tool
step). Transient model errors are retried with backoff (`retry.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolCallWithContext
from langgraph.runtime import Runtime
from langgraph.types import Send

from ...specialists import Profile
from ...state import AgentState, HandoverContext, coerce_context
from ..briefing.writer import now_utc
from ..history.conversation import valid_tool_history
from ..tools.names import HANDOVER, RETURN
from .replies import (
    CALL_IDS_KEY,
    invoke_readably,
    make_reply_safe,
    unparsable_answers,
    used_call_ids,
)
from .retry import MODEL_RETRY, is_transient, model_failure

MODEL_NODE = "model"
TOOLS_NODE = "tools"

ModelFor = Callable[[HandoverContext], BaseChatModel]


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


def stop_message(agent: str, profile: Profile, turns: int, max_turns: int) -> AIMessage:
    """What an agent says when it reaches max_turns model calls in a row."""
    return AIMessage(
        content=f"⚠️ {profile.label} stopped after {turns} model calls in a row without "
        f"finishing (max_turns={max_turns}). Nothing was lost: ask again or rephrase, and the "
        "conversation continues from here.",
        name=agent,
        id=f"msg-{uuid.uuid4().hex}",
        response_metadata={
            "persona_marker": profile.marker,
            "persona_emoji": profile.emoji,
            "max_turns_reached": True,
        },
    )


def _error(call: Any, content: str) -> ToolMessage:
    return ToolMessage(
        content=content,
        tool_call_id=call["id"],
        name=call.get("name") or "unknown",
        id=f"tool-{uuid.uuid4().hex}",
        status="error",
    )


def _last_reply(state: AgentState) -> AIMessage | None:
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage):
            return message
    return None


def _answered(state: AgentState) -> set[str]:
    return {m.tool_call_id for m in state.get("messages") or [] if isinstance(m, ToolMessage)}


def _returning(reply: AIMessage) -> bool:
    return any(call["name"] == RETURN for call in reply.tool_calls)


def make_tool_guard(available: Sequence[str]):  # type: ignore[no-untyped-def]
    """The ToolNode wrapper: unknown tools, failing tools and hand-over-while-returning as ERRORs."""
    names = ", ".join(sorted({*available, HANDOVER}))

    def guard(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        call = request.tool_call
        name = call["name"]
        if name == HANDOVER:  # only sent here when the same reply also returns
            return _error(
                call,
                "ERROR: cannot hand over and return to the orchestrator in the same turn; "
                "returned.",
            )
        if request.tool is None:
            return _error(call, f"ERROR: unknown tool '{name}'. Available tools: {names}")
        try:
            return execute(request)
        except GraphBubbleUp:  # interrupts and parent commands pass through
            raise
        except Exception as exc:  # a tool failure is a result the agent can act on
            return _error(call, f"ERROR: {name} failed: {type(exc).__name__}: {exc}")

    return guard


def build_agent(
    *,
    agent: str,
    profile: Profile,
    model_for: ModelFor,
    tools: Sequence[BaseTool],
    handover_tool: dict[str, Any] | None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile one agent's loop: its model (bound to its tools) and a ToolNode for them."""
    bound_specs: list[Any] = ([handover_tool] if handover_tool else []) + list(tools)
    tool_names = [t.name for t in tools]

    def call_model(
        state: AgentState, runtime: Runtime[HandoverContext], config: RunnableConfig
    ) -> dict[str, Any]:
        ctx = coerce_context(runtime.context)
        calls = state.get("model_calls", 0)
        if calls >= ctx.max_turns:
            return {"messages": [stop_message(agent, profile, calls, ctx.max_turns)]}
        model = model_for(ctx)
        history = [*(state.get("view") or []), *(state.get("messages") or [])]
        request = [
            SystemMessage(content=state.get("system_prompt") or profile.prompt),
            *valid_tool_history(history),
        ]
        try:
            reply = invoke_readably(model, bound_specs, request, config)
        except GraphBubbleUp:
            raise
        except Exception as exc:  # retried when transient; else a clear error naming who and where
            info = runtime.execution_info
            raise model_failure(
                agent=agent,
                model=model,
                exc=exc,
                attempt=info.node_attempt if info is not None else 1,
                attempts=ctx.model_attempts if is_transient(exc) else 1,
            ) from exc
        # unique in the whole thread: a handover's id names its briefing entry and its answer
        taken = used_call_ids(history) | (config.get("configurable") or {}).get(CALL_IDS_KEY, set())
        reply = make_reply_safe(tag_reply(reply, agent, profile), taken)
        return {"messages": [reply, *unparsable_answers(reply)], "model_calls": calls + 1}

    def after_model(state: AgentState) -> Any:
        reply = _last_reply(state)
        if reply is None or reply.response_metadata.get("max_turns_reached"):
            return END
        answered = _answered(state)
        returning = _returning(reply)
        to_run = [
            call
            for call in reply.tool_calls
            if call["id"] not in answered and (call["name"] != HANDOVER or returning)
        ]
        if to_run:
            return [
                Send(
                    TOOLS_NODE,
                    ToolCallWithContext(
                        __type="tool_call_with_context", tool_call=call, state=state
                    ),
                )
                for call in to_run
            ]
        if any(call["name"] == HANDOVER for call in reply.tool_calls):
            return END  # the graph's handover node answers it
        if reply.invalid_tool_calls and not reply.tool_calls:
            return MODEL_NODE  # its unparsable calls were answered: let it try again
        return END

    def after_tools(state: AgentState) -> str:
        reply = _last_reply(state)
        if reply is None:
            return END
        pending_handover = any(
            c["name"] == HANDOVER and c["id"] not in _answered(state) for c in reply.tool_calls
        )
        return END if _returning(reply) or pending_handover else MODEL_NODE

    builder = StateGraph(AgentState, context_schema=HandoverContext)
    # streamed messages (stream_mode="messages", subgraphs=True) say who speaks
    builder.add_node(  # type: ignore[call-overload]  # (state, runtime, config) is not in its overloads
        MODEL_NODE,
        call_model,
        metadata={"agent": agent, "persona_marker": profile.marker},
        retry_policy=MODEL_RETRY,
    )
    builder.add_node(
        TOOLS_NODE,
        ToolNode(
            list(tools),
            handle_tool_errors=False,
            wrap_tool_call=make_tool_guard(tool_names),
        ),
    )
    builder.add_edge(START, MODEL_NODE)
    builder.add_conditional_edges(MODEL_NODE, after_model, [TOOLS_NODE, MODEL_NODE, END])
    builder.add_conditional_edges(TOOLS_NODE, after_tools, [MODEL_NODE, END])
    return builder.compile(name=agent)
