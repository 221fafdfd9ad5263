"""The handover's arguments, defined once: the JSON schemas, defaults and validation derive here.

`HandoverArguments` is the single definition and its own validation. The standalone
tool's schema (every argument) reads its fields, and so does `transfer_arguments`, the
model an agent's `handover_to_specialist` is given inside the graph: without the
arguments the graph supplies itself (recent turns, project root and the budgets, so a
model never copies text or invents paths), its target a `Literal` of the other profiles,
so the agent's `ToolNode` validates the call. Every mistake comes back as one `ERROR: ...`
line an agent can act on (`state/validation.py` words it). Every text argument and every
(kept) list item must be encodable as UTF-8: a lone surrogate is refused here, before any
file or folder is created.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from langchain_core.tools import InjectedToolArg
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    create_model,
    field_validator,
    model_validator,
)

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry
from ...state.defaults import INCLUDE_RECENT_TURNS, MAX_CONTEXT_TOKENS
from ...state.validation import error_line, refusal
from ..briefing.writer import slugify_topic
from ..tools.names import HANDOVER

GRAPH_SUPPLIED: dict[str, JsonValue] = {"supplied_by_graph": True}
MODEL_REQUIRED: dict[str, JsonValue] = {"model_required": True}
STRIPPED = ("specialist_profile", "summary", "return_condition", "handover_reason")


def read_raw(data: Any, stripped: tuple[str, ...] = ()) -> Any:
    """Arguments as a model reads them: None or blank text means omitted (the default, or
    "is required"); the `stripped` texts lose their surrounding whitespace."""
    if not isinstance(data, dict):
        return data
    read = {k: v.strip() if k in stripped and isinstance(v, str) else v for k, v in data.items()}
    return {
        k: v
        for k, v in read.items()
        if v is not None and not (isinstance(v, str) and not v.strip())
    }


def _utf8(label: str, value: str) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate), before any file exists."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise refusal(
            f"{label} is not valid text (it holds a lone surrogate at position {exc.start}); "
            "send UTF-8 text"
        ) from None


def slug_of(topic: str) -> str:
    """The topic's file-name slug, or a refusal when nothing usable is left."""
    slug = slugify_topic(topic)
    if not slug:
        raise refusal(
            f"topic {topic[:60]!r} has no usable characters; "
            "use a short slug of letters, digits and dashes such as 'landing-page-hero'"
        )
    return slug


def to_itself(profile: str) -> str:
    """The refusal of a handover to the caller's own profile."""
    if profile == ORCHESTRATOR_PROFILE:
        return "ERROR: the orchestrator cannot hand over to itself; answer the user directly."
    return f"ERROR: {profile} cannot hand over to itself; pick another specialist."


class _Checked(BaseModel):
    """The checks of the handover's arguments, wherever they are validated (by field name)."""

    model_config = ConfigDict(strict=True, title=HANDOVER)

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        data = read_raw(data, STRIPPED)
        if isinstance(data, dict):
            for name in ("summary", "handover_reason"):  # required of a model, "" when left out
                data.setdefault(name, "")
            turns = data.get("recent_turns")
            keep = data.get("include_recent_turns", INCLUDE_RECENT_TURNS)
            if isinstance(turns, list) and type(keep) is int and keep >= 0:
                # turns outside the kept window reach no package and no file: never looked at
                # (blanked, so the kept ones keep their index; cut once the rest validates)
                start = max(len(turns) - keep, 0)
                data["recent_turns"] = [""] * start + turns[start:]
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str):
            _utf8(str(info.field_name), value)
        return value

    @field_validator("recent_turns", "decisions", "artifacts", check_fields=False)
    @classmethod
    def _items(cls, items: list[str], info: ValidationInfo) -> list[str]:
        for index, item in enumerate(items):
            _utf8(f"{info.field_name}[{index}]", item)
        return items

    @field_validator("topic", check_fields=False)
    @classmethod
    def _topic(cls, topic: str) -> str:
        return slug_of(topic)


