"""The arguments of `consult_specialists`, defined once: its JSON schema and checks derive here.

`ConsultArguments` is the single definition: a list `consults` of 2 to 4
`{specialist_profile, question}` entries (each a `ConsultQuestion`), and the context every
entry shares (`topic`, `summary`, `decisions`, `artifacts`, described as the handover's
own). `read_consult` validates a call with them: a problem with the call as a whole (not
an object, not a list, too few or too many entries, a shared field of the wrong type) is
one `ERROR: ...` for the call; a problem with one entry (an unknown profile, with a
did-you-mean; the orchestrator itself; a profile asked twice; no question) is an
`ERROR: ...` for that entry only, and the others go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry
from ...state import token_counter
from ...state.defaults import CONSULT_MAX_ENTRIES, CONSULT_MIN_ENTRIES, MAX_QUESTION_TOKENS
from ...state.validation import error_line, refusal
from ..tools.names import CONSULT
from .arguments import read_raw, slug_of


def bounded_question(text: str) -> str:
    """A consult question within `MAX_QUESTION_TOKENS`, cut with a visible marker: it is
    stored in the consult's state, its briefing entry, the trail and the tool's answer."""
    text = text[: MAX_QUESTION_TOKENS * 16]  # far over the cap: no need to count it all
    counter = token_counter()
    if not counter.exceeds(text, MAX_QUESTION_TOKENS):
        return text
    return counter.prefix(text, MAX_QUESTION_TOKENS).rstrip() + (
        f" … [question cut at {MAX_QUESTION_TOKENS} tokens]"
    )


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
        profiles: ProfileRegistry = (info.context or {})["profiles"]
        if name == ORCHESTRATOR_PROFILE:
            raise refusal("the orchestrator cannot consult itself; answer that part yourself.")
        if name not in profiles:
            raise refusal(profiles.unknown_profile_message(name).removeprefix("ERROR: "))
        return name

    @field_validator("question")
    @classmethod
    def _bounded(cls, question: str) -> str:
        return bounded_question(question)


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


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "title"}


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
        return ConsultRequest(index, name, bounded_question(question), error)
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
        if entry.error is not None:
            continue
        if entry.specialist_profile in first:
            entry.error = (
                f"ERROR: {entry.specialist_profile} is asked twice in this consult (entries "
                f"{first[entry.specialist_profile]} and {entry.index}); put both questions in "
                "one entry."
            )
        else:
            first[entry.specialist_profile] = entry.index
    return ConsultCall(shared=call.model_dump(exclude={"consults"}), entries=entries)
