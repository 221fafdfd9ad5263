"""The fidelity corpus: scripted conversations with planted facts, labels and handovers.

Each conversation is one YAML file in `conversations/` (the format is in README.md); the
user turns nobody wrote by hand come from the filler pool (`filler.yaml`), drawn with the
conversation's seeded RNG. `load_corpus()` reads, expands and validates every file;
`Conversation.turns` is the whole list of user turns and `Conversation.plan(n)` who holds the
conversation at turn n and what the scripted agents do there.

No LangGraph here: the loader needs only PyYAML, so the corpus can be checked anywhere.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CONVERSATIONS_DIR = HERE / "conversations"
FILLER_FILE = HERE / "filler.yaml"

ORCHESTRATOR = "orchestrator"
SPECIALISTS = (
    "solution_architect",
    "implementation_engineer",
    "test_debug_engineer",
    "runtime_devops_engineer",
    "security_data_engineer",
    "quality_reviewer",
    "requirements_analyst",
    "codebase_explorer",
    "ui_design_specialist",
    "frontend_designer",
    "release_auditor",
    "hacker",
)
FACT_KINDS = (
    "decision",
    "constraint",
    "path",
    "url",
    "identifier",
    "version",
    "quantity",
    "region",
    "auth",
)
ITEM_KINDS = ("decision", "constraint", "artifact")
MIN_TURNS, MAX_TURNS = 10, 400
MIN_FACTS = 6
MIN_HANDOVERS = 2
PLACEHOLDER = re.compile(r"\{(\w+)\}")


class CorpusError(ValueError):
    """A conversation file breaks the format or its own labels."""


def norm(text: str) -> str:
    """Lower case, one space between words: how terms are looked for in any text."""
    return " ".join(str(text).lower().split())


def has_term(text_norm: str, term: str) -> bool:
    return norm(term) in text_norm


@dataclass(frozen=True)
class Fact:
    """A planted fact: stated at `turn` by the user (or reported at the return of that turn)."""

    id: str
    turn: int
    kind: str
    wording: str
    terms: tuple[str, ...]
    source: str = "user"  # "user" or "return"
    old_turn: int | None = None  # a changed mind: where the old value was stated
    old_terms: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.old_terms)


@dataclass(frozen=True)
class Item:
    """A labelled real decision, constraint or artifact (not planted, kept for noise)."""

    turn: int
    kind: str
    terms: tuple[str, ...]
    source: str = "user"
    fact: str = ""  # the planted fact it belongs to, if any


@dataclass(frozen=True)
class Handover:
    turn: int
    to: str
    topic: str
    summary: str


@dataclass(frozen=True)
class Return:
    turn: int
    summary: str
    decisions: tuple[str, ...]
    artifacts: tuple[str, ...]

    def text(self) -> str:
        """The return as one text: what a peer's specialist says when it hands back."""
        parts = [f"Summary: {self.summary}"]
        if self.decisions:
            parts.append("Decisions: " + "; ".join(self.decisions) + ".")
        if self.artifacts:
            parts.append("Artifacts: " + ", ".join(self.artifacts) + ".")
        return " ".join(parts)


@dataclass(frozen=True)
class Plan:
    """Turn n: `kind` chat (the orchestrator answers), handover (to `target`, who answers),
    session (`holder` answers) or return (`holder` hands back, the orchestrator answers)."""

    n: int
    text: str
    kind: str
    holder: str  # who holds the conversation before the turn
    target: str = ""  # handover: the specialist; return: the orchestrator
    handover: Handover | None = None
    ret: Return | None = None


