"""The built-in offline model: deterministic, tool-calling, no network, no key."""

from .cues import choose_specialist
from .model import OfflineChatModel

__all__ = ["OfflineChatModel", "choose_specialist"]
