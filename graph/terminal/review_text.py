"""How a review request reads in the terminal: the package one numbered field a line, a
consult's entries. Shown by the reviewer (`review.py`) and by the printer, which shows a
waiting review again when a thread is opened."""

from __future__ import annotations

from typing import Any

from ...specialists import ProfileRegistry
from .text import CONTROL, agent_label

FIELDS: tuple[tuple[str, str, str], ...] = (
    ("specialist", "specialist_profile", "text"),
    ("topic", "topic", "text"),
    ("summary", "summary", "text"),
    ("reason", "handover_reason", "text"),
    ("decisions", "decisions", "list"),
    ("artifacts", "artifacts", "list"),
    ("return condition", "return_condition", "text"),
)
"""(what the person calls it, the package's key, text or list), numbered 1-7 on screen."""


def _indent(value: str, width: int) -> str:
    """Continuation lines indented to the value's column; control characters (escape
    sequences a model might put in a field) shown as `�`, never sent to the terminal."""
    lines = [CONTROL.sub("�", line) for line in value.splitlines()]
    return ("\n" + " " * width).join(lines or [""])


def _clip(text: str, width: int = 96) -> str:
    """One line of what the graph added, cut to the terminal's width."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def package_lines(request: dict[str, Any], profiles: ProfileRegistry) -> list[str]:
    """The package as the reviewer reads it, one field per line, numbered for editing."""
    specialist = str(request.get("specialist_profile", ""))
    caller = agent_label(str(request.get("from_agent", "")), profiles)
    target = agent_label(specialist, profiles)
    lines = [f"📋 Handover for your review: {caller} → {target}"]
    column = 24

    def field(number: str, name: str, value: str) -> None:
        head = f"   {number:>2} {name}".ljust(column - 1) + " "
        lines.append(head + _indent(value, column))

    for i, (name, key, kind) in enumerate(FIELDS, 1):
        value = request.get(key)
        if key == "specialist_profile":
            shown = f"{target} ({specialist})" if target != f"[{specialist}]" else specialist
        elif kind == "list":
            items = [str(item) for item in value or []]
            shown = "\n".join(f"• {item}" for item in items) if items else "(none)"
        else:
            shown = str(value) if value not in (None, "") else "(none)"
        field(str(i), name, shown)
    field(
        "",
        "tokens",
        f"{request.get('estimated_tokens', '?')} of {request.get('max_context_tokens', '?')}",
    )
    ledger = [_clip(str(line).removeprefix("- ")) for line in request.get("ledger") or []]
    if request.get("ledger_omitted"):
        ledger.append(f"(+{request['ledger_omitted']} more; stage 2 has them)")
    if ledger:
        field("", "ledger (added)", "\n".join(f"• {line}" for line in ledger))
    earlier = [_clip(str(turn)) for turn in request.get("earlier_turns") or []]
    if earlier:
        field("", "earlier turns", "\n".join(f"• {turn}" for turn in earlier))
    for warning in request.get("warnings") or []:
        lines.append(f"   ⚠️  {warning}")
    if request.get("error"):
        lines.append(f"   ❌ {request['error']}")
    return lines


def consult_lines(request: dict[str, Any], profiles: ProfileRegistry) -> list[str]:
    """A consult's entries as the reviewer reads them: whom, what, and the package's tokens."""
    caller = agent_label(str(request.get("from_agent", "")), profiles)
    lines = [f"📋 Consult for your review: {caller} asks"]
    for entry in request.get("consults") or []:
        target = agent_label(str(entry.get("specialist_profile", "")), profiles)
        lines.append(
            f"   {entry.get('index', '?')}. {target}: "
            + _indent(str(entry.get("question", "")), 6)
            + f" ({entry.get('estimated_tokens', '?')} tokens)"
        )
    if request.get("error"):
        lines.append(f"   ❌ {request['error']}")
    return lines
