"""The state of a built-in agent (LangChain's `create_agent` state, stored linearly), and what
the graph hands an agent in process while it runs.

An agent never carries the whole conversation: its node starts it from a
bounded view (the handover package and the turns since the handover, or the
orchestrator's window). The built-in agents' `messages` is a `DeltaChannel`, so
each checkpoint of their loop stores that step's writes and the view is stored
once, with the input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.channels import DeltaChannel
from langgraph.config import get_config

from .messages import merge_messages
from .tokens import TokenCounter

AGENT_SNAPSHOT_EVERY = 1000
"""An activation is short: its loop stores writes, almost never a snapshot."""


class ProfileAgentState(AgentState[Any]):
    """A built-in agent's state: its view and what it adds; `model_calls` so far in a row."""

    messages: Annotated[  # type: ignore[misc]
        list[AnyMessage], DeltaChannel(merge_messages, snapshot_frequency=AGENT_SNAPSHOT_EVERY)
    ]
    model_calls: NotRequired[int]


MEMBER_RUN_KEY = "__specialist_handover_member"
"""Run-config key (`configurable`) under which an agent's node passes its `MemberRun`. The
leading `__` keeps it out of checkpoint metadata, which LangGraph Server copies the other
configurable keys into."""


@dataclass(frozen=True)
class MemberRun:
    """What an agent's node hands its tools and middleware in process (never checkpointed).

    `conversation` is the state's working window of the conversation and `archive()` the
    whole conversation, archived turns included (stage 2 reads it; read on demand); `call_ids`
    the tool-call ids it already uses (a reply must not repeat one: a handover's
    id names its briefing entry); `counter` is this agent's token counter in this
    run and `model()` its chat model (made on first use: stage 2 summarises with it).
    """

    agent: str
    profile: str
    conversation: Sequence[BaseMessage] = ()
    call_ids: frozenset[str] = frozenset()
    package_text: str = ""
    counter: TokenCounter | None = None
    model: Callable[[], Any] = lambda: None
    archive: Callable[[], Sequence[BaseMessage]] | None = None
    view_ids: frozenset[str] = frozenset()
    """Ids of the messages the agent was started with (a transfer carries only the others)."""
    consult: bool = False
    """The agent answers a consult: it answers once, and cannot hand over or return."""

    def whole_conversation(self) -> Sequence[BaseMessage]:
        """The whole conversation: the archive when there is one, else the window."""
        return self.archive() if self.archive is not None else self.conversation


def current_member() -> MemberRun | None:
    """The `MemberRun` of the agent running now, or None outside the handover graph."""
    try:
        config = get_config()
    except RuntimeError:  # not inside a LangGraph run
        return None
    found = (config.get("configurable") or {}).get(MEMBER_RUN_KEY)
    return found if isinstance(found, MemberRun) else None
