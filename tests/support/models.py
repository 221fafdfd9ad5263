"""Chat models for tests: scripted replies, and recording that checks every request.

Both override `bind_tools` (langchain_core fake models need it) and record
each request with the tools it was bound to. Every request is checked for a
valid tool-call history (docs/ARCHITECTURE.md, invariant 1) the way OpenAI checks it, so any test
driving the graph through these models also proves that invariant.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from specialist_handover.nodes.handover.transfer import handover_tools
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.specialists import ORCHESTRATOR_PROFILE


class InvalidHistory(AssertionError):
    """A request carried an unanswered tool call or an orphan tool message."""


def check_tool_history(messages: Sequence[BaseMessage]) -> None:
    """Raise InvalidHistory unless every tool call is answered once, right after its message."""
    i = 0
    for index, m in enumerate(messages):
        if isinstance(m, SystemMessage) and index != 0:
            raise InvalidHistory(f"system message at position {index}")
    while i < len(messages):
        m = messages[i]
        if isinstance(m, ToolMessage):
            raise InvalidHistory(f"orphan tool message {m.tool_call_id!r} at {i}")
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            # OpenAI receives unparsable calls as tool calls too
            wanted = [c["id"] for c in [*m.tool_calls, *m.invalid_tool_calls]]
            if len(set(wanted)) != len(wanted):
                raise InvalidHistory(f"duplicate tool call ids {wanted}")
            j = i + 1
            seen: list[str] = []
            while j < len(messages) and isinstance(messages[j], ToolMessage):
                seen.append(messages[j].tool_call_id)
                j += 1
            if sorted(seen) != sorted(wanted):
                raise InvalidHistory(
                    f"tool calls {wanted} at {i} answered by {seen} before the next message"
                )
            i = j
            continue
        i += 1


def ai_call(name: str, **args: Any) -> AIMessage:
    """An assistant message that calls one tool."""
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"}],
    )


class _Recorder(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    requests: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[list[str]] = Field(default_factory=list)
    bound_tools_schemas: list[list[dict[str, Any]]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # type: ignore[override]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _record(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> None:
        check_tool_history(messages)
        self.requests.append(list(messages))
        self.bound_tools.append([t["function"]["name"] for t in kwargs.get("tools") or []])
        self.bound_tools_schemas.append(list(kwargs.get("tools") or []))


class ScriptedChatModel(_Recorder):
    """Replies from a script: AIMessages, or callables (messages) -> AIMessage, in order.

    When the script runs out, `fallback` answers (default: a plain text reply).
    """

    script: list[Any] = Field(default_factory=list)
    fallback: Callable[[list[BaseMessage]], AIMessage] | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self._record(messages, kwargs)
        if self.script:
            step = self.script.pop(0)
            reply = step(messages) if callable(step) else step
        elif self.fallback is not None:
            reply = self.fallback(messages)
        else:
            reply = AIMessage(content=f"scripted reply #{len(self.requests)}")
        reply = reply.model_copy(update={"id": f"run-{uuid.uuid4().hex}"})
        return ChatResult(generations=[ChatGeneration(message=reply)])


class RecordingOfflineModel(OfflineChatModel, _Recorder):
    """The built-in offline model, recording and checking every request."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self._record(messages, kwargs)
        return super()._generate(messages, stop, run_manager, **kwargs)


def system_text(request: list[BaseMessage]) -> str:
    """The system prompt of a recorded request."""
    return str(request[0].content) if request and isinstance(request[0], SystemMessage) else ""


def orchestrator_tools() -> list[dict[str, Any]]:
    """The tools the orchestrator is bound to in the graph (built-in profiles), as OpenAI
    function schemas."""
    return [convert_to_openai_tool(t) for t in handover_tools(ORCHESTRATOR_PROFILE)]


def specialist_tools(profile: str) -> list[Any]:
    """The graph's own tools a specialist is bound to (built-in profiles, no tool sets)."""
    return list(handover_tools(profile))


def _parsable(messages: list[dict]) -> list[dict]:
    """The request's messages with unparsable tool-call arguments read as {} (for the model only)."""
    out = []
    for m in messages:
        calls = m.get("tool_calls") or []
        fixed = []
        for call in calls:
            try:
                json.loads(call["function"]["arguments"])
                fixed.append(call)
            except ValueError:
                fixed.append({**call, "function": {**call["function"], "arguments": "{}"}})
        out.append({**m, "tool_calls": fixed} if calls else m)
    return out


def model_responder(model: BaseChatModel) -> Callable[[list[dict], list[dict]], dict]:
    """An OpenAI-compatible server's responder that answers with `model`'s reply."""

    def respond(messages: list[dict], tools: list[dict]) -> dict:
        history = convert_to_messages(_parsable(messages))
        reply = model.bind_tools(tools).invoke(history) if tools else model.invoke(history)
        assert isinstance(reply, AIMessage)
        return {
            "content": reply.content or None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                }
                for call in reply.tool_calls
            ],
        }

    return respond


def returning_responder(decisions: list[str] | None = None):
    """The offline model's decisions, except that a specialist asked to go back returns with
    a summary (and decisions) through return_to_orchestrator."""
    offline = model_responder(OfflineChatModel())

    def respond(messages: list[dict], tools: list[dict]) -> dict:
        names = {t["function"]["name"] for t in tools}
        last = messages[-1]
        if (
            "return_to_orchestrator" in names
            and last["role"] == "user"
            and str(last["content"]).startswith("Thanks, go back")
        ):
            args: dict = {"summary": "Hero designed: bold headline, one blue button."}
            if decisions is not None:
                args["decisions"] = decisions
            return {
                "content": None,
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "return_to_orchestrator", "arguments": args},
                    }
                ],
            }
        return offline(messages, tools)

    return respond


def specialist_requests(bodies: list[dict], profile: str) -> list[dict]:
    """The request bodies an OpenAI-compatible server got from `profile`'s agent."""
    return [b for b in bodies if f"(profile `{profile}`)" in (b["messages"][0]["content"] or "")]
