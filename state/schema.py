"""The graph's state: JSON-friendly values only.

Messages are LangChain messages (LangGraph serialises them natively); every
other value is a str, int, list or dict, so checkpoints and the LangGraph
server API carry them without custom types.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from langchain_core.messages import AnyMessage
from typing_extensions import TypedDict

from .messages import add_messages_safely

ORCHESTRATOR = "orchestrator"
"""Node name and `active_agent` value of the orchestrator (profile a0_software_orchestrator)."""

ReturnCondition = Literal["user_request", "task_complete", "after_reply"]
RETURN_CONDITIONS: dict[str, str] = {
    "user_request": "the specialist keeps the conversation until the user asks to go back",
    "task_complete": "the specialist works until done, then hands back in the same run",
    "after_reply": "the specialist answers once; the next user turn goes to the orchestrator",
}


def append_trail(left: list[dict] | None, right: list[dict] | dict | None) -> list[dict]:
    """Reducer for the handover trail: append-only, never rewritten."""
    merged = list(left or [])
    if right is None:
        return merged
    merged.extend([right] if isinstance(right, dict) else right)
    return merged


class HandoverRecord(TypedDict):
    """One entry of the trail: a handover, a refused handover or a return."""

    kind: Literal["handover", "refused", "return"]
    from_agent: str
    to_agent: str
    reason: str
    topic: str
    return_condition: str
    estimated_tokens: int
    briefing_path: str
    time: str
    error: NotRequired[str]


class ActiveHandover(TypedDict, total=False):
    """The package the active specialist works from (the tool's package + rendering)."""

    handover_id: str
    specialist: str
    topic: str
    summary: str
    briefing_file: str
    estimated_tokens: int
    max_context_tokens: int
    oversize_warning: bool
    rendered: str
    reason: str
    return_condition: str
    root_return_condition: str
    from_agent: str
    chain: list[str]
    anchor_id: str


class InputState(TypedDict):
    """What a user sends: messages."""

    messages: Annotated[list[AnyMessage], add_messages_safely]


class OutputState(TypedDict):
    """What a user reads back: the messages and who holds the conversation."""

    messages: Annotated[list[AnyMessage], add_messages_safely]
    active_agent: str


class HandoverState(TypedDict, total=False):
    """The whole graph state."""

    messages: Annotated[list[AnyMessage], add_messages_safely]
    active_agent: str
    handover: ActiveHandover | None
    handover_depth: int
    handovers: Annotated[list[HandoverRecord], append_trail]
    agent_turns: int
    turn_trail: list[str]
    """The hops of the current user turn (`orchestrator -> hacker`, `hacker <- returned`)."""
