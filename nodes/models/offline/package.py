"""What the offline model learns from the messages the graph puts into an agent's view.

The graph's own messages (the stage-1 package, the orchestrator's notes) are
user turns named `handover`. The package message also carries the package as
data (`additional_kwargs`), which the model reads as it is; across an HTTP
hop (the tests' local OpenAI-compatible server) only the name survives, and the
model knows who it is from the tools it is offered instead.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from ....state import message_text
from ...handover.consult_message import CONSULT_SENDER, QUESTION_DATA_KEY
from ...handover.package import HANDOVER_SENDER, package_of
from ...history.extractive import first_sentence


def from_the_graph(message: BaseMessage) -> bool:
    """A message the graph put into the view (the package, the notes), not a user's turn."""
    return isinstance(message, HumanMessage) and message.name == HANDOVER_SENDER


def last_request(convo: list[BaseMessage]) -> str:
    """The user's last turn in the conversation."""
    asks = [message_text(m) for m in convo if isinstance(m, HumanMessage)]
    return asks[-1] if asks else ""


def package_in(convo: list[BaseMessage]) -> dict[str, Any]:
    """The package the view opens with, as the specialist works from it ({} if none): its
    fields, the summary's first sentence, and the request (the last user turn it carries)."""
    package = next((p for m in reversed(convo) if (p := package_of(m)) is not None), None)
    if package is None:
        return {}
    found: dict[str, Any] = dict(package)
    found["summary"] = first_sentence(str(package.get("summary") or ""), 60)
    turns = [str(t) for t in package.get("recent_turns") or []]
    users = [t.removeprefix("user: ") for t in turns if t.startswith("user: ")]
    found["request"] = users[-1] if users else ""
    return found


def consult_question(message: BaseMessage | None) -> str | None:
    """The question of a consult's request message (its data, or across an HTTP hop its
    text after `Question:`), or None when the message is no consult."""
    if not isinstance(message, HumanMessage) or message.name != CONSULT_SENDER:
        return None
    data = (message.additional_kwargs or {}).get(QUESTION_DATA_KEY)
    if isinstance(data, dict) and isinstance(data.get("question"), str):
        return str(data["question"])
    return message_text(message).split("Question:", 1)[-1].strip()
