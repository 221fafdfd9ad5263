"""The arguments of `consult_specialists`, defined once: its JSON schema and checks derive here.

`ConsultArguments` is the single definition: a list `consults` of 2 to 4
`{specialist_profile, question}` entries, and the context every entry shares
(`topic`, `summary`, `decisions`, `artifacts`, described as the handover's own).
`read_consult` checks a call's arguments: a problem with the call as a whole
(not an object, not a list, too few or too many entries, a shared field of the
wrong type) is one `ERROR: ...` for the call; a problem with one entry (an
unknown profile, with a did-you-mean; the orchestrator itself; a profile asked
twice; no question) is an `ERROR: ...` for that entry only, and the others go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry
from ...state import token_counter
from ...state.defaults import CONSULT_MAX_ENTRIES, CONSULT_MIN_ENTRIES, MAX_QUESTION_TOKENS
from ..briefing.writer import slugify_topic

DEFAULT_TOPIC = "consult"


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
    """One entry of a consult: whom to ask, and what."""

    model_config = ConfigDict(extra="forbid")

    specialist_profile: str = Field(description="The agent to ask.")
    question: str = Field(
        description="One self-contained question (it sees the package, not the whole conversation)."
    )


class ConsultArguments(BaseModel):
    """The arguments of `consult_specialists` (order, types, defaults, descriptions)."""

    model_config = ConfigDict(extra="forbid")

    consults: list[ConsultQuestion] = Field(
        min_length=CONSULT_MIN_ENTRIES,
        max_length=CONSULT_MAX_ENTRIES,
        description=f"{CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} entries, one per agent.",
    )
    topic: str = Field(DEFAULT_TOPIC, description="As for handover_to_specialist.")
    summary: str = Field("", description="As for handover_to_specialist.")
    decisions: list[str] = Field(default_factory=list, description="As for handover_to_specialist.")
    artifacts: list[str] = Field(default_factory=list, description="As for handover_to_specialist.")


CONSULT_FIELDS = ConsultArguments.model_fields
ENTRY_FIELDS = ConsultQuestion.model_fields
SHARED = tuple(name for name in CONSULT_FIELDS if name != "consults")
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
        **{k: v for k, v in properties["consults"].items() if k not in ("items",)},
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
    specialist: str
    question: str
    error: str | None = None


@dataclass
class ConsultCall:
    """A consult call's arguments, read: the shared context and the entries."""

    shared: dict[str, Any] = field(default_factory=dict)
    entries: list[ConsultRequest] = field(default_factory=list)


def _shared(args: dict[str, Any]) -> dict[str, Any] | str:
    """The shared fields with their defaults, or the call's `ERROR:`."""
    found: dict[str, Any] = {}
    for name in SHARED:
        value = args.get(name)
        if value is None:
            value = CONSULT_FIELDS[name].get_default(call_default_factory=True)
        if CONSULT_FIELDS[name].annotation is str:
            if not isinstance(value, str):
                return f"ERROR: {name} must be a string, got {type(value).__name__}"
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"ERROR: {name} must be a list of strings"
        found[name] = value
    if not slugify_topic(found["topic"]):
        return (
            f"ERROR: topic {found['topic'][:60]!r} has no usable characters; use a short slug "
            "such as 'checkout-redesign'"
        )
    return found


def _entry(index: int, item: Any, profiles: ProfileRegistry) -> ConsultRequest:
    where = f"consults[{index - 1}]"
    if not isinstance(item, dict):
        return ConsultRequest(
            index,
            "",
            "",
            f"ERROR: {where} must be an object {{specialist_profile, question}}, got "
            f"{type(item).__name__}",
        )
    profile = item.get("specialist_profile")
    question = item.get("question")
    name = profile.strip() if isinstance(profile, str) else ""
    text = bounded_question(question.strip()) if isinstance(question, str) else ""
    unknown = sorted(set(item) - set(ENTRY_FIELDS))
    if unknown:
        error = (
            f"ERROR: {where}: unknown field(s) {', '.join(map(str, unknown))}; an entry takes "
            f"{', '.join(ENTRY_FIELDS)}"
        )
    elif not name:
        error = f"ERROR: {where}: specialist_profile is required (a profile name)"
    elif not text:
        error = f"ERROR: {where}: question is required (what {name} should answer)"
    elif name == ORCHESTRATOR_PROFILE:
        error = "ERROR: the orchestrator cannot consult itself; answer that part yourself."
    elif name not in profiles:
        error = profiles.unknown_profile_message(name)
    else:
        error = None
    return ConsultRequest(index, name, text, error)


def read_consult(args: Any, *, profiles: ProfileRegistry) -> ConsultCall | str:
    """The call's shared context and its entries (each with its own error), or one `ERROR:`
    for the call as a whole."""
    if not isinstance(args, dict):
        return "ERROR: consult_specialists takes a JSON object of arguments"
    unknown = sorted(set(args) - set(CONSULT_FIELDS))
    if unknown:
        return (
            f"ERROR: unknown argument(s) {', '.join(map(str, unknown))}; consult_specialists "
            f"takes: {', '.join(CONSULT_FIELDS)}"
        )
    consults = args.get("consults")
    if not isinstance(consults, list):
        return (
            f"ERROR: consults must be a list of {CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} "
            f"{{specialist_profile, question}} objects, got {type(consults).__name__}"
        )
    if not CONSULT_MIN_ENTRIES <= len(consults) <= CONSULT_MAX_ENTRIES:
        return (
            f"ERROR: consults holds {len(consults)} entr{'y' if len(consults) == 1 else 'ies'}; "
            f"ask {CONSULT_MIN_ENTRIES} to {CONSULT_MAX_ENTRIES} specialists at once (for one, "
            "hand over or answer yourself)"
        )
    shared = _shared(args)
    if isinstance(shared, str):
        return shared
    entries = [_entry(i, item, profiles) for i, item in enumerate(consults, 1)]
    first: dict[str, int] = {}
    for entry in entries:
        if entry.error is not None:
            continue
        if entry.specialist in first:
            entry.error = (
                f"ERROR: {entry.specialist} is asked twice in this consult (entries "
                f"{first[entry.specialist]} and {entry.index}); put both questions in one entry."
            )
        else:
            first[entry.specialist] = entry.index
    return ConsultCall(shared=shared, entries=entries)
