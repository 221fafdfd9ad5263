"""The handover's arguments, defined once: the JSON schemas, defaults and validation derive here.

`HandoverArguments` is the single definition. The standalone tool's schema
(every argument), the graph's model-facing schema (without the arguments the
graph supplies itself: recent turns, project root and the budgets, so a model
never copies text or invents paths), the defaults and the validation all read
its fields. Validation is our own rather than pydantic's so that every mistake
comes back as one exact `ERROR: ...` sentence an agent can act on. Every text
argument and every (kept) list item must be encodable as UTF-8: a lone surrogate
is refused here, before any file or folder is created.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ...specialists import ProfileRegistry
from ...state import RETURN_CONDITIONS
from ...state.defaults import INCLUDE_RECENT_TURNS, MAX_CONTEXT_TOKENS
from ..briefing.writer import slugify_topic

GRAPH_SUPPLIED: dict[str, JsonValue] = {"supplied_by_graph": True}
MODEL_REQUIRED: dict[str, JsonValue] = {"model_required": True}


class HandoverArguments(BaseModel):
    """The arguments of `handover_to_specialist` (order, types, defaults, descriptions)."""

    model_config = ConfigDict(extra="forbid")

    specialist_profile: str = Field(description="The agent to hand over to.")
    topic: str = Field(description="Short slug naming the work, e.g. 'landing-page-hero'.")
    summary: str = Field(
        "",
        description="The conversation so far, condensed to what the specialist needs "
        "(at most ~300 tokens).",
        json_schema_extra=MODEL_REQUIRED,
    )
    recent_turns: list[str] = Field(
        default_factory=list,
        description="Verbatim last turns, oldest first; trimmed to include_recent_turns.",
        json_schema_extra=GRAPH_SUPPLIED,
    )
    decisions: list[str] = Field(
        default_factory=list,
        description="What is already agreed (stack, scope, constraints), one per item.",
    )
    artifacts: list[str] = Field(
        default_factory=list,
        description="File paths, snippets, links and error messages the specialist needs.",
    )
    return_condition: Literal["user_request", "task_complete", "after_reply"] = Field(
        "user_request",
        description="When the conversation returns to the orchestrator: user_request, when the "
        "user asks; task_complete, when the work is done; after_reply, after one answer.",
    )
    handover_reason: str = Field(
        "",
        description="One sentence: why this agent is the best fit.",
        json_schema_extra=MODEL_REQUIRED,
    )
    project_root: str = Field(
        description="Absolute path of the project root; the briefing goes under .a0proj/.",
        json_schema_extra=GRAPH_SUPPLIED,
    )
    max_context_tokens: int = Field(
        MAX_CONTEXT_TOKENS,
        description="Token budget of the package (a warning when over).",
        json_schema_extra=GRAPH_SUPPLIED,
    )
    include_recent_turns: int = Field(
        INCLUDE_RECENT_TURNS,
        description="How many recent turns the package carries verbatim.",
        json_schema_extra=GRAPH_SUPPLIED,
    )


FIELDS = HandoverArguments.model_fields


def _extra(name: str) -> dict[str, JsonValue]:
    """A field's `json_schema_extra` marks (`supplied_by_graph`, `model_required`)."""
    extra = FIELDS[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


ARGUMENTS: tuple[str, ...] = tuple(FIELDS)
"""Every argument, in the order the tool documents them."""
MODEL_ARGUMENTS: tuple[str, ...] = tuple(
    name for name in FIELDS if not _extra(name).get("supplied_by_graph")
)
"""The arguments a model gives inside the graph; the graph supplies the rest."""


_DEFAULTS: dict[str, Any] = {
    name: field.get_default(call_default_factory=True)
    for name, field in FIELDS.items()
    if not field.is_required()
}
"""The optional arguments' defaults, made once (pydantic inspects a default factory each call)."""


def default_of(name: str) -> Any:
    """The default of an optional argument (a fresh list for list arguments)."""
    return copy.deepcopy(_DEFAULTS[name])


class HandoverRefused(Exception):
    """Carries an `ERROR: ...` text out of validation."""


def _utf8(label: str, value: str) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate), before any file exists."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise HandoverRefused(
            f"ERROR: {label} is not valid text (it holds a lone surrogate at position "
            f"{exc.start}); send UTF-8 text"
        ) from None


