"""The ledger's extractor: what a message settles, read by rules (no model, the same with any).

A message is cut into statements (sentences, lines, clauses after a semicolon; code blocks are
left out). A statement is kept when it says something is settled and has substance:

- a **decision**: a decision word ("we decided", "let's go with", "we'll use", "X it is",
  "switch to", "instead of", ...) and something it is about (a product or format name, a path,
  a number with a unit, a version), or a slot named with its value ("IDs are ULIDs",
  "Region: eu-central-1");
- a **constraint**: a rule word ("must", "never", "hard requirement", "at most", "under 200
  ms", "retention", ...) with such substance;
- an **artifact**: a path, URL, ticket, environment variable, region or version the statement
  points to ("the spec lives in docs/spec.md", or a message that is only a path), and a number
  with a unit for something measured ("retention: 30 days").

Questions, maybes ("should we", "what if", "not decided yet") and stories ("yesterday the
build took 5 minutes", "I looked at src/util.go") are not settled things. What a statement
replaces ("instead of Postgres", "switch from eu-west-1") is read too, so the ledger can mark
the older statement superseded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...state.defaults import LEDGER_ENTRIES_PER_MESSAGE
from .lexicon import (
    ARTIFACT_CUE,
    CHANGE,
    CODE,
    CONSTRAINT,
    DECISION,
    ENV_NAME,
    EXTENSION,
    FORMATS,
    LEAD_IN,
    MEASURED_SLOTS,
    NARRATIVE,
    NOT_PATHS,
    NUMBER_UNIT,
    PATH,
    REGION,
    REPLACED_AFTER,
    REPLACED_BEFORE,
    SLOT_VALUES,
    SLOT_WORDS,
    TECH_TERMS,
    TENTATIVE,
    TICKET,
    URL,
    VERSION,
)

MAX_STATEMENT_WORDS = 45
"""A longer statement is cut (the ledger keeps one line per entry)."""
MAX_SCANNED_CHARS = 20_000
"""Of a very long message only the start is read: a pasted document is not a ledger."""

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|\s+[-–—]{1,2}\s+(?=[A-Z])")
_STRONG_CONSTRAINT = re.compile(
    r"\b(?:must|mustn'?t|has to|have to|needs? to|shall|cannot|can'?t|may not|should never|"
    r"required|requirement|mandatory|non-negotiable|hard (?:requirement|limit|constraint|rule)|"
    r"not allowed|forbidden|never|no more than|at most|at least)\b",
    re.I,
)
_STRONG_DECISION = re.compile(
    r"\b(?:decided|agreed|settled|chose|chosen|picked|go(?:ing)? with|stick(?:ing)? with|"
    r"we'?ll use|we will use|let'?s use|it is|approved|confirmed|signed off|the plan is)\b",
    re.I,
)
_COPULA = re.compile(
    r"\b(?:is|are|will be|should be|stays?|remains?|goes through|go through|handled by|"
    r"handles|via|uses?|runs? on|lives? on|hosted on|backed by|powered by|through|=)\b|:\s*\S",
    re.I,
)
_LOG_LINE = re.compile(
    r"^\s*(?:at\s+[\w.$<>]+\(|File \"|Traceback|\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[\w+\]\s|[>$#]\s)"
)


@dataclass(frozen=True)
class Fact:
    """One settled statement of a message."""

    kind: str
    """`decision`, `constraint` or `artifact`."""
    text: str
    slot: str = ""
    """What it is about, where the lexicon can tell (`database`, `latency`)."""
    values: tuple[str, ...] = ()
    """The values it names, lower case (`postgres`, `200ms`, `docs/spec.md`)."""
    replaced: tuple[str, ...] = ()
    """Values it says are replaced ("instead of Postgres")."""
    change: bool = False
    """It says it changes something said before."""


def statements(text: str) -> list[str]:
    """The statements of a message: code blocks and log lines left out, then lines, sentences
    and clauses after a semicolon, each with its whitespace collapsed."""
    text = _FENCE.sub("\n", text[:MAX_SCANNED_CHARS])
    found: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _LOG_LINE.match(line):
            continue
        line = re.sub(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+", "", line)
        for part in _SENTENCE_END.split(line):
            part = " ".join(part.split()).strip(" -–—")
            if part:
                found.append(part)
    return found


def _clean(statement: str) -> str:
    """The statement as the ledger shows it: lead-in words off, at most `MAX_STATEMENT_WORDS`."""
    cleaned = LEAD_IN.sub("", statement).strip(" ,;:-") or statement
    words = cleaned.split()
    if len(words) > MAX_STATEMENT_WORDS:
        cleaned = " ".join(words[:MAX_STATEMENT_WORDS]) + " …"
    return cleaned


def _is_path(candidate: str) -> bool:
    bare = candidate.rstrip(".,;:")
    if bare.lower() in NOT_PATHS or not re.search(r"[A-Za-z]", bare) or len(bare) < 4:
        return False
    if "/" not in bare:
        return True  # a file name with a known extension, or Dockerfile-like
    parts = [p for p in bare.split("/") if p]
    if not parts or re.fullmatch(r"[\d/.:-]+", bare):
        return False  # a date or a ratio
    return (
        bool(EXTENSION.search(parts[-1]))
        or bare.startswith(("/", "./", "../", "~/", "."))
        or len(parts) >= 3
        or bare.endswith("/")
    )


def artifacts_in(statement: str) -> list[str]:
    """Paths, URLs, tickets, environment names, code spans, regions and versions named."""
    found: list[str] = []
    urls = [u.rstrip(".,;:!?") for u in URL.findall(statement)]
    found += urls
    rest = URL.sub(" ", statement)
    found += [p.rstrip(".,;:") for p in PATH.findall(rest) if _is_path(p)]
    found += [c.strip() for c in CODE.findall(rest)]
    for pattern in (TICKET, ENV_NAME, REGION, VERSION):
        found += [m.group(0) for m in pattern.finditer(rest)]
    unique: list[str] = []
    for item in found:
        if item and item.lower() not in (u.lower() for u in unique):
            unique.append(item)
    return unique


def _slot(statement: str) -> tuple[str, list[str]]:
    """The slot a statement is most about, and the slot's values it names (lower case)."""
    best, best_score, best_values = "", 0, []
    for slot, words in SLOT_WORDS.items():
        values = [value for value, pattern in SLOT_VALUES[slot] if pattern.search(statement)]
        named = sum(1 for pattern in words if pattern.search(statement))
        if slot == "region":
            values += [m.group(0).lower() for m in REGION.finditer(statement)]
        score = 2 * len(values) + named
        if score > best_score:
            best, best_score, best_values = slot, score, values
    return best, _without_contained(best_values)


