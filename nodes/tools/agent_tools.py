"""The specialists' own tools: hand back, stage 2 (full history), stage 3 (own briefing).

They are ordinary LangChain tools run by each agent's `ToolNode`, so every
call is its own checkpointed step. They read the run's settings from the
LangGraph runtime context. Stage 2 needs the whole stored conversation, which
an agent's own loop does not carry (it works from a bounded view): the agent
node passes it, in process and never checkpointed, under `CONVERSATION_KEY` in
the run config.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, get_buffer_string
from langchain_core.tools import BaseTool, tool

from ...state import HandoverContext, TokenCounter, coerce_context
from ..briefing.reader import read_briefing
from ..briefing.shared import read_briefing_from_store
from ..history.full_history import build_full_history
from .names import FULL_HISTORY, READ_BRIEFING, RETURN

CONVERSATION_KEY = "specialist_handover_conversation"
"""Run-config key (`configurable`) holding the stored conversation for stage 2."""

READ_BRIEFING_MAX_TOKENS = 4000

CounterFor = Callable[[HandoverContext], TokenCounter]
ModelFor = Callable[[HandoverContext], BaseChatModel]


@tool(RETURN)
def return_to_orchestrator(summary: str) -> str:
    """Hand the conversation back to the orchestrator, with a concise summary of what you
    did and decided. Use it when the user asks to go back or your task is complete."""
    return "Returned to the orchestrator with your summary."


def model_summarizer(model: BaseChatModel) -> Callable[[list[BaseMessage], int], str]:
    """Stage 2's summarizer: ask the agent's own model to condense older turns."""

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


def _package_text(state: Any) -> str:
    view: Sequence[BaseMessage] = (state or {}).get("view") or []
    return str(view[0].content) if view and isinstance(view[0], HumanMessage) else ""


def make_full_history_tool(*, counter_for: CounterFor, model_for: ModelFor) -> BaseTool:
    """Stage 2: the whole conversation, capped and compacted, for one agent."""

    @tool(FULL_HISTORY)
    def request_full_history(runtime: ToolRuntime[HandoverContext]) -> str:
        """Stage 2: get the whole conversation so far (capped, older parts compacted) when the
        handover package is not enough."""
        ctx = coerce_context(runtime.context)
        conversation = (runtime.config.get("configurable") or {}).get(CONVERSATION_KEY)
        if conversation is None:
            return "ERROR: the full history is not available outside the handover graph."
        return build_full_history(
            conversation,
            package_text=_package_text(runtime.state),
            max_tokens=ctx.full_history_max_tokens,
            counter=counter_for(ctx),
            summarize=model_summarizer(model_for(ctx)),
        ).text

    return request_full_history


def make_read_briefing_tool(*, specialist: str, counter_for: CounterFor) -> BaseTool:
    """Stage 3: the specialist's own briefing entries, newest first."""

    @tool(READ_BRIEFING)
    def read_own_briefing(runtime: ToolRuntime[HandoverContext], topic: str | None = None) -> str:
        """Stage 3: read your own briefing entries: earlier handovers to you, newest first.
        Give `topic` (a slug) for one topic; omit it for all of your topics."""
        ctx = coerce_context(runtime.context)
        wanted = topic if isinstance(topic, str) and topic.strip() else None
        counter = counter_for(ctx)
        if runtime.store is not None:  # what every replica wrote, not only this machine
            return read_briefing_from_store(
                runtime.store,
                project_root=ctx.project_root,
                specialist=specialist,
                topic=wanted,
                max_tokens=READ_BRIEFING_MAX_TOKENS,
                counter=counter,
            )
        return read_briefing(
            project_root=ctx.project_root,
            specialist=specialist,
            topic=wanted,
            max_tokens=READ_BRIEFING_MAX_TOKENS,
            counter=counter,
        )

    return read_own_briefing
