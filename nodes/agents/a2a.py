"""An A2A specialist: a profile's agent that is any A2A agent (`remote.protocol: a2a`).

It stands where a built-in agent stands, inside the same agent node (`member.py`), as the
LangGraph remote does (`remote.py`; both share `remote_common.py`): a one-step graph, `remote`, checkpointed under the
specialist's step, so a run resumed after a crash does not ask the agent again once its
answer was saved. Imported only for such a profile: the a2a-sdk is an optional extra.

- **Which agent.** `remote.url` is the agent's base URL: its card is read from
  `<url>/.well-known/agent-card.json` (`ClientFactory.create_from_url`), and the message
  goes to the JSON-RPC (or HTTP+JSON) interface the card names, as one blocking
  `SendMessage` (a task still `submitted` or `working` is asked for again until it ends). No
  redirect is followed (`refuse_redirects`) and no credential is sent.
- **One hold, one A2A conversation.** The first turn of a handover opens a new, random
  `contextId`; the reply keeps it, with the task's id and state, in its
  `response_metadata["a2a"]`, and the next turn of the same hold reads it back from the view
  (which holds only the specialist's turns since its handover). A new handover opens a new
  context. A task that asked for input (`input-required`) is continued: the next message
  carries its `taskId`.
- **In:** one user message of text. On a new context: the agent's view rendered, the
  stage-1 package's text and then the turns since, each with its speaker. On a context it
  holds: the turns after its last reply only (the agent keeps the conversation by
  `contextId`, so nothing is sent twice).
- **Out:** one reply, named by the specialist: the text of the task's status message and
  artifacts (or of the agent's plain message), cut to `max_message_tokens` as any remote
  reply is (`bounded_message`). `completed`, or a plain message: the return condition decides
  who holds the thread, as for any agent. `input-required`: flagged `AWAITS_USER`, so the
  conversation stays with the specialist whatever the return condition, and the user's next
  turn answers it.
- **Failure:** a task `failed`, `rejected`, `canceled` or `auth-required`, an agent that cannot
  be reached, has no readable card, refuses or redirects the message, or is slower than
  `remote.timeout` seconds in all becomes the reply `ERROR: remote specialist <name> at <url>
  (A2A agent): <what happened>` (`failure_reply`, flagged `REMOTE_FAILED`): the orchestrator
  answers in the same run. No exception leaves the graph, and no URL shown has a credential.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from typing import Any

import httpx
from a2a.client import A2AClientTimeoutError, AgentCardResolutionError, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ...specialists import Profile, Remote
from ...specialists.remote import safe_url
from ...state import ProfileAgentState, TokenCounter, message_text, token_counter
from ...state.defaults import MAX_MESSAGE_TOKENS
from ..handover.consult_message import CONSULT_SENDER
from ..handover.handover_to_specialist import HANDOVER_SENDER
from ..handover.transfer import GO_BACK
from ..tools.names import RETURN
from .remote_common import (
    AWAITS_USER,
    REMOTE_STEP,
    bounded_message,
    describe_failure,
    failure_reply,
    one_line,
    refuse_redirects,
    reply_bounds,
    run_blocking,
    sane_id,
)
from .replies import new_call_id

A2A_DATA = "a2a"
"""Where an A2A specialist's reply keeps its conversation (`response_metadata`): `context_id`,
`task_id` and the task's `state` (`completed`, `input-required`; `message` for a plain one)."""
INPUT_REQUIRED = "input-required"
WAITING = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
"""A task the agent still works on: asked for again (`GetTask`) until it ends."""
ANSWERED = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED})
"""The states that make a reply; every other one (failed, rejected, canceled, auth-required,
unspecified) is the `ERROR:` reply."""
POLL_SECONDS = 0.5
"""Between two `GetTask` calls for a task still working (within `remote.timeout` in all)."""
GRAPH_SENDERS = (HANDOVER_SENDER, CONSULT_SENDER)
"""The graph's own messages in a view (the package, the notes, a consult's question): sent as
they are, without a speaker."""
BINDINGS = [TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON]
"""The interfaces of an agent card this client speaks, in order of preference."""


class A2AFailed(Exception):
    """The A2A exchange ended without a reply to store; the message says what happened."""


