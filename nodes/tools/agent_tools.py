"""Stage 2 (the full history) and stage 3 (one's own briefing) as ordinary LangChain tools.

Any agent of the handover graph may carry them, a user's own `create_agent(...)`
included (`handover_tools`). They read what they need from the run: the run
context (project root, caps) and the `MemberRun` the agent's node passes in
process (the stored conversation, the agent's token counter and model), so one
tool serves every agent. Outside the graph they answer with an `ERROR:`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    get_buffer_string,
)
from langchain_core.tools import tool

from ...state import (
    MEMBER_RUN_KEY,
    HandoverContext,
    MemberRun,
    coerce_context,
    message_text,
    token_counter,
)
from ...state.defaults import READ_BRIEFING_MAX_TOKENS
from ..briefing.reader import read_briefing
from ..briefing.shared import read_briefing_from_store
from ..history.full_history import build_full_history
from .names import FULL_HISTORY, READ_BRIEFING

OUTSIDE = "ERROR: {tool} works inside the handover graph only (an agent given to build_graph)."


def model_summarizer(model: Callable[[], BaseChatModel]) -> Callable[[list[BaseMessage], int], str]:
    """Stage 2's summarizer: ask the agent's own model (made when first needed) to condense
    older turns."""

    def summarize(messages: list[BaseMessage], budget: int) -> str:
        reply = model().invoke(
            [
                SystemMessage(
                    content=f"Summarise this conversation excerpt in at most {budget} tokens. "
                    "Keep decisions, file paths, numbers and open questions."
                ),
                HumanMessage(content=get_buffer_string(messages)[: budget * 40]),
            ]
        )
        return message_text(reply)

    return summarize


EARLIER_FULL_HISTORY = "(an earlier request_full_history result, not repeated here)"


def without_full_histories(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation with earlier stage-2 results stubbed: each holds the whole history of
    its time, so repeating them would nest copy in copy."""
    return [
        m.model_copy(update={"content": EARLIER_FULL_HISTORY})
        if isinstance(m, ToolMessage) and m.name == FULL_HISTORY
        else m
        for m in messages
    ]


def member_of(runtime: ToolRuntime[Any]) -> MemberRun | None:
    """The node's `MemberRun` for the agent this tool runs in, or None outside the graph."""
    found = (runtime.config.get("configurable") or {}).get(MEMBER_RUN_KEY)
    return found if isinstance(found, MemberRun) else None


@tool(FULL_HISTORY)
def request_full_history(runtime: ToolRuntime[HandoverContext]) -> str:
    """Stage 2: get the whole conversation so far (capped, older parts compacted) when the
    handover package is not enough."""
    member = member_of(runtime)
    if member is None:
        return OUTSIDE.format(tool=FULL_HISTORY)
    ctx = coerce_context(runtime.context)
    return build_full_history(
        without_full_histories(member.whole_conversation()),
        package_text=member.package_text,
        max_tokens=ctx.full_history_max_tokens,
        counter=member.counter or token_counter(ctx.model),
        summarize=model_summarizer(member.model),
    ).text


@tool(READ_BRIEFING)
def read_own_briefing(runtime: ToolRuntime[HandoverContext], topic: str | None = None) -> str:
    """Stage 3: read your own briefing entries: earlier handovers to you, newest first.
    Give `topic` (a slug) for one topic; omit it for all of your topics."""
    member = member_of(runtime)
    if member is None:
        return OUTSIDE.format(tool=READ_BRIEFING)
    ctx = coerce_context(runtime.context)
    wanted = topic if isinstance(topic, str) and topic.strip() else None
    # with a store: what every replica wrote, not only this machine
    read = (
        read_briefing if runtime.store is None else partial(read_briefing_from_store, runtime.store)
    )
    return read(
        project_root=ctx.project_root,
        specialist=member.profile,
        topic=wanted,
        max_tokens=READ_BRIEFING_MAX_TOKENS,
        counter=member.counter or token_counter(ctx.model),
    )
