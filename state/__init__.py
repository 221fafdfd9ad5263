"""State schemas, the runtime context, reducers and token counting (imports nothing of ours)."""

from .agent import AgentState
from .context import HandoverContext, coerce_context
from .messages import InputError, add_messages_safely, check_input
from .schema import (
    ORCHESTRATOR,
    RETURN_CONDITIONS,
    ActiveHandover,
    HandoverRecord,
    HandoverState,
    InputState,
    OutputState,
    append_trail,
)
from .tokens import (
    DEFAULT_ENCODING,
    EncodingUnavailableError,
    TokenCounter,
    count_message_tokens,
    count_tokens,
    encoding_name_for_model,
    get_encoding,
    install_offline_encoding,
    token_counter,
)

__all__ = [
    "ORCHESTRATOR",
    "RETURN_CONDITIONS",
    "ActiveHandover",
    "AgentState",
    "DEFAULT_ENCODING",
    "EncodingUnavailableError",
    "HandoverContext",
    "HandoverRecord",
    "HandoverState",
    "InputError",
    "InputState",
    "OutputState",
    "TokenCounter",
    "add_messages_safely",
    "append_trail",
    "check_input",
    "coerce_context",
    "count_message_tokens",
    "count_tokens",
    "encoding_name_for_model",
    "get_encoding",
    "install_offline_encoding",
    "token_counter",
]
