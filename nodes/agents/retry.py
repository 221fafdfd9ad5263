"""Transient model errors are retried by the agent's model step, with backoff and jitter.

The model step carries LangGraph's node `RetryPolicy` (`MODEL_RETRY`): it
retries `TransientModelError`, which the step raises for HTTP 429 and 5xx,
timeouts and connection errors while attempts remain (the run context's
`model_attempts`, 3 by default). When they run out the step raises
`ModelUnavailableError`, naming the agent, the model's base URL and the cause.
The failed step stays unfinished in the checkpoint, so the thread stays valid
and the next run resumes it.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import RetryPolicy

MAX_MODEL_ATTEMPTS = 10
"""The most attempts the run context may ask for."""

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class TransientModelError(RuntimeError):
    """A model call failed in a way that may pass: retried by the step's RetryPolicy."""


class ModelUnavailableError(RuntimeError):
    """A model call kept failing after every attempt; the message says who, where and why."""


MODEL_RETRY = RetryPolicy(
    initial_interval=1.0,
    backoff_factor=2.0,
    max_interval=20.0,
    max_attempts=MAX_MODEL_ATTEMPTS,
    jitter=True,
    retry_on=TransientModelError,
)
"""The model step's retry policy; `model_attempts` in the run context decides when to stop."""


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


def model_failure(
    *, agent: str, model: Any, exc: BaseException, attempt: int, attempts: int
) -> Exception:
    """The error to raise for a failed model call: retry it, or say clearly that it failed."""
    cause = f"{type(exc).__name__}: {exc}".strip()
    where = base_url_of(model, exc)
    if attempt < attempts:
        return TransientModelError(
            f"{agent}: model call {attempt} of {attempts} to {where} failed ({cause}); retrying"
        )
    return ModelUnavailableError(
        f"{agent} could not get an answer from its model at {where} after {attempt} "
        f"attempt{'s' if attempt != 1 else ''}: {cause}"
    )
