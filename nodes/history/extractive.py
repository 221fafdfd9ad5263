"""Extractive text helpers: first sentences, decisions, file paths, a short summary.

No model is involved: these pick sentences out of the text as written. The
orchestrator's running summary uses them, and so does the offline model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
    sentence = next((s for s in sentences if len(s.split()) >= 4), sentences[0])
    parts = sentence.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def clip_words(text: str, words: int = 40) -> str:
    """The first `words` words, with an ellipsis when cut."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def extract_artifacts(texts: Sequence[str], limit: int = 10) -> list[str]:
    """File paths mentioned in the texts, first mention first, without duplicates."""
    seen: list[str] = []
    for text in texts:
        for match in ARTIFACT.findall(text):
            if match not in seen:
                seen.append(match)
    return seen[:limit]


def extract_decisions(texts: Sequence[str], limit: int = 5) -> list[str]:
    """Sentences that state a decision (`we decided`, `let's`, `going with` ...)."""
    found: list[str] = []
    for text in texts:
        for sentence in SENTENCE.split(" ".join(text.split())):
            if DECISION.search(sentence) and sentence not in found:
                found.append(sentence.strip())
    return found[-limit:]


def extractive_summary(texts: Sequence[str], max_words: int = 180) -> str:
    """The first sentence of each text, the most recent kept when over `max_words`."""
    lines = [first_sentence(t, 40) for t in texts if t.strip()]
    kept: list[str] = []
    total = 0
    for line in reversed(lines):
        total += len(line.split())
        if total > max_words:
            break
        kept.append(line)
    return " ".join(reversed(kept))
