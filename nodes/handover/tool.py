"""The `handover_to_specialist` tool: validate, build the stage-1 package, append the briefing.

`perform_handover` is the core the tool and the graph's handover node share. It
never raises: every failure is a string starting `ERROR:` that names the
bad value, and a failed call leaves no file or folder behind.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.tools import StructuredTool

from ...specialists import ProfileRegistry, builtin_profiles, persona_marker
from ...state import PUBLIC_PACKAGE_FIELDS, HandoverPackage, TokenCounter, token_counter
from ..briefing.writer import (
    BriefingError,
    append_briefing,
    briefing_filename,
    briefing_header,
    briefing_path,
    now_utc,
    render_entry,
)
from ..ledger.memory import ThreadMemory
from ..redaction import redact, redact_all
from .arguments import tool_arguments_schema, validate_arguments
from .package import build_stage1_package, summary_notes


@dataclass
class HandoverOutcome:
    """A successful handover: the tool's return JSON plus what the graph keeps."""

    result: dict[str, Any]
    package: HandoverPackage
    warnings: list[str] = field(default_factory=list)
    entry: str = ""
    """The briefing entry as written (Markdown)."""
    when: datetime | None = None
    """When the caller asked for the handover (the entry's time)."""

    def to_text(self) -> str:
        """The tool's answer: the JSON, then a `WARNING:` / `NOTE:` line each."""
        return "\n".join([json.dumps(self.result, ensure_ascii=False), *self.warnings])

    def to_line(self, project_root: str | None = None) -> str:
        """The answer the graph stores in the conversation: one line (and any warnings), the
        briefing's path relative to `project_root` (people read it in chat UIs).

        The full package stays in the state (`handover`) and in the briefing file,
        so each handover adds little to the stored history.
        """
        package = self.result["package"]
        path = self.result["briefing"]["path"]
        if project_root and os.path.isabs(path):
            path = os.path.relpath(path, project_root)
        line = (
            f"Handed over to {package['specialist']} {self.result['persona_marker']} "
            f"(handover_id={package['handover_id']}; {package['estimated_tokens']} tokens, "
            f"max {package['max_context_tokens']}; "
            f"return_condition={package['return_condition']}; "
            f"briefing={path})"
        )
        return "\n".join([line, *self.warnings])


def redact_values(values: dict[str, Any]) -> dict[str, int]:
    """Replace secrets in the validated package text in place; return how many of each kind.

    Runs after validation, so only the recent turns the package keeps are read.
    """
    counts: dict[str, int] = {}

    def add(found: dict[str, int]) -> None:
        for kind, n in found.items():
            counts[kind] = counts.get(kind, 0) + n

    for name in ("summary", "handover_reason"):
        result = redact(values[name])
        values[name] = result.text
        add(result.counts)
    for name in ("recent_turns", "decisions", "artifacts"):
        values[name], found = redact_all(values[name])
        add(found)
    return counts


def content_handover_id(values: dict[str, Any], when: datetime) -> str:
    """A stable id from the package's content and date (used when no tool-call id is given)."""
    canonical = json.dumps(
        {k: values[k] for k in sorted(values) if k != "project_root"}, sort_keys=True
    )
    digest = hashlib.sha256(f"{when.astimezone(UTC):%Y-%m-%d}\n{canonical}".encode()).hexdigest()
    return f"h-{digest[:16]}"


@dataclass
class PreparedHandover:
    """A validated, counted handover whose briefing entry is not written yet (review point)."""

    values: dict[str, Any]
    package: HandoverPackage
    entry: str
    redacted: dict[str, int]
    notes: list[str]
    when: datetime
    filename: str

    def warnings(self) -> list[str]:
        """What the tool's answer will add as WARNING / NOTE lines."""
        return _warnings(self.package, self.notes, self.redacted)


def prepare_handover(
    args: dict[str, Any],
    *,
    profiles: ProfileRegistry | None = None,
    handover_id: str | None = None,
    from_agent: str = "",
    counter: TokenCounter | None = None,
    when: datetime | None = None,
    last_time: list[str] | None = None,
    kind: str = "handover",
    memory: ThreadMemory | None = None,
) -> PreparedHandover | str:
    """Validate, redact, build and count the package and its entry; write nothing.
    `last_time`: the specialist's recent outcomes the package recalls (counted in it);
    `memory`: the thread's ledger and turns (inside the graph), fitted into the budget left.

    Returns an `ERROR: ...` string instead of raising. `kind` "consult" marks the entry as
    a consult's.
    """
    try:
        profiles = profiles if profiles is not None else builtin_profiles()
        topic = redact(args["topic"]) if isinstance(args.get("topic"), str) else None
        if topic is not None:  # a secret must not become a file name either
            args = {**args, "topic": topic.text}
        values = validate_arguments(args, profiles)
        if isinstance(values, str):
            return values
        redacted = redact_values(values)
        for kind, n in (topic.counts if topic is not None else {}).items():
            redacted[kind] = redacted.get(kind, 0) + n
        when = when or now_utc()
        counter = counter or token_counter()
        package = build_stage1_package(
            handover_id=handover_id or content_handover_id(values, when),
            specialist=values["specialist_profile"],
            topic=values["topic"],
            summary=values["summary"],
            recent_turns=values["recent_turns"],
            decisions=values["decisions"],
            artifacts=values["artifacts"],
            return_condition=values["return_condition"],
            reason=values["handover_reason"],
            from_agent=from_agent,
            briefing_file=briefing_path(
                values["project_root"], values["specialist_profile"], values["topic"], when
            ),
            max_context_tokens=values["max_context_tokens"],
            include_recent_turns=values["include_recent_turns"],
            counter=counter,
            label=profiles[values["specialist_profile"]].label,
            last_time=last_time,
            memory=memory,
        )
        return PreparedHandover(
            values=values,
            package=package,
            entry=render_entry(package, when=when, redacted=redacted, kind=kind),
            redacted=redacted,
            notes=summary_notes(values["summary"], counter),
            when=when,
            filename=briefing_filename(values["specialist_profile"], values["topic"], when),
        )
    except Exception as exc:  # the tool never raises; name what went wrong
        return f"ERROR: handover failed unexpectedly: {type(exc).__name__}: {exc}"


