"""Reviewing a handover in the terminal (`handover chat --review`, `handover run --review`).

The package is shown readably, then `approve / edit / reject`:

- approve (`a`): the handover is carried out;
- edit (`e`): pick a field by name or number (specialist, topic, summary, reason,
  decisions, artifacts, return condition), then give its new value. A text field
  takes one line. A list (decisions, artifacts) takes one item per line, ended by
  an empty line; `-` alone empties it. An empty answer leaves the field as it was.
  The graph checks and counts the package again and it is shown again; an edit
  that does not validate shows its error and the package as it stood;
- reject (`r`): asks for a reason, which the caller (usually the orchestrator)
  reads; nothing is written and it answers you.

The end of input (Ctrl-D, or a pipe that runs dry) or Ctrl-C leaves the handover
waiting; it is asked again first the next time (`ReviewDeferred`).
"""

from __future__ import annotations

from typing import Any

from ...state import RETURN_CONDITIONS
from .printer import Printer
from .review_text import FIELDS, consult_lines, package_lines
from .stop import Ask

HANDOVER_ACTIONS = (
    "approve / edit / reject? [a/e/r] ",
    ("approve", "edit", "reject"),
    "Please answer approve, edit or reject (a, e or r).",
)
CONSULT_ACTIONS = (
    "approve / reject all? [a/r] ",
    ("approve", "reject"),
    "Please answer approve or reject (a or r).",
)
"""What a handover's (a consult's) review asks, the answers it takes, what a wrong answer is told."""
FIELD_NAMES = ", ".join(name for name, _, _ in FIELDS)
EDIT_HELP = (
    "Edit: name a field or give its number; a list (decisions, artifacts) takes one item per "
    "line, ended by an empty line ('-' alone empties it); an empty answer keeps the field."
)


class ReviewDeferred(Exception):
    """The input ended before the review was answered; the handover keeps waiting."""


class TerminalReviewer:
    """`on_review` for `run_turn`: shows the package, asks, returns the resume value."""

    def __init__(self, printer: Printer, ask: Ask) -> None:
        self.printer = printer
        self.ask_line = ask

    def ask(self, prompt: str) -> str:
        try:
            return self.ask_line(prompt)
        except (EOFError, KeyboardInterrupt):  # the input ended, or Ctrl-C: it keeps waiting
            raise ReviewDeferred("the handover waits for your review") from None

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        """A handover: shown, then approved, edited or rejected. A consult: its entries shown,
        then approved or rejected all together (edit each entry with the human-in-the-loop
        decisions, from Studio or Python)."""
        self.printer.idle()
        consult = request.get("kind") == "consult"
        for line in (consult_lines if consult else package_lines)(request, self.printer.profiles):
            self.printer.say(line)
        count = len(request.get("action_requests") or []) if consult else 1
        while True:
            action = self.action(*(CONSULT_ACTIONS if consult else HANDOVER_ACTIONS))
            if action == "approve":
                self.printer.say("✅ Approved.")
                if not consult and request.get("error"):  # what is shown: as it stood
                    edited = {"name": "handover_to_specialist", "args": as_it_stood(request)}
                    return decisions({"type": "edit", "edited_action": edited})
                return decisions(*[{"type": "approve"}] * count)
            if action == "reject":
                reason = self.ask("Reason (the caller reads it): ").strip()
                self.printer.say(f"❌ Rejected: {reason or 'no reason given'}")
                return decisions(*[{"type": "reject", "message": reason}] * count)
            edit = self.edit(request)
            if edit is not None:
                self.printer.say(
                    "✏️  Edited; the graph checks it and hands over (an edit that does not "
                    "validate comes back with its error)."
                )
                args = {**as_it_stood(request), **edit}
                edited = {"name": "handover_to_specialist", "args": args}
                return decisions({"type": "edit", "edited_action": edited})

    def action(self, prompt: str, actions: tuple[str, ...], retry: str) -> str:
        """The action an answer names (its first letters will do); asked until there is one."""
        while True:
            answer = self.ask(prompt).strip().lower()
            for action in actions:
                if answer and action.startswith(answer):
                    return action
            self.printer.say(retry)

    def edit(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """One field's new value, or None when the person changes their mind."""
        self.printer.say(EDIT_HELP)
        while True:
            answer = self.ask(f"Which field? ({FIELD_NAMES}; or 1-{len(FIELDS)}) ").strip()
            if not answer:
                return None
            chosen = pick_field(answer)
            if chosen is not None:
                break
            self.printer.say(f"No field {answer!r}; the fields are {FIELD_NAMES}.")
        name, key, kind = chosen
        if kind == "list":
            self.printer.say(
                f"New {name}, one per line; an empty line ends ('-' alone empties the list, "
                "nothing keeps it):"
            )
            items = list(iter(lambda: self.ask("  > ").strip(), ""))  # up to an empty line
            if not items:
                return None
            return {key: [] if items == ["-"] else items}
        hint = {
            "return_condition": f" ({', '.join(RETURN_CONDITIONS)})",
            "specialist_profile": " (a profile name, e.g. solution_architect)",
        }.get(key, "")
        value = self.ask(f"New {name}{hint}: ").strip()
        return {key: value} if value else None


def decisions(*each: dict[str, Any]) -> dict[str, Any]:
    """The resume value of a review: LangChain's human-in-the-loop decisions, one per action
    request."""
    return {"decisions": list(each)}


def pick_field(answer: str) -> tuple[str, str, str] | None:
    """The field an answer names: `topic`, `3`, `return condition`, `return_condition`, `reason`."""
    text = answer.strip().lower().replace("_", " ")
    if text.isdigit() and 1 <= int(text) <= len(FIELDS):
        return FIELDS[int(text) - 1]
    for field in FIELDS:
        name, key, _ = field
        if text in (name, key.replace("_", " ")) or (len(text) >= 3 and name.startswith(text)):
            return field
    return None


def as_it_stood(request: dict[str, Any]) -> dict[str, Any]:
    """The handover's arguments as the terminal shows them: the package as it stood (after an
    edit that did not validate, the action request's args hold that edit, for a form to show
    again, and approving them would fail again)."""
    shown = (request.get("action_requests") or [{}])[0].get("args") or {}
    return {k: request.get(k, v) for k, v in shown.items()}
