"""The built-in agents' middleware for LangChain's `create_agent`, each with one job.

Every model call stays one step of the agent's loop and every tool call one
task, as `create_agent` makes them; these wrap them without adding nodes:

- `RunModel`: the chat model of this run (a build may fix it, or the run
  context names it: `offline`, `openai:gpt-4o`, ...).
- `TurnLimit`: `max_turns` model calls in a row, counted from what the agent's
  node says it has used already; then a clear message instead of a model call.
  LangChain's `ModelCallLimitMiddleware` takes a fixed limit per agent; ours comes
  from the run context and continues across a refused handover's re-entry.
- `RequestBudget`: every request within `max_input_tokens`, counted over
  everything sent (system prompt, messages, tool schemas); older parts of the
  request are cut or left out to fit (`history/budget.py`), stored history never.
- `ModelRetries`: HTTP 429/5xx, timeouts and connection errors retried with
  backoff and jitter, `model_attempts` times (from the run context); then
  `ModelUnavailableError` naming the agent, the URL and the cause.
- `SafeReplies`: the request carries a valid tool-call history; a reply whose
  tool-call arguments a client cannot parse is asked for once more, streaming;
  the reply is made safe to store (`replies.py`) and named; calls that cannot
  run are answered with an `ERROR:`, and the model tries again.
- `ToolErrors`: an unknown tool or a tool that raises is an `ERROR:` result.

Each has a sync hook and an async one (`wrap_model_call` / `awrap_model_call`,
`wrap_tool_call` / `awrap_tool_call`) around the same steps, so an agent runs
natively under `invoke` and under `ainvoke` (its model's `ainvoke`, async-only
tools such as MCP's awaited on the run's own loop).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from itertools import count
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import ValidationError

from ...specialists import Profile
from ...state import (
    HandoverContext,
    ProfileAgentState,
    coerce_context,
    current_member,
    token_counter,
)
from ..history.budget import fit_messages
from ..history.conversation import valid_tool_history
from . import retry
from .replies import (
    error_answer,
    is_unreadable_tool_call,
    make_reply_safe,
    stop_message,
    streaming_copy,
    tag_reply,
    unparsable_answers,
    used_call_ids,
)

ModelFor = Callable[[HandoverContext], BaseChatModel]
Handler = Callable[[ModelRequest], ModelResponse]
AsyncHandler = Callable[[ModelRequest], Awaitable[ModelResponse]]


def _context(request: ModelRequest) -> HandoverContext:
    return coerce_context(request.runtime.context if request.runtime is not None else None)


class RunModel(AgentMiddleware):
    """Talk to the model this run chooses for the agent."""

    def __init__(self, model_for: ModelFor) -> None:
        super().__init__()
        self.model_for = model_for

    def _chosen(self, request: ModelRequest) -> ModelRequest:
        return request.override(model=self.model_for(_context(request)))

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        return handler(self._chosen(request))

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> Any:
        return await handler(self._chosen(request))


class TurnLimit(AgentMiddleware):
    """At most `max_turns` model calls in a row; then a message that says so."""

    state_schema = ProfileAgentState

    def __init__(self, agent: str, profile: Profile) -> None:
        super().__init__()
        self.agent, self.profile = agent, profile

    def _stop(self, request: ModelRequest) -> ModelResponse | None:
        """The message that stands for the call once the limit is reached, else None."""
        calls = int(request.state.get("model_calls") or 0)  # type: ignore[call-overload]
        limit = _context(request).max_turns
        if calls < limit:
            return None
        return ModelResponse(result=[stop_message(self.agent, self.profile, calls, limit)])

    @staticmethod
    def _counted(request: ModelRequest, response: ModelResponse) -> ExtendedModelResponse:
        calls = int(request.state.get("model_calls") or 0)  # type: ignore[call-overload]
        return ExtendedModelResponse(
            model_response=response, command=Command(update={"model_calls": calls + 1})
        )

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        return self._stop(request) or self._counted(request, handler(request))

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> Any:
        return self._stop(request) or self._counted(request, await handler(request))


class RequestBudget(AgentMiddleware):
    """Fit each request into `max_input_tokens`, counted over everything it sends."""

    def __init__(self, tools: Sequence[Any] = ()) -> None:
        super().__init__()
        self._schemas: dict[tuple[int, ...], str] = {}
        self.agent_tools = list(tools)  # not `tools`: a middleware's `tools` are added to the agent

    def warm_up(self) -> None:
        """Convert the agent's tools to their schemas now (pydantic builds each schema the
        first time: about 10 ms an agent), not in its first request."""
        self._schema_text(self.agent_tools)

    def _schema_text(self, tools: list[Any]) -> str:
        key = tuple(id(t) for t in tools)
        if key not in self._schemas:
            self._schemas[key] = json.dumps(
                [t if isinstance(t, dict) else convert_to_openai_tool(t) for t in tools],
                ensure_ascii=False,
            )
        return self._schemas[key]

    def _fitted(self, request: ModelRequest) -> ModelRequest:
        ctx = _context(request)
        member = current_member()
        counter = member.counter if member and member.counter else token_counter(ctx.model)
        fixed = counter.count_text(self._schema_text(list(request.tools or [])))
        if request.system_message is not None:
            fixed += counter.count_message(request.system_message)
        messages = fit_messages(
            request.messages, budget=ctx.max_input_tokens, counter=counter, fixed=fixed
        )
        return request.override(messages=messages)  # type: ignore[arg-type]

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        return handler(self._fitted(request))

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> Any:
        return await handler(self._fitted(request))


def backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt `attempt` (from `retry.MODEL_RETRY`)."""
    policy = retry.MODEL_RETRY
    delay = min(
        policy.initial_interval * policy.backoff_factor ** (attempt - 1), policy.max_interval
    )
    return delay + (random.uniform(0, 1) if policy.jitter else 0)


