"""The specialist node factory: one node per profile, named by the profile.

A specialist's request holds its own system prompt, the stage-1 package and the
messages since its handover — never the whole history (invariant 2) — until it
asks for more with `request_full_history` (stage 2) or `read_briefing` (stage 3).
Its reply decides, with the handover's return condition, who holds the
conversation next.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, get_buffer_string
from langgraph.runtime import Runtime

from ...specialists import PROFILES, Profile
from ...state import (
    RETURN_CONDITIONS,
    HandoverContext,
    HandoverState,
    coerce_context,
    token_counter,
)
from ..handover.trail import return_update
from ..history.conversation import messages_since, own_view
from ..models.offline import OfflineChatModel
from ..models.resolve import ModelSpec, model_for
from ..tools.schemas import FULL_HISTORY, READ_BRIEFING, RETURN, specialist_tools
from .loop import LocalTool, run_agent_turn

READ_BRIEFING_MAX_TOKENS = 4000


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
    package = HumanMessage(content=handover.get("rendered", ""), name="handover")
    return [package, *own_view(messages_since(messages, handover.get("anchor_id")), name)]


def _summariser(model: BaseChatModel):  # type: ignore[no-untyped-def]
    """Condense older turns with a real model (the offline model compacts extractively)."""
    if isinstance(model, OfflineChatModel):
        return None

    def summarize(messages: list[BaseMessage], budget: int) -> str:
        reply = model.invoke(
            [
                SystemMessage(
                    content=f"Summarise this conversation excerpt in at most {budget} tokens. "
                    "Keep decisions, file paths, numbers and open questions."
                ),
                HumanMessage(content=get_buffer_string(messages)[: budget * 40]),
            ]
        )
        return str(reply.content)

    return summarize


def make_specialist_node(profile: Profile, model_spec: ModelSpec):  # type: ignore[no-untyped-def]
    """The node function for one specialist profile."""
    name = profile.name

    def specialist(state: HandoverState, runtime: Runtime[HandoverContext]) -> dict[str, Any]:
        ctx = coerce_context(runtime.context)
        handover = dict(state.get("handover") or {})
        messages = state.get("messages", [])
        model = model_for(name, model_spec, ctx.model)
        counter = token_counter(ctx.model)

        def full_history(_args: dict[str, Any]) -> str:
            from ..history.full_history import build_full_history

            return build_full_history(
                messages,
                package_text=handover.get("rendered", ""),
                max_tokens=ctx.full_history_max_tokens,
                counter=counter,
                summarize=_summariser(model),
            ).text

        def briefing(args: dict[str, Any]) -> str:
            from ..briefing.reader import read_briefing

            topic = args.get("topic")
            return read_briefing(
                project_root=ctx.project_root,
                specialist=name,
                topic=topic if isinstance(topic, str) and topic.strip() else None,
                max_tokens=READ_BRIEFING_MAX_TOKENS,
                counter=counter,
            )

        local: dict[str, LocalTool] = {
            RETURN: lambda args: "Returned to the orchestrator with your summary.",
            FULL_HISTORY: full_history,
            READ_BRIEFING: briefing,
        }
        new_user_turn = bool(messages) and isinstance(messages[-1], HumanMessage)
        result = run_agent_turn(
            agent=name,
            profile=profile,
            model=model,
            system_prompt=specialist_prompt(profile, handover),
            history=specialist_history(name, handover, messages),
            tools=specialist_tools(name),
            local_tools=local,
            turns_so_far=0 if new_user_turn else state.get("agent_turns", 0),
            max_turns=ctx.max_turns,
        )
        update: dict[str, Any] = {"messages": result.messages, "agent_turns": result.turns}
        condition = handover.get("root_return_condition") or handover.get("return_condition")
        if result.returned_summary is not None:
            reason = result.returned_summary or "returned"
        elif result.handover_pending or result.stopped:
            return update
        elif condition in ("task_complete", "after_reply"):
            reason = f"{condition}: replied"
        else:
            return update  # user_request: the specialist keeps the conversation
        update.update(return_update(name, handover, reason))
        return update

    specialist.__name__ = name
    return specialist


def make_specialist_nodes(model_spec: ModelSpec) -> dict[str, Any]:
    """name -> node function for every specialist profile."""
    from ...specialists import SPECIALISTS

    return {name: make_specialist_node(PROFILES[name], model_spec) for name in SPECIALISTS}
