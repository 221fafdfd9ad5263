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
from . import lexicon

MAX_STATEMENT_WORDS = 45
"""A longer statement is cut (the ledger keeps one line per entry)."""
MAX_SCANNED_CHARS = 6_000
"""Of a very long message only the start is read: a pasted document is not a ledger."""

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\s+[-–—]{1,2}\s+(?=[A-Z])")
_EMPHASIS = re.compile(
    r"^(?:no exceptions?|non[- ]negotiable|that'?s (?:final|a hard requirement|non[- ]negotiable|"
    r"the rule|mandatory|a must|required|settled)|this is (?:final|mandatory|a must|required)|"
    r"hard requirement|mandatory|required|final|period|always|never|full stop)[.!]*$",
    re.I,
)
"""A sentence that only stresses the one before it ("No exceptions."): read with it."""
_STRONG_CONSTRAINT = re.compile(
    r"\b(?:must(?!-)|mustn'?t|has to|have to|needs? to|shall|cannot|can'?t|may not|should never|"
    r"required|requirement|mandatory|non-negotiable|hard (?:requirement|limit|constraint|rule)|"
    r"not allowed|forbidden|never|always|no more than|at most|at least|no exceptions?)\b",
    re.I,
)
_STRONG_DECISION = re.compile(
    r"\b(?:decided|agreed|settled|chose|chosen|picked|go(?:ing)? with|stick(?:ing)? with|"
    r"we'?ll|we will|let'?s use|it is|signed off|the plan is|we (?:cut over|roll out|migrate|"
    r"launch|ship|start with|begin with|go live))\b",
    re.I,
)
_STATE = re.compile(
    r"^(?:every|all|each|no|none of the|only)\s+\w+"
    r"|\b(?:is|are|stays?|remains?)\s+(?:always\s+|strictly\s+)?(?:off|on|disabled|enabled|required|"
    r"optional|mandatory|allowed|forbidden|deprecated|read-only|immutable|append-only|"
    r"idempotent|private|public|internal|encrypted|signed|versioned|frozen|out of scope|in scope)\b"
    r"|,\s*not\s+|\bnot\s+\w+\s*,\s*but\b|\bnothing (?:older|newer|else|more|less)\b",
    re.I,
)
"""A rule by its shape: "every build is signed", "sticky sessions are off", "X, not Y"."""
_FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|my|me)\b(?!\s+(?:decided|picked|chose|prefer|settled|want (?:us|the|all|every)))",
    re.I,
)
"""A statement about the speaker, not the project ("I have a meeting", "my laptop ...")."""
_TROUBLE = re.compile(
    r"\b(?:getting|seeing|keep getting|keeps? (?:failing|crashing)|is being|flaky|flaked|"
    r"reformatted|renamed|out of date|mentions|backing off|fixing|cleaning up|retrying|"
    r"crash(?:es|ed|ing)?(?!-)|fails|failing|broken|(?:the )?(?:failure|error|bug|exception|"
    r"problem|outage) (?:is|was)|worr(?:y|ies|ied)|"
    r"is getting|are getting|getting (?:long|big|slow)|locally|on my (?:machine|laptop)|"
    r"in my (?:scratch|local|branch)|my local|my laptop|my machine|my branch|my checkout|"
    r"give me a (?:minute|sec|second)|brb|todos?)\b",
    re.I,
)
"""Talk about a machine's state or the day's chores: nothing the project settles."""
_OUTPUT = re.compile(
    r"`[^`]*\s[^`]*`|\b(?:says|prints|shows|complains|spits|throws|yells)\s*:"
    r"|\b(?:report|dashboard|graph|chart|counter|metric|tool|linter|profiler|log|trace)s? "
    r"(?:says|said|shows?|showed|reports?|reported)\b",
    re.I,
)
"""A pasted message or a tool's output (a code span with spaces in it): a report, not a fact."""
_LABEL_VALUE = re.compile(
    r"^(?!(?:update|note|fyi|ps|edit|btw|question|q|re|now|so|then|next|also|and|but|ok|okay|"
    r"well|hmm|following|follow|quick|small|one|another|first|second|finally|context|"
    r"background|reminder|heads up|thanks|thank)\b)"
    r"(?!\S+(?: \S+){0,3} (?:that|this|it|on|up|to|now|then)\s*:)"
    r"[A-Za-z][\w'/-]*(?: [\w'/-]+){0,3}:\s+\S+(?:\s+\S+)+",
    re.I,
)
"""`Ordering guarantee: per conversation only`: a setting named and given."""
_HANDOVER_REQUEST = re.compile(
    r"\b(?:bring in|hand (?:this|it|that) (?:over|off)|pass (?:this|it) (?:on )?to|loop in|"
    r"(?:get|hand|pass|bring|send|give|ask|needs?|wants?)\b.{0,30}\b\w+[_ ](?:engineer|architect|"
    r"designer|reviewer|analyst|auditor|explorer|specialist|hacker)s?\b|"
    r"bring (?:them|him|her|someone|somebody) in|"
    r"get the [\w ]{3,40} on this|let'?s get (?:the|a) [\w ]{3,40} (?:on|to|in)|"
    r"(?:over|back) to the orchestrator|hand (?:me )?(?:over|back))\b",
    re.I,
)
"""Asking for a specialist (or to go back): a request, not a fact."""
_COPULA = re.compile(
    r"\b(?:is|are|will be|should be|stays?|remains?|goes through|go through|handled by|"
    r"handles|via|uses?|runs? on|lives? on|hosted on|backed by|powered by|through|=)\b|:\s*\S",
    re.I,
)
_NAMING = re.compile(
    r"\b(?:called|named|(?:id|key|name|prefix|suffix|tag|label|handle) is|prefixed(?: with)?|"
    r"suffixed(?: with)?|labell?ed)\s+['\"`]?[\w.@#/:-]{2,}",
    re.I,
)
"""Something given a name: "the workflow is called release-train"."""
_HTTP_STATUS = re.compile(
    r"\b(?:return|returns|respond|responds|answer|answers|status|http|code|with)\s+(?:with\s+)?"
    r"(?:an?\s+)?[1-5]\d\d\b",
    re.I,
)
_COMPOUND = re.compile(
    r"(?<![\w-])[a-z]{3,}-(?:insensitive|sensitive|only|based|driven|first|"
    r"safe|aware|free|wide|level|scoped|bound|native|hosted|managed|side|time|tenant)(?![\w-])",
    re.I,
)
"""A technical compound ("case-insensitive", "append-only", "event-driven")."""
_WE_DONT = re.compile(
    r"\bwe (?:don'?t|do not|never|won'?t|will not|can'?t|cannot|must not|mustn'?t)\s+\w+", re.I
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
    negated: tuple[str, ...] = ()
    """Phrases it says no to ("no sequential testing")."""


def statements(text: str) -> list[str]:
    """The statements of a message: code blocks and log lines left out, then lines and
    sentences, each with its whitespace collapsed; a sentence that only stresses the one before
    it ("No exceptions.") is read with it."""
    text = _FENCE.sub("\n", text[:MAX_SCANNED_CHARS])
    found: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _LOG_LINE.match(line):
            continue
        line = re.sub(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+", "", line)
        for part in _SENTENCE_END.split(line):
            part = " ".join(part.split()).strip(" -–—")
            if found and _EMPHASIS.match(part):
                found[-1] = f"{found[-1]} {part}"
            elif part:
                found.append(part)
    return found


def _clean(statement: str) -> str:
    """The statement as the ledger shows it: lead-in words off, at most `MAX_STATEMENT_WORDS`."""
    cleaned = lexicon.LEAD_IN.sub("", statement).strip(" ,;:-") or statement
    words = cleaned.split()
    if len(words) > MAX_STATEMENT_WORDS:
        cleaned = " ".join(words[:MAX_STATEMENT_WORDS]) + " …"
    return cleaned


def _is_path(candidate: str) -> bool:
    bare = candidate.rstrip(".,;:")
    if bare.lower() in lexicon.NOT_PATHS or not re.search(r"[A-Za-z]", bare) or len(bare) < 4:
        return False
    if "/" not in bare:
        return True  # a file name with a known extension, or Dockerfile-like
    parts = [p for p in bare.split("/") if p]
    if not parts or re.fullmatch(r"[\d/.:-]+", bare):
        return False  # a date or a ratio
    return (
        bool(lexicon.EXTENSION.search(parts[-1]))
        or bare.startswith(("/", "./", "../", "~/", "."))
        or len(parts) >= 3
        or bare.endswith("/")
    )


def artifacts_in(statement: str) -> list[str]:
    """Paths, URLs, tickets, environment names, code spans that name something, regions and
    versions."""
    found = [u.rstrip(".,;:!?") for u in lexicon.URL.findall(statement)]
    rest = lexicon.URL.sub(" ", statement)
    found += [p.rstrip(".,;:") for p in lexicon.PATH.findall(rest) if _is_path(p)]
    found += [
        c.strip() for c in lexicon.CODE.findall(rest) if lexicon.IDENTIFIER_CODE.match(c.strip())
    ]
    for pattern in (lexicon.TICKET, lexicon.ENV_NAME, lexicon.REGION, lexicon.VERSION):
        found += pattern.findall(rest)
    unique: dict[str, str] = {}  # case aside, the first spelling
    for item in found:
        unique.setdefault(item.lower(), item)
    return list(unique.values())


def technical_tokens(statement: str) -> list[str]:
    """Names of products, settings and identifiers (`OpenSearch`, `cart_sid`, `W3C`), code
    spans and messages aside."""
    rest = lexicon.CODE.sub(" ", lexicon.URL.sub(" ", statement))
    return [
        token
        for token in lexicon.TECH_TOKEN.findall(rest)
        if lexicon.GENERIC_ACRONYMS.isdisjoint({token.upper(), token.rstrip("s").upper()})
    ]


def _slot(statement: str) -> tuple[str, list[str]]:
    """The slot a statement is most about, and the slot's values it names (lower case): a
    value counts twice, a word naming the slot once."""
    scores: dict[str, int] = {}
    values: dict[str, list[str]] = {}
    for match in lexicon.SLOT_PATTERN.finditer(statement):
        phrase = match.group(1).lower()
        if match.group(2) and len(phrase) <= 3:
            continue
        for slot, is_value in lexicon.SLOT_PHRASES.get(phrase, []):
            scores[slot] = scores.get(slot, 0) + (2 if is_value else 1)
            if is_value:
                values.setdefault(slot, []).append(phrase)
    for match in lexicon.REGION.finditer(statement):
        scores["region"] = scores.get("region", 0) + 2
        values.setdefault("region", []).append(match.group(0).lower())
    if not scores:
        return "", []
    best = max(scores, key=scores.__getitem__)  # the first named wins a tie
    return best, _without_contained(list(dict.fromkeys(values.get(best, []))))


def _without_contained(values: list[str]) -> list[str]:
    """`postgres` and `postgresql` named once are one value: the longer is kept."""
    return [v for v in values if not any(v != other and v in other for other in values)]


_REPLACED_NUMBER = re.compile(
    r"\b(?:not|instead of|rather than|no longer|from)\s+([$€£]?\d[\d,]*(?:\.\d+)?)(?!\d|\.\d)", re.I
)


def _replaced(statement: str, values: list[str]) -> list[str]:
    """The values the statement says are replaced (read around each value)."""
    out = [m.group(1).replace(",", "") for m in _REPLACED_NUMBER.finditer(statement)]
    for value in values:
        for match in re.finditer(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", statement, re.I):
            before = statement[max(0, match.start() - 40) : match.start()]
            after = statement[match.end() : match.end() + 30]
            if lexicon.REPLACED_BEFORE.search(before) or lexicon.REPLACED_AFTER.match(after):
                out.append(value)
                break
    return out


def _numbers(statement: str) -> list[str]:
    return ["".join(m.group(0).lower().split()) for m in lexicon.NUMBER_UNIT.finditer(statement)]


def _settled(statement: str) -> str | None:
    """The kind of settled thing a statement is, or None."""
    if lexicon.TENTATIVE.search(statement) or _HANDOVER_REQUEST.search(statement):
        return None
    firm = bool(lexicon.CHANGE.search(statement) or _STRONG_DECISION.search(statement))
    story = bool(lexicon.NARRATIVE.search(statement)) or (
        bool(_TROUBLE.search(statement))
        and not (lexicon.TICKET.search(statement) or lexicon.URL.search(statement))
    )
    if (story and not firm) or _FIRST_PERSON.match(statement) or _OUTPUT.search(statement):
        return None
    artifacts = artifacts_in(statement)
    numbers = _numbers(statement) + lexicon.TIME_OR_DATE.findall(statement)
    slot, values = _slot(statement)
    formats = lexicon.FORMATS.search(statement)
    named = bool(
        any(not _is_path(a) or lexicon.URL.match(a) for a in artifacts)
        or _HTTP_STATUS.search(statement)
        or _COMPOUND.search(statement)
        or lexicon.TECH_TERMS.search(statement)
        or formats
        or technical_tokens(statement)
        or lexicon.QUOTED.search(statement)
        or _NAMING.search(statement)
    )
    substance = bool(artifacts or numbers or named or values)
    words = len(statement.split())
    if lexicon.DECISION.search(statement):
        if substance or slot or (_STRONG_DECISION.search(statement) and words >= 5):
            return "decision"
    if lexicon.CONSTRAINT.search(statement):
        if substance or slot or (_STRONG_CONSTRAINT.search(statement) and words >= 6):
            return "constraint"
    if (_WE_DONT.search(statement) and words >= 5) or (_STATE.search(statement) and words >= 4):
        return "constraint"
    if _LABEL_VALUE.match(statement) and words >= 4:
        return "decision"
    if slot and (values or numbers or formats) and _COPULA.search(statement):
        return "constraint" if slot in lexicon.MEASURED_SLOTS else "decision"
    if numbers and words >= 4:
        return "constraint"
    if (named or values) and words >= 4:
        return "decision"
    if artifacts and (lexicon.ARTIFACT_CUE.search(statement) or words <= 4):
        return "artifact"
    return None


_DESTINATION = re.compile(
    r"\b(?:mov(?:e|es|ed|ing)|switch(?:es|ed|ing)?|chang(?:e|es|ed|ing)|migrat(?:e|es|ed|ing)|"
    r"go(?:es|ing)?|went|port(?:s|ed|ing)?|upgrad(?:e|es|ed|ing)|bump(?:s|ed|ing)?|replac(?:e|es|"
    r"ed|ing)\s+\S+(?:\s+\S+)?\s+with)\b[^,;.]{0,40}?\b(?:to|with|onto|over to)\s+([^,;]+)",
    re.I,
)
"""Where a change goes: "the ledger moves to PostgreSQL 16 with Citus"."""
_NEGATED = re.compile(
    r"\b(?:no|not|never|without|drop(?:ping)?|stop(?:ping)?|skip(?:ping)?|ditch(?:ing)?|"
    r"forget(?: about)?)\s+((?:[\w.+#-]+\s+){0,2}[\w.+#-]+)",
    re.I,
)


def _named(statement: str) -> list[str]:
    """Every specific thing a statement names, lower case: its slot's values, artifacts,
    numbers with units, times and decimals, formats and technical tokens."""
    _, values = _slot(statement)
    extra = [a.lower() for a in artifacts_in(statement)] + _numbers(statement)
    for pattern in (lexicon.TIME_OR_DATE, lexicon.FORMATS):
        extra += [m.lower() for m in pattern.findall(statement)]
    extra += [t.lower() for t in technical_tokens(statement)]
    extra += [m.group(1).lower() for m in _PROPER.finditer(statement)]
    return _without_contained(list(dict.fromkeys([*values, *extra])))


_PROPER = re.compile(r"(?<=\S )([A-Z][a-z]{2,}(?:[A-Z]\w*)?)\b")
"""A capitalised word inside a sentence: a product or a place (`Triton`, `Netherlands`)."""
_UNIT = re.compile(rf"\d[\d,]*(?:\.\d+)?\s?({lexicon.UNIT})\b", re.I)


def unit_slot(statement: str) -> str:
    """`unit:rows` for "up to 50,000 rows": what a number is about, when no slot names it."""
    match = _UNIT.search(statement)
    return f"unit:{match.group(1).lower().rstrip('s')}" if match else ""


def negated_phrases(statement: str) -> tuple[str, ...]:
    """The phrases a statement says no to ("no sequential testing" -> `sequential testing`),
    two words or more."""
    found = []
    for match in _NEGATED.finditer(statement):
        words = [w for w in match.group(1).lower().split() if w not in _NEGATION_STOP]
        found += [" ".join(words[:n]) for n in (3, 2) if len(words) >= n]
    return tuple(dict.fromkeys(found))


_NEGATION_STOP = frozenset("the a an any our more longer just only one".split())


def analyse(text: str, kind: str) -> Fact:
    """A statement of a known kind (a handover's decision, a return's artifact) as a `Fact`,
    with its slot, values and what it replaces."""
    statement = " ".join(text.split())
    slot, _ = _slot(statement)
    slot = slot or unit_slot(statement)
    named = _named(statement)
    replaced = _replaced(statement, named)
    # "moves to X": the slot's other values are the ones left behind
    if destination := _DESTINATION.search(statement):
        goes_to = set(_named(destination.group(1)))
        slot_values = lexicon.SLOT_VALUES.get(slot, frozenset())
        replaced += [v for v in named if v in slot_values and v not in goes_to]
    return Fact(
        kind=kind,
        text=_clean(statement),
        slot=slot,
        values=tuple(v for v in named if v not in replaced),
        replaced=tuple(dict.fromkeys(replaced)),
        change=bool(replaced) or bool(lexicon.CHANGE.search(statement)),
        negated=negated_phrases(statement),
    )


def extract_facts(text: str, *, cued: bool = False) -> list[Fact]:
    """The settled statements of one user message, at most `LEDGER_ENTRIES_PER_MESSAGE`
    (decisions and constraints before artifacts when there are more). `cued`: only statements
    with a decision or rule word (for an agent's hand-back summary, whose specifics are its own
    report)."""
    if cued and not (lexicon.DECISION.search(text) or lexicon.CONSTRAINT.search(text)):
        return []
    found: list[Fact] = []
    for statement in statements(text):
        if statement.endswith("?"):
            # "We're going with Postgres, any objections?": the clause before the question
            head = re.split(r",\s+|\s+[-–—]\s+", statement[:-1])
            statement = head[0] if len(head) > 1 else ""
            if not statement:
                continue
        if cued and not (
            lexicon.DECISION.search(statement) or lexicon.CONSTRAINT.search(statement)
        ):
            continue
        kind = _settled(statement)
        if kind is not None:
            found.append(analyse(statement, kind))
    ranked = sorted(found, key=lambda f: f.kind == "artifact")
    kept = {id(f) for f in ranked[:LEDGER_ENTRIES_PER_MESSAGE]}
    return [f for f in found if id(f) in kept]


def settled_lists(texts: list[str]) -> tuple[list[str], list[str]]:
    """What `texts` settled, as a handover's `decisions` and `artifacts` lists (oldest first)."""
    decisions: list[str] = []
    artifacts: list[str] = []
    for text in texts:
        for fact in extract_facts(text):
            if fact.kind == "artifact":
                artifacts += [a for a in artifacts_in(fact.text) if a not in artifacts]
            elif fact.text not in decisions:
                decisions.append(fact.text)
    return decisions, artifacts
