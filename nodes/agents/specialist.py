"""A specialist's node: one per profile, named by the profile.

A specialist's request holds its own system prompt, the stage-1 package and
the messages since its handover, never the whole history, until it asks for
more with `request_full_history` (stage 2) or `read_briefing` (stage 3). When
its loop ends, the handover's return condition decides who holds the
conversation next.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from ...specialists import Profile
from ...state import RETURN_CONDITIONS, HandoverContext, HandoverState, coerce_context
from ..handover.trail import return_hop, return_update
from ..history.conversation import messages_since, own_view
from ..tools.names import HANDOVER, RETURN
from .run import run_agent


def specialist_prompt(profile: Profile, handover: dict[str, Any]) -> str:
    """System prompt: the profile's prompt and how to hand back."""
    condition = handover.get("root_return_condition") or handover.get("return_condition")
    return (
        f"{profile.prompt}\n\n---\nYou are the {profile.title} (profile `{profile.name}`), "
        f"{profile.emoji}. You hold the conversation because of the handover package that "
        "opens the conversation below; its last user turn is the request to work on.\n"
        f"Return condition: {condition} — {RETURN_CONDITIONS.get(condition or '', '')}.\n"
        "Call return_to_orchestrator(summary) when the user asks to go back or the task is "
        "complete."
    )


def specialist_history(name: str, handover: dict[str, Any], messages: list) -> list:  # type: ignore[type-arg]
    """What the specialist sees after its prompt: the package, then the turns since its handover.

    The package opens as a user message, so every request has a user turn (some
    providers require one) even before the user has said anything to the specialist.
    """
    package = HumanMessage(
        content=handover.get("rendered", ""),
        name="handover",
        id=f"package-{handover.get('handover_id') or handover.get('anchor_id') or name}",
    )
    return [package, *own_view(messages_since(messages, handover.get("anchor_id")), name)]


def returned_summary(added: list[BaseMessage]) -> str | None:
    """The summary the specialist handed back with, or None when it did not return."""
    returned = {m.tool_call_id for m in added if isinstance(m, ToolMessage) and m.name == RETURN}
    for message in added:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["name"] == RETURN and call["id"] in returned:
                    return str((call.get("args") or {}).get("summary") or "").strip()
    return None


def make_specialist_node(profile: Profile, agent: CompiledStateGraph):  # type: ignore[no-untyped-def]
    """The node of one specialist profile: its view in, its loop, then who holds the conversation."""
    name = profile.name

    def specialist(
        state: HandoverState, runtime: Runtime[HandoverContext], config: RunnableConfig
    ) -> dict[str, Any]:
        coerce_context(runtime.context)  # a context that cannot work fails here, by name
        handover = dict(state.get("handover") or {})
        messages = state.get("messages", [])
        new_user_turn = bool(messages) and isinstance(messages[-1], HumanMessage)
        added, calls = run_agent(
            agent,
            view=specialist_history(name, handover, messages),
            system_prompt=specialist_prompt(profile, handover),
            model_calls=0 if new_user_turn else state.get("agent_turns", 0),
            conversation=messages,
            config=config,
        )
        update: dict[str, Any] = {"messages": added, "agent_turns": calls}
        trail = [] if new_user_turn else list(state.get("turn_trail") or [])
        if new_user_turn:
            update["turn_trail"] = trail
        condition = handover.get("root_return_condition") or handover.get("return_condition")
        summary = returned_summary(added)
        last = next((m for m in reversed(added) if isinstance(m, AIMessage)), None)
        stopped = last is not None and bool(last.response_metadata.get("max_turns_reached"))
        handing_over = last is not None and any(c["name"] == HANDOVER for c in last.tool_calls)
        if summary is not None:
            reason = summary or "returned"
        elif handing_over or stopped:
            return update
        elif condition in ("task_complete", "after_reply"):
            reason = f"{condition}: replied"
        else:
            return update  # user_request: the specialist keeps the conversation
        update.update(return_update(name, handover, reason))
        update["turn_trail"] = [*trail, return_hop(name)]
        return update

    specialist.__name__ = name
    return specialist
