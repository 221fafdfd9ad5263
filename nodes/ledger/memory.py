"""What a package carries of the thread besides its recent turns: the ledger and earlier turns.

`ThreadMemory` is what the handover and consult nodes read from the state for a package: the
ledger, the thread's turns as retrieval documents (recall cards and the window's turns), and
the request that led to the handover. `fill_package` fits both parts into what the package's
budget leaves (`handover_to_specialist.py` calls it):

1. the ledger's current entries, newest and most relevant to the handover first, each once
   (an entry the package already shows, in its decisions or a recent turn, is not repeated);
   if the recent turns would leave the ledger less than `LEDGER_PACKAGE_RESERVE` tokens, the
   longest recent turns are cut first (never below `RECENT_TURN_MIN_TOKENS`, with a marker);
2. in the budget that remains, up to `EARLIER_TURNS_MAX` earlier turns, the most relevant to
   the handover's topic, reason, summary and request (BM25, `recall.py`), each cut to
   `EARLIER_TURN_MAX_TOKENS`.

The package never exceeds its budget because of them: what they add is counted over the
rendered package and taken back, last first, until it fits. Entries that did not fit are
counted in the package ("N more entries; request_full_history() has them"), and stage 2 carries
the whole ledger (`ledger_appendix`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from ...state import TokenCounter, message_text
from ...state.defaults import (
    EARLIER_TURN_MAX_TOKENS,
    EARLIER_TURNS_MAX,
    LEDGER_PACKAGE_RESERVE,
    RECENT_TURN_MIN_TOKENS,
)
from ...state.ledger import LedgerEntry, current_entries, usable_entries
from ..briefing.writer import quoted_line
from ..history.conversation import is_turn
from .recall import TurnText, is_user_turn, jaccard, rank, terms, turn_texts

CUT_MARKER = " … (cut; request_full_history() has it whole)"


@dataclass(frozen=True)
class ThreadMemory:
    """The thread as a package reads it beyond its recent turns."""

    ledger: Sequence[LedgerEntry] = ()
    turns: Sequence[TurnText] = ()
    """Retrieval documents: archived turns' cards, then the window's turns."""
    recent_from: int = 0
    """The first turn number the package's recent turns cover (not retrieved again)."""
    request: str = ""
    """The user's latest message: part of what relevance is measured against."""


def thread_memory(
    *,
    messages: Sequence[BaseMessage],
    ledger: Any,
    mark: Any,
    recall: Any,
    include_recent_turns: int,
) -> ThreadMemory:
    """The memory a package of this state reads (values that cannot be used read as empty)."""
    turns_total = mark.get("turns") if isinstance(mark, dict) else None
    window = turn_texts(messages, last_turn=turns_total if isinstance(turns_total, int) else 0)
    if not isinstance(turns_total, int):  # a thread without a mark: number the window from 1
        window = [TurnText(i + 1, t.text, t.key) for i, t in enumerate(window)]
    cards = [
        TurnText(c["turn"], c["text"])
        for c in (recall if isinstance(recall, list) else [])
        if isinstance(c, dict) and isinstance(c.get("turn"), int) and isinstance(c.get("text"), str)
    ]
    first_window = window[0].turn if window else 1 << 30
    return ThreadMemory(
        ledger=usable_entries(ledger),
        turns=[c for c in cards if c.turn < first_window] + window,
        recent_from=_first_recent_turn(window, include_recent_turns, messages),
        request=next((message_text(m) for m in reversed(messages) if is_user_turn(m)), ""),
    )


def _first_recent_turn(
    window: Sequence[TurnText], include_recent_turns: int, messages: Sequence[BaseMessage]
) -> int:
    """The number of the turn the package's first recent turn belongs to (recent turns count
    messages, a user message and its replies being several)."""
    if not window:
        return 1 << 30
    spoken = [i for i, m in enumerate(messages) if is_turn(m)]
    if include_recent_turns <= 0 or not spoken:
        return window[-1].turn + 1
    first = spoken[-include_recent_turns:][0]
    users = [i for i, m in enumerate(messages) if is_user_turn(m)]
    k = bisect_right(users, first) - 1
    return window[k].turn if k >= 0 else window[0].turn


