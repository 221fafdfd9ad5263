"""The arguments of `handover_to_specialist` and of `consult_specialists`, each defined once:
their JSON schemas, defaults and validation derive here.

`HandoverArguments` is the single definition and its own validation. The standalone
tool's schema (every argument) reads its fields, and so does `transfer_arguments`, the
model an agent's `handover_to_specialist` is given inside the graph: without the
arguments the graph supplies itself (recent turns, project root and the budgets, so a
model never copies text or invents paths), its target a `Literal` of the other profiles,
so the agent's `ToolNode` validates the call. Every mistake comes back as one `ERROR: ...`
line an agent can act on (`state/validation.py` words it). Every text argument and every
(kept) list item must be encodable as UTF-8: a lone surrogate is refused here, before any
file or folder is created.

`ConsultArguments` is the consult's: a list `consults` of 2 to 4
`{specialist_profile, question}` entries (each a `ConsultQuestion`), and the context every
entry shares (`topic`, `summary`, `decisions`, `artifacts`, described as the handover's
own). `read_consult` validates a call with them: a problem with the call as a whole (not
an object, not a list, too few or too many entries, a shared field of the wrong type) is
one `ERROR: ...` for the call; a problem with one entry (an unknown profile, with a
did-you-mean; the orchestrator itself; a profile asked twice; no question) is an
`ERROR: ...` for that entry only, and the others go on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
from ...state import token_counter
from ...state.defaults import (
    CONSULT_MAX_ENTRIES,
    CONSULT_MIN_ENTRIES,
    INCLUDE_RECENT_TURNS,
    MAX_CONTEXT_TOKENS,
    MAX_QUESTION_TOKENS,
)
from ...state.validation import error_line, refusal
from ..briefing.writer import slugify_topic
from ..tools.names import CONSULT, HANDOVER

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


def capped(text: str, most: int, what: str = "") -> str:
    """`text` within `most` tokens, cut with a visible marker (` … [<what>cut at N tokens]`)."""
    text = text[: most * 16]  # far over the cap: no need to count it all
    counter = token_counter()
    if not counter.exceeds(text, most):
        return text
    return f"{counter.prefix(text, most).rstrip()} … [{what}cut at {most} tokens]"


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


def _known_profile(name: str, info: ValidationInfo) -> str:
    """A profile of those validation is given (`context["profiles"]`), or a refusal with a
    did-you-mean."""
    profiles: ProfileRegistry = (info.context or {})["profiles"]
    if name not in profiles:
        raise refusal(profiles.unknown_profile_message(name).removeprefix("ERROR: "))
    return name


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

    _known = field_validator("specialist_profile")(_known_profile)

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

    @field_validator("max_context_tokens", "include_recent_turns")
    @classmethod
    def _counts(cls, n: int, info: ValidationInfo) -> int:
        if info.field_name == "max_context_tokens" and n <= 0:
            raise refusal(f"max_context_tokens must be positive (got {n})")
        if n < 0:
            raise refusal(f"include_recent_turns must be >= 0 (got {n})")
        return n

    @model_validator(mode="after")
    def _kept_turns(self) -> HandoverArguments:
        kept = self.include_recent_turns
        self.recent_turns = self.recent_turns[-kept:] if kept else []
        return self


FIELDS = HandoverArguments.model_fields


MODEL_ARGUMENTS = tuple(name for name, f in FIELDS.items() if f.json_schema_extra != GRAPH_SUPPLIED)
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


def _plain(schema: dict[str, Any], *left_out: str) -> dict[str, Any]:
    """A property's JSON schema without its title (and the `left_out` keys)."""
    return {k: v for k, v in schema.items() if k not in ("title", *left_out)}


