"""The terminal: printing a live conversation, a spinner, prompts and history, reviews,
Ctrl-C."""

from .printer import Printer
from .prompts import Prompter
from .review import ReviewDeferred, TerminalReviewer
from .stop import StopRequest, TurnStopped
from .text import agent_label, plural, tool_line

__all__ = [
    "Printer",
    "Prompter",
    "ReviewDeferred",
    "StopRequest",
    "TerminalReviewer",
    "TurnStopped",
    "agent_label",
    "plural",
    "tool_line",
]