def _without_contained(values: list[str]) -> list[str]:
    """`postgres` and `postgresql` named once are one value: the longer is kept."""
    kept = []
    for value in values:
        if not any(value != other and value in other for other in values):
            kept.append(value)
    return kept


def _replaced(statement: str, values: list[str]) -> list[str]:
    """The values the statement says are replaced (read around each value)."""
    out = []
    for value in values:
        for match in re.finditer(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", statement, re.I):
            before = statement[max(0, match.start() - 40) : match.start()]
            after = statement[match.end() : match.end() + 30]
            if REPLACED_BEFORE.search(before) or REPLACED_AFTER.match(after):
                out.append(value)
                break
    return out


def _numbers(statement: str) -> list[str]:
    return ["".join(m.group(0).lower().split()) for m in NUMBER_UNIT.finditer(statement)]


def _settled(statement: str) -> str | None:
    """The kind of settled thing a statement is, or None."""
    if TENTATIVE.search(statement):
        return None
    artifacts = artifacts_in(statement)
    numbers = _numbers(statement)
    slot, values = _slot(statement)
    tech = bool(TECH_TERMS.search(statement) or FORMATS.search(statement))
    substance = bool(artifacts or numbers or tech or values)
    story = bool(NARRATIVE.search(statement))
    words = len(statement.split())
    if DECISION.search(statement) and not story:
        if substance or slot or (_STRONG_DECISION.search(statement) and words >= 5):
            return "decision"
    if CONSTRAINT.search(statement) and not story:
        strong = _STRONG_CONSTRAINT.search(statement)
        if substance or slot or (strong and words >= 7):
            return "constraint"
    named = values or numbers or FORMATS.search(statement)
    if slot and named and _COPULA.search(statement) and not story:
        return "constraint" if slot in MEASURED_SLOTS else "decision"
    if numbers and slot in MEASURED_SLOTS and not story:
        return "constraint"
    if artifacts and not story and (ARTIFACT_CUE.search(statement) or words <= 4):
        return "artifact"
    return None


def analyse(text: str, kind: str) -> Fact:
    """A statement of a known kind (a handover's decision, a return's artifact) as a `Fact`,
    with its slot, values and what it replaces."""
    statement = " ".join(text.split())
    slot, values = _slot(statement)
    extra = [a.lower() for a in artifacts_in(statement)] + _numbers(statement)
    if FORMATS.search(statement):
        extra += [m.group(0).lower() for m in FORMATS.finditer(statement)]
    named = _without_contained(list(dict.fromkeys([*values, *extra])))
    replaced = _replaced(statement, named)
    return Fact(
        kind=kind,
        text=_clean(statement),
        slot=slot,
        values=tuple(v for v in named if v not in replaced),
        replaced=tuple(replaced),
        change=bool(replaced) or bool(CHANGE.search(statement)),
    )


def extract_facts(text: str, *, limit: int = LEDGER_ENTRIES_PER_MESSAGE) -> list[Fact]:
    """The settled statements of one user message, at most `limit` (decisions and constraints
    before artifacts when there are more)."""
    if not isinstance(text, str) or not text.strip():
        return []
    found: list[Fact] = []
    for statement in statements(text):
        if statement.endswith("?"):
            # "We're going with Postgres, any objections?": the clause before the question
            head = re.split(r",\s+|\s+[-–—]\s+", statement[:-1])
            statement = head[0] if len(head) > 1 else ""
            if not statement:
                continue
        kind = _settled(statement)
        if kind is not None:
            found.append(analyse(statement, kind))
    if len(found) > limit:
        ranked = sorted(found, key=lambda f: f.kind == "artifact")
        keep = {id(f) for f in ranked[:limit]}
        found = [f for f in found if id(f) in keep]
    return found