@dataclass
class Conversation:
    id: str
    title: str
    domain: str
    seed: int
    path: Path
    turns: list[str]  # user texts, turn n is turns[n - 1]
    written: dict[int, str]  # the hand-written turns
    facts: list[Fact]
    real: list[Item]
    handovers: list[Handover]
    returns: list[Return]
    plans: list[Plan] = field(default_factory=list)

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def plan(self, n: int) -> Plan:
        return self.plans[n - 1]

    def items(self) -> list[Item]:
        """Everything worth keeping: the planted facts (and the old values of changed minds),
        the labelled real items and every decision and artifact a return reports."""
        out = list(self.real)
        for f in self.facts:
            # a changed mind's statement names the old value too ("scratch X, let's use Y")
            out.append(Item(f.turn, f.kind, f.terms + f.old_terms, f.source, fact=f.id))
            if f.old_turn is not None:
                out.append(Item(f.old_turn, f.kind, f.old_terms, "user", fact=f.id))
        for r in self.returns:
            for d in r.decisions:
                out.append(Item(r.turn, "decision", (d,), "return"))
            for a in r.artifacts:
                out.append(Item(r.turn, "artifact", (a,), "return"))
        return out

    def all_terms(self) -> set[str]:
        terms: set[str] = set()
        for f in self.facts:
            terms.update(norm(t) for t in (*f.terms, *f.old_terms))
        for i in self.real:
            terms.update(norm(t) for t in i.terms)
        return terms

    def return_text(self, turn: int) -> str:
        for r in self.returns:
            if r.turn == turn:
                return r.text()
        raise KeyError(turn)


# --- the filler pool ------------------------------------------------------------------------------


@dataclass
class FillerPool:
    categories: dict[str, tuple[float, list[str]]]  # name -> (weight, templates)
    vocab: dict[str, list[str]]
    returns: list[str]

    def draw(self, rng: random.Random, vocab: dict[str, list[str]]) -> str:
        names = list(self.categories)
        weights = [self.categories[n][0] for n in names]
        category = rng.choices(names, weights)[0]
        template = rng.choice(self.categories[category][1])

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            choices = vocab.get(key) or self.vocab.get(key)
            if not choices:
                raise CorpusError(f"filler placeholder {{{key}}} has no vocabulary")
            return str(rng.choice(choices))

        return PLACEHOLDER.sub(fill, template)


def load_filler(path: Path = FILLER_FILE) -> FillerPool:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    categories = {
        name: (float(spec["weight"]), [str(t) for t in spec["lines"]])
        for name, spec in data["categories"].items()
    }
    vocab = {k: [str(v) for v in vs] for k, vs in data["vocab"].items()}
    return FillerPool(categories, vocab, [str(t) for t in data["returns"]])


# --- reading one conversation ---------------------------------------------------------------------


