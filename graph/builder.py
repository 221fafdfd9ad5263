"""`build_graph`: the orchestrator, the handover node and one node per specialist profile."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore

from ..nodes.agents.consultant import make_consultant_node
from ..nodes.agents.member import make_agent_node
from ..nodes.agents.profile_agent import build_profile_agent
from ..nodes.agents.remote import build_remote_agent
from ..nodes.handover.consult import ANSWERS_NODE, make_answers_node, make_consult_node
from ..nodes.handover.consult_message import ConsultTask
from ..nodes.handover.node import holder, make_handover_node
from ..nodes.handover.transfer import handover_tools
from ..nodes.models.resolve import ModelChoice
from ..nodes.tools.async_only import sync_capable
from ..nodes.tools.mcp import mcp_tools
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
from ..state.schema import CONSULT_NODE, CONSULTANT_NODE, HANDOVER_NODE
from .handover_graph import RECURSION_LIMIT, HandoverGraph

ToolsSpec = Mapping[str, Sequence[BaseTool]] | None
AgentsSpec = Mapping[str, Pregel] | None


def build_graph(
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    model: Any = None,
    profiles: ProfilesSpec | ProfileRegistry = None,
    tools: ToolsSpec = None,
    agents: AgentsSpec = None,
    store: BaseStore | None = None,
    label_replies: bool = False,
) -> HandoverGraph:
    """Compile the handover graph.

    - `profiles`: None for the 13 built-ins; a folder of profile files (str or
      PathLike) or a sequence of `Profile` objects is added to them, replacing a
      built-in of the same name. Nodes, routing, the handover tool's enum and
      error suggestions all derive from this build's profiles.
    - `tools`: `{profile_name: [LangChain tools]}`, added to that agent's own tools.
    - `agents`: `{profile_name: agent}`, your own agent in that profile's place: the
      result of `create_agent(...)` or any compiled LangGraph graph whose state has
      `messages` (give it `handover_tools(profile_name)` to hand over and back).
    - `model`: one LangChain chat model for every agent, a mapping profile -> model
      (with an optional "default"), or None to use the run context's `model`
      (`offline` or an `init_chat_model` string).
    - `checkpointer`: persists every step (run with `durability="sync"` for crash
      safety); leave it None for the LangGraph server, which supplies its own.
    - `store`: a LangGraph store, passed to `compile()`.
    - `label_replies`: open each stored reply with its speaker's label, a Markdown line
      such as `🖌️ **frontend designer**`, for chat UIs that show message text only (the
      served graph does; models never see the labels, `message_text` leaves them out).

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
    _load_vocabulary(models)
    own = check_agents(agents, registry)
    user_tools = check_tools(tools, registry, own)

    builder = StateGraph(
        HandoverState,
        context_schema=HandoverContext,
        input_schema=InputState,
        output_schema=OutputState,
    )

    consultants: dict[str, tuple[Profile, Pregel]] = {}
    warmers: list[Callable[[], None]] = []  # what `HandoverGraph.warm_up` prepares

    def add_agent(name: str) -> None:
        node = ORCHESTRATOR if name == ORCHESTRATOR_PROFILE else name
        agent: Pregel
        if registry[name].remote is not None:  # runs on a LangGraph server: ours, not checked
            agent = build_remote_agent(agent=node, profile=registry[name])
        else:
            agent = own.get(name) or build_profile_agent(
                agent=node,
                profile=registry[name],
                model_for=lambda ctx: models.model_for(name, ctx),
                tools=agent_tools(registry, name, models, user_tools.get(name, [])),
                warmers=warmers,
            )
        consultants[name] = (registry[name], agent)
        builder.add_node(
            node,
            make_agent_node(
                name=node, profile=registry[name], agent=agent, models=models, label=label_replies
            ),
            # where its node may go next (`Command(goto=...)`), for Studio's drawing
            destinations=(HANDOVER_NODE, CONSULT_NODE, END)
            if node == ORCHESTRATOR
            else (HANDOVER_NODE, ORCHESTRATOR, END),
        )

    add_agent(ORCHESTRATOR_PROFILE)
    builder.add_node(
        HANDOVER_NODE,
        make_handover_node(registry, models.counter_for, label=label_replies),
        # itself too: a reviewer's edit that did not validate is reviewed again, as a new call
        destinations=(ORCHESTRATOR, *registry.specialists, HANDOVER_NODE, END),
    )
    for name in registry.specialists:
        add_agent(name)

    members = [ORCHESTRATOR, *registry.specialists]
    builder.add_node(
        CONSULT_NODE,
        make_consult_node(profiles=registry, counter_for=models.counter_for, label=label_replies),
        destinations=(CONSULTANT_NODE, ORCHESTRATOR, CONSULT_NODE, END),
    )
    builder.add_node(
        CONSULTANT_NODE,
        make_consultant_node(agents=consultants, models=models),
        input_schema=ConsultTask,
    )
    builder.add_node(ANSWERS_NODE, make_answers_node(registry, label=label_replies))
    builder.add_edge(CONSULTANT_NODE, ANSWERS_NODE)
    builder.add_edge(ANSWERS_NODE, ORCHESTRATOR)
    known = frozenset(members)

    def route_by_active_agent(state: HandoverState) -> str:
        """The one conditional edge: a run starts at whoever holds the conversation (every
        other hop is decided by the node that knows it, with `Command(goto=...)`)."""
        return holder(state, known)

    builder.add_conditional_edges(START, route_by_active_agent, members)
    compiled = builder.compile(checkpointer=checkpointer, store=store, name="orchestrator")
    return HandoverGraph.wrap(compiled, models, warmers).with_config(
        recursion_limit=RECURSION_LIMIT
    )


