"""Which model errors are worth another attempt, how long to wait, and the error when none is left.

The agents' `ModelRetries` middleware retries HTTP 429 and 5xx, timeouts and
connection errors while attempts remain (the run context's `model_attempts`, 3
by default), waiting as `MODEL_RETRY` says. When they run out the model step
raises `ModelUnavailableError`, naming the agent, the model's base URL and the
cause. The failed step stays unfinished in the checkpoint, so the thread stays
valid and the next run resumes it.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import RetryPolicy

from ...state.defaults import UPPER_BOUNDS

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class ModelUnavailableError(RuntimeError):
    """A model call kept failing after every attempt; the message says who, where and why."""


MODEL_RETRY = RetryPolicy(
    initial_interval=1.0,
    backoff_factor=2.0,
    max_interval=20.0,
    max_attempts=UPPER_BOUNDS["model_attempts"],
    jitter=True,
)
"""How long to wait between attempts; `model_attempts` in the run context decides how many."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an API error carries (OpenAI, Anthropic and httpx spell it alike)."""
    for candidate in (exc, getattr(exc, "response", None)):
        status = getattr(candidate, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def is_transient(exc: BaseException) -> bool:
    """HTTP 429 and 5xx, timeouts and connection errors: worth another attempt."""
    status = status_of(exc)
    if status is not None:
        return status in TRANSIENT_STATUS or status >= 500
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    names = [cls.__name__ for cls in type(exc).__mro__]
    return any("Timeout" in n or "Connection" in n or n == "NetworkError" for n in names)


def base_url_of(model: Any, exc: BaseException | None = None) -> str:
    """Where the model lives: the failed request's URL, else the client's base URL."""
    request = getattr(exc, "request", None) if exc is not None else None
    url = getattr(request, "url", None)
    if url:
        return str(url)
    for attr in ("openai_api_base", "base_url", "anthropic_api_url", "api_base", "endpoint"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    client = getattr(model, "root_client", None) or getattr(model, "client", None)
    value = getattr(client, "base_url", None)
    return str(value) if value else "(the provider's default URL)"


def model_unavailable(*, agent: str, model: Any, exc: BaseException, attempts: int) -> Exception:
    """The error for a model call that failed for good: who, where, how often and why."""
    cause = f"{type(exc).__name__}: {exc}".strip()
    return ModelUnavailableError(
        f"{agent} could not get an answer from its model at {base_url_of(model, exc)} after "
        f"{attempts} attempt{'s' if attempts != 1 else ''}: {cause}"
    )
