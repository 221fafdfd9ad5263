"""Stage 2: the conversation so far as one token-capped text (`request_full_history`).

    FULL HISTORY (stage 2): 12 verbatim, 988 compacted, 49,812 tokens (cap 50,000)

The handover package and the last `keep_recent` messages stay verbatim. Older
messages are compacted oldest first, only as far as the cap needs: long tool
outputs are shortened to a head, then turns are condensed (by `summarize` when
given, else to their first sentence), then the oldest condensed lines become a
count. The cap is exact for any input: the returned text is counted whole with
the caller's TokenCounter and its header states that very count. Stored history
is only read, never changed.

Cost follows the output, not the input: a message is rendered and counted at
most once per compaction level, newest first, and long texts are only counted as
far as the remaining budget needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from langchain_core.messages import BaseMessage, convert_to_messages, trim_messages

from ...state import TokenCounter
from ...state.defaults import FULL_HISTORY_MAX_TOKENS, FULL_HISTORY_VERBATIM_MESSAGES
from .conversation import for_readers
from .render import CONDENSED, SHORTENED, VERBATIM, History

MIN_SUMMARY_TOKENS = 32  # below this a summarizer call is not worth it
MIN_TRUNCATED_TOKENS = 8  # below this a recent message is omitted, not truncated

Summarizer = Callable[[list[BaseMessage], int], str]
"""`summarize(messages, token_budget) -> summary text` (a real model; clipped to the budget)."""


@dataclass(frozen=True)
class FullHistory:
    """What `request_full_history` hands the specialist."""

    text: str  # the ToolMessage content
    tokens: int  # counter.count_text(text), exact
    turns_verbatim: int  # messages kept verbatim
    turns_compacted: int  # messages shortened, condensed, summarized, truncated or omitted
    total_messages: int


def build_full_history(
    messages: Sequence[BaseMessage],
    *,
    package_text: str,
    max_tokens: int = FULL_HISTORY_MAX_TOKENS,
    counter: TokenCounter,
    keep_recent: int = FULL_HISTORY_VERBATIM_MESSAGES,
    summarize: Summarizer | None = None,
) -> FullHistory:
    """Render `messages` as text of at most `max_tokens` tokens, compacting oldest first.

    >>> build_full_history(state["messages"], package_text=rendered, counter=token_counter())
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if isinstance(keep_recent, bool) or not isinstance(keep_recent, int) or keep_recent < 0:
        raise ValueError(f"keep_recent must be an int >= 0, got {keep_recent!r}")
    # dicts / tuples too, as LangChain accepts them; not the messages for readers only
    msgs = [m for m in convert_to_messages(messages) if not for_readers(m)]
    history = History(msgs, counter)
    composer = _Composer(history, package_text or "(none)", max_tokens, keep_recent, summarize)
    shrink = 0
    for attempt in range(12):
        draft = composer.compose(max_tokens - shrink)
        if draft is None:
            break
        text, tokens = _finalize(draft, counter, max_tokens)
        if tokens <= max_tokens:
            return FullHistory(text, tokens, draft.verbatim, len(msgs) - draft.verbatim, len(msgs))
        shrink += tokens - max_tokens + attempt  # estimates were short: plan for less
    return _minimal(composer, counter, max_tokens)


# --- planning the older messages -----------------------------------------------------------


@dataclass(frozen=True)
class _OlderPlan:
    """[0, omit) omitted; [omit, condense) condensed (or summarized); long tool outputs in
    [condense, shorten) shortened; the rest verbatim."""

    omit: int
    condense: int
    shorten: int
    summary: str | None = None