class HandoverArguments(_Checked):
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

    @field_validator("specialist_profile")
    @classmethod
    def _known(cls, name: str, info: ValidationInfo) -> str:
        profiles: ProfileRegistry = (info.context or {})["profiles"]
        if name not in profiles:
            raise refusal(profiles.unknown_profile_message(name).removeprefix("ERROR: "))
        return name

    @field_validator("project_root")
    @classmethod
    def _root(cls, root: str) -> str:
        if "\x00" in root:
            raise refusal("project_root must not contain a NUL byte")
        if not os.path.isabs(root):
            raise refusal(f"project_root must be absolute (got {root!r})")
        root = os.path.normpath(root)
        if not os.path.isdir(root):
            raise refusal(f"project_root {root!r} does not exist or is not a directory")
        return root

    @field_validator("max_context_tokens")
    @classmethod
    def _positive(cls, tokens: int) -> int:
        if tokens <= 0:
            raise refusal(f"max_context_tokens must be positive (got {tokens})")
        return tokens

    @field_validator("include_recent_turns")
    @classmethod
    def _not_negative(cls, turns: int) -> int:
        if turns < 0:
            raise refusal(f"include_recent_turns must be >= 0 (got {turns})")
        return turns

    @model_validator(mode="after")
    def _kept_turns(self) -> HandoverArguments:
        self.recent_turns = self.recent_turns[
            max(len(self.recent_turns) - self.include_recent_turns, 0) :
        ]
        return self


FIELDS = HandoverArguments.model_fields


def _extra(name: str) -> dict[str, JsonValue]:
    """A field's `json_schema_extra` marks (`supplied_by_graph`, `model_required`)."""
    extra = FIELDS[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


MODEL_ARGUMENTS: tuple[str, ...] = tuple(
    name for name in FIELDS if not _extra(name).get("supplied_by_graph")
)
"""The arguments a model gives inside the graph; the graph supplies the rest."""


def default_of(name: str) -> Any:
    """The default of an optional argument (a fresh list for list arguments)."""
    return FIELDS[name].get_default(call_default_factory=True)


def validate_arguments(args: Any, profiles: ProfileRegistry) -> dict[str, Any] | str:
    """The checked, normalised arguments by name, or the `ERROR: ...` of the first mistake."""
    try:
        return HandoverArguments.model_validate(args, context={"profiles": profiles}).model_dump()
    except ValidationError as exc:
        return error_line(exc, HandoverArguments)


def tool_arguments_schema(profiles: ProfileRegistry) -> dict[str, Any]:
    """JSON schema of the standalone tool: every argument; the caller supplies all of them."""
    full = HandoverArguments.model_json_schema()["properties"]
    properties = {
        name: {
            k: v for k, v in prop.items() if k not in ("title", *GRAPH_SUPPLIED, *MODEL_REQUIRED)
        }
        for name, prop in full.items()
    }
    listing = "; ".join(f"{name}: {p.description}" for name, p in profiles.items())
    properties["specialist_profile"]["description"] = (
        f"Profile to hand over to. Available profiles: {listing}"
    )
    required = [n for n, f in FIELDS.items() if f.is_required()]
    return {"type": "object", "properties": properties, "required": required}


def transfer_arguments(profiles: ProfileRegistry, caller: str) -> type[BaseModel]:
    """The arguments of `caller`'s `handover_to_specialist` inside the graph: the model's
    arguments (those it must give required; anything else is ignored), the target a
    `Literal` of the other profiles, and the `runtime` the `ToolNode` injects."""

    def target(name: Any, handler: Any) -> Any:
        try:
            return handler(name)
        except ValidationError:
            if not isinstance(name, str):
                raise
            known = to_itself(caller) if name == caller else profiles.unknown_profile_message(name)
            raise refusal(known.removeprefix("ERROR: ")) from None

    fields: dict[str, Any] = {
        name: (FIELDS[name].annotation, Field(description=FIELDS[name].description))
        if _extra(name).get("model_required")
        else (FIELDS[name].annotation, FIELDS[name])
        for name in MODEL_ARGUMENTS
    }
    targets = Literal[tuple(name for name in profiles if name != caller)]  # type: ignore[valid-type]
    fields["specialist_profile"] = (
        Annotated[targets, WrapValidator(target)],
        FIELDS["specialist_profile"],
    )
    fields["runtime"] = (Annotated[Any, InjectedToolArg()], None)
    return create_model(HANDOVER, __base__=_Checked, **fields)
