"""The orchestrator node: the orchestrator profile's agent, over a bounded window.

Its request is bounded however long the conversation gets: its prompt, the
handover trail, a short extractive summary of the turns before its window, and
a window of whole recent turns in which other agents' tool plumbing is reduced
to their text. Stored history is only read, never rewritten.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from ...specialists import ORCHESTRATOR_PROFILE, Profile
from ...state import ORCHESTRATOR, HandoverContext, HandoverState, coerce_context
from ..handover.trail import describe_trail
from ..history.conversation import message_text, own_view, window_of_turns
from ..history.extractive import extractive_summary
from .run import run_agent

WINDOW_USER_TURNS = 6
SUMMARY_LOOKBACK_MESSAGES = 40


def orchestrator_prompt(profile: Profile, state: HandoverState, window_start: int) -> str:
    """The orchestrator's system prompt for this request."""
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


def make_orchestrator_node(profile: Profile, agent: CompiledStateGraph):  # type: ignore[no-untyped-def]
    """The `orchestrator` node: prepares the window, runs the agent's loop, keeps control."""

    def orchestrator(
        state: HandoverState, runtime: Runtime[HandoverContext], config: RunnableConfig
    ) -> dict[str, Any]:
        coerce_context(runtime.context)  # a context that cannot work fails here, by name
        messages = state.get("messages", [])
        start, window = window_of_turns(messages, WINDOW_USER_TURNS)
        new_user_turn = bool(messages) and isinstance(messages[-1], HumanMessage)
        turns = 0 if new_user_turn else state.get("agent_turns", 0)
        if state.get("active_agent", ORCHESTRATOR) != ORCHESTRATOR:
            turns = 0  # control just came back
        added, calls = run_agent(
            agent,
            view=own_view(window, ORCHESTRATOR),
            system_prompt=orchestrator_prompt(profile, state, start),
            model_calls=turns,
            conversation=messages,
            config=config,
        )
        update: dict[str, Any] = {
            "messages": added,
            "active_agent": ORCHESTRATOR,
            "agent_turns": calls,
            "handover_depth": 0,
        }
        if new_user_turn:
            update["turn_trail"] = []  # a new user turn: its handovers are counted afresh
        return update

    return orchestrator