class ModelRetries(AgentMiddleware):
    """Retry transient model errors with backoff; then fail clearly."""

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def _wait(self, request: ModelRequest, exc: Exception, attempt: int) -> float:
        """Seconds to wait before attempt `attempt + 1`; raises when none is left."""
        attempts = _context(request).model_attempts if retry.is_transient(exc) else 1
        if attempt >= attempts:
            raise retry.model_unavailable(
                agent=self.agent, model=request.model, exc=exc, attempts=attempt
            ) from exc
        return backoff(attempt)

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        for attempt in count(1):
            try:
                return handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:  # retried when transient; else a clear error
                time.sleep(self._wait(request, exc, attempt))

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> Any:
        for attempt in count(1):
            try:
                return await handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:  # retried when transient; else a clear error
                await asyncio.sleep(self._wait(request, exc, attempt))


class SafeReplies(AgentMiddleware):
    """A valid request in; a reply safe to store out, its unusable calls answered."""

    def __init__(self, agent: str, profile: Profile) -> None:
        super().__init__()
        self.agent, self.profile = agent, profile

    @staticmethod
    def _valid(request: ModelRequest) -> ModelRequest:
        return request.override(messages=valid_tool_history(request.messages))  # type: ignore[arg-type]

    @staticmethod
    def _streaming(request: ModelRequest, exc: ValidationError) -> ModelRequest:
        """The request once more, streaming: such calls then arrive as invalid tool calls
        instead of failing the parse (any other validation error is raised)."""
        if not is_unreadable_tool_call(exc):
            raise exc
        return request.override(model=streaming_copy(request.model))

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        request = self._valid(request)
        try:
            response = handler(request)
        except ValidationError as exc:
            response = handler(self._streaming(request, exc))
        return self._safe(request, response)

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> Any:
        request = self._valid(request)
        try:
            response = await handler(request)
        except ValidationError as exc:
            response = await handler(self._streaming(request, exc))
        return self._safe(request, response)

    def _safe(self, request: ModelRequest, response: ModelResponse) -> Any:
        """The reply safe to store, named, and its unusable calls answered."""
        reply = next((m for m in response.result if isinstance(m, AIMessage)), None)
        if reply is None:
            return response
        member = current_member()
        taken = used_call_ids(request.messages)
        taken.update(member.call_ids if member is not None else ())
        reply = make_reply_safe(tag_reply(reply, self.agent, self.profile), taken)
        answers = unparsable_answers(reply)
        result = ModelResponse(result=[reply, *answers])
        if answers and not reply.tool_calls:  # nothing else to run: let the model try again
            return ExtendedModelResponse(
                model_response=result, command=Command(update={"jump_to": "model"})
            )
        return result


class ToolErrors(AgentMiddleware):
    """Unknown tools and failing tools become `ERROR:` results the agent can act on."""

    def __init__(self, tool_names: list[str]) -> None:
        super().__init__()
        self.available = ", ".join(sorted(tool_names))

    def _unknown(self, request: ToolCallRequest) -> ToolMessage:
        name = request.tool_call["name"]
        return error_answer(
            request.tool_call, f"ERROR: unknown tool '{name}'. Available tools: {self.available}"
        )

    @staticmethod
    def _failed(request: ToolCallRequest, exc: Exception) -> ToolMessage:
        name = request.tool_call["name"]
        return error_answer(request.tool_call, f"ERROR: {name} failed: {type(exc).__name__}: {exc}")

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[Any], Any]) -> Any:
        if request.tool is None:
            return self._unknown(request)
        try:
            return handler(request)
        except GraphBubbleUp:  # interrupts and transfers pass through
            raise
        except Exception as exc:  # a tool failure is a result the agent can act on
            return self._failed(request, exc)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        if request.tool is None:
            return self._unknown(request)
        try:
            return await handler(request)
        except GraphBubbleUp:  # interrupts and transfers pass through
            raise
        except Exception as exc:  # a tool failure is a result the agent can act on
            return self._failed(request, exc)
