"""The handover trail (the state's append-only `handovers`) and the current turn's hops.

`turn_trail` lists the hops of the current user turn, returns included; the
agent that takes a new user message starts it afresh. The handover node counts
its handovers against `max_handovers_per_turn`, so a model that keeps handing
the same task back and forth is stopped however often control returns.
"""

from __future__ import annotations

from typing import Any

from ...state import ORCHESTRATOR, HandoverRecord, HoldUsage
from ..briefing.writer import now_utc
from ..redaction import redact
from ..tools.names import HANDOVER


def trail_record(
    kind: str,
    *,
    from_agent: str,
    to_agent: str,
    reason: str = "",
    topic: str = "",
    return_condition: str = "",
    estimated_tokens: int = 0,
    briefing_path: str = "",
    error: str | None = None,
    **figures: Any,
) -> HandoverRecord:
    """One trail entry with the current UTC time; its free texts redacted (a refused
    handover's arguments come straight from a model, secrets included)."""
    record: dict[str, Any] = {
        "kind": kind,
        "from_agent": from_agent,
        "to_agent": redact(to_agent).text,
        "reason": redact(reason).text,
        "topic": redact(topic).text,
        "return_condition": return_condition,
        "estimated_tokens": estimated_tokens,
        "briefing_path": briefing_path,
        "time": now_utc().strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if error is not None:
        record["error"] = redact(error).text
    record.update({k: v for k, v in figures.items() if v is not None})  # ids, token figures
    return record  # type: ignore[return-value]


def ledger_figures(package: Any) -> dict[str, Any]:
    """A package's ledger figures for its trail record: entries shown, entries left out and
    earlier turns carried."""
    return {
        "ledger_entries": len(package.get("ledger") or []),
        "ledger_omitted": int(package.get("ledger_omitted") or 0),
        "earlier_turns": len(package.get("earlier_turns") or []),
    }


def return_update(
    agent: str, handover: dict[str, Any], reason: str, usage: HoldUsage | None = None
) -> dict[str, Any]:
    """The state update of `agent` handing the conversation back to the orchestrator; its
    record carries the hold's `usage` (model calls and tokens since the handover)."""
    condition = handover.get("root_return_condition") or handover.get("return_condition") or ""
    return {
        "active_agent": ORCHESTRATOR,
        "handover_depth": 0,
        "agent_turns": 0,
        "handovers": [
            trail_record(
                "return",
                from_agent=agent,
                to_agent=ORCHESTRATOR,
                reason=reason,
                topic=str(handover.get("topic") or ""),
                return_condition=str(condition),
                handover_id=handover.get("handover_id"),
                usage=usage,
            )
        ],
    }


def refused_calls(agent: str, added: list[Any]) -> list[HandoverRecord]:
    """A `refused` record for each handover call among `added` that the agent's own tool node
    answered with an error (its arguments failed the transfer tool's schema: an unknown or own
    target, a missing topic): the trail keeps every refused handover, wherever it was refused."""
    calls = {c["id"]: c for m in added for c in getattr(m, "tool_calls", None) or []}
    records = []
    for m in added:
        call = calls.get(getattr(m, "tool_call_id", None))
        if call is None or call["name"] != HANDOVER or getattr(m, "status", "") != "error":
            continue
        args = call.get("args") or {}
        target = args.get("specialist_profile")
        records.append(
            trail_record(
                "refused",
                from_agent=agent,
                to_agent="" if target is None else str(target),
                reason=str(args.get("handover_reason") or ""),
                topic=str(args.get("topic") or ""),
                return_condition=str(args.get("return_condition") or ""),
                error=str(m.content),
            )
        )
    return records


def handover_hop(caller: str, target: str) -> str:
    """One hop of the turn trail."""
    return f"{caller} -> {target}"


def return_hop(agent: str) -> str:
    """A return in the turn trail."""
    return f"{agent} -> {ORCHESTRATOR} (returned)"


def handovers_in(trail: list[str]) -> int:
    """How many of the turn's hops were handovers (returns are hops, not handovers)."""
    return sum(1 for hop in trail if not hop.endswith("(returned)"))


def describe_trail(records: list[HandoverRecord], limit: int = 8) -> str:
    """The last `limit` trail entries, one line each, for the orchestrator's prompt."""
    lines = []
    for r in records[-limit:]:
        if r["kind"] == "handover":
            lines.append(
                f"- {r['time']} handover {r['from_agent']} -> {r['to_agent']} on "
                f"'{r['topic']}' ({r['return_condition']}, {r['estimated_tokens']} tokens): "
                f"{r['reason']}"
            )
        elif r["kind"] == "return":
            lines.append(f"- {r['time']} {r['from_agent']} returned: {r['reason']}")
        elif r["kind"] == "consult":
            lines.append(
                f"- {r['time']} consult {r['from_agent']} -> {r['to_agent']} on '{r['topic']}' "
                f"({r['estimated_tokens']} tokens): {r['reason']}"
            )
        else:
            lines.append(
                f"- {r['time']} refused {r['from_agent']} -> {r['to_agent']}: {r.get('error', '')}"
            )
    return "\n".join(lines) or "(no handovers yet)"
