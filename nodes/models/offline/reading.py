"""What the offline router reads in a request: its content words and synonym phrases, weighed.

Words of a sentence that records a decision ("we decided ...") and of a file name describe the
situation rather than the ask: they count at `CONTEXT`. Stop words, small-talk words and numbers
are left out; of a file path only the file name's words count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...history.extractive import ARTIFACT, DECISION, SENTENCE
from .lexicon import CHIT_CHAT, STOP_WORDS, stem, synonym_phrases, words
from .weights import CONTEXT


@dataclass(frozen=True)
class Word:
    """A content word (or a synonym phrase) of the request."""

    position: int
    text: str
    """As the request writes it, lower-cased (so a topic reads like the request)."""
    key: str
    """Its stem, or the phrase itself."""
    weight: float = 1.0
    context: bool = False
    """In a decision sentence or a file name: it describes the situation, not the ask."""


def request_words(text: str) -> list[Word]:
    """The request's content words and synonym phrases, in order, with their weights."""
    context: list[tuple[int, int]] = []
    skip: list[tuple[int, int]] = []  # of a file path only the file name's words count
    for m in ARTIFACT.finditer(text):
        path = m.group(0)
        skip += [
            (m.start(), m.start() + path.rfind("/") + 1),
            (m.start() + path.rfind("."), m.end()),
        ]
        context.append(m.span())
    start = 0
    for sentence in SENTENCE.split(text):
        begin = text.find(sentence, start)
        if begin >= 0:
            if DECISION.search(sentence):
                context.append((begin, begin + len(sentence)))
            start = begin + len(sentence)

    def word(position: int, written: str, key: str) -> Word:
        inside = any(a <= position < b for a, b in context)
        return Word(position, written, key, CONTEXT if inside else 1.0, inside)

    found = []
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    phrases = synonym_phrases()
    for index in _candidate_phrases(lowered):
        phrase, pattern = phrases[index]
        if phrase not in lowered:  # a cheap test first: most texts hold few of the phrases
            continue
        for m in pattern.finditer(lowered):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                taken.append(m.span())
                found.append(word(m.start(), phrase, phrase))
    for position, written in words(text):
        if written in STOP_WORDS or written in CHIT_CHAT or written.isdigit():
            continue
        if not any(a <= position < b for a, b in skip):
            found.append(word(position, written, stem(written)))
    return sorted(found, key=lambda w: w.position)


_ALNUM = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _phrases_by_first_word() -> tuple[dict[str, tuple[int, ...]], tuple[int, ...]]:
    """The synonym phrases' positions (in `synonym_phrases()` order) by their first word, and
    those of phrases that do not open with a letter or digit (checked in every text)."""
    by_word: dict[str, list[int]] = {}
    always: list[int] = []
    for index, (phrase, _) in enumerate(synonym_phrases()):
        first = _ALNUM.match(phrase)
        if first is None:
            always.append(index)
        else:
            by_word.setdefault(first.group(0), []).append(index)
    return {w: tuple(found) for w, found in by_word.items()}, tuple(always)


def _candidate_phrases(lowered: str) -> list[int]:
    """The synonym phrases that can match in `lowered`, in table order (longest first).

    A phrase matches as whole words, so its first word is then one of the text's words:
    only those phrases are tried, and the result is the same as trying all of them."""
    by_word, always = _phrases_by_first_word()
    found = [i for w in set(_ALNUM.findall(lowered)) & by_word.keys() for i in by_word[w]]
    return sorted([*found, *always])