def check_agents(agents: AgentsSpec, registry: ProfileRegistry) -> dict[str, Pregel]:
    """Validate `build_graph(agents=...)`; raise TypeError/ValueError naming the bad entry."""
    if agents is None:
        return {}
    if not isinstance(agents, Mapping):
        raise TypeError(
            f"agents must be a mapping profile -> compiled agent, got {type(agents).__name__}"
        )
    checked: dict[str, Pregel] = {}
    for given, agent in agents.items():
        name = registry.key(given, "agents")
        remote = registry[name].remote
        if remote is not None:
            raise ValueError(
                f"agents[{name!r}]: profile {name!r} runs remotely (at {remote.url}); give it "
                "an agent or a remote, not both"
            )
        if not isinstance(agent, Pregel):
            raise TypeError(
                f"agents[{name!r}] must be a compiled LangGraph graph (create_agent(...) or "
                f"StateGraph(...).compile()), got {type(agent).__name__}"
            )
        if "messages" not in agent.channels:
            raise ValueError(f"agents[{name!r}]: its state has no 'messages'")
        if agent.checkpointer not in (None, True):
            raise ValueError(
                f"agents[{name!r}] was compiled with a checkpointer of its own; compile it "
                "without one: the graph's checkpointer saves its steps"
            )
        checked[name] = agent
    return checked


def check_tools(
    tools: ToolsSpec, registry: ProfileRegistry, own: Mapping[str, Pregel]
) -> dict[str, list[BaseTool]]:
    """Validate `build_graph(tools=...)`; raise TypeError/ValueError naming the bad entry."""
    if tools is None:
        return {}
    if not isinstance(tools, Mapping):
        raise TypeError(
            f"tools must be a mapping profile -> [LangChain tools], got {type(tools).__name__}"
        )
    checked: dict[str, list[BaseTool]] = {}
    for key, given in tools.items():
        name = registry.key(key, "tools")
        if name in own:
            raise ValueError(
                f"tools[{name!r}]: agents[{name!r}] is your own agent; give it its tools yourself"
            )
        if registry[name].remote is not None:
            raise ValueError(
                f"tools[{name!r}]: profile {name!r} runs remotely; its tools are its server's"
            )
        if isinstance(given, BaseTool) or not isinstance(given, Sequence):
            raise TypeError(f"tools[{name!r}] must be a list of LangChain tools or functions")
        found: list[BaseTool] = []
        for index, item in enumerate(given):
            if isinstance(item, BaseTool):
                found.append(item)
            elif inspect.isfunction(item) or inspect.ismethod(item):
                found.append(as_tool(item))  # a plain function: its name, docstring and hints
            else:
                raise TypeError(
                    f"tools[{name!r}][{index}] must be a LangChain tool (e.g. made with @tool) "
                    f"or a function, got {type(item).__name__}"
                )
        checked[name] = found
    return checked


def agent_tools(
    registry: ProfileRegistry, name: str, models: ModelChoice, extra: list[BaseTool]
) -> list[BaseTool]:
    """A built-in agent's tools: those every agent of the graph gets (`handover_tools`), its
    profile's tool sets, its profile's MCP servers' (`<server>__<tool>`), the user's."""
    profile: Profile = registry[name]
    found = handover_tools(name, registry)
    for tool_set in profile.tools:
        if tool_set not in TOOL_SETS:
            where = profile.source or f"profile {name!r}"
            raise ProfileFileError(
                f"{where}: tools: unknown tool set {tool_set!r}; known tool sets: "
                f"{', '.join(sorted(TOOL_SETS))}"
            )
        found += TOOL_SETS[tool_set](lambda ctx: models.counter_for(name, ctx))
    found += mcp_tools(profile)  # their `__` keeps them apart from the graph's and the sets'
    seen = {t.name for t in found}
    for item in extra:
        if item.name in GRAPH_TOOLS or item.name in seen:
            raise ValueError(
                f"tools[{name!r}]: a tool named {item.name!r} is already given to this agent "
                "by the graph or its profile's mcp servers; rename yours"
            )
        seen.add(item.name)
        found.append(sync_capable(item))  # an async-only tool works under invoke too
    return found


def _load_vocabulary(models: ModelChoice) -> None:
    """Load the default context's token vocabulary now (once a process; about 0.3 s for
    o200k_base), so a thread's first turn costs what its later turns do. A vocabulary that
    cannot load here fails the first count instead, with its own error."""
    with contextlib.suppress(Exception):  # only a warm-up: a real count reports the problem
        models.counter_for(ORCHESTRATOR_PROFILE, HandoverContext()).count_text("warm")