def _terms(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise CorpusError(f"{where}: terms must be a non-empty list of strings")
    return tuple(value)


def _read(path: Path, pool: FillerPool) -> Conversation:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cid = str(data["id"])
    where = f"{path.name}"
    if path.stem != cid:
        raise CorpusError(f"{where}: id {cid!r} differs from the file name")
    n_turns = int(data["turns"])
    written = {int(k): str(v).strip() for k, v in (data.get("lines") or {}).items()}
    facts = []
    for raw in data.get("facts") or []:
        fid = str(raw["id"])
        old = raw.get("old")
        facts.append(
            Fact(
                id=fid,
                turn=int(raw["turn"]),
                kind=str(raw["kind"]),
                wording=str(raw.get("wording", "")),
                terms=_terms(raw["terms"], f"{where} fact {fid}"),
                source=str(raw.get("source", "user")),
                old_turn=int(old["turn"]) if old else None,
                old_terms=_terms(old["terms"], f"{where} fact {fid} old") if old else (),
            )
        )
    real = [
        Item(
            turn=int(raw["turn"]),
            kind=str(raw["kind"]),
            terms=_terms(raw["terms"], f"{where} real item at {raw.get('turn')}"),
            source=str(raw.get("source", "user")),
        )
        for raw in data.get("real") or []
    ]
    handovers = [
        Handover(int(h["turn"]), str(h["to"]), str(h["topic"]), str(h["summary"]))
        for h in data["handovers"]
    ]
    returns = [
        Return(
            int(r["turn"]),
            str(r["summary"]),
            tuple(str(d) for d in r.get("decisions") or []),
            tuple(str(a) for a in r.get("artifacts") or []),
        )
        for r in data.get("returns") or []
    ]
    conv = Conversation(
        id=cid,
        title=str(data.get("title", cid)),
        domain=str(data.get("domain", "")),
        seed=int(data.get("seed", 0)),
        path=path,
        turns=[],
        written=written,
        facts=facts,
        real=real,
        handovers=handovers,
        returns=returns,
    )
    vocab = {k: [str(v) for v in vs] for k, vs in (data.get("vocab") or {}).items()}
    _expand(conv, n_turns, pool, vocab)
    validate(conv)
    return conv


def _expand(
    conv: Conversation, n_turns: int, pool: FillerPool, vocab: dict[str, list[str]]
) -> None:
    """Fill every turn nobody wrote: a return turn from the pool's return lines, the others
    from the filler pool; a draw holding any term of the conversation is drawn again."""
    rng = random.Random(conv.seed)
    banned = conv.all_terms()
    return_turns = {r.turn for r in conv.returns}
    recent: list[str] = []
    turns: list[str] = []
    for n in range(1, n_turns + 1):
        if n in conv.written:
            turns.append(conv.written[n])
            continue
        if n in return_turns:
            turns.append(rng.choice(pool.returns))
            continue
        for _ in range(200):
            text = pool.draw(rng, vocab)
            lowered = norm(text)
            if text not in recent and not any(t in lowered for t in banned):
                break
        else:  # pragma: no cover - a pool this small for a conversation is a corpus bug
            raise CorpusError(f"{conv.id}: no filler line fits turn {n}")
        recent = (recent + [text])[-12:]
        turns.append(text)
    conv.turns = turns
    conv.plans = _plans(conv)


def _plans(conv: Conversation) -> list[Plan]:
    events: dict[int, Any] = {h.turn: h for h in conv.handovers}
    for r in conv.returns:
        if r.turn in events:
            raise CorpusError(f"{conv.id}: turn {r.turn} is both a handover and a return")
        events[r.turn] = r
    holder = ORCHESTRATOR
    plans = []
    for n, text in enumerate(conv.turns, start=1):
        event = events.get(n)
        if isinstance(event, Handover):
            if holder != ORCHESTRATOR:
                raise CorpusError(f"{conv.id}: handover at turn {n} while {holder} holds it")
            plans.append(Plan(n, text, "handover", holder, event.to, handover=event))
            holder = event.to
        elif isinstance(event, Return):
            if holder == ORCHESTRATOR:
                raise CorpusError(f"{conv.id}: return at turn {n} while nobody holds it")
            plans.append(Plan(n, text, "return", holder, ORCHESTRATOR, ret=event))
            holder = ORCHESTRATOR
        else:
            plans.append(Plan(n, text, "session" if holder != ORCHESTRATOR else "chat", holder))
    return plans


# --- validation ------------------------------------------------------------------------------------


def validate(conv: Conversation) -> None:
    """Raise CorpusError at the first rule the conversation breaks (README.md lists them)."""
    cid = conv.id

    def fail(why: str) -> None:
        raise CorpusError(f"{cid}: {why}")

    n = conv.n_turns
    if not MIN_TURNS <= n <= MAX_TURNS:
        fail(f"{n} turns, not {MIN_TURNS}-{MAX_TURNS}")
    for t in conv.written:
        if not 1 <= t <= n:
            fail(f"hand-written turn {t} is outside 1-{n}")
    if len(conv.facts) < MIN_FACTS:
        fail(f"{len(conv.facts)} facts, fewer than {MIN_FACTS}")
    ids = [f.id for f in conv.facts]
    if len(set(ids)) != len(ids):
        fail("duplicate fact ids")
    handover_turns = {h.turn for h in conv.handovers}
    return_turns = {r.turn: r for r in conv.returns}
    for f in conv.facts:
        if f.kind not in FACT_KINDS:
            fail(f"fact {f.id}: kind {f.kind!r} is not one of {FACT_KINDS}")
        if f.source == "user":
            if f.turn not in conv.written:
                fail(f"fact {f.id}: turn {f.turn} is not hand-written")
            if f.turn in handover_turns:
                fail(f"fact {f.id}: stated in a handover turn (it would be measured trivially)")
            text = norm(conv.turns[f.turn - 1])
        elif f.source == "return":
            if f.turn not in return_turns:
                fail(f"fact {f.id}: no return at turn {f.turn}")
            text = norm(return_turns[f.turn].text())
        else:
            fail(f"fact {f.id}: source {f.source!r} is not user or return")
        missing = [t for t in f.terms if not has_term(text, t)]
        if missing:
            fail(f"fact {f.id}: terms {missing} are not in its turn's text")
        if f.old_turn is not None:
            if f.old_turn not in conv.written or f.old_turn >= f.turn:
                fail(
                    f"fact {f.id}: the old value's turn {f.old_turn} must be hand-written, earlier"
                )
            old_text = norm(conv.turns[f.old_turn - 1])
            if not all(has_term(old_text, t) for t in f.old_terms):
                fail(f"fact {f.id}: old terms {f.old_terms} are not in turn {f.old_turn}")
            if any(has_term(old_text, t) for t in f.terms):
                fail(f"fact {f.id}: the new value already appears where the old one is stated")
    for item in conv.real:
        if item.kind not in ITEM_KINDS:
            fail(f"real item at {item.turn}: kind {item.kind!r} is not one of {ITEM_KINDS}")
        if item.turn not in conv.written:
            fail(f"real item at {item.turn}: the turn is not hand-written")
        text = norm(conv.turns[item.turn - 1])
        if not all(has_term(text, t) for t in item.terms):
            fail(f"real item at {item.turn}: terms {item.terms} are not in the turn's text")
    if len(conv.handovers) < MIN_HANDOVERS:
        fail(f"{len(conv.handovers)} handovers, fewer than {MIN_HANDOVERS}")
    previous = ""
    for h in conv.handovers:
        if h.to not in SPECIALISTS:
            fail(f"handover at {h.turn}: {h.to!r} is not a specialist profile")
        if h.turn not in conv.written:
            fail(f"handover at {h.turn}: its user text is not hand-written")
        if h.to == previous:
            fail(f"handover at {h.turn}: the same specialist as the handover before")
        previous = h.to
        summary = norm(h.summary)
        fact_terms = {norm(t) for f in conv.facts for t in (*f.terms, *f.old_terms)}
        leaked = [t for t in fact_terms if t in summary]
        if leaked:
            fail(f"handover at {h.turn}: the terse summary holds fact terms {leaked}")
    if not any(any(r.turn < h.turn for r in conv.returns) for h in conv.handovers):
        fail("no handover after a return")
    for r in conv.returns:
        if r.turn in conv.written and not conv.written[r.turn]:
            fail(f"return at {r.turn}: empty user text")
    for h in conv.handovers:
        text = norm(conv.turns[h.turn - 1])
        if h.to not in text and h.to.replace("_", " ") not in text:
            fail(f"handover at {h.turn}: its user text does not name {h.to}")
    # a fact's terms occur only where it is stated (a changed mind: its old and new turns), so
    # no other turn delivers it by chance
    lowered_turns = [norm(t) for t in conv.turns]
    for f in conv.facts:
        allowed = {f.turn} if f.source == "user" else set()
        old_allowed = {f.old_turn, f.turn} if f.old_turn is not None else set()
        for terms, ok in ((f.terms, allowed), (f.old_terms, old_allowed)):
            for t in terms:
                where = {i for i, text in enumerate(lowered_turns, 1) if has_term(text, t)}
                if where - ok:
                    fail(f"fact {f.id}: {t!r} also occurs in turns {sorted(where - ok)}")
                for r in conv.returns:
                    if has_term(norm(r.text()), t) and not (
                        f.source == "return" and r.turn == f.turn
                    ):
                        fail(f"fact {f.id}: {t!r} also occurs in the return at {r.turn}")
    # the plans raise on a handover while a specialist holds it, or a return while nobody does
    fillers = [t for i, t in enumerate(conv.turns, 1) if i not in conv.written]
    for text in fillers:
        lowered = norm(text)
        leaked = [t for t in conv.all_terms() if t in lowered]
        if leaked:
            fail(f"a filler turn holds fact terms {leaked}: {text!r}")


def load_corpus(
    ids: list[str] | None = None, folder: Path = CONVERSATIONS_DIR
) -> list[Conversation]:
    """Every conversation (or those named), expanded and validated, in file-name order."""
    pool = load_filler()
    paths = sorted(folder.glob("*.yaml"))
    if ids:
        wanted = set(ids)
        paths = [p for p in paths if p.stem in wanted]
        found = {p.stem for p in paths}
        unknown = sorted(wanted - found)
        if unknown:
            raise CorpusError(f"no conversation named {', '.join(unknown)}")
    return [_read(p, pool) for p in paths]


FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("changed mind", re.compile(r"^$")),  # by the fact's `old`, not by its text
    ("only a path or URL", re.compile(r"^$")),  # the message is the term itself
    (
        "we decided / we chose / I picked",
        re.compile(r"\b(decided|chose|picked|settled on)\b", re.I),
    ),
    ("let's (go with / use)", re.compile(r"\blet'?s\b", re.I)),
    (
        "we'll / we're going with / standardising",
        re.compile(
            r"\b(we'll|we will|going with|we're going|standardising|we're moving|moving to)\b", re.I
        ),
    ),
    ("X it is", re.compile(r"\bit is\b", re.I)),
    ("must never / never", re.compile(r"\bnever\b", re.I)),
    (
        "hard requirement / non-negotiable / no exceptions",
        re.compile(r"hard requirement|non-negotiable|no exceptions|insists|legal|regulat", re.I),
    ),
    ("must / has to / needs", re.compile(r"\b(must|has to|have to|need|needs)\b", re.I)),
    (
        "bounds: under / at most / no more than / up to",
        re.compile(
            r"\b(under|at most|no more than|up to|below|less than|within|above|over)\b", re.I
        ),
    ),
    ("X, not Y / rather than / instead", re.compile(r"\bnot\b|rather than|instead", re.I)),
    (
        "X is in / lives in / goes in <path or URL>",
        re.compile(r"\b(lives?|goes|go|is|are) (in|at|to|under)\b|\bin [\w./-]+/", re.I),
    ),
)
"""Coarse families of how a fact is worded, read from its text in this order (the `wording`
field is the finer, hand-written tag)."""