def _text(name: str, value: Any, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise HandoverRefused(
            f"ERROR: {name} must be a string, got {type(value).__name__} {value!r:.60}"
        )
    _utf8(name, value)
    if required and not value.strip():
        raise HandoverRefused(f"ERROR: {name} is required")
    return value


def _strings(name: str, value: Any, keep_last: int | None = None) -> list[str]:
    """A list of strings; with `keep_last`, only its last items are kept (and checked).

    Each kept item must be encodable as UTF-8 (no lone surrogate). Trimming
    before checking keeps the cost flat when a caller passes the whole
    conversation as recent_turns: the dropped turns are never looked at (they
    reach no package and no file).
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
        _utf8(f"{name}[{start + offset}]", item)
    return list(kept)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HandoverRefused(
            f"ERROR: {name} must be an integer, got {type(value).__name__} {value!r:.60}"
        )
    return value


def _coerce(name: str, value: Any, *, keep_last: int | None = None) -> Any:
    """Check one argument against its declared type (str, int or list of str)."""
    annotation = FIELDS[name].annotation
    if get_origin(annotation) is list:
        return _strings(name, value, keep_last)
    if annotation is int:
        return _integer(name, value)
    return _text(name, value, required=FIELDS[name].is_required())


def validate_arguments(args: dict[str, Any], profiles: ProfileRegistry) -> dict[str, Any]:
    """The checked, normalised arguments; raise HandoverRefused with the exact ERROR text."""
    unknown = sorted(set(args) - set(ARGUMENTS))
    if unknown:
        raise HandoverRefused(
            f"ERROR: unknown argument(s) {', '.join(unknown)}; "
            f"handover_to_specialist takes: {', '.join(ARGUMENTS)}"
        )
    given = {k: v for k, v in args.items() if v is not None}
    value = {
        name: given.get(name, None if FIELDS[name].is_required() else default_of(name))
        for name in ARGUMENTS
    }
    profile = _coerce("specialist_profile", value["specialist_profile"]).strip()
    if profile not in profiles:
        raise HandoverRefused(profiles.unknown_profile_message(profile))
    topic = _coerce("topic", value["topic"])
    slug = slugify_topic(topic)
    if not slug:
        raise HandoverRefused(
            f"ERROR: topic {topic[:60]!r} has no usable characters; "
            "use a short slug of letters, digits and dashes such as 'landing-page-hero'"
        )
    root = _checked_root(_coerce("project_root", value["project_root"]))
    max_tokens = _coerce("max_context_tokens", value["max_context_tokens"])
    if max_tokens <= 0:
        raise HandoverRefused(f"ERROR: max_context_tokens must be positive (got {max_tokens})")
    include = _coerce("include_recent_turns", value["include_recent_turns"])
    if include < 0:
        raise HandoverRefused(f"ERROR: include_recent_turns must be >= 0 (got {include})")
    # an empty condition means the default, as an omitted one does
    condition = _text("return_condition", value["return_condition"]).strip()
    condition = condition or default_of("return_condition")
    if condition not in get_args(FIELDS["return_condition"].annotation):
        raise HandoverRefused(
            f"ERROR: invalid return_condition {condition!r}; "
            f"valid conditions: {', '.join(RETURN_CONDITIONS)}"
        )
    return {
        "specialist": profile,
        "topic": slug,
        "summary": _coerce("summary", value["summary"]).strip(),
        "recent_turns": _coerce("recent_turns", value["recent_turns"], keep_last=include),
        "decisions": _coerce("decisions", value["decisions"]),
        "artifacts": _coerce("artifacts", value["artifacts"]),
        "return_condition": condition,
        "reason": _coerce("handover_reason", value["handover_reason"]).strip(),
        "project_root": root,
        "max_context_tokens": max_tokens,
        "include_recent_turns": include,
    }


def _checked_root(root: str) -> str:
    if "\x00" in root:
        raise HandoverRefused("ERROR: project_root must not contain a NUL byte")
    if not os.path.isabs(root):
        raise HandoverRefused(f"ERROR: project_root must be absolute (got {root!r})")
    root = os.path.normpath(root)
    if not os.path.isdir(root):
        raise HandoverRefused(f"ERROR: project_root {root!r} does not exist or is not a directory")
    return root


def _schema(names: tuple[str, ...], required: list[str]) -> dict[str, Any]:
    full = HandoverArguments.model_json_schema()
    properties = {}
    for name in names:
        prop = {
            k: v
            for k, v in full["properties"][name].items()
            if k not in ("title", "supplied_by_graph", "model_required")
        }
        properties[name] = prop
    return {"type": "object", "properties": properties, "required": required}


def tool_arguments_schema(profiles: ProfileRegistry) -> dict[str, Any]:
    """JSON schema of the standalone tool: every argument; the caller supplies all of them."""
    schema = _schema(ARGUMENTS, [n for n, f in FIELDS.items() if f.is_required()])
    listing = "; ".join(f"{name}: {p.description}" for name, p in profiles.items())
    schema["properties"]["specialist_profile"]["description"] = (
        f"Profile to hand over to. Available profiles: {listing}"
    )
    return schema


def model_arguments_schema(targets: list[str]) -> dict[str, Any]:
    """JSON schema a model sees inside the graph: no graph-supplied arguments; an enum of targets."""
    required = [
        n for n in MODEL_ARGUMENTS if FIELDS[n].is_required() or _extra(n).get("model_required")
    ]
    schema = _schema(MODEL_ARGUMENTS, required)
    schema["properties"]["specialist_profile"]["enum"] = list(targets)
    return schema