def build_a2a_agent(*, agent: str, profile: Profile) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent of an A2A profile: one step that asks its A2A agent, natively under `invoke`
    (on a loop of its own, `run_blocking`) and under `ainvoke`."""

    def ask(state: ProfileAgentState, config: RunnableConfig) -> dict[str, Any]:
        counter, cap = reply_bounds(config)
        view = list(state.get("messages") or [])
        return {"messages": run_blocking(lambda: a2a_reply(agent, profile, view, counter, cap))}

    async def aask(state: ProfileAgentState, config: RunnableConfig) -> dict[str, Any]:
        counter, cap = reply_bounds(config)
        view = list(state.get("messages") or [])
        return {"messages": await a2a_reply(agent, profile, view, counter, cap)}

    step = RunnableLambda(ask, afunc=aask, name=REMOTE_STEP)
    builder = StateGraph(ProfileAgentState).add_node(REMOTE_STEP, step)
    return builder.add_edge(START, REMOTE_STEP).add_edge(REMOTE_STEP, END).compile(name=agent)


async def a2a_reply(
    agent: str,
    profile: Profile,
    view: Sequence[BaseMessage],
    counter: TokenCounter | None = None,
    max_message_tokens: int = MAX_MESSAGE_TOKENS,
) -> list[BaseMessage]:
    """The A2A agent's reply to the view, or one `ERROR:` reply flagged `REMOTE_FAILED`; never
    raises for anything the agent (or the way to it) does."""
    remote = profile.remote
    assert remote is not None
    held, since = held_conversation(view, agent)
    asked = [m for m in view[since:] if isinstance(m, HumanMessage) and m.name is None]
    if since and held.get("state") != INPUT_REQUIRED and asked and GO_BACK.search(asked[-1].text):
        return [going_back(agent)]  # the user leaves: the agent has no tool of ours to do it
    context_id = str(held.get("context_id") or uuid.uuid4().hex)
    message = Message(
        role=Role.ROLE_USER,
        message_id=f"msg-{uuid.uuid4().hex}",
        context_id=context_id,
        task_id=str(held.get("task_id") or "") if held.get("state") == INPUT_REQUIRED else "",
        parts=[Part(text=rendered(view[since:] if since else view, agent))],
    )
    try:
        result = await asyncio.wait_for(exchange(remote, message), remote.timeout)
        text, data = outcome(result, context_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes the specialist's ERROR reply
        return [failure_reply(agent, profile, describe_a2a_failure(exc, remote))]
    made = AIMessage(content=text, name=agent, id=f"msg-{uuid.uuid4().hex}")
    reply = bounded_message(made, counter or token_counter(), max_message_tokens)
    awaits = {AWAITS_USER: True} if data["state"] == INPUT_REQUIRED else {}
    return [reply.model_copy(update={"response_metadata": {A2A_DATA: data, **awaits}})]


def going_back(agent: str) -> AIMessage:
    """The hand-back an A2A agent cannot make itself (it has none of our tools): a
    `return_to_orchestrator` call in its name, when the user asks to go back in a hold, which
    the handover node carries out (the same words the offline model reads, `GO_BACK`)."""
    call = {"name": RETURN, "args": {"summary": "The user asked to go back."}, "id": new_call_id()}
    return AIMessage(content="", name=agent, id=f"msg-{uuid.uuid4().hex}", tool_calls=[call])


def held_conversation(view: Sequence[BaseMessage], agent: str) -> tuple[dict[str, Any], int]:
    """The A2A conversation this hold is in (the `A2A_DATA` of the specialist's newest reply in
    its view; {} on a new handover) and where the turns after that reply start (0: none)."""
    for index in range(len(view) - 1, -1, -1):
        message = view[index]
        data = message.response_metadata.get(A2A_DATA) if isinstance(message, AIMessage) else None
        if message.name == agent and isinstance(data, dict) and data.get("context_id"):
            return data, index + 1 if index + 1 < len(view) else 0
    return {}, 0


def rendered(messages: Sequence[BaseMessage], agent: str) -> str:
    """The messages as the text the agent is sent: the graph's own (the package, the notes) as
    they are, each turn after it as `User: ...`, `You: ...` (the specialist's), `<name>: ...`;
    tool plumbing left out."""
    blocks = []
    for message in messages:
        text = message_text(message).strip()
        if not text or isinstance(message, ToolMessage):
            continue
        if isinstance(message, HumanMessage):
            blocks.append(text if message.name in GRAPH_SENDERS else f"User: {text}")
        else:
            blocks.append(f"{'You' if message.name == agent else message.name or 'Agent'}: {text}")
    return "\n\n".join(blocks)


async def exchange(remote: Remote, message: Message) -> Task | Message:
    """Send `message` to the agent at `remote.url` (its card first) and return its answer: a
    plain message, or the task once it is no longer `submitted` or `working`."""
    hooks = {"response": [refuse_redirects(remote.url)]}
    async with httpx.AsyncClient(timeout=remote.timeout, event_hooks=hooks) as http:
        config = ClientConfig(
            streaming=False, httpx_client=http, supported_protocol_bindings=list(BINDINGS)
        )
        try:
            client = await ClientFactory(config).create_from_url(remote.url)
        except ValueError as exc:  # the card names no interface we speak
            raise A2AFailed(
                f"its agent card offers no interface this client speaks (JSON-RPC or "
                f"HTTP+JSON): {one_line(exc)}"
            ) from exc
        answer = None
        async for event in client.send_message(SendMessageRequest(message=message)):
            answer = event
        if answer is None or not (answer.HasField("task") or answer.HasField("message")):
            raise A2AFailed("the agent answered the message with neither a task nor a message")
        if answer.HasField("message"):
            return answer.message
        task = answer.task
        while task.status.state in WAITING:
            await asyncio.sleep(POLL_SECONDS)
            task = await client.get_task(GetTaskRequest(id=task.id))
        return task


def outcome(result: Task | Message, context_id: str) -> tuple[str, dict[str, str]]:
    """The reply's text and its `A2A_DATA` for the agent's answer; A2AFailed for a task that
    ended any other way than `completed` or `input-required`, naming its state and what the
    agent said, or for an answer without text."""
    if isinstance(result, Message):
        text, state, task_id = parts_text(result.parts), "message", ""
    else:
        state = TaskState.Name(result.status.state).removeprefix("TASK_STATE_")
        state = state.lower().replace("_", "-")
        said = [parts_text(result.status.message.parts)]
        said += [parts_text(artifact.parts) for artifact in result.artifacts]
        text = "\n\n".join(dict.fromkeys(s for s in said if s))  # each text once, in order
        if result.status.state not in ANSWERED:
            why = "needs credentials, which this client does not send; " if "auth" in state else ""
            raise A2AFailed(
                f"the agent's task ended {state} ({why}its message: {one_line(text, 500)!r})"
                if text
                else f"the agent's task ended {state} ({why}without a message)"
            )
        if not text:  # the agent may have answered in the task's history only
            agents = [m for m in result.history if m.role == Role.ROLE_AGENT]
            text = parts_text(agents[-1].parts) if agents else ""
        task_id = sane_id(result.id) or ""
    context_id = sane_id(result.context_id) or context_id
    if not text.strip():
        raise A2AFailed(f"the agent answered ({state}) without any text")
    return text, {"context_id": context_id, "task_id": task_id, "state": state}


def parts_text(parts: Sequence[Part]) -> str:
    """The text of message or artifact parts: text as it is, data as JSON, a file as a line
    that names it (its bytes are not stored)."""
    out = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            out.append(part.text)
        elif kind == "data":
            out.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        elif kind in ("url", "raw"):
            where = f" at {safe_url(part.url)}" if kind == "url" else ""
            name = part.filename or "unnamed"
            out.append(f"[file {name} ({part.media_type or 'unknown type'}){where}]")
    return "\n".join(t for t in out if t)


def describe_a2a_failure(exc: BaseException, remote: Remote) -> str:
    """What happened, in one line (`describe_failure` for what the HTTP client and the
    redirect guard raise, also when the a2a-sdk wraps it)."""
    if isinstance(exc, A2AFailed):
        return str(exc)
    if isinstance(exc, TimeoutError | A2AClientTimeoutError | httpx.TimeoutException):
        return f"no answer within the timeout of {remote.timeout:g} s"
    card = f"{remote.url}/.well-known/agent-card.json"
    if isinstance(exc, AgentCardResolutionError) and exc.status_code:
        return (
            f"no agent card at {card} (HTTP {exc.status_code}); remote.url must be the A2A "
            "agent's base URL"
        )
    if isinstance(exc, A2AError) and isinstance(exc.__cause__, httpx.HTTPError):
        return describe_a2a_failure(exc.__cause__, remote)
    if isinstance(exc, AgentCardResolutionError):
        return f"the agent card at {card} cannot be read: {one_line(exc.message)}"
    if isinstance(exc, A2AError):
        return f"the agent refused the message: {type(exc).__name__}: {one_line(exc.message)}"
    return describe_failure(exc, remote.timeout, remote.url)
