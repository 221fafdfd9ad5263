"""`build_graph`: the orchestrator, the handover node and one node per specialist."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ..nodes import check_model_spec, handover_node, make_orchestrator_node, make_specialist_nodes
from ..state import ORCHESTRATOR, HandoverContext, HandoverState, InputState, OutputState
from .routing import (
    AGENTS,
    HANDOVER_NODE,
    route_after_handover,
    route_after_orchestrator,
    route_after_specialist,
    route_by_active_agent,
)

RECURSION_LIMIT = 400
"""Supersteps one run may take; max_turns stops every agent long before this."""


def build_graph(
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    model: Any = None,
) -> CompiledStateGraph:
    """Compile the handover graph.

    `model` is a LangChain chat model for every agent, a mapping profile -> model
    (with an optional "default"), or None to use the run context's `model`
    (`offline` or an `init_chat_model` string). `checkpointer` persists every step
    (run with `durability="sync"` for crash safety); leave it None for the
    LangGraph server, which supplies its own.

    Example::

        graph = build_graph(checkpointer=InMemorySaver())
        graph.invoke({"messages": [("user", "Design the landing page hero")]},
                     {"configurable": {"thread_id": "t1"}},
                     context={"project_root": "/abs/project"})
    """
    spec = check_model_spec(model)
    if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError(
            f"checkpointer must be a LangGraph checkpoint saver (e.g. SqliteSaver), "
            f"got {type(checkpointer).__name__}"
        )
    builder = StateGraph(
        HandoverState,
        context_schema=HandoverContext,
        input_schema=InputState,
        output_schema=OutputState,
    )
    builder.add_node(ORCHESTRATOR, make_orchestrator_node(spec))
    builder.add_node(HANDOVER_NODE, handover_node)
    specialists = make_specialist_nodes(spec)
    for name, node in specialists.items():
        builder.add_node(name, node)
    builder.add_conditional_edges(START, route_by_active_agent, AGENTS)
    builder.add_conditional_edges(ORCHESTRATOR, route_after_orchestrator, [HANDOVER_NODE, END])
    builder.add_conditional_edges(HANDOVER_NODE, route_after_handover, AGENTS)
    for name in specialists:
        builder.add_conditional_edges(
            name, route_after_specialist, [HANDOVER_NODE, ORCHESTRATOR, END]
        )
    compiled = builder.compile(checkpointer=checkpointer, name="orchestrator")
    return compiled.with_config(recursion_limit=RECURSION_LIMIT)