def wording_family(conv: Conversation, fact: Fact) -> str:
    if fact.source == "return":
        return "reported by a specialist on return"
    if fact.changed:
        return "changed mind"
    text = conv.turns[fact.turn - 1]
    if norm(text).rstrip(".") in {norm(t) for t in fact.terms}:
        return "only a path or URL"
    for name, pattern in FAMILIES[2:]:
        if pattern.search(text):
            return name
    return "plain statement (X is Y)"


def corpus_figures(convs: list[Conversation]) -> dict[str, Any]:
    """The corpus in numbers: conversations, turns, facts by kind and wording, changed minds."""
    from collections import Counter

    turns = [c.n_turns for c in convs]
    kinds = Counter(f.kind for c in convs for f in c.facts)
    wordings = Counter(f.wording for c in convs for f in c.facts)
    sources = Counter(f.source for c in convs for f in c.facts)
    return {
        "conversations": len(convs),
        "turns_total": sum(turns),
        "turns_min": min(turns, default=0),
        "turns_max": max(turns, default=0),
        "short_10_30": sum(10 <= t <= 30 for t in turns),
        "medium_60_150": sum(60 <= t <= 150 for t in turns),
        "long_250_400": sum(250 <= t <= 400 for t in turns),
        "hand_written_turns": sum(len(c.written) for c in convs),
        "facts": sum(len(c.facts) for c in convs),
        "facts_by_kind": dict(sorted(kinds.items())),
        "facts_by_source": dict(sorted(sources.items())),
        "wordings": len(wordings),
        "facts_by_wording_family": dict(
            Counter(wording_family(c, f) for c in convs for f in c.facts).most_common()
        ),
        "facts_by_wording": dict(wordings.most_common()),
        "changed_minds": sum(f.changed for c in convs for f in c.facts),
        "conversations_with_changed_mind": sum(any(f.changed for f in c.facts) for c in convs),
        "real_items": sum(len(c.real) for c in convs),
        "handovers": sum(len(c.handovers) for c in convs),
        "returns": sum(len(c.returns) for c in convs),
        "handover_targets": dict(sorted(Counter(h.to for c in convs for h in c.handovers).items())),
    }
