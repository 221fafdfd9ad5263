"""A remote specialist: a profile's agent that runs on a LangGraph server (`Profile.remote`).

The agent is a one-step graph, `remote`, that runs the server's graph through
LangGraph's own `RemoteGraph`. It stands where a built-in agent stands, inside
the same agent node (`member.py`), so it gets what a local specialist gets:

- **In:** `{"messages": view}`, the agent's view: the stage-1 package message
  (its text, and the package as data in `additional_kwargs["handover_package"]`)
  and its own turns since the handover. Never the whole history, never our run
  context, our thread id or our checkpoint keys.
- **Which thread:** none of the server's. Each activation is a stateless run
  (`POST /runs/stream`, a temporary thread the server deletes). Our checkpointer
  is the only memory: a `user_request` specialist's next turn sends the package
  and its turns so far again, as a local specialist's view holds them.
- **Out:** the messages the run added (its replies, and its own tool calls and
  results) join our conversation, named by the specialist; its return condition
  decides who holds the thread, as for any agent. The run is a step of this
  subgraph, checkpointed under the specialist's step: a run resumed after a crash
  does not ask the server again once its answer was saved.
- **Handing over and back:** our transfer tools work in process only, so a
  remote graph hands back (or over) by calling a tool of its own named
  `return_to_orchestrator` (or `handover_to_specialist`), best with
  `return_direct=True`: the run's messages are kept up to that call, which is
  left for our handover node to carry out as if our own tool had made it.
- **Streaming:** `RemoteGraph` relays the server's stream into ours when it runs
  under a streaming graph; its `messages` chunks come as plain dicts, so they are
  turned into LangChain messages here, tagged with `agent` and `persona_marker`
  like a local agent's (`stream(..., stream_mode="messages", subgraphs=True)`);
  when the step ends, LangGraph streams the whole reply once, with the same id.
- **Failure:** a server that is down, refuses the run, fails it, pauses it for
  input or takes longer than `remote.timeout` seconds in all becomes the
  specialist's reply `ERROR: remote specialist <name> at <url> (graph <id>):
  <what happened>`, flagged `REMOTE_FAILED`: the conversation goes back to the
  orchestrator, which answers in the same run. No exception leaves the graph.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt, ParentCommand
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel.protocol import StreamProtocol
from langgraph.pregel.remote import RemoteException, RemoteGraph
from langgraph_sdk import get_client
from langgraph_sdk.errors import APIConnectionError, APIStatusError, APITimeoutError

from ...specialists import Profile, Remote
from ...state import ProfileAgentState
from ..handover.transfer import TRANSFERS
from .replies import graph_reply

REMOTE_FAILED = "remote_specialist_failed"
"""Metadata flag of the reply that stands for a remote run that failed: the conversation goes
back to the orchestrator, which answers in the same run."""
REMOTE_STEP = "remote"
"""The one node of a remote agent's graph."""
STREAM_TAGS = ("agent", "persona_marker")
"""Metadata of the agent's node that tags each streamed chunk of the remote reply."""


def build_remote_agent(*, agent: str, profile: Profile) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent of a remote profile: one step that runs `profile.remote`'s graph."""
    remote = profile.remote
    if remote is None:
        raise ValueError(f"profile {profile.name!r} has no remote")

    def run_remotely(state: ProfileAgentState, config: RunnableConfig) -> dict[str, Any]:
        """Run the server's graph on this agent's view; what it added, or the ERROR reply."""
        view = list(state.get("messages") or [])
        return {"messages": remote_reply(agent=agent, profile=profile, view=view, config=config)}

    builder = StateGraph(ProfileAgentState)
    builder.add_node(REMOTE_STEP, run_remotely)
    builder.add_edge(START, REMOTE_STEP)
    builder.add_edge(REMOTE_STEP, END)
    return builder.compile(name=agent)


def remote_reply(
    *, agent: str, profile: Profile, view: Sequence[BaseMessage], config: RunnableConfig
) -> list[BaseMessage]:
    """The messages the remote run added to `view`, or one `ERROR:` reply flagged
    `REMOTE_FAILED`; never raises for anything the server (or the way to it) does."""
    remote = profile.remote
    assert remote is not None
    sent = {m.id for m in view if m.id}
    try:
        values = run_blocking(
            lambda: asyncio.wait_for(
                remote_values(remote, agent, view, local_config(config)), remote.timeout
            )
        )
        added = until_transfer([m for m in output_messages(values) if not m.id or m.id not in sent])
        if not any(isinstance(m, AIMessage) for m in added):
            raise RemoteNoReply()
    except Exception as exc:  # noqa: BLE001 - every failure becomes the specialist's ERROR reply
        return [failure_reply(agent, profile, describe_failure(exc, remote.timeout))]
    return added


async def remote_values(
    remote: Remote, agent: str, view: Sequence[BaseMessage], config: RunnableConfig
) -> Any:
    """The remote graph's final values for a stateless run on `view` (streamed into ours)."""
    client = get_client(url=remote.url, timeout=remote.timeout)
    try:
        graph = RemoteGraph(remote.graph_id, client=client, name=agent)
        last: Any = None
        async for chunk in graph.astream(
            {"messages": list(view)}, config, stream_mode="values", on_disconnect="cancel"
        ):
            last = chunk
        return last
    finally:
        await client.aclose()


