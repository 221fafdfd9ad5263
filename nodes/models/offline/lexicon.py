"""The offline router's words: data tables, a stemmer, synonym lookups and what reads as an ask.

The tables (`lexicon.txt`) say which words mean much the same thing (`SYNONYMS`), which say
nothing about who should do the work (`STOP_WORDS`) and which are small talk (`CHIT_CHAT`), and
with `ASK_PHRASES` and `PROBLEM_PHRASES` what wording reads as an ask rather than a statement of
facts (`PROBLEM_WORDS`, `REQUEST_VERBS`, `STATEMENT_STARTERS`, `ASK_SECOND_WORDS`, `LEAD_INS`:
`is_ask`); `CAPABILITY_QUESTION` is a question about what the team can do.
`words` splits a text into words, `stem` reduces a word to its stem, `terms` gives the stems of a
text's content words, and `synonym_index`, `synonym_phrases` and `synonyms_of` look the synonym
table up.

Nothing here knows the built-in profiles. No model, no network, no randomness.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path


def _tables() -> dict[str, list[str]]:
    """The tables of `lexicon.txt`: name -> its lines (an indented line joined to the one above)."""
    tables: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in Path(__file__).with_name("lexicon.txt").read_text("utf-8").splitlines():
        if line.startswith("["):
            lines = tables.setdefault(line.strip("[]"), [])
        elif line.startswith(" "):
            lines[-1] += line
        elif line.strip() and not line.startswith("#"):
            lines.append(line)
    return tables


_TABLES = _tables()


def _word_set(name: str) -> frozenset[str]:
    return frozenset(" ".join(_TABLES[name]).split())


SYNONYMS = tuple(
    tuple(entry.strip() for entry in group.split(",")) for group in _TABLES["SYNONYMS"]
)
"""Groups of words that mean much the same thing when routing (`lexicon.txt` says more)."""
STOP_WORDS = _word_set("STOP_WORDS")
CHIT_CHAT = _word_set("CHIT_CHAT")
PROBLEM_WORDS = _word_set("PROBLEM_WORDS")
REQUEST_VERBS = _word_set("REQUEST_VERBS")
STATEMENT_STARTERS = _word_set("STATEMENT_STARTERS")
ASK_SECOND_WORDS = _word_set("ASK_SECOND_WORDS")
LEAD_INS = _word_set("LEAD_INS")

STEM_EXCEPTIONS = {"production": "production", "productions": "production"}
"""Words the suffix rules would merge with another meaning (`production` is not `product`)."""

ASK_PHRASES = re.compile(
    r"\b(please|pls|plz|can (you|u|we|someone)|could (you|u|we|someone)|would you|help|"
    r"i need|we need|i want|we want|i'?d like|we'?d like|need to|have to|let'?s|"
    r"is it possible|how (do|can|should|would) (i|we)|no idea|not sure|any idea|i wonder|"
    r"wondering|i'?m lost|do ?n[o'’]?t understand|confused|should|must|"
    r"(let|allow|enable) (users|staff|people|customers|admins|us|them))\b",
    re.I,
)
"""Wording that asks for something."""
PROBLEM_PHRASES = re.compile(
    r"\b(not working|does ?n[o'’]?t work|won'?t work|out of (memory|disk|space)|"
    r"runs? out|running out|ran out|(is|are|was|were|goes|went|going) wrong|"
    r"(something|anything|nothing|what)(['’]s| is)? wrong|"
    r"keeps? (climbing|growing|crashing|failing|dying))\b|[a-z](error|exception)\b",
    re.I,
)

_SUBJECT = (
    r"(?:you|u|your team|y'?all)"
    r"(?: (?:and|or) your (?:team|specialists|experts|agents|colleagues))?"
    r"(?: guys| all| folks| people)?(?: actually| exactly| even| really)?"
)
CAPABILITY_QUESTION = re.compile(
    r"\b(?:(?:what(?: else| exactly| all)?|what (?:kinds?|sorts?|types?) of "
    r"(?:things|stuff|work|tasks|help|jobs)) (?:can|could|do) "
    + _SUBJECT
    + r" (?:do|offer|handle|help(?: (?:me|us))?(?: with)?)"
    r"|how (?:can|could|would|might|do) " + _SUBJECT + r" help(?: (?:me|us|out))*"
    r"|what (?:are you|is your team) (?:able|capable)(?: of| to do)"
    r"|what are your (?:capabilities|skills|strengths)"
    r")(?: for (?:me|us|my \w+|our \w+))?(?: here| exactly| then)?\s*(?:[?.!]+|$)",
    re.I | re.M,
)
"""A question about what the team can do, ending its sentence ("What can you do?", "How can
you help us?"); "what can you do about the leak?" asks for something else."""

# -- words and stems ------------------------------------------------------------------------
_INFLECTION = ("ies", "sses", "es", "s", "ing", "ed", "ly")
_ES_AFTER = ("s", "x", "z", "ch", "sh")
_DERIVATION = (
    "ations", "ation", "ions", "ion", "ments", "ment", "ness", "ities", "ity", "ture", "er",
)  # fmt: skip
_VOWEL = re.compile(r"[aeiouy]")
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")
_CLITIC = re.compile(r"(?:n['’]t|['’](?:s|re|ve|ll|d|m))\b", re.I)


def _strip(word: str, suffix: str) -> str | None:
    """`word` without `suffix` when what is left is a plausible stem (3+ letters, a vowel)."""
    if not word.endswith(suffix):
        return None
    rest = word[: -len(suffix)]
    return rest if len(rest) >= 3 and _VOWEL.search(rest) else None


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light, deterministic suffix-stripping stem: `tests`, `testing`, `tested` -> `test`.

    One inflectional ending (-ies -> -y, -sses, -es after s/x/z/ch/sh, -s, -ing, -ed, -ly),
    then up to two derivational endings (-ation, -ion, -ment, -ness, -ity, -ture -> -t, -er),
    then a final -e and a doubled last consonant go. A stem keeps three letters and a vowel.
    """
    word = word.lower()
    if len(word) <= 3 or word in STEM_EXCEPTIONS:
        return STEM_EXCEPTIONS.get(word, word)
    for suffix in _INFLECTION:
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            continue
        if suffix == "es" and not word[:-2].endswith(_ES_AFTER):
            continue
        if suffix == "ed" and word.endswith("eed"):
            continue
        rest = _strip(word, suffix)
        if rest is not None:
            word = rest + {"ies": "y", "sses": "ss"}.get(suffix, "")
            break
    for _ in range(2):  # implementations -> implementation -> implement -> imple
        for suffix in _DERIVATION:
            rest = _strip(word, suffix)
            if rest is not None:
                word = rest + ("t" if suffix == "ture" else "")  # architecture -> architect
                break
        else:
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def words(text: str) -> list[tuple[int, str]]:
    """(position, lower-case word) for each word of `text`.

    camelCase, snake_case and a/b are split (`KeyError` -> `key`, `error`); `CVEs` stays one
    word; clitics go (`don't` -> `do`, `we're` -> `we`).
    """
    text = _CLITIC.sub(lambda m: " " * len(m.group(0)), text)
    found = []
    for token in _TOKEN.finditer(text):
        raw = token.group(0)
        mixed = any(c.islower() for c in raw) and any(c.isupper() for c in raw[1:])
        if mixed and not _ACRONYM_PLURAL.fullmatch(raw):
            found += [
                (token.start() + p.start(), p.group(0).lower()) for p in _CAMEL_PART.finditer(raw)
            ]
        else:
            found.append((token.start(), raw.lower()))
    return found


_PROBLEM_STEMS = frozenset(stem(w) for w in PROBLEM_WORDS)


def is_ask(text: str, keys: Iterable[str] = ()) -> bool:
    """True when the text reads as an ask rather than a statement of facts: a question, asking
    words ("can you", "please", "we need"), a problem report ("the tests fail"; `keys` may add
    typo-corrected stems), or a clause that opens like an imperative ("Write tests for ...",
    "Containerise the app"). "Our staging key is ..." and "We decided ..." are statements."""
    if "?" in text or ASK_PHRASES.search(text) or PROBLEM_PHRASES.search(text):
        return True
    if any(w in PROBLEM_WORDS for _, w in words(text)) or _PROBLEM_STEMS & set(keys):
        return True
    for clause in re.split(r"[.!;:\n]+|,\s+", text):
        content = [w for _, w in words(clause) if w not in CHIT_CHAT or w in REQUEST_VERBS]
        led = content[:4]  # a follow-up's verb comes after its lead-ins: "Now write the ..."
        while led[:1] and led[0] in LEAD_INS:
            led = led[1:]
        for first in (content[:2], led[:2]):
            if (first and first[0] in REQUEST_VERBS) or (
                len(first) == 2
                and first[0] not in STATEMENT_STARTERS
                and first[1] in ASK_SECOND_WORDS
            ):
                return True
    return False


def is_capability_question(text: str) -> bool:
    """True when the text asks what the team can do and asks nothing else: "We are building a
    billing service in Go. What can you do?" (the rest is context); "Can you fix the tests, and
    what else can you do?" asks for work too."""
    rest, found = CAPABILITY_QUESTION.subn(" ", text)
    return bool(found) and not is_ask(rest)


def terms(text: str) -> set[str]:
    """The stems of the content words of `text`."""
    return {stem(w) for _, w in words(text) if w not in STOP_WORDS}


def _key(entry: str) -> str:
    """A synonym entry's key: a word's stem, a phrase as it is."""
    return entry if " " in entry else stem(entry)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A pattern that finds `phrase` as whole words of a lower-cased text."""
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


@lru_cache(maxsize=1)
def synonym_index() -> dict[str, frozenset[str]]:
    """Key (stem or phrase) -> the keys it stands for through `SYNONYMS` (itself excluded)."""
    index: dict[str, set[str]] = {}
    for group in SYNONYMS:
        keys = {_key(entry) for entry in group}
        for key in keys:
            index.setdefault(key, set()).update(keys - {key})
    return {key: frozenset(others) for key, others in index.items()}


@lru_cache(maxsize=1)
def synonym_phrases() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The table's phrases, longest first (then alphabetically, so no run depends on the hash
    seed), with their patterns."""
    phrases = sorted(
        {e for group in SYNONYMS for e in group if " " in e}, key=lambda p: (-len(p), p)
    )
    return tuple((phrase, phrase_pattern(phrase)) for phrase in phrases)


def synonyms_of(word: str) -> frozenset[str]:
    """The keys (stems, phrases) a word or phrase stands for through the table, not its own."""
    return synonym_index().get(_key(word.lower()), frozenset())
