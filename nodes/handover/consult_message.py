"""The message a consultant is asked with, and what one consult task is sent.

Kept apart from the consultant's node so the offline model can read a consult's
request (as data) without importing the agents' machinery.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from typing_extensions import TypedDict

from ...state import HandoverPackage

CONSULT_SENDER = "consult"
"""The `name` of the question message that follows the package in a consultant's view."""
QUESTION_DATA_KEY = "consult_question"
"""Where the question message carries the consult as data (`additional_kwargs`)."""


class ConsultTaskData(TypedDict):
    """What one consult task is sent: the round, the entry, and its package."""

    call_id: str
    index: int
    specialist: str
    question: str
    from_agent: str
    package: HandoverPackage


class ConsultTask(TypedDict):
    """The `consultant` node's input (the `Send` argument), not a key of the graph's state."""

    consult_task: ConsultTaskData


def question_message(task: ConsultTaskData, *, cap: int) -> HumanMessage:
    """The consultant's request: the question, what a consult is, and the answer's cap."""
    asker = task["from_agent"] or "orchestrator"
    text = (
        f"CONSULT from the {asker} (one question; it keeps the conversation and reads your "
        f"answer). Answer in one reply of at most {cap} tokens; you cannot hand over or "
        f"return during a consult.\n\nQuestion: {task['question']}"
    )
    return HumanMessage(
        content=text,
        name=CONSULT_SENDER,
        id=f"consult-question-{task['call_id']}-{task['index']}",
        additional_kwargs={
            QUESTION_DATA_KEY: {"question": task["question"], "from_agent": asker, "cap": cap}
        },
    )
