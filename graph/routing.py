"""Routing functions for the conditional edges; each edge declares its destinations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END

from ..nodes.agents.remote import REMOTE_FAILED
from ..nodes.handover.consult import CONSULT_NODE, consult_pending
from ..nodes.handover.node import LOOP_STOPPED, TURN_ENDED
from ..nodes.history.conversation import pending_tool_calls
from ..state import ORCHESTRATOR, HandoverState, usable

HANDOVER_NODE = "handover"

Router = Callable[[HandoverState], str]


def make_route_by_active_agent(agents: Sequence[str]) -> Router:
    """START (and after a handover): the next turn goes to whoever holds the conversation."""
    known = frozenset(agents)

    def route_by_active_agent(state: HandoverState) -> str:
        state = usable(state)
        agent = state.get("active_agent") or ORCHESTRATOR
        handover: dict[str, Any] = dict(state.get("handover") or {})
        if agent != ORCHESTRATOR and not handover.get("rendered"):
            return ORCHESTRATOR  # a specialist without its package cannot work: start over
        return agent if agent in known else ORCHESTRATOR

    return route_by_active_agent


def make_route_after_handover(agents: Sequence[str]) -> Router:
    """After the handover node: to the new specialist, back to the caller, or, when the
    handovers of this turn were looping, END with the caller's answer to the user."""
    route_by_active_agent = make_route_by_active_agent(agents)

    def route_after_handover(state: HandoverState) -> str:
        messages = state.get("messages", [])
        last = messages[-1] if messages else None
        flags = last.response_metadata if isinstance(last, AIMessage) else {}
        if flags.get(LOOP_STOPPED) or flags.get(TURN_ENDED):
            return END
        return route_by_active_agent(state)

    return route_after_handover


def route_after_orchestrator(state: HandoverState) -> str:
    """A pending handover call goes to the handover node, a consult to the consult node; a
    reply ends the run."""
    messages = state.get("messages", [])
    if not pending_tool_calls(messages):
        return END
    return CONSULT_NODE if consult_pending(messages) else HANDOVER_NODE


def route_after_specialist(state: HandoverState) -> str:
    """After a specialist: hand over, return to the orchestrator now, or end the run.

    - a pending transfer call (a handover or a return) -> handover, which carries it
      out or refuses it (the depth guard is applied there);
    - the specialist still holds the conversation (user_request) -> END;
    - it replied and the chain's return condition is task_complete -> orchestrator,
      which answers the user in the same run; after_reply -> END, and the next user
      turn goes to the orchestrator;
    - a remote specialist's run failed -> orchestrator, which answers the user now.
    """
    state = usable(state)
    messages = state.get("messages", [])
    if pending_tool_calls(messages):
        return HANDOVER_NODE
    if state.get("active_agent") != ORCHESTRATOR:
        return END
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and last.response_metadata.get(REMOTE_FAILED):
        return ORCHESTRATOR
    handover: dict[str, Any] = dict(state.get("handover") or {})
    condition = handover.get("root_return_condition") or handover.get("return_condition")
    return ORCHESTRATOR if condition == "task_complete" else END
