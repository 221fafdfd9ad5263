"""The offline router's example index: how close a request is to each profile's example requests.

A profile may list example requests (`examples:` in its front matter, or one per line in
`<name>.examples.txt` beside its file); the orchestrator's profile lists what it keeps (greetings, thanks, small talk, planning). Each example, and one
document per profile made of its title, description and keywords (so a profile without
examples still takes part), is a TF-IDF vector over:

- the stems and synonym phrases the scorer reads in a request (`request_words`; words of a
  decision sentence or a file name at their lower weight);
- each word's synonym group (`SYNONYMS`) at `GROUP_FEATURE`, so "sluggish" near "slow" counts;
- each pair of neighbouring words at `PAIR_FEATURE` ("load balancer" is more than its words).

A request's closeness to a profile is the sum of its cosine similarities to the profile's
documents among its `NEIGHBOURS` nearest documents overall (k nearest neighbours, weighted),
each vote scaled so that a profile with few documents is not outvoted by sheer number
(`BALANCE`). A profile without examples is indexed by its title and description and by each
keyword alone: short documents, as examples are.

Nothing here knows the built-in profiles: any `Profile` among the candidates is indexed the
same way. No model, no network, no randomness.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ....specialists import Profile
from .lexicon import synonym_index
from .reading import request_words
from .weights import BALANCE, GROUP_FEATURE, MAX_TERMS, NEIGHBOURS, PAIR_FEATURE


@lru_cache(maxsize=1)
def _group_names() -> dict[str, str]:
    """Key -> a name for its synonym group (the alphabetically first member)."""
    return {key: "~" + min(others | {key}) for key, others in synonym_index().items()}


def features(text: str) -> dict[str, float]:
    """A text's features: its word keys, their synonym groups and neighbouring pairs."""
    groups = _group_names()
    found: defaultdict[str, float] = defaultdict(float)
    previous = None
    for w in request_words(text):
        found[w.key] += w.weight
        if w.key in groups:
            found[groups[w.key]] += GROUP_FEATURE * w.weight
        if previous is not None:
            found[f"{previous}|{w.key}"] += PAIR_FEATURE * w.weight
        previous = w.key
    return dict(found)


@dataclass(frozen=True)
class ExampleIndex:
    """Every candidate's documents as unit TF-IDF vectors, with an inverted index."""

    names: tuple[str, ...]
    """The profile of each document."""
    idf: Mapping[str, float]
    postings: Mapping[str, tuple[tuple[int, float], ...]]
    """Feature -> (document, weight) for the documents that have it."""
    balance: Mapping[str, float]
    """Profile -> the factor of its neighbours' votes: (mean documents per profile / its
    documents) ** `BALANCE`, so a profile with few examples is not outvoted by sheer number."""

    def nearest(self, text: str) -> list[tuple[str, float]]:
        """(profile, cosine similarity) of the request's `NEIGHBOURS` nearest documents."""
        similarity: dict[int, float] = {}
        for f, q in _unit_vector(features(text), self.idf).items():
            for document, weight in self.postings[f]:
                similarity[document] = similarity.get(document, 0.0) + q * weight
        nearest = sorted(similarity.items(), key=lambda item: (-item[1], item[0]))[:NEIGHBOURS]
        return [(self.names[document], value) for document, value in nearest]

    def votes(self, nearest: list[tuple[str, float]]) -> dict[str, float]:
        """Profile -> the summed similarity of its documents among `nearest`, scaled by the
        profile's `balance`."""
        result: dict[str, float] = {}
        for name, value in nearest:
            result[name] = result.get(name, 0.0) + value * self.balance[name]
        return result

    def closeness(self, text: str) -> dict[str, float]:
        """Profile -> its votes among the request's nearest documents."""
        return self.votes(self.nearest(text))

    def telling_words(self, text: str) -> list[str]:
        """The request's rarest known words (at most `MAX_TERMS`), in its order: a topic."""
        seen = [w for w in request_words(text) if w.key in self.idf and not w.context]
        best = sorted(seen, key=lambda w: (-self.idf[w.key], w.position))[:MAX_TERMS]
        return list(dict.fromkeys(w.text for w in sorted(best, key=lambda w: w.position)))


def _unit_vector(found: Mapping[str, float], idf: Mapping[str, float]) -> dict[str, float]:
    """Sublinear TF times IDF, unit length; features no document has are dropped."""
    vector = {
        f: (1.0 + math.log(count)) * idf[f] for f, count in found.items() if count > 0 and f in idf
    }
    norm = math.sqrt(sum(v * v for v in vector.values()))
    return {f: v / norm for f, v in vector.items()} if norm else {}


def profile_documents(profile: Profile) -> list[str]:
    """What a profile is indexed by: its examples, and its title, description and keywords."""
    if not profile.examples:  # short documents, as examples are: one per keyword
        return [f"{profile.title}: {profile.description}", *profile.keywords]
    summary = ". ".join((profile.title, profile.description, ", ".join(profile.keywords)))
    return [*profile.examples, summary]


def build_example_index(profiles: Iterable[Profile]) -> ExampleIndex:
    """Index a profile set's documents (use `example_index_for`, which builds it once)."""
    documents = [(p.name, text) for p in profiles for text in profile_documents(p)]
    names = tuple(name for name, _ in documents)
    found = [features(text) for _, text in documents]
    df = Counter(f for counts in found for f, c in counts.items() if c > 0)
    n = len(found)
    idf = {f: math.log((n + 1) / (d + 1)) + 1.0 for f, d in df.items()}
    sizes = Counter(names)
    mean = n / len(sizes) if sizes else 1.0
    balance = {name: (mean / size) ** BALANCE for name, size in sizes.items()}
    postings: dict[str, list[tuple[int, float]]] = {}
    for document, counts in enumerate(found):
        for f, weight in _unit_vector(counts, idf).items():
            postings.setdefault(f, []).append((document, weight))
    frozen = {f: tuple(p) for f, p in postings.items()}
    return ExampleIndex(names=names, idf=idf, postings=frozen, balance=balance)


@lru_cache(maxsize=16)
def _cached(profiles: tuple[tuple[str, Profile], ...]) -> ExampleIndex:
    return build_example_index(p for _, p in profiles)


def example_index_for(profiles: Mapping[str, Profile]) -> ExampleIndex:
    """The example index of a profile set, built once per set (an edited profile gets a new one)."""
    return _cached(tuple(profiles.items()))
