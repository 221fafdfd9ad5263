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
