"""The `handover_to_specialist` tool: validate, build the stage-1 package, append the briefing.

`perform_handover` is the core the tool and the graph's handover node share. It
never raises: every failure is a string starting `ERROR:` in the seed's
wording, and a failed call leaves no file or folder behind.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.tools import StructuredTool

from ...specialists import PROFILES, persona_marker, unknown_profile_message
from ...state import RETURN_CONDITIONS, TokenCounter, token_counter
from ..briefing.writer import (
    BriefingError,
    append_briefing,
    briefing_filename,
    briefing_header,
    briefing_path,
    now_utc,
    render_entry,
    slugify_topic,
)
from .package import build_stage1_package

DEFAULTS: dict[str, Any] = {
    "summary": "",
    "recent_turns": None,
    "decisions": None,
    "artifacts": None,
    "return_condition": "user_request",
    "handover_reason": "",
    "max_context_tokens": 3000,
    "include_recent_turns": 5,
}
ARGUMENTS = (
    "specialist_profile",
    "topic",
    "summary",
    "recent_turns",
    "decisions",
    "artifacts",
    "return_condition",
    "handover_reason",
    "project_root",
    "max_context_tokens",
    "include_recent_turns",
)
PACKAGE_KEYS = (
    "specialist",
    "topic",
    "summary",
    "briefing_file",
    "estimated_tokens",
    "max_context_tokens",
    "oversize_warning",
)


class HandoverRefused(Exception):
    """Internal: carries an `ERROR: ...` text out of validation."""


@dataclass
class HandoverOutcome:
    """A successful handover: the seed's return JSON plus what the graph keeps."""

    result: dict[str, Any]
    package: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """The tool's answer: the JSON, then a `WARNING:` / `NOTE:` line each."""
        return "\n".join([json.dumps(self.result, ensure_ascii=False), *self.warnings])


