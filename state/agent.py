"""The state of one agent's own loop (the subgraph each agent node runs).

An agent's loop does not carry the conversation: it starts from `view`, the
bounded slice of the conversation its model may see (the handover package and
the turns since the handover, or the orchestrator's window), and `messages`
collects only what this activation adds. Its checkpoints stay as small as its
requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


def _last_write(state: Any, writes: Sequence[Any]) -> Any:
    return writes[-1] if writes else state


_ONCE: DeltaChannel[Any] = DeltaChannel(_last_write, snapshot_frequency=1000)
"""Written once per activation: stored with that write, not again in every checkpoint."""


class AgentState(TypedDict, total=False):
    """One activation of an agent: what it sees, what it added, how many model calls."""

    view: Annotated[list[AnyMessage], _ONCE]
    messages: Annotated[list[AnyMessage], add_messages]
    system_prompt: Annotated[str, _ONCE]
    model_calls: int
