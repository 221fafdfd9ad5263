"""The thread ledger and the recall cards: what a conversation has settled, kept outside the window.

The **ledger** is a bounded list of entries, newest last: decisions, constraints and artifacts
(paths, URLs, identifiers, versions, numbers with units), each with where it came from (a user
turn, a handover's arguments, a specialist's return, an outcome) and when. The nodes make the
entries (`nodes/ledger/`); this module only holds their shape and the channel's reducer, which
dedupes, applies what a new entry supersedes and keeps the ledger within `LEDGER_MAX_ENTRIES`
and `LEDGER_MAX_TOKENS`. It grows by the entry, never by the thread: a turn that states nothing
new writes nothing.

The **recall cards** are short texts of the turns archived out of the working window
(`nodes/history/archive.py`), each with its user-turn number, so a handover can retrieve a
relevant earlier turn without reading the archive back. At most `RECALL_MAX_CARDS`, the newest.

Both are `DeltaChannel`s: a checkpoint stores a step's new entries or cards, not the list, and
every fifth write a snapshot of the whole. A run rebuilds them from their last snapshot and the
writes since, as it does the conversation; so both are written once every user turn, with
nothing when nothing is new (a delta channel left unwritten for long would make every run read
the checkpoints back to its last snapshot, however far).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, NotRequired, get_args

from typing_extensions import TypedDict

from .defaults import LEDGER_MAX_ENTRIES, LEDGER_MAX_TOKENS, RECALL_MAX_CARDS

LedgerKind = Literal["decision", "constraint", "artifact"]
LedgerSource = Literal["user", "handover", "return", "outcome", "consult"]
LEDGER_KINDS: tuple[str, ...] = get_args(LedgerKind)


class LedgerEntry(TypedDict):
    """One settled thing. `id` is stable for the same statement (a restatement is no new entry)."""

    id: str
    kind: LedgerKind
    text: str
    """One line, redacted, at most `LEDGER_ENTRY_MAX_TOKENS`."""
    source: LedgerSource
    by: str
    """`user`, or the agent whose handover or return it came with."""
    turn: int
    """The user-turn number (1-based) when it was first recorded; 0 when not known."""
    time: str
    """ISO 8601, UTC."""
    status: Literal["current", "superseded"]
    superseded_by: NotRequired[str]
    """The id of the newer entry that replaced it (status `superseded`)."""
    supersedes: NotRequired[list[str]]
    """Ids of older entries this one replaces (applied by the reducer when it is added)."""
    slot: NotRequired[str]
    """What it is about, where the extractor can tell (`database`, `region`, `latency`)."""
    values: NotRequired[list[str]]
    """The values it names for its slot or as an artifact (`postgres`, `docs/spec.md`)."""
    tokens: NotRequired[int]
    """Tokens of `text` (the ledger's token bound counts them)."""


class LedgerMark(TypedDict):
    """How far the extractor has read the conversation: the last message it read and how many
    user turns the thread has had (the ledger's turn numbers)."""

    upto: str
    turns: int


class RecallCard(TypedDict):
    """One archived turn as retrieval reads it: its number and a short text."""

    turn: int
    text: str


def _tokens(entry: dict[str, Any]) -> int:
    tokens = entry.get("tokens")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
        return tokens
    return len(str(entry.get("text") or "")) // 4 + 1


def _usable_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("id"), str)
        and isinstance(entry.get("text"), str)
        and entry.get("kind") in LEDGER_KINDS
    )


def merge_ledger(current: list[LedgerEntry] | None, writes: Any) -> list[LedgerEntry]:
    """The ledger channel's batch reducer: each write's entries are added in order.

    An entry whose id is already there is a restatement: the stored one becomes current again
    and moves to the newest place, keeping its first source and turn. What a new entry
    `supersedes` is marked superseded by it. After each entry the oldest superseded entries,
    and after them the oldest current ones, leave until the ledger is within its bounds. Each
    entry is one step of a left fold, so batching the writes differently gives the same
    ledger (as LangGraph's `DeltaChannel` requires)."""
    entries: list[dict[str, Any]] = [dict(e) for e in current or [] if _usable_entry(e)]
    total = sum(_tokens(e) for e in entries)
    for item in filter(_usable_entry, _written(writes)):
        new = dict(item)
        at = next((i for i, e in enumerate(entries) if e["id"] == new["id"]), -1)
        if at >= 0:
            old = entries.pop(at)
            total -= _tokens(old)
            new = {**new, "source": old["source"], "by": old["by"], "turn": old["turn"]}
            new["time"] = old.get("time", new.get("time"))
        new["status"] = "current"
        new.pop("superseded_by", None)
        replaced = [r for r in new.get("supersedes") or [] if isinstance(r, str)]
        for other in entries:
            if other["id"] in replaced and other.get("status") == "current":
                other["status"] = "superseded"
                other["superseded_by"] = new["id"]
        entries.append(new)
        total += _tokens(new)
        while len(entries) > 1 and (len(entries) > LEDGER_MAX_ENTRIES or total > LEDGER_MAX_TOKENS):
            gone = next((i for i, e in enumerate(entries) if e.get("status") == "superseded"), 0)
            total -= _tokens(entries.pop(gone))
    return entries  # type: ignore[return-value]


def _written(writes: Any) -> Iterator[Any]:
    """The items of a batch of writes (each write an item or a list of them)."""
    for write in writes if isinstance(writes, list) else [writes]:
        yield from write if isinstance(write, list) else [write]


def merge_recall(current: list[RecallCard] | None, writes: Any) -> list[RecallCard]:
    """The recall cards' batch reducer: cards of turns newer than the last one kept are
    appended (a rerun's cards are not added twice) and the newest `RECALL_MAX_CARDS` stay;
    batching-invariant, as `DeltaChannel` requires."""
    cards = [c for c in current or [] if isinstance(c, dict) and isinstance(c.get("turn"), int)]
    last = cards[-1]["turn"] if cards else 0
    for card in _written(writes):
        if (
            isinstance(card, dict)
            and isinstance(card.get("turn"), int)
            and isinstance(card.get("text"), str)
            and card["turn"] > last
        ):
            cards.append({"turn": card["turn"], "text": card["text"]})
            last = card["turn"]
    return cards[-RECALL_MAX_CARDS:]  # type: ignore[return-value]


def usable_entries(ledger: Any) -> list[LedgerEntry]:
    """The ledger's entries that can be read, oldest first (a value that cannot be used reads
    as empty)."""
    if not isinstance(ledger, list):
        return []
    return [e for e in ledger if _usable_entry(e)]


def current_entries(ledger: Any) -> list[LedgerEntry]:
    """The ledger's current entries, oldest first (a value that cannot be read is empty)."""
    return [e for e in usable_entries(ledger) if e.get("status", "current") == "current"]
