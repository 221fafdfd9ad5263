"""Running an agent's loop from its node: the bounded view in, what it added out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from ..tools.agent_tools import CONVERSATION_KEY
from .replies import CALL_IDS_KEY, used_call_ids


def run_agent(
    agent: CompiledStateGraph,
    *,
    view: list[BaseMessage],
    system_prompt: str,
    model_calls: int,
    conversation: Sequence[BaseMessage],
    config: RunnableConfig,
) -> tuple[list[BaseMessage], int]:
    """Run the agent's loop as a subgraph of this step; return (added messages, model calls).

    Called with the node's own config, so the loop is checkpointed under this
    step, streams with `subgraphs=True`, and a run resumed after a crash picks
    it up where it stopped instead of asking the model again. The stored
    conversation reaches its stage-2 tool through the config, in process: it
    is never copied into the loop's checkpoints; so do the tool-call ids already
    used in it, which a reply's ids must not repeat (a handover's id names its
    briefing entry and its answer).
    """
    configurable: dict[str, Any] = {
        **(config.get("configurable") or {}),
        CONVERSATION_KEY: conversation,
        CALL_IDS_KEY: frozenset(used_call_ids(conversation)),
    }
    result = agent.invoke(
        {
            "view": view,
            "messages": [],
            "system_prompt": system_prompt,
            "model_calls": model_calls,
        },
        {**config, "configurable": configurable},
    )
    return list(result.get("messages") or []), int(result.get("model_calls", model_calls))
