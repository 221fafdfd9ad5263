"""A person reviews a handover before it is carried out (LangGraph `interrupt()`).

With the run context's `review_handovers` on (or `HANDOVER_REVIEW_HANDOVERS=true`),
the handover node pauses after validation and before the briefing entry is
written. The pause speaks LangChain's human-in-the-loop format, the one Agent
Chat UI and Studio render with Approve / Edit / Reject:

    {"action_requests": [{"name": "handover_to_specialist", "args": {...},
                          "description": "the package, its tokens, warnings, any error"}],
     "review_configs": [{"action_name": "handover_to_specialist",
                         "allowed_decisions": ["approve", "edit", "reject"]}],
     ...and the package's fields beside them: specialist_profile, topic, summary,
     handover_reason, decisions, artifacts, return_condition, estimated_tokens,
     max_context_tokens, warnings, from_agent (and `error` after an unusable answer)}

Resume with `Command(resume={"decisions": [decision]})`:

- `{"type": "approve"}` carries it out;
- `{"type": "edit", "edited_action": {"name": "handover_to_specialist", "args": {...}}}`
  carries out the edited handover at once when it validates; one that does not
  pauses again, the error in `description` (and in `error`);
- `{"type": "reject", "message": "..."}` answers the caller with an `ERROR:`
  that includes the message; nothing is written, and the caller goes on.

The terminal's older answers still work: `{"action": "approve"}`, `{"action":
"reject", "reason": ...}`, and `{"action": "edit", <fields>}`, which is checked,
counted and shown again for approval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import interrupt

from ...state import token_counter
from ...state.defaults import MAX_REVIEW_MESSAGE_TOKENS
from ..redaction import redact
from ..tools.names import HANDOVER
from .arguments import MODEL_ARGUMENTS
from .tool import HandoverOutcome, PreparedHandover, commit_handover

DECISIONS = ("approve", "edit", "reject")
Prepare = Callable[[dict[str, Any]], PreparedHandover | str]
Check = Callable[[Any], str | None]
Decision = tuple[str, dict[str, Any], bool]
"""(approve | edit | reject, fields or the reject message, whether an edit applies at once)."""

HOW_TO_ANSWER = (
    "ERROR: resume with {'decisions': [{'type': 'approve'}]}, [{'type': 'edit', "
    "'edited_action': {'name': 'handover_to_specialist', 'args': {...}}}] or [{'type': "
    "'reject', 'message': '...'}]"
)


def review_payload(
    prepared: PreparedHandover, from_agent: str, error: str | None
) -> dict[str, Any]:
    """What the reviewer sees: the package's fields (by the tool's argument names), its
    token figures and warnings, and the same as a human-in-the-loop action request."""
    package = prepared.package
    payload: dict[str, Any] = {
        "specialist_profile": package["specialist"],
        "topic": package["topic"],
        "summary": package["summary"],
        "handover_reason": package["reason"],
        "decisions": list(package["decisions"]),
        "artifacts": list(package["artifacts"]),
        "return_condition": package["return_condition"],
        "estimated_tokens": package["estimated_tokens"],
        "max_context_tokens": package["max_context_tokens"],
        "warnings": prepared.warnings(),
        "from_agent": from_agent,
        "ledger": list(package.get("ledger") or []),
        "ledger_omitted": int(package.get("ledger_omitted") or 0),
        "earlier_turns": list(package.get("earlier_turns") or []),
    }
    if error:
        payload["error"] = error
    args = {name: payload[name] for name in MODEL_ARGUMENTS}
    payload["action_requests"] = [
        {"name": HANDOVER, "args": args, "description": describe(payload)}
    ]
    payload["review_configs"] = [{"action_name": HANDOVER, "allowed_decisions": list(DECISIONS)}]
    return payload


def describe(payload: dict[str, Any]) -> str:
    """The package as a reviewer reads it (Markdown), its figures, warnings and any error."""
    lines = [
        f"**{payload['from_agent'] or 'orchestrator'}** hands over to "
        f"**{payload['specialist_profile']}** on `{payload['topic']}` "
        f"({payload['return_condition']}; {payload['estimated_tokens']:,} of "
        f"{payload['max_context_tokens']:,} tokens).",
        "",
        f"**Summary:** {payload['summary'] or '(none)'}",
        "",
        f"**Reason:** {payload['handover_reason'] or '(none)'}",
    ]
    for name in ("decisions", "artifacts"):
        if payload[name]:
            lines += ["", f"**{name.capitalize()}:**", *(f"- {item}" for item in payload[name])]
    if payload.get("ledger") or payload.get("ledger_omitted"):
        lines += ["", "**Thread ledger (added by the graph):**", *payload.get("ledger", [])]
        if payload.get("ledger_omitted"):
            lines.append(f"- ({payload['ledger_omitted']} more did not fit)")
    if payload.get("earlier_turns"):
        lines += ["", "**Earlier turns (added by the graph):**"]
        lines += [f"- {turn}" for turn in payload["earlier_turns"]]
    for warning in payload["warnings"]:
        lines += ["", f"⚠️ {warning}"]
    if payload.get("error"):
        lines += ["", f"**Your last answer could not be used:** {payload['error']}"]
    return "\n".join(lines)


def reviewer_text(message: Any) -> str:
    """A reviewer's message as the caller reads it: text (a lone surrogate replaced), one line,
    secrets redacted, at most `MAX_REVIEW_MESSAGE_TOKENS` (cut with a visible marker)."""
    text = message if isinstance(message, str) else "" if message is None else str(message)
    text = text[: MAX_REVIEW_MESSAGE_TOKENS * 16]  # far over the cap: no need to count it all
    text = " ".join(text.encode("utf-8", "replace").decode("utf-8").split())
    counter = token_counter()
    if counter.exceeds(text, MAX_REVIEW_MESSAGE_TOKENS):
        text = counter.prefix(text, MAX_REVIEW_MESSAGE_TOKENS).rstrip() + (
            f" … [cut at {MAX_REVIEW_MESSAGE_TOKENS} tokens]"
        )
    return redact(text).text


class ReviewSuperseded(str):
    """The `ERROR:` answer of a handover a new message superseded before its review: the turn
    ends with the caller saying so, and the new message is answered."""


def _decision(answer: Any) -> Decision | str:
    """The reviewer's decision from a resume value, or the error to show them."""
    if isinstance(answer, dict) and answer.get("superseded") is True:
        return "superseded", {}, False
    if isinstance(answer, str) and answer in DECISIONS:
        answer = {"action": answer}
    if isinstance(answer, dict) and answer.get("action") in DECISIONS:
        fields = {k: v for k, v in answer.items() if k not in ("action", "reason")}
        if answer["action"] == "reject":
            return "reject", {"message": answer.get("reason")}, False
        return answer["action"], fields, False  # the terminal's edit: shown again
    decisions = answer.get("decisions") if isinstance(answer, dict) else None
    if not isinstance(decisions, list) or len(decisions) != 1 or not isinstance(decisions[0], dict):
        return f"{HOW_TO_ANSWER} (one decision for the one handover); got {answer!r:.120}"
    decision = decisions[0]
    kind = decision.get("type")
    if kind == "approve":
        return "approve", {}, False
    if kind == "reject":
        return "reject", {"message": decision.get("message")}, False
    if kind != "edit":
        return f"{HOW_TO_ANSWER}; got a decision of type {kind!r:.40}"
    action = decision.get("edited_action")
    if not isinstance(action, dict) or action.get("name", HANDOVER) != HANDOVER:
        return f"{HOW_TO_ANSWER}: an edit names handover_to_specialist and its new args"
    args = action.get("args")
    if not isinstance(args, dict):
        return f"{HOW_TO_ANSWER}: the edited action's args must be an object"
    return "edit", dict(args), True


