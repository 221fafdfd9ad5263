"""Handing over and handing back as real tools: any agent that holds them can use them.

`handover_tools(caller, profiles)` gives an agent what it needs to take part:
`handover_to_specialist` (the arguments a model gives; the graph supplies the
recent turns, the project root and the budgets) and, for a specialist,
`return_to_orchestrator(summary)`, `request_full_history()` (stage 2) and
`read_briefing(topic)` (stage 3). The built-in agents are given the same tools.

Handing over and handing back are *transfers*. The tool ends the agent's run at
once, the way langgraph-swarm's handoff tools do: it returns a `Command` to the
parent graph, which LangGraph raises out of any agent loop. It carries the
messages the agent added to its view; the agent's node in the handover graph keeps what the agent
added and leaves the transfer call unanswered for the handover node, which
answers it: a handover carried out, a return, or an `ERROR:` the agent acts on.

A transfer is the only tool call of its reply: beside other calls it is
refused (they run, and the model can ask again on its own). Of several
transfer calls in one reply, a return wins over handovers, the first
handover over the others, and a handover over a consult; the rest are refused.

The orchestrator also holds `consult_specialists` (`consult.py`): it ends the
run the same way, and the graph asks several specialists at once. An agent
answering a consult cannot transfer: its transfer tools refuse with an `ERROR:`
and it answers the question instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import ParentCommand
from langgraph.types import Command

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry, ProfilesSpec, resolve_profiles
from ...state import HandoverContext
from ...state.langgraph_internals import command_of
from ...state.validation import error_line
from ..tools.agent_tools import member_of, read_own_briefing, request_full_history
from ..tools.names import CONSULT, HANDOVER, RETURN
from .arguments import consult_arguments_schema, transfer_arguments

TRANSFERS = (HANDOVER, RETURN, CONSULT)
TRANSFER_KEY = "specialist_handover_transfer"
"""The key of a transfer's `Command` update: the agent's messages at the transfer."""

IN_A_CONSULT = (
    "ERROR: you are answering a consult: {name} is not available here. Answer the question "
    "in your reply; the orchestrator keeps the conversation."
)

ALONE = (
    "ERROR: {name} must be the only tool call of its reply; it was not carried out. Your "
    "other calls ran: call {name} again on its own."
)


GO_BACK = re.compile(
    r"\b(back to the orchestrator|go back|return to the orchestrator|hand (it )?back|"
    r"that'?s all|we'?re done|we are done|switch back)\b",
    re.I,
)
"""A user's words that ask to go back to the orchestrator: what the offline model reads, and
what hands back for an agent with no tool of ours (an A2A agent, `a2a.py`)."""


def chosen_transfer(calls: Sequence[Any]) -> Any | None:
    """The transfer call a reply carries out: a return before handovers, a handover before a
    consult, else the first of its kind."""
    return next(
        (c for name in (RETURN, HANDOVER, CONSULT) for c in calls if c.get("name") == name), None
    )


def transfer_refusal(call: Any, chosen: Any) -> str:
    """The answer to a transfer call of a reply that carries out another one (`chosen`)."""
    if chosen.get("name") == RETURN and call.get("name") == HANDOVER:
        return "ERROR: cannot hand over and return to the orchestrator in the same turn; returned."
    if call.get("name") == RETURN:
        return "ERROR: returned once already in this reply; this call was not carried out."
    if call.get("name") == CONSULT:
        return (
            "ERROR: consult_specialists must be the only transfer of its reply; this call was "
            "not carried out."
        )
    return "ERROR: only one handover per turn; this call was not carried out."


def transfer(runtime: ToolRuntime[Any], name: str) -> Command[Any] | ToolMessage:
    """End the agent's run and hand its messages to its node, or refuse with an `ERROR:`."""
    messages = list((runtime.state or {}).get("messages") or [])
    reply = next(  # the assistant message that made this call
        (
            m
            for m in reversed(messages)
            if isinstance(m, AIMessage)
            and any(c.get("id") == runtime.tool_call_id for c in m.tool_calls)
        ),
        None,
    )
    member = member_of(runtime)

    def refuse(content: str) -> ToolMessage:
        return ToolMessage(
            content=content, tool_call_id=runtime.tool_call_id or "", name=name, status="error"
        )

    if member is None or reply is None:
        return refuse(f"ERROR: {name} works inside the handover graph only.")
    if member.consult:
        return refuse(IN_A_CONSULT.format(name=name))
    if any(c["name"] not in TRANSFERS for c in reply.tool_calls):
        return refuse(ALONE.format(name=name))
    chosen = chosen_transfer(reply.tool_calls)
    if chosen is None or chosen.get("id") != runtime.tool_call_id:
        return refuse(transfer_refusal({"name": name}, chosen or {}))
    added = [m for m in messages if m.id not in member.view_ids]
    return Command(graph=Command.PARENT, update={TRANSFER_KEY: added})


