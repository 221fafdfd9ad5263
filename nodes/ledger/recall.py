"""Earlier turns that matter: the thread's turns as short texts, and BM25 over them.

A handover's package carries the last N turns verbatim; the turns before them reach it only if
they are relevant to the handover (its topic, reason and summary, and the request that led to
it). Retrieval is lexical and local: BM25 over word stems, no model and no embedding service.

Its documents are the turns of the working window and the **recall cards** of the turns
archived out of it: when an agent's step archives old turns, it also writes each one's number
and first `RECALL_CARD_CHARS` characters to the state's `recall` (bounded: the newest
`RECALL_MAX_CARDS`), so a handover never reads the archive back.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence, Set
from dataclasses import dataclass
from functools import lru_cache

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ...state import message_text
from ...state.defaults import RECALL_CARD_CHARS
from ...state.ledger import RecallCard

_WORD = re.compile(r"[a-z0-9][a-z0-9_+#.-]*[a-z0-9+#]|[a-z0-9]")
STOP_WORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from as is are was were be
    been being it its this that these those there here we our us you your i me my he she they
    them their what which who whom when where why how all any both each few more most other
    some such no nor not only own same so than too very can will just do does did doing have
    has had having should would could may might must shall about above after again against
    below between into through during before under over up down out off once please thanks
    thank ok okay yes yeah let lets let's also get got go going want need like make sure one
    now new use using used able know think see look way thing things really well still user
    assistant orchestrator""".split()
)
K1 = 1.2
B = 0.75


def stem(word: str) -> str:
    """A light stem: plural and common verb endings off (`caches` -> `cach`, `cached` ->
    `cach`), enough for lexical retrieval."""
    for suffix in ("ingly", "ing", "edly", "ed", "ies", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def jaccard(a: Set[str], b: Set[str]) -> float:
    """Word overlap: the words two sets share over all their words (0 for two empty sets)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


@lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(
        stem(w)
        for w in _WORD.findall(text.lower())
        if w not in STOP_WORDS and not (w.isdigit() and len(w) < 3)
    )


def terms(text: str) -> list[str]:
    """The text's retrieval terms: lower-case words, stop words and one- or two-digit numbers
    out, stemmed (a card's terms are remembered: the same cards are ranked at every handover)."""
    return list(_terms(text)) if len(text) <= 4096 else list(_terms.__wrapped__(text))


@dataclass(frozen=True)
class TurnText:
    """One user turn as retrieval reads it: `text` is shown, `key` is what is matched (the
    user's words and the start of each reply; empty: the text)."""

    turn: int
    text: str
    key: str = ""


REPLY_KEY_CHARS = 100
"""Of each reply, what retrieval matches (a reply's opening says what it is about; the rest,
often a list of options, would match any request)."""


def turn_texts(messages: Sequence[BaseMessage], *, last_turn: int) -> list[TurnText]:
    """The turns of `messages` (each from a user message to the next), numbered so that the
    window's last user message is turn `last_turn`; each text the user's words and the agents'
    replies, at most `RECALL_CARD_CHARS` characters."""
    users = [i for i, m in enumerate(messages) if is_user_turn(m)]
    after = len(users)
    found = []
    for k, start in enumerate(users):
        end = users[k + 1] if k + 1 < len(users) else len(messages)
        said = f"user: {message_text(messages[start]).strip()}"
        parts, key = [said], [said]
        for m in messages[start + 1 : end]:
            if isinstance(m, AIMessage) and message_text(m).strip():
                reply = f"{m.name or 'assistant'}: {message_text(m).strip()}"
                parts.append(reply)
                key.append(_cut(reply, REPLY_KEY_CHARS))
        text = _cut(" ".join(" ".join(parts).split()))
        found.append(TurnText(last_turn - (after - 1 - k), text, _cut(" ".join(key))))
    return found


def _cut(text: str, chars: int = RECALL_CARD_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def is_user_turn(message: BaseMessage) -> bool:
    """A user message that opens a turn (the graph's own package and notes messages do not)."""
    return (
        isinstance(message, HumanMessage)
        and message.name != "handover"
        and bool(message_text(message).strip())
    )


def recall_cards(
    archived: Sequence[BaseMessage], window: Sequence[BaseMessage], *, last_turn: int
) -> list[RecallCard]:
    """The cards of the turns leaving the window (`archived`, the oldest messages of `window`):
    each the user's words and the opening of each reply (what retrieval matches)."""
    users_after = sum(1 for m in window[len(archived) :] if is_user_turn(m))
    texts = turn_texts(archived, last_turn=last_turn - users_after)
    return [{"turn": max(t.turn, 0), "text": t.key} for t in texts]


@dataclass(frozen=True)
class Scored:
    turn: int
    text: str
    score: float


@lru_cache(maxsize=8192)
def _bag(text: str) -> tuple[dict[str, int], int]:
    """A document's term counts and length (remembered: the same turns are ranked at every
    handover)."""
    bag = Counter(_terms(text) if len(text) <= 4096 else terms(text))
    return dict(bag), sum(bag.values()) or 1


def rank(query: str, documents: Sequence[TurnText], *, context: str = "") -> list[Scored]:
    """`documents` by BM25 against `query` (and, at half weight, `context`: a summary), best
    first. A document must match two distinct terms, one of them from `query`."""
    strong = set(terms(query))
    weak = set(terms(context)) - strong
    wanted = strong | weak
    if not strong or not documents:
        return []
    bags = [_bag(d.key or d.text) for d in documents]
    average = sum(length for _, length in bags) / len(bags)
    df = {t: sum(1 for bag, _ in bags if t in bag) for t in wanted}
    n = len(documents)
    need = min(2, len(wanted))
    scored = []
    for doc, (bag, length) in zip(documents, bags, strict=True):
        matched = [t for t in wanted if t in bag]
        if len(matched) < need or not any(t in strong for t in matched):
            continue
        score = 0.0
        for t in matched:
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            tf = bag[t]
            weight = 1.0 if t in strong else 0.5
            score += weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        scored.append(Scored(doc.turn, doc.text, score))
    scored.sort(key=lambda s: (-s.score, -s.turn))
    return scored