def review_handover(
    args: dict[str, Any], *, prepare: Prepare, check: Check, from_agent: str
) -> HandoverOutcome | str:
    """Pause until a person approves, edits or rejects; then carry it out or refuse.

    An edit that does not validate is not applied: the reviewer sees the error
    with the package as it stood, and answers again.
    """
    prepared = prepare(args)
    if isinstance(prepared, str):
        return prepared  # the model's own arguments do not validate: nothing to review
    error: str | None = None
    while True:
        decision = _decision(interrupt(review_payload(prepared, from_agent, error)))
        error = None
        if isinstance(decision, str):
            error = decision
            continue
        kind, fields, at_once = decision
        if kind == "superseded":
            return ReviewSuperseded(
                f"ERROR: the handover to {args.get('specialist_profile')} was not reviewed: a "
                "new message came first, so it was not carried out."
            )
        if kind == "reject":
            reason = reviewer_text(fields.get("message")) or "no reason given"
            reason += "" if reason[-1] in ".!?" else "."
            return (
                f"ERROR: the handover to {args.get('specialist_profile')} was rejected by the "
                f"reviewer: {reason} Carry on without it, or propose something else."
            )
        if kind == "approve":
            return commit_handover(prepared)
        unknown = sorted(set(fields) - set(MODEL_ARGUMENTS))
        if unknown:
            error = (
                f"ERROR: cannot edit {', '.join(unknown)}; editable fields: "
                f"{', '.join(MODEL_ARGUMENTS)}"
            )
            continue
        edited = {**args, **fields}
        refusal = check(edited.get("specialist_profile"))
        candidate = prepare(edited) if refusal is None else refusal
        if isinstance(candidate, str):
            error = candidate
        elif at_once:
            return commit_handover(candidate)
        else:
            args, prepared = edited, candidate