def commit_handover(prepared: PreparedHandover) -> HandoverOutcome | str:
    """Append the prepared entry to its briefing file; the outcome, or an `ERROR: ...`."""
    values, package = prepared.values, prepared.package
    try:
        briefing = append_briefing(
            project_root=values["project_root"],
            filename=prepared.filename,
            header=briefing_header(values["specialist_profile"], values["topic"]),
            entry=prepared.entry,
            handover_id=package["handover_id"],
        )
    except BriefingError as exc:
        return f"ERROR: {exc}"
    except Exception as exc:  # the tool never raises; name what went wrong
        return f"ERROR: handover failed unexpectedly: {type(exc).__name__}: {exc}"
    specialist = package["specialist"]
    result: dict[str, Any] = {
        "status": "ok",
        "persona_marker": persona_marker(specialist),
        "package": {key: package[key] for key in PUBLIC_PACKAGE_FIELDS},  # type: ignore[literal-required]
        "briefing": {
            "path": briefing.path,
            "existed_before": briefing.existed_before,
            "newly_created": briefing.newly_created,
            "size_bytes": briefing.size_bytes,
            "appended": briefing.appended,
        },
        "next_step": (
            f"Control passes to {specialist} {persona_marker(specialist)} with this package; "
            f"it hands back on return_condition={package['return_condition']}."
        ),
    }
    if prepared.notes:
        result["notes"] = prepared.notes
    return HandoverOutcome(
        result=result,
        package=package,
        warnings=prepared.warnings(),
        entry=prepared.entry,
        when=prepared.when,
    )


def perform_handover(
    args: dict[str, Any],
    *,
    profiles: ProfileRegistry | None = None,
    handover_id: str | None = None,
    from_agent: str = "",
    counter: TokenCounter | None = None,
    when: datetime | None = None,
    last_time: list[str] | None = None,
    memory: ThreadMemory | None = None,
) -> HandoverOutcome | str:
    """Run one handover; return the outcome, or an `ERROR: ...` string. Never raises.

    `profiles` is the allow-list (default: the built-in profiles).
    """
    prepared = prepare_handover(
        args,
        profiles=profiles,
        handover_id=handover_id,
        from_agent=from_agent,
        counter=counter,
        when=when,
        last_time=last_time,
        memory=memory,
    )
    return prepared if isinstance(prepared, str) else commit_handover(prepared)


def _warnings(package: HandoverPackage, notes: list[str], redacted: dict[str, int]) -> list[str]:
    """The WARNING / NOTE lines of a handover: over budget, long summary, redactions."""
    warnings = []
    if package["oversize_warning"]:
        warnings.append(
            f"WARNING: package is {package['estimated_tokens']} tokens, over "
            f"max_context_tokens={package['max_context_tokens']}; consider a shorter summary "
            "or fewer recent turns."
        )
    warnings.extend(notes)
    if redacted:
        total = sum(redacted.values())
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(redacted.items()))
        warnings.append(
            f"NOTE: {total} secret{'s' if total != 1 else ''} redacted from the package and "
            f"the briefing ({kinds})."
        )
    return warnings


def make_handover_tool(profiles: ProfileRegistry | None = None) -> StructuredTool:
    """The standalone LangChain tool over an allow-list (default: the built-in profiles).

    `.invoke({...})` returns the JSON string or an `ERROR: ...` string; it never
    raises on a dict input.
    """
    profiles = profiles if profiles is not None else builtin_profiles()

    def handover_to_specialist(*args: Any, **kwargs: Any) -> str:
        if args:
            if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
                kwargs = dict(args[0])
            else:
                return "ERROR: handover_to_specialist takes keyword arguments (a JSON object)"
        outcome = perform_handover(kwargs, profiles=profiles)
        return outcome if isinstance(outcome, str) else outcome.to_text()

    return StructuredTool(
        name="handover_to_specialist",
        description=TOOL_DESCRIPTION,
        args_schema=tool_arguments_schema(profiles),
        func=handover_to_specialist,
    )


TOOL_DESCRIPTION = (
    "Hand the conversation over to a named specialist with a small, token-bounded stage-1 "
    "package (summary + last N turns + decisions + artifacts) and append it to the "
    "specialist's briefing file <project_root>/.a0proj/handover/<specialist>-<topic>-<date>.md. "
    "Returns JSON (status, persona_marker, package, briefing, next_step) or an 'ERROR: ...' text."
)


def __getattr__(name: str) -> Any:
    """`handover_to_specialist`: the standalone tool over the built-in profiles, made on first use."""
    if name == "handover_to_specialist":
        tool = make_handover_tool()
        globals()[name] = tool
        return tool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
