"""`build_graph`: the orchestrator, the handover node and one node per specialist profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from ..nodes.agents.agent import build_agent
from ..nodes.agents.orchestrator import make_orchestrator_node
from ..nodes.agents.specialist import make_specialist_node
from ..nodes.handover.arguments import handover_function
from ..nodes.handover.node import make_handover_node
from ..nodes.models.resolve import ModelChoice
from ..nodes.tools.agent_tools import (
    make_full_history_tool,
    make_read_briefing_tool,
    return_to_orchestrator,
)
from ..nodes.tools.names import GRAPH_TOOLS
from ..nodes.tools.toolsets import TOOL_SETS
from ..specialists import (
    ORCHESTRATOR_PROFILE,
    Profile,
    ProfileFileError,
    ProfileRegistry,
    ProfilesSpec,
    resolve_profiles,
)
from ..state import ORCHESTRATOR, HandoverContext, HandoverState, InputState, OutputState
from .compiled import HandoverGraph
from .routing import (
    HANDOVER_NODE,
    make_route_after_handover,
    make_route_by_active_agent,
    route_after_orchestrator,
    route_after_specialist,
)

RECURSION_LIMIT = 10_000
"""A safety net only: max_turns and max_handovers_per_turn end every run long before it."""

ToolsSpec = Mapping[str, Sequence[BaseTool]] | None


def build_graph(
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    model: Any = None,
    profiles: ProfilesSpec | ProfileRegistry = None,
    tools: ToolsSpec = None,
    store: BaseStore | None = None,
) -> HandoverGraph:
    """Compile the handover graph.

    - `profiles`: None for the 13 built-ins; a folder of profile files (str or
      PathLike) or a sequence of `Profile` objects is added to them, replacing a
      built-in of the same name. Nodes, routing, the handover tool's enum and
      error suggestions all derive from this build's profiles.
    - `tools`: `{profile_name: [LangChain tools]}`, added to that agent's own tools.
    - `model`: one LangChain chat model for every agent, a mapping profile -> model
      (with an optional "default"), or None to use the run context's `model`
      (`offline` or an `init_chat_model` string).
    - `checkpointer`: persists every step (run with `durability="sync"` for crash
      safety); leave it None for the LangGraph server, which supplies its own.
    - `store`: a LangGraph store, passed to `compile()`.

    Example::

        graph = build_graph(checkpointer=InMemorySaver())
        graph.invoke({"messages": [("user", "Design the landing page hero")]},
                     {"configurable": {"thread_id": "t1"}},
                     context={"project_root": "/abs/project"})
    """
    if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError(
            f"checkpointer must be a LangGraph checkpoint saver (e.g. SqliteSaver), "
            f"got {type(checkpointer).__name__}"
        )
    if store is not None and not isinstance(store, BaseStore):
        raise TypeError(f"store must be a LangGraph store, got {type(store).__name__}")
    registry = resolve_profiles(profiles)
    models = ModelChoice(model, registry)
    user_tools = check_tools(tools, registry)

    builder = StateGraph(
        HandoverState,
        context_schema=HandoverContext,
        input_schema=InputState,
        output_schema=OutputState,
    )

    def agent_for(name: str) -> CompiledStateGraph:
        return build_agent(
            agent=ORCHESTRATOR if name == ORCHESTRATOR_PROFILE else name,
            profile=registry[name],
            model_for=lambda ctx: models.model_for(name, ctx),
            tools=agent_tools(registry[name], models, user_tools.get(name, [])),
            handover_tool=handover_function(registry, caller=name),
        )

    orchestrator = registry[ORCHESTRATOR_PROFILE]
    builder.add_node(
        ORCHESTRATOR, make_orchestrator_node(orchestrator, agent_for(orchestrator.name))
    )
    builder.add_node(HANDOVER_NODE, make_handover_node(registry, models.counter_for))
    for name in registry.specialists:
        builder.add_node(name, make_specialist_node(registry[name], agent_for(name)))

    agents = [ORCHESTRATOR, *registry.specialists]
    route_by_active_agent = make_route_by_active_agent(agents)
    builder.add_conditional_edges(START, route_by_active_agent, agents)
    builder.add_conditional_edges(ORCHESTRATOR, route_after_orchestrator, [HANDOVER_NODE, END])
    builder.add_conditional_edges(HANDOVER_NODE, make_route_after_handover(agents), [*agents, END])
    for name in registry.specialists:
        builder.add_conditional_edges(
            name, route_after_specialist, [HANDOVER_NODE, ORCHESTRATOR, END]
        )
    compiled = builder.compile(checkpointer=checkpointer, store=store, name="orchestrator")
    return HandoverGraph.wrap(compiled, models).with_config(recursion_limit=RECURSION_LIMIT)


def check_tools(tools: ToolsSpec, registry: ProfileRegistry) -> dict[str, list[BaseTool]]:
    """Validate `build_graph(tools=...)`; raise TypeError/ValueError naming the bad entry."""
    if tools is None:
        return {}
    if not isinstance(tools, Mapping):
        raise TypeError(
            f"tools must be a mapping profile -> [LangChain tools], got {type(tools).__name__}"
        )
    checked: dict[str, list[BaseTool]] = {}
    for name, given in tools.items():
        if name not in registry:
            raise ValueError(
                f"tools[{name!r}] names no profile of this build; known profiles: "
                f"{', '.join(registry)}"
            )
        if isinstance(given, BaseTool) or not isinstance(given, Sequence):
            raise TypeError(f"tools[{name!r}] must be a list of LangChain tools")
        for index, item in enumerate(given):
            if not isinstance(item, BaseTool):
                raise TypeError(
                    f"tools[{name!r}][{index}] must be a LangChain tool (e.g. made with @tool), "
                    f"got {type(item).__name__}"
                )
        checked[name] = list(given)
    return checked


def agent_tools(profile: Profile, models: ModelChoice, extra: list[BaseTool]) -> list[BaseTool]:
    """An agent's tools: the graph's own (specialists), its profile's tool sets, the user's."""
    name = profile.name

    def counter_for(ctx: HandoverContext):  # type: ignore[no-untyped-def]
        return models.counter_for(name, ctx)

    found: list[BaseTool] = []
    if name != ORCHESTRATOR_PROFILE:
        found += [
            return_to_orchestrator,
            make_full_history_tool(
                counter_for=counter_for, model_for=lambda ctx: models.model_for(name, ctx)
            ),
            make_read_briefing_tool(specialist=name, counter_for=counter_for),
        ]
    for tool_set in profile.tools:
        if tool_set not in TOOL_SETS:
            where = profile.source or f"profile {name!r}"
            raise ProfileFileError(
                f"{where}: tools: unknown tool set {tool_set!r}; known tool sets: "
                f"{', '.join(sorted(TOOL_SETS))}"
            )
        found += TOOL_SETS[tool_set](counter_for)
    seen = {t.name for t in found}
    for item in extra:
        if item.name in GRAPH_TOOLS or item.name in seen:
            raise ValueError(
                f"tools[{name!r}]: a tool named {item.name!r} is already given to this agent "
                "by the graph; rename yours"
            )
        seen.add(item.name)
        found.append(item)
    return found
