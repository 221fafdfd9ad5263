"""A person reviews a consult's entries before any is asked (LangGraph `interrupt()`).

With the run context's `review_handovers` on, the consult node pauses once,
after the entries are checked and their packages built, before any briefing
entry is written. The pause speaks LangChain's human-in-the-loop format with
one action request per entry that can go (entries already refused are not
asked about):

    {"kind": "consult", "from_agent": "orchestrator",
     "action_requests": [{"name": "consult_specialists",
                          "args": {"specialist_profile": ..., "question": ..., "topic": ...,
                                   "summary": ..., "decisions": [...], "artifacts": [...]},
                          "description": "who is asked what, the package's tokens"}, ...],
     "review_configs": [{"action_name": "consult_specialists",
                         "allowed_decisions": ["approve", "edit", "reject"]}, ...],
     "consults": [{"index", "specialist_profile", "question", "estimated_tokens",
                   "max_context_tokens", "warnings"}, ...]   (and `error` after an unusable answer)}

Resume with `Command(resume={"decisions": [one per action request, in order]})`:
approve asks that specialist; `{"type": "edit", "edited_action": {"name":
"consult_specialists", "args": {...}}}` asks the edited entry (checked like the
call's: an edit that does not validate is not applied, and the pause comes back
with the error); `{"type": "reject", "message": "..."}` makes that entry an
`ERROR:` line with the message. The terminal's `{"action": "approve"}` and
`{"action": "reject", "reason": ...}` answer every entry at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.types import interrupt

from ..tools.names import CONSULT
from .consult_arguments import ENTRY_FIELDS, SHARED, ConsultRequest
from .review import DECISIONS, reviewer_text
from .tool import PreparedHandover

EDITABLE = (*ENTRY_FIELDS, *SHARED)
"""The fields of one entry a reviewer may edit (its action request's args)."""

HOW_TO_ANSWER = (
    "ERROR: resume with {'decisions': [...]}, one per consulted specialist, in order: "
    "{'type': 'approve'}, {'type': 'edit', 'edited_action': {'name': 'consult_specialists', "
    "'args': {...}}} or {'type': 'reject', 'message': '...'}"
)


@dataclass
class Reviewable:
    """One entry that can go: as read, its arguments, and its prepared package."""

    entry: ConsultRequest
    args: dict[str, Any]
    prepared: PreparedHandover


Prepare = Callable[[ConsultRequest, dict[str, Any]], PreparedHandover | str]
"""(entry, its arguments) -> its prepared package, or the entry's `ERROR:`."""
Check = Callable[[ConsultRequest, dict[str, Any], list[str]], str | None]
"""(entry, edited arguments, the other entries' profiles) -> the edit's `ERROR:`, or None."""


class ConsultSuperseded(Exception):
    """A new message came before the review: the consult is not carried out."""


def consult_review_payload(
    items: Sequence[Reviewable], *, from_agent: str, error: str | None = None
) -> dict[str, Any]:
    """What the reviewer sees: each entry's package figures, and the same as action requests."""
    consults = [
        {
            "index": item.entry.index,
            "specialist_profile": item.prepared.package["specialist"],
            "question": item.args["question"],
            "topic": item.prepared.package["topic"],
            "estimated_tokens": item.prepared.package["estimated_tokens"],
            "max_context_tokens": item.prepared.package["max_context_tokens"],
            "warnings": item.prepared.warnings(),
            "ledger": list(item.prepared.package.get("ledger") or []),
            "ledger_omitted": int(item.prepared.package.get("ledger_omitted") or 0),
            "earlier_turns": list(item.prepared.package.get("earlier_turns") or []),
        }
        for item in items
    ]
    payload: dict[str, Any] = {
        "kind": "consult",
        "from_agent": from_agent,
        "consults": consults,
        "action_requests": [
            {
                "name": CONSULT,
                "args": {name: item.args[name] for name in EDITABLE},
                "description": describe(shown, from_agent=from_agent),
            }
            for item, shown in zip(items, consults, strict=True)
        ],
        "review_configs": [
            {"action_name": CONSULT, "allowed_decisions": list(DECISIONS)} for _ in items
        ],
    }
    if error:
        payload["error"] = error
    return payload


def describe(shown: dict[str, Any], *, from_agent: str) -> str:
    """One entry as a reviewer reads it (Markdown)."""
    lines = [
        f"**{from_agent or 'orchestrator'}** consults **{shown['specialist_profile']}** "
        f"(entry {shown['index']}; package {shown['estimated_tokens']:,} of "
        f"{shown['max_context_tokens']:,} tokens, topic `{shown['topic']}`).",
        "",
        f"**Question:** {shown['question']}",
    ]
    if shown.get("ledger") or shown.get("ledger_omitted"):
        lines += ["", "**Thread ledger (added by the graph):**", *shown.get("ledger", [])]
        if shown.get("ledger_omitted"):
            lines.append(f"- ({shown['ledger_omitted']} more did not fit)")
    if shown.get("earlier_turns"):
        lines += ["", "**Earlier turns (added by the graph):**"]
        lines += [f"- {turn}" for turn in shown["earlier_turns"]]
    for warning in shown["warnings"]:
        lines += ["", f"⚠️ {warning}"]
    return "\n".join(lines)


def _decisions(answer: Any, count: int) -> list[tuple[str, dict[str, Any]]] | str:
    """(approve | edit | reject, the edit's args or the reject message) per entry, or the
    error to show the reviewer."""
    if isinstance(answer, dict) and answer.get("superseded") is True:
        raise ConsultSuperseded
    if isinstance(answer, str) and answer in DECISIONS:
        answer = {"action": answer}
    if isinstance(answer, dict) and answer.get("action") in ("approve", "reject"):
        message = {"message": answer.get("reason")}
        return [(answer["action"], message)] * count
    decisions = answer.get("decisions") if isinstance(answer, dict) else None
    if not isinstance(decisions, list) or len(decisions) != count:
        return f"{HOW_TO_ANSWER} ({count} decisions for {count} entries); got {answer!r:.120}"
    found: list[tuple[str, dict[str, Any]]] = []
    for i, decision in enumerate(decisions, 1):
        kind = decision.get("type") if isinstance(decision, dict) else None
        if kind == "approve":
            found.append(("approve", {}))
        elif kind == "reject":
            found.append(("reject", {"message": decision.get("message")}))  # type: ignore[union-attr]
        elif kind == "edit":
            action = decision.get("edited_action")  # type: ignore[union-attr]
            args = action.get("args") if isinstance(action, dict) else None
            if not isinstance(args, dict) or action.get("name", CONSULT) != CONSULT:  # type: ignore[union-attr]
                return f"{HOW_TO_ANSWER}: decision {i}'s edit names {CONSULT} and its new args"
            found.append(("edit", dict(args)))
        else:
            return f"{HOW_TO_ANSWER}; decision {i} has type {kind!r:.40}"
    return found


def rejected(specialist: str, *, message: Any) -> str:
    """The `ERROR:` line of an entry the reviewer rejected, with their message."""
    reason = reviewer_text(message) or "no reason given"
    reason += "" if reason[-1] in ".!?" else "."
    return (
        f"ERROR: consulting {specialist} was rejected by the reviewer: {reason} Go on without "
        "this answer."
    )


def review_consult(
    items: list[Reviewable], *, prepare: Prepare, check: Check, from_agent: str
) -> list[PreparedHandover | str]:
    """Pause until a person decides on every entry; each entry's package or its `ERROR:`.

    Raises `ConsultSuperseded` when a new message came first. An edit that does not validate
    is not applied: the reviewer sees the error with the entries as they stood.
    """
    error: str | None = None
    while True:
        decisions = _decisions(
            interrupt(consult_review_payload(items, from_agent=from_agent, error=error)), len(items)
        )
        error = None
        if isinstance(decisions, str):
            error = decisions
            continue
        outcomes: list[PreparedHandover | str] = []
        profiles = [item.entry.specialist for item in items]
        for i, (item, (kind, fields)) in enumerate(zip(items, decisions, strict=True)):
            if kind == "approve":
                outcomes.append(item.prepared)
            elif kind == "reject":
                outcomes.append(rejected(item.entry.specialist, message=fields.get("message")))
            else:
                unknown = sorted(set(fields) - set(EDITABLE))
                edited = {**item.args, **fields}
                others = profiles[:i] + profiles[i + 1 :]
                problem = (
                    f"ERROR: cannot edit {', '.join(unknown)}; editable fields: "
                    f"{', '.join(EDITABLE)}"
                    if unknown
                    else check(item.entry, edited, others)
                )
                candidate = prepare(item.entry, edited) if problem is None else problem
                if isinstance(candidate, str):
                    error = f"entry {item.entry.index} ({item.entry.specialist}): {candidate}"
                    break
                profiles[i] = candidate.package["specialist"]
                outcomes.append(candidate)
        if error is None:
            return outcomes
