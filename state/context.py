"""The run context (LangGraph `context_schema`): per-run settings, every field with a default."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from . import defaults
from .defaults import UPPER_BOUNDS


def _default_project_root() -> str:
    return os.environ.get("HANDOVER_PROJECT_ROOT") or os.getcwd()


def _env_flag(name: str) -> bool:
    """A yes/no setting from the environment (`true`, `1`, `yes`, `on`)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _default_model() -> str:
    if os.environ.get("HANDOVER_MODEL"):
        return os.environ["HANDOVER_MODEL"]
    return "openai:gpt-4o-mini" if os.environ.get("OPENAI_API_KEY") else "offline"


Positive = Annotated[int, Field(ge=1)]
"""A count that must be at least 1 (the bounds show in the schema Studio renders)."""


@dataclass
class HandoverContext:
    """Per-run settings (LangGraph `context_schema`); every field has a default.

    `project_root` and `model` default to "" meaning "from the environment", so
    the schema Studio shows has a value for every field; `validated()` resolves
    them when the run starts.
    """

    project_root: str = field(
        default="",
        metadata={
            "description": "Absolute project folder; briefings and checkpoints go under "
            "<project_root>/.a0proj/. Default (empty): HANDOVER_PROJECT_ROOT, else the "
            "working directory."
        },
    )
    model: str = field(
        default="",
        metadata={
            "description": "Chat model for every agent: an init_chat_model string such as "
            "'openai:gpt-4o', or 'offline' for the built-in deterministic model. Default "
            "(empty): HANDOVER_MODEL, else an OpenAI model when OPENAI_API_KEY is set, else "
            "'offline'."
        },
    )
    max_context_tokens: Positive = field(
        default=defaults.MAX_CONTEXT_TOKENS,
        metadata={"description": "Token budget of a stage-1 package; over it, a warning."},
    )
    include_recent_turns: Annotated[int, Field(ge=0)] = field(
        default=defaults.INCLUDE_RECENT_TURNS,
        metadata={"description": "How many recent turns a package carries verbatim."},
    )
    max_handover_depth: Positive = field(
        default=defaults.MAX_HANDOVER_DEPTH,
        metadata={"description": "Longest handover chain before further handovers are refused."},
    )
    max_turns: Annotated[int, Field(ge=1, le=UPPER_BOUNDS["max_turns"])] = field(
        default=defaults.MAX_TURNS,
        metadata={"description": "Model calls one agent may make in a row before it stops."},
    )
    full_history_max_tokens: Positive = field(
        default=defaults.FULL_HISTORY_MAX_TOKENS,
        metadata={"description": "Cap of request_full_history (stage 2), compacted when over."},
    )
    max_handovers_per_turn: Annotated[
        int, Field(ge=1, le=UPPER_BOUNDS["max_handovers_per_turn"])
    ] = field(
        default=defaults.MAX_HANDOVERS_PER_TURN,
        metadata={
            "description": "Handovers one user turn may make, returns included; one more is "
            "refused as a loop and the turn ends with an answer."
        },
    )
    model_attempts: Annotated[int, Field(ge=1, le=UPPER_BOUNDS["model_attempts"])] = field(
        default=defaults.MODEL_ATTEMPTS,
        metadata={
            "description": "Attempts per model call on transient errors (HTTP 429/5xx, "
            "timeouts, connection errors), with backoff and jitter."
        },
    )
    review_handovers: bool = field(
        default_factory=lambda: _env_flag("HANDOVER_REVIEW_HANDOVERS"),
        metadata={
            "description": "Pause every handover for a person to approve, edit or reject it "
            "(LangGraph interrupt, LangChain's human-in-the-loop format) before its briefing "
            "entry is written. Default: HANDOVER_REVIEW_HANDOVERS=true in the environment, "
            "else false."
        },
    )
    max_input_tokens: Annotated[int, Field(ge=defaults.LOWER_BOUNDS["max_input_tokens"])] = field(
        default=defaults.MAX_INPUT_TOKENS,
        metadata={
            "description": "The most tokens one input may carry (a larger one is refused, "
            "nothing stored) and any model request may carry, counted over everything sent: "
            "system prompt, messages, tool schemas (older parts of a request are cut to fit). "
            f"At least {defaults.LOWER_BOUNDS['max_input_tokens']:,}."
        },
    )
    consult_answer_max_tokens: Positive = field(
        default=defaults.CONSULT_ANSWER_MAX_TOKENS,
        metadata={
            "description": "Cap of one specialist's answer to a consult (consult_specialists); "
            "a longer answer is cut, with a visible marker."
        },
    )
    max_message_tokens: Annotated[
        int,
        Field(
            ge=defaults.LOWER_BOUNDS["max_message_tokens"],
            le=UPPER_BOUNDS["max_message_tokens"],
        ),
    ] = field(
        default=defaults.MAX_MESSAGE_TOKENS,
        metadata={
            "description": "Largest message an agent (local or remote) may add to the "
            "conversation; a longer one is cut, with a visible marker, before it is stored."
        },
    )
    max_reply_tokens: Annotated[
        int,
        Field(ge=defaults.LOWER_BOUNDS["max_reply_tokens"], le=UPPER_BOUNDS["max_reply_tokens"]),
    ] = field(
        default=defaults.MAX_REPLY_TOKENS,
        metadata={
            "description": "Most tokens one agent's run may add to the conversation in all; "
            "past it its oldest messages are left out, with a note, before they are stored."
        },
    )

    def validated(self) -> HandoverContext:
        """Resolve the environment defaults; raise ValueError naming a field that cannot work."""
        for name in ("project_root", "model"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, got {getattr(self, name)!r}")
        self.project_root = self.project_root or _default_project_root()
        self.model = self.model.strip() or _default_model()  # blank means the default
        if not os.path.isabs(self.project_root):
            raise ValueError(f"project_root must be absolute, got {self.project_root!r}")
        # one spelling per folder: "/a/b/" and "/a/b" name the same project (its memory)
        self.project_root = os.path.normpath(self.project_root)
        for name in (
            "max_context_tokens",
            "max_handover_depth",
            "max_turns",
            "full_history_max_tokens",
            "max_handovers_per_turn",
            "model_attempts",
            "max_input_tokens",
            "consult_answer_max_tokens",
            "max_message_tokens",
            "max_reply_tokens",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.review_handovers, bool):
            raise ValueError(
                f"review_handovers must be true or false, got {self.review_handovers!r}"
            )
        for name, most in UPPER_BOUNDS.items():
            if getattr(self, name) > most:
                raise ValueError(f"{name} must be at most {most}, got {getattr(self, name)!r}")
        for name, least in defaults.LOWER_BOUNDS.items():
            if getattr(self, name) < least:
                why = (
                    " (an agent's system prompt and tool schemas take up to about 2,500 tokens)"
                    if name == "max_input_tokens"
                    else ""
                )
                raise ValueError(
                    f"{name} must be at least {least:,}{why}, got {getattr(self, name)!r}"
                )
        if (
            not isinstance(self.include_recent_turns, int)
            or isinstance(self.include_recent_turns, bool)
            or self.include_recent_turns < 0
        ):
            raise ValueError(
                f"include_recent_turns must be an integer >= 0, got {self.include_recent_turns!r}"
            )
        return self


def coerce_context(context: Any) -> HandoverContext:
    """A validated HandoverContext from None, a dict (server/SDK callers) or an instance.

    Raises ValueError naming the field when a value cannot work (a relative
    project_root, max_turns <= 0, ...): a run with such a context fails at once
    with that message instead of limping on.
    """
    if context is None:
        return HandoverContext().validated()
    if isinstance(context, HandoverContext):
        return context.validated()
    if isinstance(context, dict):
        known = {f for f in HandoverContext.__dataclass_fields__}
        unknown = sorted(set(context) - known)
        if unknown:
            raise ValueError(f"unknown context field(s) {unknown}; known fields: {sorted(known)}")
        return HandoverContext(**{k: v for k, v in context.items() if v is not None}).validated()
    raise TypeError(f"context must be a dict or HandoverContext, got {type(context).__name__}")