def ledger_line(entry: LedgerEntry, turns: dict[str, int] | None = None) -> str:
    """One entry as a package line: `- [decision, user, turn 12] Let's go with Postgres.`; a
    superseded one says so (`turns`: entry id -> turn, to name when)."""
    source, by, turn = entry.get("source", "user"), entry.get("by", ""), entry.get("turn") or 0
    where = f", turn {turn}" if turn else ""
    if entry.get("status") == "superseded":
        later = (turns or {}).get(str(entry.get("superseded_by") or ""))
        where += f"; SUPERSEDED at turn {later}" if later else "; SUPERSEDED"
    said = f"{by} {source}" if by and source != "user" else source  # where it came from
    return f"- [{entry['kind']}, {said}{where}] {quoted_line(entry['text'])}"


def ordered_entries(entries: Sequence[LedgerEntry], query: str) -> list[LedgerEntry]:
    """Current entries, newest and most relevant to `query` first: each entry's share of the
    query's terms (IDF-weighted over the ledger) and its recency, half and half."""
    wanted = set(terms(query))
    bags = [set(terms(e["text"])) for e in entries]
    df = Counter(t for bag in bags for t in bag if t in wanted)
    n = len(entries)
    relevance = [sum(math.log(1 + n / df[t]) for t in bag & wanted) for bag in bags]
    top = max(relevance, default=0.0) or 1.0
    scores = [0.5 * r / top + 0.5 * (i + 1) / n for i, r in enumerate(relevance)]
    order = sorted(range(n), key=lambda i: (-scores[i], -i))
    return [entries[i] for i in order]


@dataclass
class Filled:
    """What `fill_package` chose."""

    ledger: list[str] = field(default_factory=list)
    omitted: int = 0
    earlier: list[str] = field(default_factory=list)
    recent_turns: list[str] = field(default_factory=list)


def _shown_already(entry: LedgerEntry, shown: list[str]) -> bool:
    """The package already says it: the entry's text is in one of `shown`, or (an artifact)
    every thing it names is."""
    text = " ".join(entry["text"].lower().split()).rstrip(" .…")
    if text and any(text in s for s in shown):
        return True
    values = [v for v in entry.get("values") or [] if v]
    everything = " ".join(shown)
    return entry["kind"] == "artifact" and bool(values) and all(v in everything for v in values)


def fill_package(
    *,
    memory: ThreadMemory,
    query: str,
    context: str = "",
    decisions: Sequence[str],
    recent_turns: list[str],
    budget: int,
    counter: TokenCounter,
    measure: Callable[[Filled], int],
) -> Filled:
    """The ledger lines, earlier turns and (maybe cut) recent turns for a package whose budget
    is `budget`; `measure(filled)` counts the package rendered with them. Relevance is measured
    against `query` (the topic and reason) and the request, and at half weight against
    `context` (the summary: it may retell the whole thread)."""
    shown = [" ".join(t.lower().split()) for t in [*decisions, *recent_turns]]
    entries = [e for e in memory.ledger if not _shown_already(e, shown)]
    wanted = f"{query} {memory.request} {context}"
    current = [e for e in entries if e.get("status", "current") == "current"]
    turns = {e["id"]: int(e.get("turn") or 0) for e in memory.ledger}
    candidates = [ledger_line(e) for e in ordered_entries(current, wanted)]
    # superseded entries last, newest first: they may hold what the change left standing
    former = [ledger_line(e, turns) for e in reversed(entries) if e.get("status") == "superseded"]
    filled = Filled(recent_turns=list(recent_turns))
    base = measure(filled)
    needed = sum(counter.count_text(line) + 1 for line in candidates) + 40 if candidates else 0
    reserve = min(LEDGER_PACKAGE_RESERVE, needed)
    if base + reserve > budget:
        filled.recent_turns = _cut_turns(filled.recent_turns, base + reserve - budget, counter)
        base = measure(filled)
    room = budget - base - (40 if candidates or former else 0)
    room = _fit(candidates, filled.ledger, room, counter)
    filled.omitted = len(candidates) - len(filled.ledger)
    if filled.omitted:
        room -= 25  # the line that names them
    room = _fit(former, filled.ledger, room, counter) - 20  # the earlier turns' heading
    picked = [
        s for s in rank(f"{query} {memory.request}", memory.turns) if s.turn < memory.recent_from
    ][:EARLIER_TURNS_MAX]
    picked = _distinct(picked, filled.recent_turns, filled.ledger)
    earlier = [
        counter.truncate(f"(turn {s.turn}) {s.text}", EARLIER_TURN_MAX_TOKENS)
        for s in sorted(picked, key=lambda s: s.turn)
    ]
    _fit(earlier, filled.earlier, room, counter, extra=2)
    while measure(filled) > budget and (filled.earlier or filled.ledger or filled.omitted):
        if filled.earlier:
            filled.earlier.pop()
        elif filled.ledger:
            if "; SUPERSEDED" not in filled.ledger.pop().split("]", 1)[0]:
                filled.omitted += 1
        else:  # no room for a single line, not even for the note: the section goes
            filled.omitted = 0
    return filled


