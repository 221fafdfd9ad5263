"""The terminal: printing a live conversation, a spinner, prompts and history, reviews,
Ctrl-C."""

from .printer import Printer, label_of
from .prompts import ChatHistory, Prompter, load_readline
from .review import ReviewDeferred, TerminalReviewer
from .review_text import package_lines
from .spinner import Spinner, is_terminal
from .stop import StopRequest, TurnStopped
from .text import agent_label, agent_title, plural, tool_line

__all__ = [
    "ChatHistory",
    "Printer",
    "Prompter",
    "ReviewDeferred",
    "Spinner",
    "StopRequest",
    "TerminalReviewer",
    "TurnStopped",
    "agent_label",
    "agent_title",
    "is_terminal",
    "label_of",
    "load_readline",
    "package_lines",
    "plural",
    "tool_line",
]
