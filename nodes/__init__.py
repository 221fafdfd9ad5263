"""Agents, the handover core and its tool, briefing storage, history views, models, tools.

`handover_to_specialist` is the standalone LangChain tool over the built-in
profiles (made on first use); `make_handover_tool(profiles)` makes it over others.
"""

from __future__ import annotations

from typing import Any

from .handover.handover_to_specialist import HandoverOutcome, make_handover_tool, perform_handover
from .handover.transfer import handover_tools
from .models.resolve import model_from_string

__all__ = [
    "HandoverOutcome",
    "handover_to_specialist",
    "handover_tools",
    "make_handover_tool",
    "model_from_string",
    "perform_handover",
]


def __getattr__(name: str) -> Any:
    if name == "handover_to_specialist":
        from .handover import handover_to_specialist as tool

        return tool.handover_to_specialist
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
