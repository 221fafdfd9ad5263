"""Ledger entries from each source: user turns, handover arguments, returns and outcomes.

`user_entries` reads the user messages the ledger has not read yet (its mark is the last
message read); `stated_entries` turns a handover's or a return's `decisions` and `artifacts`
into entries; `outcome_entries` reads an outcome's summary like a user turn. Every text is
redacted and cut to `LEDGER_ENTRY_MAX_TOKENS` before it is stored. An entry's id comes from
its kind and its words, so the same statement made twice is one entry.

Which older entry a new one replaces is decided here, against the ledger's current entries (and
those made before it in the same write): one about the same slot that names a value the new
one says is replaced ("instead of Postgres"), or, when the new one says it changes something
("actually", "switch", "relax the latency budget"), one about the same slot that names other
values. Otherwise both stay current: the extractor cannot tell a changed mind from a second
choice, and says nothing rather than guess.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage

from ...state import TokenCounter, message_text
from ...state.defaults import LEDGER_ENTRY_MAX_TOKENS
from ...state.ledger import LedgerEntry, LedgerMark, current_entries
from ..redaction import redact
from .extract import Fact, analyse, extract_facts
from .lexicon import MEASURED_SLOTS
from .recall import is_user_turn, jaccard

_WORD = re.compile(r"[a-z0-9]+(?:[._/-][a-z0-9]+)*")
NEAR_DUPLICATE = 0.8
"""Word overlap (Jaccard) above which two statements of one kind are one entry."""


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def entry_id(kind: str, text: str) -> str:
    """A stable id from the kind and the words (case, spacing and punctuation aside)."""
    canonical = " ".join(_WORD.findall(text.lower()))
    return "l-" + hashlib.sha256(f"{kind}\n{canonical}".encode()).hexdigest()[:16]


def _restates(fact: Fact, entries: Sequence[dict[str, Any]]) -> bool:
    """One of `entries` states the same thing (same id, or nearly the same words)."""
    words = _words(fact.text)
    return any(
        entry["kind"] == fact.kind and jaccard(words, _words(entry["text"])) >= NEAR_DUPLICATE
        for entry in entries
    )


def _compared(values: Iterable[str], slot: str) -> set[str]:
    """The values a change of `slot` is judged by: for a measured slot (latency, retention, a
    unit) its numbers, not the words that name it (`p99`)."""
    if slot in MEASURED_SLOTS or slot.startswith("unit:"):
        return {v for v in values if v[:1].isdigit() or v[:1] in "$€£"}
    return set(values)


_NUMBER = re.compile(r"[$€£]?\d[\d,]*(?:\.\d+)?")


def _keys(values: Collection[str]) -> set[str]:
    """Values and the numbers they start with (`30days` is also `30`), commas out."""
    numbers = [m.group(0) for m in map(_NUMBER.match, values) if m]
    return {v.replace(",", "") for v in [*values, *numbers]}


def replaced_by(fact: Fact, entries: Iterable[dict[str, Any]]) -> list[str]:
    """Ids of the current entries `fact` replaces (see the module's docstring)."""
    settled = ("decision", "constraint")
    out = []
    for entry in entries:
        if entry.get("status", "current") != "current":
            continue
        if (entry["kind"] in settled) != (fact.kind in settled):
            continue
        values = _compared(entry.get("values") or [], fact.slot)
        text = entry["text"].lower()
        if fact.replaced and _keys(entry.get("values") or []) & _keys(fact.replaced):
            out.append(entry["id"])  # it names the value said to be replaced
        elif fact.negated and any(phrase in text for phrase in fact.negated):
            out.append(entry["id"])  # it says yes to what the new one says no to
        elif (
            fact.change
            and fact.slot
            and entry.get("slot") == fact.slot
            and values
            and _compared(fact.values, fact.slot)
            and not _keys(values) & _keys(_compared(fact.values, fact.slot))
        ):
            out.append(entry["id"])  # a change of its slot, to other values
    return out


def make_entries(
    facts: Sequence[Fact],
    *,
    source: str,
    by: str,
    turn: int,
    ledger: Sequence[Any],
    counter: TokenCounter,
) -> list[LedgerEntry]:
    """The entries `facts` add to `ledger` (its current entries read for what they replace;
    restatements of a current entry left out)."""
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    known = [dict(e) for e in current_entries(list(ledger))]
    made: list[LedgerEntry] = []
    for fact in facts:
        text = counter.truncate(" ".join(redact(fact.text).text.split()), LEDGER_ENTRY_MAX_TOKENS)
        if not text:
            continue
        fact = replace(fact, text=text)
        if _restates(fact, known):
            continue  # said before and still current: the older entry stands
        entry: dict[str, Any] = {
            "id": entry_id(fact.kind, text),
            "kind": fact.kind,
            "text": text,
            "source": source,
            "by": by,
            "turn": turn,
            "time": when,
            "status": "current",
            "tokens": counter.count_text(text),
        }
        if fact.slot:
            entry["slot"] = fact.slot
        if fact.values:
            entry["values"] = [redact(v).text for v in fact.values][:8]
        if replaces := replaced_by(fact, known):
            entry["supersedes"] = replaces
            for other in known:
                if other["id"] in replaces:
                    other["status"] = "superseded"
        known.append(entry)
        made.append(entry)  # type: ignore[arg-type]
    return made


def user_entries(
    messages: Sequence[BaseMessage],
    *,
    mark: LedgerMark | None,
    ledger: Sequence[Any],
    counter: TokenCounter,
) -> tuple[list[LedgerEntry], LedgerMark | None]:
    """What the user messages after the ledger's mark (all of the window's when it has none)
    settle, and the new mark (None when nothing was read)."""
    ids = [m.id for m in messages]
    start = (
        len(ids) - ids[::-1].index(mark["upto"]) if mark is not None and mark["upto"] in ids else 0
    )
    unread = [m for m in messages[start:] if is_user_turn(m)]
    if not unread:
        return [], None
    made: list[LedgerEntry] = []
    for turn, message in enumerate(unread, start=mark["turns"] + 1 if mark is not None else 1):
        facts = extract_facts(message_text(message))
        made += make_entries(
            facts, source="user", by="user", turn=turn, ledger=[*ledger, *made], counter=counter
        )
    return made, {"upto": next((m.id for m in reversed(messages) if m.id), ""), "turns": turn}


def stated_entries(
    *,
    decisions: Any,
    artifacts: Any,
    source: str,
    by: str,
    turn: int,
    ledger: Sequence[Any],
    counter: TokenCounter,
) -> list[LedgerEntry]:
    """Entries for a handover's or a return's own `decisions` and `artifacts` lists."""
    facts = [
        analyse(item, kind)
        for items, kind in ((decisions, "decision"), (artifacts, "artifact"))
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, str) and item.strip()
    ]
    return make_entries(facts, source=source, by=by, turn=turn, ledger=ledger, counter=counter)


def outcome_entries(
    summary: str,
    *,
    by: str,
    turn: int,
    ledger: Sequence[Any],
    counter: TokenCounter,
    source: str = "outcome",
) -> list[LedgerEntry]:
    """What a specialist's hand-back summary settles: its statements with a decision or rule
    word (the rest of a summary is its report of the work)."""
    facts = extract_facts(summary, cued=True)
    return make_entries(facts, source=source, by=by, turn=turn, ledger=ledger, counter=counter)
