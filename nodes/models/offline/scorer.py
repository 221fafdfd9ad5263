"""A deterministic scorer: which candidate profile a request is about.

The offline model routes with it when no profile is named outright. Each
candidate profile is indexed once per profile set (`index_for`, in `index.py`,
and `example_index_for`, in `examples.py`).

A request's lexical score against a profile is the sum, over its content words,
of the best field weight of the word's stem (`KEYWORD_TERM`, `DESCRIPTION_TERM`,
`PROMPT_TERM` times the field's IDF), or of a synonym's (`SYNONYMS`, a table,
at `SYNONYM`), plus `KEYWORD_PHRASE` per word of each keyword phrase found
verbatim. An unknown word one typo away from a profile's word counts as that
word at `TYPO`. Words of a sentence that records a decision ("we decided ...")
and of a file name count at `CONTEXT` (`reading.py`).

To that, `EXAMPLE` times the profile's votes among the request's nearest example
requests is added (`examples.py`: each profile's `examples`, and the
orchestrator's, which are what it keeps: small talk, thanks, simple questions,
planning). The best total wins, and hands over when:

- it is not the orchestrator's own (`stay`), and the request is not a near
  duplicate (`NEAR_DUPLICATE`) of something the orchestrator keeps;
- the ask itself (less decisions and file names) reaches `THRESHOLD`;
- the text reads as an ask (`is_ask`: a question, "can you", a problem report,
  an imperative), or, as a statement, holds one of the profile's keyword
  phrases and is not nearest to something the orchestrator keeps.

A request made only of stop words and chit-chat words ("hi", "thanks!", "what
can you do?") is nobody's, and with an orchestrator to stay with, so is a question
about what the team can do whose other sentences only set the scene ("We build a
billing service in Go. What can you do?": `is_capability_question`).

The words, stems, tables and `is_ask` are in `lexicon.py`, the index of a profile set in
`index.py` and `examples.py`, the weights in `weights.py`.

Nothing here knows the built-in profiles: any `Profile` among the candidates is
scored the same way. No model, no network, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ....specialists import Profile
from .examples import example_index_for
from .index import index_for
from .lexicon import is_ask, is_capability_question, stem, synonym_index, terms
from .reading import Word, request_words
from .weights import EXAMPLE, KEYWORD_PHRASE, MAX_TERMS, NEAR_DUPLICATE, SYNONYM, THRESHOLD, TYPO


def is_chit_chat(text: str) -> bool:
    """True when the text has no content word: `hi`, `thanks!`, `how are you?`."""
    return not request_words(text)


@dataclass
class Score:
    """One candidate's score for a request."""

    name: str
    score: float = 0.0
    ask: float = 0.0
    """The part of `score` that comes from the ask itself (not decisions or file names)."""
    first: int = 1 << 30
    """Where its first match is in the request (ties go to the earliest)."""
    phrases: list[tuple[int, str]] = field(default_factory=list)
    words: list[tuple[float, int, str]] = field(default_factory=list)
    keys: tuple[str, ...] = ()
    """The request's keys as scored (typos corrected)."""

    def matched(self) -> list[str]:
        """The keyword phrases found, else the request's words that scored most, in order."""
        if self.phrases:
            return [k for _, k in sorted(self.phrases)]
        best = sorted(self.words, key=lambda w: (-w[0], w[1]))[:MAX_TERMS]
        return [text for _, _, text in sorted(best, key=lambda w: w[1])]


def score_profiles(text: str, profiles: Mapping[str, Profile]) -> list[Score]:
    """Every candidate's score for the request, best first (ties: earliest match, then the
    candidates' order: the sort is stable)."""
    index = index_for(profiles)
    synonyms = synonym_index()
    lowered = text.lower()
    request = []
    for w in request_words(text):
        fixed = index.correct(w.text) if w.key not in index.known else None
        request.append(w if fixed is None else replace(w, key=stem(fixed), weight=w.weight * TYPO))
    ranked = []
    for entry in index.profiles:
        result = Score(entry.name, keys=tuple(w.key for w in request))
        covered: set[str] = set()
        for keyword, pattern in entry.phrases:
            if match := pattern.search(lowered):
                result.phrases.append((match.start(), keyword))
                result.score += KEYWORD_PHRASE * len(keyword.split())
                result.ask += KEYWORD_PHRASE * len(keyword.split())
                result.first = min(result.first, match.start())
                covered |= terms(keyword)
        best: dict[str, tuple[float, Word]] = {}
        for w in request:
            if w.key in covered:
                continue
            value = index.weight(entry, w.key)
            for other in synonyms.get(w.key, ()):
                value = max(value, SYNONYM * index.weight(entry, other))
            value *= w.weight
            if value > 0.0 and value > best.get(w.key, (0.0, w))[0]:
                best[w.key] = (value, w)
        for value, w in best.values():
            result.score += value
            result.ask += 0.0 if w.context else value
            result.words.append((value, w.position, w.text))
            result.first = min(result.first, w.position)
        ranked.append(result)
    return sorted(ranked, key=lambda r: (-round(r.score, 9), r.first))


def best_profile(
    text: str, profiles: Mapping[str, Profile], *, stay: Profile | None = None
) -> tuple[str, list[str]] | None:
    """The best profile for a request and the words that matched, or None (chit-chat, too weak,
    or `stay` wins: what the orchestrator keeps, such as small talk and planning, stays with it).

    A candidate's total is its lexical score (`score_profiles`) plus `EXAMPLE` times its votes
    among the request's nearest example requests (`examples.py`)."""
    if not profiles or is_chit_chat(text):
        return None
    if stay is not None and is_capability_question(text):  # "we use Go. What can you do?"
        return None
    # the orchestrator's prompt and description speak of everyone's work ("understands the
    # request ... routes it"): it stays on its keywords and its examples only
    scored = dict(profiles)
    if stay is not None:
        scored[stay.name] = replace(stay, description=stay.title, prompt=stay.title)
    index = example_index_for(scored)
    nearest = index.nearest(text)
    votes = index.votes(nearest)
    # the first of the best totals
    top = max(
        score_profiles(text, scored),
        key=lambda s: round(s.score + EXAMPLE * votes.get(s.name, 0.0), 9),
    )
    if stay is not None and top.name == stay.name:
        return None
    # nearest of all to something the orchestrator keeps ("the k8s meetup was fun, lol")
    kept = stay is not None and bool(nearest) and nearest[0][0] == stay.name
    if kept and nearest[0][1] >= NEAR_DUPLICATE:
        return None
    if top.ask + EXAMPLE * votes.get(top.name, 0.0) < THRESHOLD:  # the ask decides
        return None
    if not is_ask(text, top.keys) and (not top.phrases or kept):  # a statement needs a keyword
        return None
    return top.name, top.matched() or index.telling_words(text)
