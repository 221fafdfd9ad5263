"""A person reviews a handover or a consult before it is carried out (LangGraph
`interrupt()`): one module for one action request or many.

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

An edit's list fields may come as a form sends them (`form_values`: a JSON list, lines or
`;`). `{"resolved": True}` (what a run with `Command(goto="__end__")` becomes while a review
waits: Agent Chat UI's "Mark as Resolved") ends the review without carrying anything out.
The older `{"action": ...}` answers are gone.

**A consult's review** (`review_consult`, below): with `review_handovers` on, the consult
node pauses once for all its entries,
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
`ERROR:` line with the message. `review_decisions` reads the decisions of both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from langgraph.types import interrupt

from ...state.defaults import MAX_REVIEW_MESSAGE_TOKENS
from ..redaction import redact
from ..tools.names import CONSULT, HANDOVER
from .arguments import ENTRY_FIELDS, MODEL_ARGUMENTS, SHARED, ConsultRequest, capped
from .handover_to_specialist import HandoverOutcome, PreparedHandover, commit_handover

DECISIONS = ("approve", "edit", "reject")
Prepare = Callable[[dict[str, Any], bool], PreparedHandover | str]
"""(arguments, whether they go in a new call: an edit) -> the prepared package, or ERROR."""
Check = Callable[[Any], str | None]
Decisions = list[tuple[str, dict[str, Any]]]

HOW_TO_ANSWER = (
    "ERROR: resume with {'decisions': [{'type': 'approve'}]}, [{'type': 'edit', "
    "'edited_action': {'name': 'handover_to_specialist', 'args': {...}}}] or [{'type': "
    "'reject', 'message': '...'}]"
)


def _added(prepared: PreparedHandover) -> dict[str, Any]:
    """What the graph added to a package (the ledger's lines, earlier turns), for a reviewer."""
    package = prepared.package
    return {
        "ledger": list(package.get("ledger") or []),
        "ledger_omitted": int(package.get("ledger_omitted") or 0),
        "earlier_turns": list(package.get("earlier_turns") or []),
    }


def review_payload(
    prepared: PreparedHandover,
    from_agent: str,
    error: str | None,
    kept: dict[str, Any] | None = None,
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
        **_added(prepared),
    }
    if error:
        payload["error"] = error
    args = {name: payload[name] for name in MODEL_ARGUMENTS}
    # an edit that did not validate: the form shows the reviewer's values again, to fix
    args.update({k: v for k, v in (kept or {}).items() if k in MODEL_ARGUMENTS})
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
    lines += added_lines(payload)
    if payload.get("error"):
        lines += ["", f"**Your last answer could not be used:** {payload['error']}"]
    return "\n".join(lines)


def added_lines(shown: dict[str, Any]) -> list[str]:
    """What the graph added to a package (the ledger's lines, earlier turns) and its warnings,
    as the reviewer reads them (Markdown lines)."""
    lines: list[str] = []
    if shown.get("ledger") or shown.get("ledger_omitted"):
        lines += ["", "**Thread ledger (added by the graph):**", *shown.get("ledger", [])]
        if shown.get("ledger_omitted"):
            lines.append(f"- ({shown['ledger_omitted']} more did not fit)")
    if shown.get("earlier_turns"):
        lines += ["", "**Earlier turns (added by the graph):**"]
        lines += [f"- {turn}" for turn in shown["earlier_turns"]]
    for warning in shown["warnings"]:
        lines += ["", f"⚠️ {warning}"]
    return lines


def reviewer_reason(message: Any) -> str:
    """A reviewer's reject message as the caller reads it: text (a lone surrogate replaced), one
    line, secrets redacted, at most `MAX_REVIEW_MESSAGE_TOKENS` (cut with a visible marker),
    ending with a full stop ("no reason given." when there is none)."""
    text = message if isinstance(message, str) else "" if message is None else str(message)
    text = text[: MAX_REVIEW_MESSAGE_TOKENS * 16]  # far over the cap: no need to count it all
    text = " ".join(text.encode("utf-8", "replace").decode("utf-8").split())
    reason = redact(capped(text, MAX_REVIEW_MESSAGE_TOKENS)).text or "no reason given"
    return reason if reason[-1] in ".!?" else f"{reason}."


def _uneditable(fields: dict[str, Any], editable: Sequence[str]) -> str | None:
    """The `ERROR:` of an edit that names fields a reviewer cannot edit, or None."""
    unknown = sorted(set(fields) - set(editable))
    if not unknown:
        return None
    return f"ERROR: cannot edit {', '.join(unknown)}; editable fields: {', '.join(editable)}"


class ReviewSuperseded(str):
    """The `ERROR:` answer of a handover (or a consult) a new message superseded before its
    review: the turn ends with the caller saying so, and the new message is answered."""


class ReviewResolved(ReviewSuperseded):
    """The `ERROR:` answer of a handover (or a consult) the reviewer marked as resolved (Agent
    Chat UI's "Mark as Resolved": a run with `Command(goto="__end__")`): not carried out, the
    turn ends with the caller saying so."""


def _ended(kind: str, what: str, undone: str) -> ReviewSuperseded | None:
    """The `ERROR:` of a review that ended without a decision (`kind` "resolved": the reviewer
    marked `what` as resolved; "superseded": a new message came first), else None."""
    if kind == "resolved":
        return ReviewResolved(f"ERROR: {what} was marked as resolved by the reviewer, so {undone}.")
    if kind == "superseded":
        return ReviewSuperseded(
            f"ERROR: {what} was not reviewed: a new message came first, so {undone}."
        )
    return None


LIST_FIELDS = ("decisions", "artifacts")

CARRY_ON = " Carry on without it, or propose something else."
GO_ON = " Go on without this answer."
MODEL_HINTS = (CARRY_ON, GO_ON)
"""The sentences of a refusal that tell the calling model what to do next: meant for the
model, never shown to the user as if meant for them (`for_people`)."""


def for_people(text: str) -> str:
    """`text` without the sentences in it that are meant for the model (`MODEL_HINTS`)."""
    for hint in MODEL_HINTS:
        text = text.replace(hint, "")
    return text


def form_values(fields: dict[str, Any]) -> dict[str, Any]:
    """An edit's list fields as a form sends them (Agent Chat UI sends every field as a
    string): a JSON list, one item per line (a leading `-` or `*` dropped), or items
    separated by `;`. Anything else is left for validation to word."""
    out = dict(fields)
    for name in LIST_FIELDS:
        value = out.get(name)
        if not isinstance(value, str):
            continue
        text = value.strip()
        if text.startswith("["):
            try:
                out[name] = json.loads(text)
                continue
            except ValueError:
                pass
        parts = text.splitlines() if "\n" in text else text.split(";")
        out[name] = [
            p.strip().lstrip("-*•").strip() for p in parts if p.strip().lstrip("-*•").strip()
        ]
    return out


def review_decisions(answer: Any, *, count: int, name: str, how: str) -> Decisions | str:
    """The decisions of a resume value in LangChain's human-in-the-loop format, one per action
    request (`count` of them, for the tool `name`): (approve | edit | reject | superseded,
    the edit's args or the reject message) each, or the error to show the reviewer (`how`
    says how to answer). A new message that came first answers `{"superseded": True}`."""
    for ended in ("superseded", "resolved"):  # "resolved": Agent Chat UI's "Mark as Resolved"
        if isinstance(answer, dict) and answer.get(ended) is True:
            return [(ended, {})] * count
    decisions = answer.get("decisions") if isinstance(answer, dict) else None
    if not isinstance(decisions, list) or len(decisions) != count:
        plural = "decision" if count == 1 else "decisions"
        return f"{how} ({count} {plural} for {count} action request{'s' * (count != 1)}); got {answer!r:.120}"
    found: Decisions = []
    for i, decision in enumerate(decisions, 1):
        kind = decision.get("type") if isinstance(decision, dict) else None
        if kind == "approve":
            found.append(("approve", {}))
        elif kind == "reject":
            found.append(("reject", {"message": decision.get("message")}))  # type: ignore[union-attr]
        elif kind == "edit":
            action = decision.get("edited_action")  # type: ignore[union-attr]
            args = action.get("args") if isinstance(action, dict) else None
            if not isinstance(action, dict) or action.get("name", name) != name:
                return f"{how}: decision {i}'s edit names {name} and its new args"
            if not isinstance(args, dict):
                return f"{how}: decision {i}'s edited action's args must be an object"
            found.append(("edit", dict(args)))
        else:
            return f"{how}; decision {i} has type {kind!r:.40}"
    return found


def _decided(
    payload: Callable[[str | None], dict[str, Any]],
    error: str | None,
    *,
    count: int,
    name: str,
    how: str,
) -> Decisions:
    """Pause with `payload(error)` until the answer reads as `count` decisions (an answer that
    does not comes back to the reviewer as the error)."""
    while True:
        decisions = review_decisions(interrupt(payload(error)), count=count, name=name, how=how)
        if not isinstance(decisions, str):
            return decisions
        error = decisions


@dataclass
class Reissued:
    """A handover the reviewer edited: its call is answered with `note`, and the graph makes the
    call again with `args` (stored messages never change, so the edited arguments live in a new
    call). `outcome` is the edited handover carried out; None when the edit did not validate:
    the new call (with the arguments as they stood) is reviewed again, the form showing the
    reviewer's values (`kept`) and the `error`."""

    args: dict[str, Any]
    note: str
    outcome: HandoverOutcome | None = None
    kept: dict[str, Any] | None = None
    error: str | None = None


def review_handover(
    args: dict[str, Any],
    *,
    prepare: Prepare,
    check: Check,
    from_agent: str,
    kept: dict[str, Any] | None = None,
    error: str | None = None,
) -> HandoverOutcome | Reissued | str:
    """Pause until a person approves, edits or rejects; then carry it out, refuse it, or make
    the edited call again (`Reissued`). `kept` and `error`: an earlier edit that did not
    validate, shown again."""
    prepared = prepare(args, False)
    if isinstance(prepared, str):
        return prepared  # the model's own arguments do not validate: nothing to review
    ((kind, fields),) = _decided(
        partial(review_payload, prepared, from_agent, kept=kept or {}),
        error,
        count=1,
        name=HANDOVER,
        how=HOW_TO_ANSWER,
    )
    target = args.get("specialist_profile")
    ended = _ended(kind, f"the handover to {target}", "it was not carried out")
    if ended is not None:
        return ended
    if kind == "reject":
        return (
            f"ERROR: the handover to {target} was rejected by the reviewer: "
            f"{reviewer_reason(fields.get('message'))}{CARRY_ON}"
        )
    if kind == "approve" and kept:  # the form showed the reviewer's values: those are approved
        kind, fields = "edit", dict(kept)
    fields = form_values(fields) if kind == "edit" else {}
    edited = {**args, **fields}
    changed = [k for k in MODEL_ARGUMENTS if k in edited and edited.get(k) != args.get(k)]
    problem = _uneditable(fields, MODEL_ARGUMENTS)
    if problem is None and not changed:  # approved, or an edit that changed nothing
        return commit_handover(prepared)
    problem = problem or check(edited.get("specialist_profile"))
    candidate = prepare(edited, True) if problem is None else problem
    if isinstance(candidate, str):
        return Reissued(
            args=args,
            note=f"ERROR: the reviewer's edit was not applied: {candidate.removeprefix('ERROR: ').rstrip('.')}."
            " The handover waits for review again.",
            kept=fields,
            error=candidate,
        )
    done = commit_handover(candidate)
    if isinstance(done, str):  # its briefing could not be written
        return done
    return Reissued(
        args=edited,
        note=f"The reviewer edited this handover ({', '.join(changed)}); it is carried out as "
        "the next call, with the edited arguments.",
        outcome=done,
    )


# --- a consult: one action request per entry ----------------------------------------------

EDITABLE = (*ENTRY_FIELDS, *SHARED)
"""The fields of one entry a reviewer may edit (its action request's args)."""

CONSULT_HOW_TO_ANSWER = (
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


PrepareEntry = Callable[[ConsultRequest, dict[str, Any]], PreparedHandover | str]
"""(entry, its arguments) -> its prepared package, or the entry's `ERROR:`."""
CheckEntry = Callable[[ConsultRequest, dict[str, Any], list[str]], str | None]
"""(entry, edited arguments, the other entries' profiles) -> the edit's `ERROR:`, or None."""


def consult_review_payload(
    items: Sequence[Reviewable], from_agent: str, error: str | None = None
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
            **_added(item.prepared),
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
                "description": describe_entry(shown, from_agent=from_agent),
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


def describe_entry(shown: dict[str, Any], *, from_agent: str) -> str:
    """One entry as a reviewer reads it (Markdown)."""
    lines = [
        f"**{from_agent or 'orchestrator'}** consults **{shown['specialist_profile']}** "
        f"(entry {shown['index']}; package {shown['estimated_tokens']:,} of "
        f"{shown['max_context_tokens']:,} tokens, topic `{shown['topic']}`).",
        "",
        f"**Question:** {shown['question']}",
    ]
    return "\n".join([*lines, *added_lines(shown)])


class EditNotApplied(str):
    """The error of a reviewer's edit of a consult entry that did not validate: the consult's
    call is answered with it and made again, to be reviewed again."""


def review_consult(
    items: list[Reviewable],
    *,
    prepare: PrepareEntry,
    check: CheckEntry,
    from_agent: str,
    error: str | None = None,
) -> list[PreparedHandover | str] | EditNotApplied | ReviewSuperseded:
    """Pause until a person decides on every entry; each entry's package or its `ERROR:`, or
    the error of an edit that did not validate (`EditNotApplied`; `error` shows it again), or
    the `ReviewSuperseded` answer when a new message came first (`ReviewResolved` when the
    reviewer marked it as resolved): the consult is not carried out."""
    decisions = _decided(
        partial(consult_review_payload, items, from_agent),
        error,
        count=len(items),
        name=CONSULT,
        how=CONSULT_HOW_TO_ANSWER,
    )
    ended = _ended(decisions[0][0], "the consult", "no specialist was asked")
    if ended is not None:  # every decision says so
        return ended
    outcomes: list[PreparedHandover | str] = []
    profiles = [item.entry.specialist_profile for item in items]
    for i, (item, (kind, fields)) in enumerate(zip(items, decisions, strict=True)):
        if kind == "approve":
            outcomes.append(item.prepared)
        elif kind == "reject":
            outcomes.append(
                f"ERROR: consulting {profiles[i]} was rejected by the reviewer: "
                f"{reviewer_reason(fields.get('message'))}{GO_ON}"
            )
        else:
            fields = form_values(fields)
            edited = {**item.args, **fields}
            others = profiles[:i] + profiles[i + 1 :]
            problem = _uneditable(fields, EDITABLE) or check(item.entry, edited, others)
            candidate = prepare(item.entry, edited) if problem is None else problem
            if isinstance(candidate, str):
                return EditNotApplied(f"entry {item.entry.index} ({profiles[i]}): {candidate}")
            profiles[i] = candidate.package["specialist"]
            outcomes.append(candidate)
    return outcomes