def run_blocking(make: Callable[[], Any]) -> Any:
    """Run the coroutine `make()` returns to its end from synchronous code, on a loop of its
    own (in a worker thread when this thread already runs one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def local_config(config: RunnableConfig) -> RunnableConfig:
    """What `RemoteGraph` is given of our config: only what stays in process (our stream, to
    relay the server's into, and our namespace, to nest it under). It sends a config's
    primitive values to the server; there are none here: no thread id, no checkpoint keys."""
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    tags = {k: metadata[k] for k in STREAM_TAGS if k in metadata}
    local: dict[str, Any] = {"checkpoint_ns": configurable.get("checkpoint_ns", "")}
    for key, value in configurable.items():
        if isinstance(value, StreamProtocol):
            local[key] = relay_stream(value, tags)
    return {"configurable": local}


def relay_stream(stream: StreamProtocol, tags: dict[str, Any]) -> StreamProtocol:
    """Our stream, receiving the server's chunks with its `messages` as LangChain messages
    tagged like a local agent's (`RemoteGraph` relays them as the dicts the server sends)."""

    def put(chunk: Any) -> None:
        namespace, mode, data = chunk
        if mode == "messages" and isinstance(data, list | tuple) and len(data) == 2:
            message, metadata = data
            if isinstance(message, dict) and isinstance(message.get("type"), str):
                try:
                    (message,) = messages_from_dict([{"type": message["type"], "data": message}])
                except (KeyError, ValueError, TypeError):
                    pass  # a kind LangChain does not know: relayed as the server sent it
            data = (message, {**(metadata if isinstance(metadata, dict) else {}), **tags})
        stream((namespace, mode, data))  # type: ignore[misc, call-arg]

    return StreamProtocol(put, stream.modes)


def output_messages(values: Any) -> list[BaseMessage]:
    """The `messages` of the remote graph's final values, as LangChain messages."""
    found = values.get("messages") if isinstance(values, dict) else None
    if not isinstance(found, list):
        raise RemoteNoReply("the remote graph's output has no 'messages' list")
    out: list[BaseMessage] = []
    for item in found:
        if isinstance(item, BaseMessage):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("type"), str):
            out += messages_from_dict([{"type": item["type"], "data": item}])
        else:
            raise RemoteNoReply(f"the remote graph's output holds a non-message: {item!r:.80}")
    return out


def until_transfer(added: list[BaseMessage]) -> list[BaseMessage]:
    """The remote run's messages up to its first transfer call (a tool of its own named
    `return_to_orchestrator` or `handover_to_specialist`): that call stays unanswered, for our
    handover node to carry out; what the run did after it (its tool's answer) is dropped."""
    for index, message in enumerate(added):
        if isinstance(message, AIMessage) and any(
            c["name"] in TRANSFERS for c in message.tool_calls
        ):
            return added[: index + 1]
    return added


class RemoteNoReply(Exception):
    """The remote run ended without a reply we can store."""

    def __init__(self, what: str = "the remote run ended without a new assistant message") -> None:
        super().__init__(what)


def describe_failure(exc: BaseException, timeout: float) -> str:
    """What happened, in a line a person (and the orchestrator's model) can act on."""
    if isinstance(exc, TimeoutError | APITimeoutError | httpx.TimeoutException):
        return f"no answer within the timeout of {timeout:g} s; the remote run was cancelled"
    if isinstance(exc, APIConnectionError | httpx.TransportError):
        cause = exc.__cause__ or exc.__context__ or exc
        return f"cannot reach the server ({_one_line(cause)}); is it running?"
    if isinstance(exc, APIStatusError):
        return f"the server refused the run: HTTP {exc.status_code}: {_one_line(exc)}"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"the server refused the run: HTTP {exc.response.status_code}: {_one_line(exc)}"
    if isinstance(exc, RemoteException):
        data = exc.args[0] if exc.args else None
        if isinstance(data, dict):
            return f"the remote run failed: {data.get('error')}: {_one_line(data.get('message'))}"
        return f"the remote run failed: {_one_line(data)}"
    if isinstance(exc, GraphInterrupt):
        return "the remote graph paused for input (an interrupt); a remote specialist must answer"
    if isinstance(exc, ParentCommand):
        return "the remote graph sent a command to its parent graph, which it cannot do from there"
    if isinstance(exc, RemoteNoReply):
        return str(exc)
    return f"{type(exc).__name__}: {_one_line(exc)}"


def _one_line(value: Any, limit: int = 300) -> str:
    line = " ".join(str(value).split()) or type(value).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failure_reply(agent: str, profile: Profile, what: str) -> AIMessage:
    """The specialist's reply for a remote run that failed."""
    remote = profile.remote
    assert remote is not None
    return graph_reply(
        agent,
        profile,
        f"ERROR: remote specialist {profile.name} at {remote.url} (graph {remote.graph_id}): "
        f"{what}",
        REMOTE_FAILED,
    )
