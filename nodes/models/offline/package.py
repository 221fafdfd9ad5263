"""Reading the stage-1 package back out of the conversation the offline model is given.

The package opens a specialist's conversation as a user message. Its second
line, `Specialist: <profile>`, tells the model which specialist it is.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from ...history.conversation import message_text
from ...history.extractive import first_sentence

PACKAGE_TITLE = "HANDOVER PACKAGE (stage 1)"
SPECIALIST_HINT = re.compile(r"^Specialist: ([a-z][a-z0-9_]*)$", re.M)


def last_request(convo: list[BaseMessage]) -> str:
    asks = [message_text(m) for m in convo if isinstance(m, HumanMessage)]
    return asks[-1] if asks else ""


def package_message(convo: list[BaseMessage]) -> str:
    packages = [m for m in convo if is_package(m)]
    return message_text(packages[-1]) if packages else ""


def is_package(message: BaseMessage) -> bool:
    """The stage-1 package message that opens a specialist's request."""
    return (
        isinstance(message, HumanMessage)
        and PACKAGE_TITLE in (message_text(message).split("\n", 1)[0])
    )


def parse_package(system: str) -> dict[str, Any]:
    """Read the rendered stage-1 package back out of the text it was given in."""
    package: dict[str, Any] = {}
    hint = SPECIALIST_HINT.search(system)
    if hint:
        package["specialist"] = hint.group(1)
    for key, pattern in (
        ("topic", r"^Topic: (.+)$"),
        ("return_condition", r"^Return condition: (\w+)"),
    ):
        match = re.search(pattern, system, re.M)
        if match:
            package[key] = match.group(1).strip()
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", system, re.M | re.S))
    summary = next((v for k, v in sections.items() if k.startswith("Summary")), "").strip()
    if summary and summary != "(no summary)":
        package["summary"] = first_sentence(summary, 60)
    for key, head in (("decisions", "Decisions"), ("artifacts", "Artifacts")):
        body = next((v for k, v in sections.items() if k.startswith(head)), "")
        package[key] = [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]
    turns = next((v for k, v in sections.items() if k.startswith("Recent turns")), "")
    users = re.findall(r"^\d+\. user: (.+)$", turns, re.M)
    if users:
        package["request"] = users[-1]
    return package
