"""A person reviews a handover before it is carried out (LangGraph `interrupt()`).

With the run context's `review_handovers` on, the handover node pauses after
validation and before the briefing entry is written. The interrupt's value is
the package as it would be handed over:

    {specialist_profile, topic, summary, handover_reason, decisions, artifacts,
     return_condition, estimated_tokens, max_context_tokens, warnings, from_agent}

plus `error` when an earlier answer could not be used. Resume with
`Command(resume=...)`:

- `{"action": "approve"}` carries it out;
- `{"action": "edit", <any of the fields above a model gives>}` changes them;
  the package is validated and counted again, then shown again for approval
  (an edit that does not validate pauses again with the error);
- `{"action": "reject", "reason": "..."}` answers the caller with an `ERROR:`
  that includes the reason; nothing is written, and the caller goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import interrupt

from .arguments import MODEL_ARGUMENTS
from .tool import HandoverOutcome, PreparedHandover, commit_handover

ACTIONS = ("approve", "edit", "reject")
Prepare = Callable[[dict[str, Any]], PreparedHandover | str]
Check = Callable[[Any], str | None]


def review_payload(
    prepared: PreparedHandover, from_agent: str, error: str | None
) -> dict[str, Any]:
    """What the reviewer sees: the package's fields (by the tool's argument names), its
    token figures and warnings."""
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
    }
    if error:
        payload["error"] = error
    return payload


def _decision(answer: Any) -> tuple[str, dict[str, Any]] | str:
    """(action, fields) from a resume value, or the error to show the reviewer."""
    if isinstance(answer, str) and answer in ACTIONS:
        answer = {"action": answer}
    if not isinstance(answer, dict) or answer.get("action") not in ACTIONS:
        return (
            "ERROR: resume with {'action': 'approve'}, {'action': 'edit', <fields>} or "
            f"{{'action': 'reject', 'reason': '...'}}; got {answer!r:.120}"
        )
    fields = {k: v for k, v in answer.items() if k not in ("action", "reason")}
    if answer["action"] == "edit":
        unknown = sorted(set(fields) - set(MODEL_ARGUMENTS))
        if unknown:
            return (
                f"ERROR: cannot edit {', '.join(unknown)}; editable fields: "
                f"{', '.join(MODEL_ARGUMENTS)}"
            )
    return answer["action"], {**fields, "reason": answer.get("reason")}


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
        action, fields = decision
        if action == "reject":
            reason = str(fields.get("reason") or "no reason given")
            return (
                f"ERROR: the handover to {args.get('specialist_profile')} was rejected by the "
                f"reviewer: {reason}. Carry on without it, or propose something else."
            )
        if action == "approve":
            return commit_handover(prepared)
        fields.pop("reason", None)
        edited = {**args, **fields}
        refusal = check(edited.get("specialist_profile"))
        candidate = prepare(edited) if refusal is None else refusal
        if isinstance(candidate, str):
            error = candidate
        else:
            args, prepared = edited, candidate
