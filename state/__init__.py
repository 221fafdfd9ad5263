"""State schemas, the runtime context, reducers and token counting (imports nothing of ours)."""

from .agent import MEMBER_RUN_KEY, MemberRun, ProfileAgentState, current_member
from .context import HandoverContext, coerce_context
from .messages import message_text, speaker_label
from .schema import (
    ORCHESTRATOR,
    PUBLIC_PACKAGE_FIELDS,
    RETURN_CONDITIONS,
    ActiveHandover,
    ConsultAnswer,
    ConsultEntry,
    ConsultRound,
    HandoverPackage,
    HandoverRecord,
    HandoverState,
    HoldUsage,
    InputState,
    OutputState,
    usable,
)
from .tokens import TokenCounter, token_counter
from .writes import InputError, check_input, check_update

__all__ = [
    "ORCHESTRATOR",
    "RETURN_CONDITIONS",
    "ActiveHandover",
    "ConsultAnswer",
    "ConsultEntry",
    "ConsultRound",
    "HandoverPackage",
    "MEMBER_RUN_KEY",
    "MemberRun",
    "PUBLIC_PACKAGE_FIELDS",
    "ProfileAgentState",
    "HandoverContext",
    "HandoverRecord",
    "HoldUsage",
    "HandoverState",
    "InputError",
    "InputState",
    "OutputState",
    "TokenCounter",
    "check_input",
    "check_update",
    "coerce_context",
    "current_member",
    "message_text",
    "speaker_label",
    "token_counter",
    "usable",
]
