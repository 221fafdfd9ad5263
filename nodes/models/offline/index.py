"""The offline router's index of a profile set: what each candidate profile is indexed by.

Each candidate profile is indexed once per profile set (`index_for`):

- its keyword phrases, matched verbatim;
- the stems of its keywords' words, of its title and description (less the words
  inside its own multi-word keywords: "release notes" is that keyword, not
  `notes`), and of its prompt (less the lines that name another candidate: they
  describe someone else's work), each field with IDF-like weights computed over
  the candidates, so a word every profile uses counts little (a description
  word most profiles' prose uses keeps half its weight at most).

A word's field weight in a profile is `KEYWORD_TERM`, `DESCRIPTION_TERM` or
`PROMPT_TERM` times the field's IDF (`Index.weight`), and an unknown word one
typo away from a profile's word can be read as that word (`Index.correct`).

Nothing here knows the built-in profiles: any `Profile` among the candidates is
indexed the same way. No model, no network, no randomness.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ....specialists import Profile
from .lexicon import STOP_WORDS, SYNONYMS, phrase_pattern, stem, synonym_index, terms, words
from .weights import DESCRIPTION_TERM, KEYWORD_TERM, PROMPT_TERM


# -- the index of a profile set -------------------------------------------------------------
@dataclass(frozen=True)
class ProfileTerms:
    """What one candidate profile is indexed by."""

    name: str
    phrases: tuple[tuple[str, re.Pattern[str]], ...]
    keyword: Mapping[str, float]
    """Stem -> its largest share of a keyword (1.0 of `crash`, 0.5 of `unit test`)."""
    description: frozenset[str]
    prompt: frozenset[str]


@dataclass
class Index:
    """The candidates' terms and each field's IDF, built once per profile set."""

    profiles: list[ProfileTerms]
    idf: dict[str, dict[str, float]]
    known: frozenset[str]
    """Every stem a profile or the synonym table knows: other words may be typos."""
    near: dict[str, tuple[str, ...]]
    """A vocabulary word, or it less one letter -> the vocabulary words (typo lookup)."""

    def weight(self, profile: ProfileTerms, term: str) -> float:
        """The best field weight of `term` in `profile`; 0.0 when it has not got it."""
        best = 0.0
        if term in profile.keyword:
            best = KEYWORD_TERM * profile.keyword[term] * self.idf["keyword"][term]
        if term in profile.description:
            best = max(best, DESCRIPTION_TERM * self.idf["description"][term])
        if term in profile.prompt:
            best = max(best, PROMPT_TERM * self.idf["prompt"][term])
        return best

    def correct(self, word: str) -> str | None:
        """The vocabulary word one typo (insertion, deletion, substitution, swap) away from
        `word`, with the same first letter; the alphabetically first of several; or None."""
        if len(word) < 4 or not word.isalpha():
            return None
        found = {
            candidate
            for key in (word, *_deletions(word))
            for candidate in self.near.get(key, ())
            if candidate[0] == word[0] and _one_edit(word, candidate)
        }
        return min(found) if found else None


def _idf(documents: list[frozenset[str]]) -> dict[str, float]:
    """BM25's IDF over the candidates, scaled so a term only one candidate has weighs 1.0."""
    n = len(documents)
    df = Counter(term for document in documents for term in document)
    top = math.log(1 + (n - 1 + 0.5) / 1.5)
    return {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) / top for term, d in df.items()}


def _deletions(word: str) -> list[str]:
    return [word[:i] + word[i + 1 :] for i in range(len(word))]


def _one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` differ by exactly one insertion, deletion, substitution or swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swapped and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _own_lines(prompt: str, name: str, names: Iterable[str]) -> str:
    """The prompt less the lines that name another candidate ("hand over to
    security_data_engineer for auth"): they describe someone else's work."""
    others = [other for other in names if other != name]
    return "\n".join(line for line in prompt.splitlines() if not any(o in line for o in others))


def _outside_phrases(text: str, keywords: Iterable[str]) -> set[str]:
    """The stems of `text` less those inside one of the profile's own multi-word keywords
    ("release notes" in a description is that keyword, not the word `notes`)."""
    stems = [stem(w) for _, w in words(text) if w not in STOP_WORDS]
    inside = [False] * len(stems)
    for keyword in keywords:
        phrase = [stem(w) for _, w in words(keyword) if w not in STOP_WORDS]
        if len(phrase) < 2:
            continue
        for i in range(len(stems) - len(phrase) + 1):
            if stems[i : i + len(phrase)] == phrase:
                inside[i : i + len(phrase)] = [True] * len(phrase)
    return {s for s, hidden in zip(stems, inside, strict=True) if not hidden}


@lru_cache(maxsize=16)
def _cached_index(items: tuple[tuple[str, Profile], ...]) -> Index:
    """Index a profile set (use `index_for`, which builds it once per set)."""
    profiles = [p for _, p in items]
    names = [p.name for p in profiles]
    entries = []
    vocabulary = {entry for group in SYNONYMS for entry in group if " " not in entry}
    for p in profiles:
        keyword: dict[str, float] = {}
        for phrase in p.keywords:
            stems = terms(phrase)
            for term in stems:
                keyword[term] = max(keyword.get(term, 0.0), 1.0 / len(stems))
        entries.append(
            ProfileTerms(
                name=p.name,
                phrases=tuple((k, phrase_pattern(k)) for k in p.keywords),
                keyword=keyword,
                description=frozenset(_outside_phrases(f"{p.title} {p.description}", p.keywords)),
                prompt=frozenset(terms(_own_lines(p.prompt, p.name, names))),
            )
        )
        text = " ".join((*p.keywords, p.title, p.description))
        vocabulary |= {w for _, w in words(text) if w not in STOP_WORDS}
    near: dict[str, set[str]] = {}
    for word in vocabulary:
        if len(word) >= 5 and word.isalpha():
            for key in (word, *_deletions(word)):
                near.setdefault(key, set()).add(word)
    known = set(synonym_index())
    for e in entries:
        known |= set(e.keyword) | e.description | e.prompt
    # a description word most profiles' prose uses ("files", "requests") is generic however
    # rare it is among the one-line descriptions: it keeps half its weight at most
    prose = _idf([e.description | e.prompt for e in entries])
    description = {
        t: min(w, 0.5 + 0.5 * prose[t]) for t, w in _idf([e.description for e in entries]).items()
    }
    return Index(
        profiles=entries,
        idf={
            "keyword": _idf([frozenset(e.keyword) for e in entries]),
            "description": description,
            "prompt": _idf([e.prompt for e in entries]),
        },
        known=frozenset(known),
        near={key: tuple(sorted(found)) for key, found in near.items()},
    )


def index_for(profiles: Mapping[str, Profile]) -> Index:
    """The index of a profile set, built once per set (cached by the profiles themselves, so an
    edited or added profile gets a new index)."""
    return _cached_index(tuple(profiles.items()))