def tool_arguments_schema(profiles: ProfileRegistry) -> dict[str, Any]:
    """JSON schema of the standalone tool: every argument; the caller supplies all of them."""
    full = HandoverArguments.model_json_schema()["properties"]
    properties = {
        name: _plain(prop, *GRAPH_SUPPLIED, *MODEL_REQUIRED) for name, prop in full.items()
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
        if FIELDS[name].json_schema_extra == MODEL_REQUIRED
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


# --- consult_specialists ----------------------------------------------------------------


class ConsultQuestion(BaseModel):
    """One entry of a consult: whom to ask (one of the `profiles` validation is given), and what."""

    model_config = ConfigDict(extra="forbid", strict=True, title="an entry")

    specialist_profile: str = Field(description="The agent to ask.")
    question: str = Field(
        description="One self-contained question (it sees the package, not the whole conversation)."
    )

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        return read_raw(data, ("specialist_profile", "question"))

    @field_validator("specialist_profile")
    @classmethod
    def _askable(cls, name: str, info: ValidationInfo) -> str:
        if name == ORCHESTRATOR_PROFILE:
            raise refusal("the orchestrator cannot consult itself; answer that part yourself.")
        return _known_profile(name, info)

    @field_validator("question")
    @classmethod
    def _bounded(cls, question: str) -> str:
        return capped(question, MAX_QUESTION_TOKENS, "question ")


class ConsultArguments(BaseModel):
    """The arguments of `consult_specialists` (order, types, defaults, descriptions)."""

    model_config = ConfigDict(extra="forbid", strict=True, title=CONSULT)

    consults: list[Any] = Field(
        min_length=CONSULT_MIN_ENTRIES,
        max_length=CONSULT_MAX_ENTRIES,
        description=f"{CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} entries, one per agent.",
    )
    topic: str = Field("consult", description="As for handover_to_specialist.")
    summary: str = Field("", description="As for handover_to_specialist.")
    decisions: list[str] = Field(default_factory=list, description="As for handover_to_specialist.")
    artifacts: list[str] = Field(default_factory=list, description="As for handover_to_specialist.")

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        """A null shared field means its default; `consults` missing or null is no list."""
        return (
            {**read_raw(data), "consults": data.get("consults")} if isinstance(data, dict) else data
        )

    @field_validator("consults", mode="before")
    @classmethod
    def _entries(cls, consults: Any) -> Any:
        """The entries are validated one by one (`ConsultQuestion`), each with its own error."""
        if not isinstance(consults, list):
            raise refusal(
                f"consults must be a list of {CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} "
                f"{{specialist_profile, question}} objects, got {type(consults).__name__}"
            )
        if not CONSULT_MIN_ENTRIES <= len(consults) <= CONSULT_MAX_ENTRIES:
            raise refusal(
                f"consults holds {len(consults)} entr{'y' if len(consults) == 1 else 'ies'}; "
                f"ask {CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} specialists at once (for "
                "one, hand over or answer yourself)"
            )
        return consults

    @field_validator("topic")
    @classmethod
    def _topic(cls, topic: str) -> str:
        slug_of(topic)
        return topic  # the handover's own checks slug it, after redacting it


ENTRY_FIELDS = ConsultQuestion.model_fields
SHARED = tuple(name for name in ConsultArguments.model_fields if name != "consults")
"""The fields every entry of one call shares: they go into each entry's package."""


def consult_arguments_schema(targets: list[str]) -> dict[str, Any]:
    """The JSON schema a model sees: the entries inline (no `$ref`), an enum of profiles."""
    full = ConsultArguments.model_json_schema()
    entry = ConsultQuestion.model_json_schema()
    entry_props = {name: _plain(prop) for name, prop in entry["properties"].items()}
    entry_props["specialist_profile"]["enum"] = list(targets)
    properties = {name: _plain(prop) for name, prop in full["properties"].items()}
    properties["consults"] = {
        **{k: v for k, v in properties["consults"].items() if k != "items"},
        "items": {
            "type": "object",
            "properties": entry_props,
            "required": list(entry["required"]),
            "additionalProperties": False,
        },
    }
    return {"type": "object", "properties": properties, "required": ["consults"]}


@dataclass
class ConsultRequest:
    """One entry as read: its place (from 1), whom, what, and its `ERROR:` if it cannot go."""

    index: int
    specialist_profile: str
    question: str
    error: str | None = None


@dataclass
class ConsultCall:
    """A consult call's arguments, read: the shared context and the entries."""

    shared: dict[str, Any] = field(default_factory=dict)
    entries: list[ConsultRequest] = field(default_factory=list)


def _entry(index: int, item: Any, profiles: ProfileRegistry) -> ConsultRequest:
    try:
        asked = ConsultQuestion.model_validate(item, context={"profiles": profiles})
    except ValidationError as exc:
        error = error_line(exc, ConsultQuestion, at=f"consults[{index - 1}]", noun="field")
        shown = read_raw(item, tuple(ENTRY_FIELDS)) if isinstance(item, dict) else {}
        name, question = (v if isinstance(v := shown.get(k), str) else "" for k in ENTRY_FIELDS)
        return ConsultRequest(
            index, name, capped(question, MAX_QUESTION_TOKENS, "question "), error
        )
    return ConsultRequest(index, asked.specialist_profile, asked.question)


def read_consult(args: Any, *, profiles: ProfileRegistry) -> ConsultCall | str:
    """The call's shared context and its entries (each with its own error), or one `ERROR:`
    for the call as a whole."""
    try:
        call = ConsultArguments.model_validate(args)
    except ValidationError as exc:
        return error_line(exc, ConsultArguments)
    entries = [_entry(i, item, profiles) for i, item in enumerate(call.consults, 1)]
    first: dict[str, int] = {}
    for entry in entries:
        if entry.error is None:
            earlier = first.setdefault(entry.specialist_profile, entry.index)
            if earlier != entry.index:
                entry.error = (
                    f"ERROR: {entry.specialist_profile} is asked twice in this consult (entries "
                    f"{earlier} and {entry.index}); put both questions in one entry."
                )
    return ConsultCall(shared=call.model_dump(exclude={"consults"}), entries=entries)
