"""The built-in offline model: deterministic, tool-calling, no network, no key."""

from ...history.extractive import extract_artifacts, extract_decisions, extractive_summary
from .cues import choose_specialist
from .model import OfflineChatModel

__all__ = [
    "OfflineChatModel",
    "choose_specialist",
    "extract_artifacts",
    "extract_decisions",
    "extractive_summary",
]
