"""Extractive text helpers: first sentences, decisions, file paths, a short summary.

No model is involved: these pick sentences out of the text as written. The
orchestrator's running summary uses them, and so does the offline model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

DECISION = re.compile(
    r"\b(we decided|decided|decision|agreed|we will|we'll|let's|going with|must use|will use)\b",
    re.I,
)
ARTIFACT = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.(?:py|ts|tsx|js|jsx|css|scss|html|md|json|ya?ml|toml|sql|"
    r"sh|go|rs|java|kt|swift|rb|txt|cfg|ini|lock)\b"
)
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def first_sentence(text: str, words: int = 30) -> str:
    """The first sentence of at least four words (greetings like 'Hi!' say nothing)."""
    sentences = SENTENCE.split(" ".join(text.split()))
    return clip_words(next((s for s in sentences if len(s.split()) >= 4), sentences[0]), words)


def clip_words(text: str, words: int = 40) -> str:
    """The first `words` words, with an ellipsis when cut."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def extract_artifacts(texts: Sequence[str], limit: int = 10) -> list[str]:
    """File paths mentioned in the texts, first mention first, without duplicates."""
    return list(dict.fromkeys(match for text in texts for match in ARTIFACT.findall(text)))[:limit]


def extract_decisions(texts: Sequence[str], limit: int = 5) -> list[str]:
    """Sentences that state a decision (`we decided`, `let's`, `going with` ...)."""
    sentences = (s for text in texts for s in SENTENCE.split(" ".join(text.split())))
    return list(dict.fromkeys(s for s in sentences if DECISION.search(s)))[-limit:]


def extractive_summary(texts: Sequence[str], max_words: int = 180) -> str:
    """The first sentence of each text, the most recent kept when over `max_words`."""
    newest_first = [first_sentence(t, 40) for t in texts if t.strip()][::-1]
    totals = accumulate(len(line.split()) for line in newest_first)
    kept = [line for line, total in zip(newest_first, totals, strict=True) if total <= max_words]
    return " ".join(reversed(kept))
