"""What each handover cost and saved: the figures the trail, `handover stats` and the stream show.

- At a handover: the package's tokens (`estimated_tokens`) and what the whole conversation so
  far would have cost the receiver instead (`full_history_tokens`: the messages archived out of
  the working window, counted when they left it, plus the window's), the figure a
  full-history system pays at that point.
- While a specialist holds the conversation: its model calls and the tokens they used, from
  the models' usage metadata (`HoldUsage`, kept in `state["hold_usage"]` and written on the
  record that ends the hold: its return, or its handover onward).
- One custom stream event per handover, and per specialist a consult asks
  (`stream_mode="custom"`), for a UI's "saved N tokens".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from ...state import HoldUsage, TokenCounter
from ...state.tokens import REPLY_PRIMING
from ..history.conversation import GRAPH_MADE

EVENT = "handover_cost"
"""The `event` of the custom stream chunk a handover emits."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def hold_usage(
    previous: Mapping[str, Any] | None, handover_id: str, added: Sequence[BaseMessage]
) -> HoldUsage:
    """The hold's usage so far: `previous` (of the same handover) plus the model replies added."""
    base = previous if previous and previous.get("handover_id") == handover_id else {}
    usage = HoldUsage(
        handover_id=handover_id,
        model_calls=_int(base.get("model_calls")),
        input_tokens=_int(base.get("input_tokens")),
        output_tokens=_int(base.get("output_tokens")),
    )
    for reply in added:
        if not isinstance(reply, AIMessage) or (reply.response_metadata or {}).get(GRAPH_MADE):
            continue  # a model made no such reply: the graph wrote it for an agent
        metadata: Mapping[str, Any] = reply.usage_metadata or {}
        usage["model_calls"] += 1
        usage["input_tokens"] += _int(metadata.get("input_tokens"))
        usage["output_tokens"] += _int(metadata.get("output_tokens"))
    return usage


def full_history_tokens(
    messages: Sequence[BaseMessage], archived_tokens: int, counter: TokenCounter
) -> int:
    """What the whole conversation would cost the receiver now: the archived messages' tokens
    (counted as they left the window) plus the window's."""
    return max(0, archived_tokens) + sum(map(counter.count_stored, messages)) + REPLY_PRIMING


def saving_line(record: Mapping[str, Any], *, history: str = "the full history") -> str:
    """`📉 1,203 tokens sent instead of 48,210 for the full history: 47,007 saved (97%)` (early
    in a thread the package can cost more than the history: the line says so). `history`
    names what was compared (the sums say "the full history at each handover")."""
    sent = _int(record.get("estimated_tokens"))
    full = _int(record.get("full_history_tokens"))
    if sent > full:
        return (
            f"📈 {sent:,} tokens sent; {history} was {full:,}: the package cost "
            f"{sent - full:,} more"
        )
    saved = full - sent
    share = f" ({saved * 100 // full}%)" if full else ""
    return f"📉 {sent:,} tokens sent instead of {full:,} for {history}: {saved:,} saved{share}"


def usage_line(usage: Mapping[str, Any]) -> str:
    """`🧮 3 model calls, 4,120 tokens in, 610 out`."""
    calls = _int(usage.get("model_calls"))
    return (
        f"🧮 {calls} model call{'s' if calls != 1 else ''}, "
        f"{_int(usage.get('input_tokens')):,} tokens in, {_int(usage.get('output_tokens')):,} out"
    )


def cost_event(record: Mapping[str, Any]) -> dict[str, Any]:
    """The custom stream chunk of one handover (`kind` "handover", or "consult" for each
    specialist a consult asks)."""
    sent = _int(record.get("estimated_tokens"))
    full = _int(record.get("full_history_tokens"))
    return {
        "event": EVENT,
        "kind": record.get("kind", "handover"),
        "handover_id": record.get("handover_id", ""),
        "from_agent": record.get("from_agent", ""),
        "to_agent": record.get("to_agent", ""),
        "topic": record.get("topic", ""),
        "package_tokens": sent,
        "full_history_tokens": full,
        "saved_tokens": full - sent,
        "text": saving_line(record),
    }


def thread_stats(
    records: Iterable[Mapping[str, Any]], live: Mapping[str, Any] | None = None
) -> dict[str, int]:
    """The sums over a thread's trail, consults' packages (one per specialist asked) with the
    handovers' (`saved_tokens` is full history minus packages: negative
    when the packages cost more; `live`: the state's `hold_usage`, whose hold may not have
    ended yet, so its usage may be on no record)."""
    stats = dict.fromkeys(
        "handovers consults refused returns package_tokens full_history_tokens saved_tokens "
        "specialist_model_calls specialist_input_tokens specialist_output_tokens".split(),
        0,
    )
    holds: dict[str, Mapping[str, Any]] = {}
    for record in records:
        kind = record.get("kind")
        if kind in ("handover", "consult"):
            stats["handovers" if kind == "handover" else "consults"] += 1
            event = cost_event(record)
            for name in ("package_tokens", "full_history_tokens", "saved_tokens"):
                stats[name] += event[name]
        elif kind in ("refused", "return"):
            stats["refused" if kind == "refused" else "returns"] += 1
        ended = record.get("usage")
        if isinstance(ended, Mapping):
            holds[str(ended.get("handover_id") or id(ended))] = ended
    if isinstance(live, Mapping):
        holds.setdefault(str(live.get("handover_id") or "current"), live)
    for usage in holds.values():
        for name in ("model_calls", "input_tokens", "output_tokens"):
            stats[f"specialist_{name}"] += _int(usage.get(name))
    return stats
