"""The one conditional edge: where a run starts.

Every other hop is decided by the node that knows it, with `Command(goto=...)`
(declared with `destinations=`, so Studio draws every edge): an agent's node
(`nodes/agents/member.py`), the handover node (`nodes/handover/node.py`) and the
consult node (`nodes/handover/consult.py`). A run starts at whoever holds the
conversation: the next user turn goes to the agent that answered the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..nodes.handover.node import holder
from ..state import HandoverState

Router = Callable[[HandoverState], str]


def make_route_by_active_agent(agents: Sequence[str]) -> Router:
    """START: the turn goes to whoever holds the conversation (`holder`)."""
    known = frozenset(agents)

    def route_by_active_agent(state: HandoverState) -> str:
        return holder(state, known)

    return route_by_active_agent
