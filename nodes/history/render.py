"""Each message of a history rendered at each compaction level, counted on demand.

Levels: VERBATIM (the whole message and its tool calls), SHORTENED (a long tool
output cut to its head), CONDENSED (one line: the first sentence and the names
of any tool calls). `History` caches every rendering and its token count, so
stage 2 (`nodes/full_history.py`) renders and counts a message at most once per
level.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from ...state import TokenCounter, message_text
from ...state.tokens import PROBE_CHARS_PER_TOKEN

LONG_TOOL_OUTPUT_TOKENS = 200  # tool outputs longer than this are shortened first ...
TOOL_HEAD_TOKENS = 60  # ... to their first 60 tokens
CONDENSED_WORDS = 25  # a condensed turn keeps its first sentence, at most 25 words
_CONDENSE_SCAN_CHARS = 400
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")

VERBATIM, SHORTENED, CONDENSED = 0, 1, 2
_ROLES = ((HumanMessage, "Human"), (AIMessage, "AI"), (SystemMessage, "System"))


class History:
    """Per-call cache: each message's renderings and their token counts, made on demand."""

    def __init__(self, messages: list[BaseMessage], counter: TokenCounter) -> None:
        self.messages = messages
        self.counter = counter
        self._costs: dict[tuple[int, int], tuple[int, bool]] = {}
        self._identical: dict[int, bool] = {}
        self.full = cache(self._full)
        self.shortened = cache(self._shortened)
        self.condensed = cache(self._condensed)

    def _full(self, i: int) -> str:
        """`[#12] AI (frontend_designer): text` plus one line per tool call."""
        m = self.messages[i]
        text = message_text(m)
        line = f"{self.label(i)}: {text}" if text else f"{self.label(i)}:"
        for call in tool_calls(m):
            args = json.dumps(call.get("args", {}), ensure_ascii=False)
            line += f"\n  → tool call {call.get('name')} {args}"
        return line

    def _shortened(self, i: int) -> str | None:
        """A long tool output cut to its head, or None when the message is not one."""
        m = self.messages[i]
        if not isinstance(m, ToolMessage):
            return None
        text = message_text(m)
        probe = (LONG_TOOL_OUTPUT_TOKENS + 1) * PROBE_CHARS_PER_TOKEN
        ids = self.counter.encoding.encode(text[:probe], disallowed_special=())
        if len(ids) <= LONG_TOOL_OUTPUT_TOKENS and len(text) > probe:
            ids = self.counter.encoding.encode(text, disallowed_special=())
        if len(ids) <= LONG_TOOL_OUTPUT_TOKENS:
            return None
        head = self.counter.decode_prefix(ids[:TOOL_HEAD_TOKENS])
        omitted = len(text) - len(head)
        return f"{self.label(i)}: {head} … [{omitted:,} more characters omitted]"

    def _condensed(self, i: int) -> str:
        """One line: the first sentence (≤ 25 words) and the names of any tool calls."""
        m = self.messages[i]
        text = message_text(m)
        gist = first_sentence(text)
        line = f"{self.label(i)}: {gist}" if gist else f"{self.label(i)}:"
        calls = tool_calls(m)
        if calls:
            line += " → called " + ", ".join(str(c.get("name")) for c in calls)
        elif gist != text:
            line += " …"
        self._identical[i] = not calls and gist == text
        return line

    def render(self, i: int, level: int) -> str:
        if level == SHORTENED:
            return self.shortened(i) or self.full(i)
        return self.condensed(i) if level == CONDENSED else self.full(i)

    def is_verbatim(self, i: int, level: int) -> bool:
        """Whether the message's full rendering is what this level shows."""
        if level == VERBATIM:
            return True
        if level == SHORTENED:
            return self.shortened(i) is None
        self.condensed(i)
        return self._identical[i]

    def cost(self, i: int, level: int, limit: int | None = None) -> int:
        """Tokens of the message's line(s) plus newline; exact when <= limit, else > limit."""
        if level == SHORTENED and self.shortened(i) is None:
            level = VERBATIM
        key = (i, level)
        cached = self._costs.get(key)
        if cached and (cached[1] or (limit is not None and cached[0] > limit)):
            return cached[0]
        value, exact = self.count_upto(self.render(i, level) + "\n", limit)
        self._costs[key] = (value, exact)
        return value

    def label(self, i: int) -> str:
        m = self.messages[i]
        if isinstance(m, ToolMessage):
            detail = [d for d in (m.name, "error" if m.status == "error" else None) if d]
            return f"[#{i + 1}] Tool" + (f" ({', '.join(detail)})" if detail else "")
        fallback = m.role if isinstance(m, ChatMessage) else m.type
        role = next((name for kind, name in _ROLES if isinstance(m, kind)), fallback)
        return f"[#{i + 1}] {role}" + (f" ({m.name})" if m.name else "")

    def count_upto(self, text: str, limit: int | None) -> tuple[int, bool]:
        """(tokens, exact): exact when <= limit; a long text is probed by its prefix first."""
        if limit is not None:
            probe_len = (max(limit, 0) + 1) * PROBE_CHARS_PER_TOKEN
            if len(text) > probe_len:
                probed = self.counter.count_text(text[:probe_len])
                if probed > limit:
                    return probed, False
        return self.counter.count_text(text), True


def tool_calls(message: BaseMessage) -> list[Any]:
    return message.tool_calls if isinstance(message, AIMessage) else []


def first_sentence(text: str) -> str:
    """First sentence, at most CONDENSED_WORDS words, whitespace collapsed."""
    head = text[:_CONDENSE_SCAN_CHARS]
    end = _SENTENCE_END.search(head)
    words = (head[: end.start()] if end else head).split(None, CONDENSED_WORDS)
    return " ".join(words[:CONDENSED_WORDS])