class _Planner:
    def __init__(self, history: History, summarize: Summarizer | None) -> None:
        self.h = history
        self.summarize = summarize
        self.notes: list[str] = []
        self._summaries: dict[int, str | None] = {}

    def plan(self, m: int, budget: int) -> _OlderPlan:
        """The least compaction of messages [0, m) that fits `budget` tokens."""
        if m == 0:
            return _OlderPlan(0, 0, 0)
        if self.summarize is not None:
            total, lo = self._fit_suffix(m, SHORTENED, budget)
            if lo == 0:
                return self._restore_tool_outputs(m, budget, total)
            if (summarized := self._plan_summary(m, budget)) is not None:
                return summarized
        total, lo = self._fit_suffix(m, CONDENSED, budget)
        if lo > 0:  # even all condensed is too much: drop the oldest into a count
            _, lo = self._fit_suffix(m, CONDENSED, budget - self.omitted_cost(m))
            return _OlderPlan(lo, m, m)
        for j in range(m, 0, -1):  # all condensed fits: un-condense newest first
            c2 = self.h.cost(j - 1, CONDENSED)
            c1 = self.h.cost(j - 1, SHORTENED, budget - total + c2)
            if total - c2 + c1 > budget:
                return _OlderPlan(0, j, m)
            total += c1 - c2
        return self._restore_tool_outputs(m, budget, total)

    def _restore_tool_outputs(self, m: int, budget: int, total: int) -> _OlderPlan:
        """All fits with long tool outputs shortened: restore them newest first while it fits."""
        for k in range(m - 1, -1, -1):
            if self.h.shortened(k) is None:
                continue
            c1 = self.h.cost(k, SHORTENED)
            c0 = self.h.cost(k, VERBATIM, budget - total + c1)
            if total - c1 + c0 > budget:
                return _OlderPlan(0, 0, k + 1)
            total += c0 - c1
        return _OlderPlan(0, 0, 0)

    def _fit_suffix(self, hi: int, level: int, budget: int) -> tuple[int, int]:
        """(tokens, lo): the longest run [lo, hi) that fits `budget` at `level`, newest first."""
        total, i = 0, hi
        while i > 0:
            c = self.h.cost(i - 1, level, budget - total)
            if total + c > budget:
                break
            total += c
            i -= 1
        return total, i

    def _plan_summary(self, m: int, budget: int) -> _OlderPlan | None:
        """Summarize the oldest messages; the newest keep their shortened form (>= 1/4 left)."""
        heading = self.h.counter.count_text(_summary_heading(m))
        reserve = max(budget // 4, MIN_SUMMARY_TOKENS) + heading
        total, j = self._fit_suffix(m, SHORTENED, budget - reserve)
        allowance = budget - total - heading - 1
        if allowance < MIN_SUMMARY_TOKENS or j == 0:
            return None
        summary = self._summary(j, allowance)
        return None if summary is None else _OlderPlan(0, j, m, summary=summary)

    def _summary(self, j: int, allowance: int) -> str | None:
        if j not in self._summaries:
            try:  # a real model: call it once per prefix, never let it break the tool
                text = self.summarize(self.h.messages[:j], allowance)  # type: ignore[misc]
                self._summaries[j] = str(text).strip() or "(empty summary)"
            except Exception as exc:  # noqa: BLE001 - any model failure falls back
                self.notes.append(
                    f"NOTE: the summarizer failed ({type(exc).__name__}: {str(exc)[:200]}); "
                    "older turns are condensed extractively instead."
                )
                self._summaries[j] = None
        summary = self._summaries[j]
        if summary is None or self.h.counter.count_text(summary) <= allowance:
            return summary
        marker = " … [summary clipped to its budget]"
        room = allowance - self.h.counter.count_text(marker)
        return self.h.counter.truncate(summary, max(room, 0)) + marker

    def omitted_cost(self, count: int) -> int:
        return self.h.counter.count_text(_omitted_line(count))

    def older_units(self, m: int, plan: _OlderPlan) -> tuple[list[str], int, int]:
        """The older section's lines, how many of its messages are verbatim, and its tokens."""
        h, units, verbatim, tokens = self.h, [], 0, 0
        if plan.omit:
            units.append(_omitted_line(plan.omit))
            tokens += h.counter.count_text(units[-1])
        levels = [(i, CONDENSED) for i in range(plan.omit, plan.condense)]
        if plan.summary is not None:
            units.append(f"{_summary_heading(plan.condense)}{plan.summary}\n")
            tokens += h.counter.count_text(units[-1])
            levels = []
        levels += [
            (i, SHORTENED if i < plan.shorten else VERBATIM) for i in range(plan.condense, m)
        ]
        for i, level in levels:
            units.append(h.render(i, level) + "\n")
            verbatim += h.is_verbatim(i, level)
            tokens += h.cost(i, level)
        return units, verbatim, tokens


def _omitted_line(count: int) -> str:
    noun = "message" if count == 1 else "messages"
    return f"[{count:,} older {noun} omitted: #1–#{count}]\n"


def _summary_heading(count: int) -> str:
    return f"[Summary of messages #1–#{count} by the summarizer]\n"


# --- the whole text ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Draft:
    """A text without its header: every part ends with a newline and starts with a visible
    character, so its token count is (for tiktoken's OpenAI encodings) the sum of the parts'."""

    header: Callable[[int], str]  # tokens -> header line
    rest: str
    rest_tokens: int  # summed from the parts; _finalize checks it on the whole text
    verbatim: int


class _Composer:
    def __init__(
        self,
        history: History,
        package: str,
        cap: int,
        keep_recent: int,
        summarize: Summarizer | None,
    ) -> None:
        self.h, self.package, self.cap = history, package, cap
        self.n = len(history.messages)
        self.k = min(keep_recent, self.n)
        self.m = self.n - self.k
        self.planner = _Planner(history, summarize)
        self.count = cache(history.counter.count_text)
        self._memo: dict[str, int] = {}

    def count_package(self, pkg: str, cap: int) -> int:
        """The package section's tokens; only probed (a value > cap) when it is far too long."""
        if pkg not in self._memo:
            tokens, exact = self.h.count_upto(pkg, cap)
            if not exact:
                return tokens
            self._memo[pkg] = tokens
        return self._memo[pkg]

    def header(self, verbatim: int) -> Callable[[int], str]:
        compacted = self.n - verbatim
        return lambda tokens: (
            f"FULL HISTORY (stage 2): {verbatim:,} verbatim, {compacted:,} compacted, "
            f"{tokens:,} tokens (cap {self.cap:,})\n"
        )

    def compose(self, cap: int) -> _Draft | None:
        """Plan within `cap` (the real cap minus any shrink); None when nothing fits."""
        if cap <= 0:
            return None
        n, m, k = self.n, self.m, self.k
        header_cost = self.count(self.header(0)(max(cap, 10 * n)))  # its widest digits
        kept = f"the handover package and the last {k} messages" if k else "the handover package"
        intro = (
            f"Messages #1 (oldest) to #{n}. Verbatim: {kept}. Older messages are compacted "
            "oldest first as far as the cap needs: long tool outputs shortened, then turns "
            "condensed, then omitted.\n"
        )
        pkg = f"## Handover package (stage 1, verbatim)\n{self.package}\n\n"
        earlier = f"## Earlier messages #1–#{m}\n" if m else ""
        latest = f"## Last {k} messages (verbatim)\n" if k else ""
        heads = earlier + latest
        fixed = header_cost + self.count(intro + "\n") + self.count_package(pkg, cap)
        fixed += self.count(heads)
        recent = sum(self.h.cost(i, VERBATIM, cap) for i in range(m, n))
        reserve = self.planner.omitted_cost(m) if m else 0
        if fixed + recent + reserve > cap:
            return self._compose_overflow(cap, header_cost, pkg)
        plan = self.planner.plan(m, cap - fixed - recent)
        older, verbatim, older_tokens = self.planner.older_units(m, plan)
        intro += "".join(f"{note}\n" for note in self.planner.notes) + "\n"
        parts = [intro, pkg, earlier, *older, latest, *(self.h.full(i) + "\n" for i in range(m, n))]
        tokens = self.count(intro) + self.count(pkg) + self.count(heads) + older_tokens + recent
        return _Draft(self.header(verbatim + k), "".join(parts), tokens, verbatim + k)

    def _compose_overflow(self, cap: int, header_cost: int, pkg: str) -> _Draft | None:
        """The package and the last messages alone exceed the cap: keep the newest that fit."""
        n, m, k = self.n, self.m, self.k
        recent_head = f"## Last {k} messages (the newest that fit, verbatim)\n" if k else ""
        omit_cost = self.planner.omitted_cost(n) if n else 0
        note_cost = self.count(_overflow_note(k, n, n, n, self.cap) + "\n\n")
        base = header_cost + note_cost + self.count_package(pkg, cap) + omit_cost
        base += self.count(recent_head)
        if base > cap:
            return self._compose_cut_package(cap, header_cost)
        room = cap - base
        costs = {id(self.h.messages[i]): self.h.cost(i, VERBATIM, cap) for i in range(m, n)}
        kept = trim_messages(  # the longest run of newest messages within the room
            self.h.messages[m:n],
            max_tokens=room,
            token_counter=lambda msgs: sum(costs[id(x)] for x in msgs),
            strategy="last",
        )
        first_kept = n - len(kept)
        kept_tokens = sum(self.h.cost(i, VERBATIM) for i in range(first_kept, n))
        room -= kept_tokens
        cut = ""
        if first_kept > m and room >= MIN_TRUNCATED_TOKENS + 24:
            cut = self._truncated_message(first_kept - 1, room) + "\n"
        omitted = first_kept - (1 if cut else 0)
        note = _overflow_note(k, len(kept), 1 if cut else 0, omitted - m, self.cap) + "\n\n"
        parts = [note, pkg, _omitted_line(omitted) if omitted else "", recent_head, cut]
        tokens = sum(self.count(p) for p in parts if p) + kept_tokens
        parts += [self.h.full(i) + "\n" for i in range(first_kept, n)]
        return _Draft(self.header(len(kept)), "".join(parts), tokens, len(kept))

    def _truncated_message(self, i: int, room: int) -> str:
        full = self.h.full(i)
        marker = " … [truncated to fit the cap: {:,} more characters omitted]"
        head = self.h.counter.truncate(full, room - self.count(marker.format(len(full))) - 1)
        return head + marker.format(len(full) - len(head))

    def _compose_cut_package(self, cap: int, header_cost: int) -> _Draft | None:
        """No room for messages: the package alone, cut by tokens if it does not fit."""
        note = f"NOTE: the handover package leaves no room in the {self.cap:,}-token cap.\n\n"
        head, tail = "## Handover package (stage 1, cut to fit)\n", "\n… [package cut]\n\n"
        omitted = _omitted_line(self.n) if self.n else ""
        room = cap - header_cost - sum(self.count(p) for p in (note, head + tail, omitted) if p)
        if room < MIN_TRUNCATED_TOKENS:
            return None
        cut = self.h.counter.truncate(self.package, room)
        if cut == self.package:
            head, tail = "## Handover package (stage 1, verbatim)\n", "\n\n"
        parts = [note, head + cut + tail, omitted]
        return _Draft(self.header(0), "".join(parts), sum(self.count(p) for p in parts if p), 0)


def _overflow_note(k: int, kept: int, truncated: int, dropped: int, cap: int) -> str:
    if k == 0:
        return f"NOTE: the handover package leaves no room in the {cap:,}-token cap for messages."
    return (
        f"NOTE: the package and the last {k} messages exceed the {cap:,}-token cap: {kept} "
        f"kept verbatim, {truncated} truncated, {max(dropped, 0)} omitted (oldest first)."
    )


def _finalize(draft: _Draft, counter: TokenCounter, cap: int) -> tuple[str, int]:
    """Join the draft under a header whose token figure is the text's exact count."""
    guess = draft.rest_tokens
    for _ in range(4):  # the header's own digits change its count: settle that first
        guess = draft.rest_tokens + counter.count_text(draft.header(guess))
    text = ""
    for pad in ("", " "):  # should a header have no fixed point, one more space gives another
        tokens, seen = guess, set()
        for _ in range(6):
            text = draft.header(tokens).replace("\n", pad + "\n", 1) + draft.rest
            actual = counter.count_text(text)
            if actual == tokens:
                return text, actual
            if actual in seen:
                break
            seen.add(actual)
            tokens = actual
    return text, max(counter.count_text(text), cap + 1)  # not exact: the caller re-plans


def _minimal(composer: _Composer, counter: TokenCounter, cap: int) -> FullHistory:
    """Caps too small for any message: the header alone, hard-truncated if even it is too long."""
    n, header = composer.n, composer.header(0)
    for rest in (f"[{n:,} messages omitted]\n", ""):
        text, tokens = _finalize(_Draft(header, rest, counter.count_text(rest), 0), counter, cap)
        if tokens <= cap:
            return FullHistory(text, tokens, 0, n, n)
    tokens = cap
    for _ in range(6):  # the header's figure may survive the cut: keep it exact if so
        text = counter.truncate(header(tokens), cap)
        actual = counter.count_text(text)
        if actual == tokens:
            break
        tokens = actual
    return FullHistory(text, counter.count_text(text), 0, n, n)


# --- token helpers -------------------------------------------------------------------------
