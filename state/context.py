"""The run context (LangGraph `context_schema`): per-run settings, every field with a default."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    with_config,
)

from . import defaults
from .defaults import LOWER_BOUNDS, UPPER_BOUNDS
from .validation import problem, refusal


def _env_flag(name: str) -> bool:
    """A yes/no setting from the environment (`true`, `1`, `yes`, `on`)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _project_root(root: str) -> str:
    """The project root ("": HANDOVER_PROJECT_ROOT, else the working directory), absolute;
    one spelling per folder: "/a/b/" and "/a/b" name the same project (its memory)."""
    root = root or os.environ.get("HANDOVER_PROJECT_ROOT") or os.getcwd()
    if not os.path.isabs(root):
        raise refusal(f"project_root must be absolute, got {root!r}")
    if not os.path.isdir(root):  # refused before any model call, not at the first handover
        raise refusal(
            f"project_root {root!r} does not exist or is not a folder: create it, or pass "
            "the project's folder (briefings go to <project_root>/.a0proj/handover/)"
        )
    return os.path.normpath(root)


def _model(model: str) -> str:
    """The model ("" or blank: HANDOVER_MODEL, else an OpenAI model with a key, else offline)."""
    if model.strip() or os.environ.get("HANDOVER_MODEL"):
        return model.strip() or os.environ["HANDOVER_MODEL"]
    return "openai:gpt-4o-mini" if os.environ.get("OPENAI_API_KEY") else "offline"


def _setting(default: Any, description: str) -> Any:
    """A context field: its default, and the description the schema (and Studio) shows."""
    return field(default=default, metadata={"description": description})


Positive = Annotated[StrictInt, Field(ge=1)]
"""A count that must be at least 1 (the bounds show in the schema Studio renders)."""


@with_config(ConfigDict(extra="forbid", validate_default=True, revalidate_instances="always"))
@dataclass
class HandoverContext:
    """Per-run settings (LangGraph `context_schema`); every field has a default.

    `project_root` and `model` default to "" meaning "from the environment", so
    the schema Studio shows has a value for every field; validation (`coerce_context`)
    resolves them when the run starts. The annotations are the checks: pydantic
    validates a context against them (`state/validation.py` words a mistake).
    """

    project_root: Annotated[StrictStr, AfterValidator(_project_root)] = _setting(
        "",
        "Absolute project folder; briefings and checkpoints go under <project_root>/.a0proj/. "
        "Default (empty): HANDOVER_PROJECT_ROOT, else the working directory.",
    )
    model: Annotated[StrictStr, AfterValidator(_model)] = _setting(
        "",
        "Chat model for every agent: an init_chat_model string such as 'openai:gpt-4o', or "
        "'offline' for the built-in deterministic model. Default (empty): HANDOVER_MODEL, else an "
        "OpenAI model when OPENAI_API_KEY is set, else 'offline'.",
    )
    max_context_tokens: Positive = _setting(
        defaults.MAX_CONTEXT_TOKENS, "Token budget of a stage-1 package; over it, a warning."
    )
    include_recent_turns: Annotated[StrictInt, Field(ge=0)] = _setting(
        defaults.INCLUDE_RECENT_TURNS, "How many recent turns a package carries verbatim."
    )
    max_handover_depth: Positive = _setting(
        defaults.MAX_HANDOVER_DEPTH, "Longest handover chain before further handovers are refused."
    )
    max_turns: Annotated[StrictInt, Field(ge=1, le=UPPER_BOUNDS["max_turns"])] = _setting(
        defaults.MAX_TURNS, "Model calls one agent may make in a row before it stops."
    )
    full_history_max_tokens: Positive = _setting(
        defaults.FULL_HISTORY_MAX_TOKENS,
        "Cap of request_full_history (stage 2), compacted when over.",
    )
    max_handovers_per_turn: Annotated[
        StrictInt, Field(ge=1, le=UPPER_BOUNDS["max_handovers_per_turn"])
    ] = _setting(
        defaults.MAX_HANDOVERS_PER_TURN,
        "Handovers one user turn may make, returns included; one more is refused as a loop and "
        "the turn ends with an answer.",
    )
    model_attempts: Annotated[StrictInt, Field(ge=1, le=UPPER_BOUNDS["model_attempts"])] = _setting(
        defaults.MODEL_ATTEMPTS,
        "Attempts per model call on transient errors (HTTP 429/5xx, timeouts, connection errors), "
        "with backoff and jitter.",
    )
    review_handovers: StrictBool = field(
        default_factory=lambda: _env_flag("HANDOVER_REVIEW_HANDOVERS"),
        metadata={
            "description": "Pause every handover for a person to approve, edit or reject it "
            "(LangGraph interrupt, LangChain's human-in-the-loop format) before its briefing "
            "entry is written. Default: HANDOVER_REVIEW_HANDOVERS=true in the environment, else "
            "false."
        },
    )
    max_input_tokens: Annotated[StrictInt, Field(ge=LOWER_BOUNDS["max_input_tokens"])] = _setting(
        defaults.MAX_INPUT_TOKENS,
        "The most tokens one input may carry (a larger one is refused, nothing stored) and any "
        "model request may carry, counted over everything sent: system prompt, messages, tool "
        "schemas (older parts of a request are cut to fit). "
        f"At least {LOWER_BOUNDS['max_input_tokens']:,}.",
    )
    consult_answer_max_tokens: Positive = _setting(
        defaults.CONSULT_ANSWER_MAX_TOKENS,
        "Cap of one specialist's answer to a consult (consult_specialists); a longer answer is "
        "cut, with a visible marker.",
    )
    max_message_tokens: Annotated[
        StrictInt,
        Field(ge=LOWER_BOUNDS["max_message_tokens"], le=UPPER_BOUNDS["max_message_tokens"]),
    ] = _setting(
        defaults.MAX_MESSAGE_TOKENS,
        "Largest message an agent (local or remote) may add to the conversation; a longer one is "
        "cut, with a visible marker, before it is stored.",
    )
    max_reply_tokens: Annotated[
        StrictInt,
        Field(ge=LOWER_BOUNDS["max_reply_tokens"], le=UPPER_BOUNDS["max_reply_tokens"]),
    ] = _setting(
        defaults.MAX_REPLY_TOKENS,
        "Most tokens one agent's run may add to the conversation in all; past it its oldest "
        "messages are left out, with a note, before they are stored.",
    )

    def validated(self) -> HandoverContext:
        """A validated copy, the environment defaults resolved; raise ValueError naming a field
        that cannot work."""
        return coerce_context(self)


_CHECKED = TypeAdapter(HandoverContext)


def coerce_context(context: Any) -> HandoverContext:
    """A validated HandoverContext from None, a dict (server/SDK callers) or an instance.

    Raises ValueError naming the field when a value cannot work (a relative
    project_root, max_turns <= 0, an unknown field, ...): a run with such a context fails
    at once with that message instead of limping on.
    """
    if isinstance(context, dict):
        context = {k: v for k, v in context.items() if v is not None}
    elif not isinstance(context, HandoverContext | None):
        raise TypeError(f"context must be a dict or HandoverContext, got {type(context).__name__}")
    try:
        return _CHECKED.validate_python(HandoverContext() if context is None else context)
    except ValidationError as exc:
        raise ValueError(problem(exc, HandoverContext, noun="context field")) from None
