"""The orchestrator node: the a0_software_orchestrator profile, bound to the handover tool.

Its request is bounded (invariant 9): its prompt, the handover trail, a short
extractive summary of the turns before its window, and a window of whole recent
turns in which other agents' tool plumbing is reduced to their text.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from ...specialists import ORCHESTRATOR_PROFILE, PROFILES
from ...state import ORCHESTRATOR, HandoverContext, HandoverState, coerce_context
from ..handover.trail import describe_trail
from ..history.conversation import message_text, own_view, window_of_turns
from ..models.offline import extractive_summary
from ..models.resolve import ModelSpec, model_for
from ..tools.schemas import orchestrator_tools
from .loop import run_agent_turn

WINDOW_USER_TURNS = 6
SUMMARY_LOOKBACK_MESSAGES = 40


def orchestrator_prompt(state: HandoverState, window_start: int) -> str:
    """The orchestrator's system prompt for this request."""
    profile = PROFILES[ORCHESTRATOR_PROFILE]
    earlier = state.get("messages", [])[
        max(0, window_start - SUMMARY_LOOKBACK_MESSAGES) : window_start
    ]
    texts = [
        message_text(m)
        for m in earlier
        if isinstance(m, HumanMessage | AIMessage) and message_text(m).strip()
    ]
    summary = extractive_summary(texts, max_words=150) if texts else "(nothing earlier)"
    return (
        f"{profile.prompt}\n\n---\nYou are the orchestrator (profile `{ORCHESTRATOR_PROFILE}`).\n"
        f"Handover trail (most recent last):\n{describe_trail(state.get('handovers') or [])}\n\n"
        f"Earlier in this conversation (before the turns below): {summary}"
    )


def make_orchestrator_node(model_spec: ModelSpec):  # type: ignore[no-untyped-def]
    """The `orchestrator` node function for a build's model spec."""
    profile = PROFILES[ORCHESTRATOR_PROFILE]

    def orchestrator(state: HandoverState, runtime: Runtime[HandoverContext]) -> dict[str, Any]:
        ctx = coerce_context(runtime.context)
        messages = state.get("messages", [])
        start, window = window_of_turns(messages, WINDOW_USER_TURNS)
        turns = (
            0
            if messages and isinstance(messages[-1], HumanMessage)
            else state.get("agent_turns", 0)
        )
        if state.get("active_agent", ORCHESTRATOR) != ORCHESTRATOR:
            turns = 0  # control just came back
        result = run_agent_turn(
            agent=ORCHESTRATOR,
            profile=profile,
            model=model_for(ORCHESTRATOR_PROFILE, model_spec, ctx.model),
            system_prompt=orchestrator_prompt(state, start),
            history=own_view(window, ORCHESTRATOR),
            tools=orchestrator_tools(),
            local_tools={},
            turns_so_far=turns,
            max_turns=ctx.max_turns,
        )
        return {
            "messages": result.messages,
            "active_agent": ORCHESTRATOR,
            "agent_turns": result.turns,
            "handover_depth": 0,
        }

    return orchestrator