def _text_arg(name: str, value: Any, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise HandoverRefused(
            f"ERROR: {name} must be a string, got {type(value).__name__} {value!r:.60}"
        )
    if required and not value.strip():
        raise HandoverRefused(f"ERROR: {name} is required")
    return value


def _list_arg(name: str, value: Any, keep_last: int | None = None) -> list[str]:
    """A list of strings; with `keep_last`, only its last items are kept (and checked).

    Trimming before checking keeps the cost flat when a caller passes the whole
    conversation as recent_turns: the dropped turns are never looked at.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise HandoverRefused(
            f"ERROR: {name} must be a list of strings, got {type(value).__name__}"
        )
    start = 0 if keep_last is None else max(len(value) - keep_last, 0)
    kept = value[start:] if keep_last is None or keep_last > 0 else []
    for offset, item in enumerate(kept):
        if not isinstance(item, str):
            raise HandoverRefused(
                f"ERROR: {name}[{start + offset}] must be a string, got {type(item).__name__}"
            )
    return list(kept)


def _int_arg(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HandoverRefused(
            f"ERROR: {name} must be an integer, got {type(value).__name__} {value!r:.60}"
        )
    return value


def _validate(args: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(args) - set(ARGUMENTS))
    if unknown:
        raise HandoverRefused(
            f"ERROR: unknown argument(s) {', '.join(unknown)}; "
            f"handover_to_specialist takes: {', '.join(ARGUMENTS)}"
        )
    merged = {**DEFAULTS, **{k: v for k, v in args.items() if v is not None}}
    profile = _text_arg("specialist_profile", args.get("specialist_profile"), required=True)
    profile = profile.strip()
    if profile not in PROFILES:
        raise HandoverRefused(unknown_profile_message(profile))
    topic = _text_arg("topic", args.get("topic"), required=True)
    slug = slugify_topic(topic)
    if not slug:
        raise HandoverRefused(
            f"ERROR: topic {topic[:60]!r} has no usable characters; "
            "use a short slug of letters, digits and dashes such as 'landing-page-hero'"
        )
    root = _text_arg("project_root", args.get("project_root"), required=True)
    if "\x00" in root:
        raise HandoverRefused("ERROR: project_root must not contain a NUL byte")
    if not os.path.isabs(root):
        raise HandoverRefused(f"ERROR: project_root must be absolute (got {root!r})")
    root = os.path.normpath(root)
    if not os.path.isdir(root):
        raise HandoverRefused(f"ERROR: project_root {root!r} does not exist or is not a directory")
    max_tokens = _int_arg("max_context_tokens", merged["max_context_tokens"])
    if max_tokens <= 0:
        raise HandoverRefused(f"ERROR: max_context_tokens must be positive (got {max_tokens})")
    include = _int_arg("include_recent_turns", merged["include_recent_turns"])
    if include < 0:
        raise HandoverRefused(f"ERROR: include_recent_turns must be >= 0 (got {include})")
    # an empty condition means the default, as an omitted one does
    condition = _text_arg("return_condition", merged["return_condition"]).strip() or "user_request"
    if condition not in RETURN_CONDITIONS:
        raise HandoverRefused(
            f"ERROR: invalid return_condition {condition!r}; "
            f"valid conditions: {', '.join(RETURN_CONDITIONS)}"
        )
    return {
        "specialist": profile,
        "topic": slug,
        "summary": _text_arg("summary", merged["summary"]).strip(),
        "recent_turns": _list_arg("recent_turns", merged["recent_turns"], keep_last=include),
        "decisions": _list_arg("decisions", merged["decisions"]),
        "artifacts": _list_arg("artifacts", merged["artifacts"]),
        "return_condition": condition,
        "reason": _text_arg("handover_reason", merged["handover_reason"]).strip(),
        "project_root": root,
        "max_context_tokens": max_tokens,
        "include_recent_turns": include,
    }


def content_handover_id(values: dict[str, Any], when: datetime) -> str:
    """A stable id from the package's content and date (used when no tool-call id is given)."""
    canonical = json.dumps(
        {k: values[k] for k in sorted(values) if k != "project_root"}, sort_keys=True
    )
    digest = hashlib.sha256(f"{when.astimezone(UTC):%Y-%m-%d}\n{canonical}".encode()).hexdigest()
    return f"h-{digest[:16]}"


def perform_handover(
    args: dict[str, Any],
    *,
    handover_id: str | None = None,
    from_agent: str = "",
    counter: TokenCounter | None = None,
    when: datetime | None = None,
) -> HandoverOutcome | str:
    """Run one handover; return the outcome, or an `ERROR: ...` string. Never raises."""
    try:
        values = _validate(args)
        when = when or now_utc()
        counter = counter or token_counter()
        filename = briefing_filename(values["specialist"], values["topic"], when)
        path = briefing_path(values["project_root"], values["specialist"], values["topic"], when)
        handover_id = handover_id or content_handover_id(values, when)
        package = build_stage1_package(
            specialist=values["specialist"],
            topic=values["topic"],
            summary=values["summary"],
            recent_turns=values["recent_turns"],
            decisions=values["decisions"],
            artifacts=values["artifacts"],
            return_condition=values["return_condition"],
            reason=values["reason"],
            briefing_file=path,
            max_context_tokens=values["max_context_tokens"],
            include_recent_turns=values["include_recent_turns"],
            counter=counter,
            from_agent=from_agent,
        )
        entry = render_entry(
            handover_id=handover_id,
            when=when,
            specialist=values["specialist"],
            from_agent=from_agent,
            reason=values["reason"],
            summary=values["summary"],
            recent_turns=package["recent_turns"],
            decisions=values["decisions"],
            artifacts=values["artifacts"],
            return_condition=values["return_condition"],
            estimated_tokens=package["estimated_tokens"],
            max_context_tokens=values["max_context_tokens"],
        )
        try:
            briefing = append_briefing(
                project_root=values["project_root"],
                filename=filename,
                header=briefing_header(values["specialist"], values["topic"]),
                entry=entry,
                handover_id=handover_id,
            )
        except BriefingError as exc:
            return f"ERROR: {exc}"
        package["handover_id"] = handover_id
        return _outcome(values, package, briefing, handover_id)
    except HandoverRefused as refused:
        return str(refused)
    except Exception as exc:  # the tool never raises; name what went wrong
        return f"ERROR: handover failed unexpectedly: {type(exc).__name__}: {exc}"


def _outcome(values, package, briefing, handover_id) -> HandoverOutcome:  # type: ignore[no-untyped-def]
    specialist = values["specialist"]
    result = {
        "status": "ok",
        "persona_marker": persona_marker(specialist),
        "package": {key: package[key] for key in PACKAGE_KEYS}
        | {"handover_id": handover_id, "return_condition": values["return_condition"]},
        "briefing": {
            "path": briefing.path,
            "existed_before": briefing.existed_before,
            "newly_created": briefing.newly_created,
            "size_bytes": briefing.size_bytes,
            "appended": briefing.appended,
        },
        "next_step": (
            f"Control passes to {specialist} {persona_marker(specialist)} with this package; "
            f"it hands back on return_condition={values['return_condition']}."
        ),
    }
    warnings = []
    if package["oversize_warning"]:
        warnings.append(
            f"WARNING: package is {package['estimated_tokens']} tokens, over "
            f"max_context_tokens={values['max_context_tokens']}; consider a shorter summary "
            "or fewer recent turns."
        )
    warnings.extend(package["notes"])
    if package["notes"]:
        result["notes"] = package["notes"]
    return HandoverOutcome(result=result, package=package, warnings=warnings)


def handover_to_specialist_text(*args: Any, **kwargs: Any) -> str:
    """The tool's function: the JSON answer (with WARNING/NOTE lines) or an ERROR string."""
    if args:
        if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            kwargs = dict(args[0])
        else:
            return "ERROR: handover_to_specialist takes keyword arguments (a JSON object)"
    outcome = perform_handover(kwargs)
    return outcome if isinstance(outcome, str) else outcome.to_text()


def _profile_list() -> str:
    return "; ".join(f"{name}: {p.description}" for name, p in PROFILES.items())


TOOL_DESCRIPTION = (
    "Hand the conversation over to a named specialist with a small, token-bounded stage-1 "
    "package (summary + last N turns + decisions + artifacts) and append it to the "
    "specialist's briefing file <project_root>/.a0proj/handover/<specialist>-<topic>-<date>.md. "
    "Returns JSON (status, persona_marker, package, briefing, next_step) or an 'ERROR: ...' text."
)

ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "specialist_profile": {
            "type": "string",
            "description": "Profile to hand over to. Available profiles: " + _profile_list(),
        },
        "topic": {"type": "string", "description": "Short slug, used in the briefing file name."},
        "summary": {
            "type": "string",
            "description": "Curated summary of the older turns (at most ~300 tokens).",
        },
        "recent_turns": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Verbatim last turns; trimmed to include_recent_turns.",
        },
        "decisions": {"type": "array", "items": {"type": "string"}},
        "artifacts": {
            "type": "array",
            "items": {"type": "string"},
            "description": "File paths or other references.",
        },
        "return_condition": {
            "type": "string",
            "enum": list(RETURN_CONDITIONS),
            "description": "When the specialist hands back. Default user_request.",
        },
        "handover_reason": {"type": "string", "description": "Logged in the briefing."},
        "project_root": {"type": "string", "description": "Absolute path of the project root."},
        "max_context_tokens": {"type": "integer", "description": "Default 3000."},
        "include_recent_turns": {"type": "integer", "description": "Default 5."},
    },
    "required": ["specialist_profile", "topic", "project_root"],
}

handover_to_specialist = StructuredTool(
    name="handover_to_specialist",
    description=TOOL_DESCRIPTION,
    args_schema=ARGS_SCHEMA,
    func=handover_to_specialist_text,
)
"""The LangChain tool. `.invoke({...})` returns the JSON string or an `ERROR: ...` string."""