def transferred_messages(exc: ParentCommand) -> list[BaseMessage] | None:
    """The agent's messages when `exc` is one of our transfers, else None (not ours)."""
    update = getattr(command_of(exc), "update", None)
    if isinstance(update, dict) and TRANSFER_KEY in update:
        return list(update[TRANSFER_KEY])
    return None


def handover_description(profiles: ProfileRegistry, caller: str) -> str:
    """The handover tool's description as `caller` reads it.

    The orchestrator's lists every specialist with its one-line description: the one place
    it is told what each profile does (`consult_specialists` refers to this list instead of
    repeating it, which keeps the orchestrator's request small; docs/GUIDE.md, "Who is
    described where"). A specialist's names its targets only in the schema's enum: it hands
    on rarely, and every one of its model calls would carry the whole list."""
    if caller != ORCHESTRATOR_PROFILE:
        return (
            "Hand the conversation on to another specialist (the profiles are listed in "
            "specialist_profile) when the request clearly belongs to them, with a short package "
            "(the graph adds the recent turns and the thread's ledger). To hand back, call "
            "return_to_orchestrator."
        )
    lines = [f"{n}: {profiles[n].description}" for n in profiles if n != ORCHESTRATOR_PROFILE]
    return (
        "Hand the conversation over to the agent best placed for the request, with a short "
        "package (the graph adds the recent turns). Agents:\n" + "\n".join(lines)
    )


def make_handover_transfer_tool(profiles: ProfileRegistry, caller: str) -> BaseTool:
    """`handover_to_specialist` as `caller` holds it: the model's arguments, a `Literal` of
    targets. Its `ToolNode` validates a call first: a mistake is answered with its `ERROR:`
    line (a did-you-mean for a mistyped target) and the agent goes on."""

    def handover_to_specialist(runtime: ToolRuntime[HandoverContext], **_arguments: Any) -> Any:
        return transfer(runtime, HANDOVER)  # the handover node reads the call's arguments

    arguments = transfer_arguments(profiles, caller)
    return StructuredTool(
        name=HANDOVER,
        description=handover_description(profiles, caller),
        args_schema=arguments,
        func=handover_to_specialist,
        handle_validation_error=partial(error_line, model=arguments),
    )


CONSULT_DESCRIPTION = (
    f"Ask several specialists (the agents {HANDOVER} lists) one question each, in parallel, "
    "when a request needs their views side by side. Each answers once from a short package; "
    "the answers come back in one result, and you keep the conversation and answer the user."
)


def make_consult_tool(profiles: ProfileRegistry, caller: str) -> BaseTool:
    """`consult_specialists` as `caller` holds it: the entries' profiles an enum of the others.

    Its description names no profile: they are described once, in the handover tool's."""

    def consult_specialists(runtime: ToolRuntime[HandoverContext], **_arguments: Any) -> Any:
        return transfer(runtime, CONSULT)  # the consult node reads the call's arguments

    targets = [n for n in profiles if n not in (caller, ORCHESTRATOR_PROFILE)]
    return StructuredTool(
        name=CONSULT,
        description=CONSULT_DESCRIPTION,
        args_schema=consult_arguments_schema(targets),
        func=consult_specialists,
    )


def _return(
    summary: str,
    runtime: ToolRuntime[HandoverContext],
    decisions: list[str] | None = None,
    artifacts: list[str] | None = None,
) -> Any:
    return transfer(runtime, RETURN)  # the handover node reads the summary from the call


return_to_orchestrator = StructuredTool.from_function(
    _return,
    name=RETURN,
    description="Hand the conversation back to the orchestrator with a concise summary of "
    "what you did. Optionally list the decisions made and the artifacts (files, links, "
    "identifiers) you produced or relied on, one short line each: they join the thread's "
    "ledger, so the next specialist gets them too. Use it when the user asks to go back or "
    "your task is complete.",
)


def handover_tools(caller: str, profiles: ProfilesSpec | ProfileRegistry = None) -> list[BaseTool]:
    """The tools an agent needs to take part in the handover graph as `caller` (a profile name).

    The orchestrator (`a0_software_orchestrator`) gets `handover_to_specialist` and
    `consult_specialists`; a specialist gets `handover_to_specialist`,
    `return_to_orchestrator`, `request_full_history` and `read_briefing`. `profiles` are
    those of the build (as `build_graph` takes them).

    Example::

        agent = create_agent(model, [*handover_tools("solution_architect"), my_tool])
        graph = build_graph(agents={"solution_architect": agent})
    """
    registry = resolve_profiles(profiles)
    if caller not in registry:
        raise ValueError(
            f"handover_tools: {caller!r} names no profile of this build; known profiles: "
            f"{', '.join(registry)}"
        )
    tools = [make_handover_transfer_tool(registry, caller)]
    if caller == ORCHESTRATOR_PROFILE:
        tools.append(make_consult_tool(registry, caller))
    else:
        tools += [return_to_orchestrator, request_full_history, read_own_briefing]
    return tools