def _fit(
    lines: list[str], into: list[str], room: int, counter: TokenCounter, extra: int = 1
) -> int:
    """Adds to `into` each of `lines` that fits in `room` tokens (`extra` more for each), in
    order; returns the room left."""
    for line in lines:
        cost = counter.count_text(line) + extra
        if cost <= room:
            into.append(line)
            room -= cost
    return room


def _distinct(ranked: list[Any], recent: list[str], ledger: list[str]) -> list[Any]:
    """The best `EARLIER_TURNS_MAX` turns, leaving out one that says nearly what a recent turn
    or a better one already says (a question asked again adds nothing), or whose words the
    package's ledger lines already quote."""
    seen = [set(terms(t)) for t in recent]
    quoted = [" ".join(line.split("] ", 1)[-1].lower().split()).rstrip(" .…") for line in ledger]
    kept = []
    for scored in ranked:
        words = set(terms(scored.text))
        if any(jaccard(words, s) >= NEAR_SAME for s in seen):
            continue
        said = " ".join(scored.text.lower().split())
        if any(q and q in said for q in quoted):
            continue
        kept.append(scored)
        seen.append(words)
        if len(kept) == EARLIER_TURNS_MAX:
            break
    return kept


NEAR_SAME = 0.6
"""Word overlap (Jaccard) above which an earlier turn repeats one the package has."""


def _cut_turns(turns: list[str], excess: int, counter: TokenCounter) -> list[str]:
    """The recent turns with the longest cut (with a marker) until `excess` tokens are freed,
    none below `RECENT_TURN_MIN_TOKENS`."""
    sizes = [counter.count_text(t) for t in turns]
    out = list(turns)
    marker = counter.count_text(CUT_MARKER)
    while excess > 0:
        i = max(range(len(out)), key=lambda k: sizes[k], default=-1)
        if i < 0 or sizes[i] <= RECENT_TURN_MIN_TOKENS + marker:
            break
        keep = max(RECENT_TURN_MIN_TOKENS, sizes[i] - excess - marker)
        out[i] = counter.prefix(out[i], keep).rstrip() + CUT_MARKER
        freed = sizes[i] - counter.count_text(out[i])
        sizes[i] -= freed
        excess -= freed
        if freed <= 0:
            break
    return out


def ledger_appendix(ledger: Any) -> str:
    """The whole current ledger, for stage 2 (what a package could not fit is here)."""
    entries = current_entries(ledger)
    heading = f"## Thread ledger (all {len(entries)} current entries, oldest first)"
    return "\n".join([heading, *map(ledger_line, entries)]) if entries else ""
