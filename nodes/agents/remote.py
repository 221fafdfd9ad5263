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
  left for our handover node to carry out as if our own tool had made it. A
  tool of its own named `consult_specialists` is not ours to carry out (only the
  orchestrator consults): it is the remote's tool like any other.
- **Streaming:** `RemoteGraph` relays the server's stream into ours when it runs
  under a streaming graph; its `messages` chunks come as plain dicts, so they are
  turned into LangChain messages here, tagged with `agent` and `persona_marker`
  like a local agent's (`stream(..., stream_mode="messages", subgraphs=True)`);
  when the step ends, LangGraph streams the whole reply once, with the same id.
- **What comes back is checked** before it joins our graph (`checked_reply`), as
  a state write is: only messages that leave a valid tool-call history (each
  call answered by exactly one tool message right after it; an orphan tool
  message is dropped, an unanswered call becomes a line of text, but a last
  transfer call, which our handover node answers); at most `MAX_REPLY_MESSAGES`
  (the newest, with a note of how many were left out); no message over the run's
  `max_message_tokens` (cut, with a visible marker); only the fields a reply
  needs (no metadata of the server's that could pass for our flags). Each kept
  message is counted once at most; the others are never counted.
- **Failure:** a server that is down, redirects the run (a redirect is never
  followed), refuses it, fails it, pauses it for input or takes longer than
  `remote.timeout` seconds in all becomes the specialist's reply `ERROR: remote
  specialist <name> at <url> (graph <id>): <what happened>`, flagged
  `REMOTE_FAILED`: the conversation goes back to the orchestrator, which answers
  in the same run. No exception leaves the graph, and no URL in the line shows a
  credential (`safe_url`).

A profile with `remote.protocol: a2a` names any A2A agent instead: `a2a.py` asks it, through
the same checks (`bounded_message`) and the same failure reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import reprlib
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, messages_from_dict
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel.protocol import StreamProtocol
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client

from ...specialists import Profile, Remote
from ...state import ProfileAgentState, TokenCounter
from ...state.defaults import MAX_MESSAGE_TOKENS, MAX_REPLY_MESSAGES
from ..history.budget import tool_units
from ..tools.names import CONSULT, HANDOVER, RETURN
from .remote_common import (
    AWAITS_USER,  # noqa: F401 - imported from here (tests)
    REMOTE_FAILED,  # noqa: F401 - imported from here (tests)
    REMOTE_STEP,
    RemoteNoReply,
    bounded_message,
    describe_failure,
    failure_reply,
    one_line,
    refuse_redirects,
    reply_bounds,
    run_blocking,
    sane_id,
)
from .replies import new_call_id, safe_tool_name

STREAM_TAGS = ("agent", "persona_marker")
"""Metadata of the agent's node that tags each streamed chunk of the remote reply."""


def build_remote_agent(*, agent: str, profile: Profile) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent of a remote profile (one with `remote`): one step that runs its graph, or
    (`remote.protocol: a2a`) that asks its A2A agent (`a2a.py`, importing the a2a-sdk only
    then; without it, an ImportError that says how to install it)."""
    if profile.remote is not None and profile.remote.protocol == "a2a":
        try:
            from .a2a import build_a2a_agent  # noqa: PLC0415 - the optional a2a-sdk, only here
        except ImportError as exc:
            if (exc.name or "").partition(".")[0] != "a2a":
                raise
            raise ImportError(
                f"profile {profile.name!r} has remote.protocol 'a2a', which needs the a2a-sdk "
                f'(an optional extra): pip install "specialist-handover[a2a]"'
            ) from exc
        return build_a2a_agent(agent=agent, profile=profile)

    def run_remotely(state: ProfileAgentState, config: RunnableConfig) -> dict[str, Any]:
        """Run the server's graph on this agent's view; what it added, or the ERROR reply."""
        view = list(state.get("messages") or [])
        return {"messages": remote_reply(agent=agent, profile=profile, view=view, config=config)}

    builder = StateGraph(ProfileAgentState).add_node(REMOTE_STEP, run_remotely)
    return builder.add_edge(START, REMOTE_STEP).add_edge(REMOTE_STEP, END).compile(name=agent)


def remote_reply(
    *, agent: str, profile: Profile, view: Sequence[BaseMessage], config: RunnableConfig
) -> list[BaseMessage]:
    """The messages the remote run added to `view`, checked (`checked_reply`, bounded as
    `reply_bounds` says), or one `ERROR:` reply flagged `REMOTE_FAILED`; never raises for
    anything the server (or the way to it) does."""
    counter, cap = reply_bounds(config)
    remote = profile.remote
    assert remote is not None
    sent = {m.id for m in view if m.id}
    try:
        run = remote_values(remote, agent, view, local_config(config))
        values = run_blocking(lambda: asyncio.wait_for(run, remote.timeout))
        new = [m for m in output_messages(values) if not m.id or m.id not in sent]
        added = checked_reply(until_transfer(new), counter=counter, max_message_tokens=cap)
        if not any(isinstance(m, AIMessage) for m in added):
            raise RemoteNoReply("the remote run ended without a new assistant message")
    except Exception as exc:  # noqa: BLE001 - every failure becomes the specialist's ERROR reply
        return [failure_reply(agent, profile, describe_failure(exc, remote.timeout, remote.url))]
    return added


async def remote_values(
    remote: Remote, agent: str, view: Sequence[BaseMessage], config: RunnableConfig
) -> Any:
    """The remote graph's final values for a stateless run on `view` (streamed into ours)."""
    client = get_client(url=remote.url, timeout=remote.timeout)
    client.http.client.event_hooks["response"].append(refuse_redirects(remote.url))
    try:
        graph = RemoteGraph(str(remote.graph_id), client=client, name=agent)
        last: Any = None
        async for chunk in graph.astream(
            {"messages": list(view)}, config, stream_mode="values", on_disconnect="cancel"
        ):
            last = chunk
        return last
    finally:
        await client.aclose()


def local_config(config: RunnableConfig) -> RunnableConfig:
    """What `RemoteGraph` is given of our config: only what stays in process (our stream, to
    relay the server's into, and our namespace, to nest it under). It sends a config's
    primitive values to the server; there are none here: no thread id, no checkpoint keys."""
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    tags = {k: metadata[k] for k in STREAM_TAGS if k in metadata}
    local = {
        k: relay_stream(v, tags) for k, v in configurable.items() if isinstance(v, StreamProtocol)
    }
    return {"configurable": {"checkpoint_ns": configurable.get("checkpoint_ns", ""), **local}}


def relay_stream(stream: StreamProtocol, tags: dict[str, Any]) -> StreamProtocol:
    """Our stream, receiving the server's chunks with its `messages` as LangChain messages
    tagged like a local agent's (`RemoteGraph` relays them as the dicts the server sends)."""

    def put(chunk: Any) -> None:
        namespace, mode, data = chunk
        if mode == "messages" and isinstance(data, list | tuple) and len(data) == 2:
            message, metadata = data
            if isinstance(message, dict) and isinstance(message.get("type"), str):
                # a kind LangChain does not know: relayed as the server sent it
                with contextlib.suppress(KeyError, ValueError, TypeError):
                    (message,) = messages_from_dict([{"type": message["type"], "data": message}])
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
            shown = one_line(_SHORT.repr(item), 80)
            raise RemoteNoReply(f"the remote graph's output holds a non-message: {shown}")
    return out


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 80

REMOTE_TRANSFERS = (HANDOVER, RETURN)
"""The transfers a remote graph makes with a tool of its own, carried out by our handover node.
Not `consult_specialists`: only the orchestrator consults, and it runs in process."""


def until_transfer(added: list[BaseMessage]) -> list[BaseMessage]:
    """The remote run's messages up to its first transfer call (a tool of its own named
    `return_to_orchestrator` or `handover_to_specialist`): that call stays unanswered, for our
    handover node to carry out; what the run did after it (its tool's answer) is dropped."""
    ends = (i + 1 for i, m in enumerate(added) if isinstance(m, AIMessage) and _transfers(m))
    return added[: next(ends, len(added))]


def _transfers(message: AIMessage) -> bool:
    """Whether the message calls a transfer our handover node carries out for a remote."""
    return any(c.get("name") in REMOTE_TRANSFERS for c in message.tool_calls)


# --- what comes back, checked like a state write -------------------------------------------------

LEFT_OUT_NOTE = (
    "[… {count:,} message{s} of this remote run left out, the oldest first: a reply keeps at "
    "most {cap:,} messages]\n\n"
)
"""Opens the oldest kept message of a remote reply that was over `MAX_REPLY_MESSAGES`."""
UNANSWERED_NOTE = "\n[called {name} ({args}); the remote run gave it no result, so it is left out]"
"""Stands for a tool call of the remote's that no tool message answered."""
CONSULT_NOTE = (
    "\n[called {name} ({args}); only the orchestrator consults specialists, so it was not "
    "carried out]"
)
"""Stands for a remote's own `consult_specialists` call that its run left unanswered (our
graph carries out a remote's returns and handovers, never a consult)."""


def checked_reply(
    added: Sequence[BaseMessage],
    *,
    counter: TokenCounter,
    max_message_tokens: int = MAX_MESSAGE_TOKENS,
) -> list[BaseMessage]:
    """The remote run's messages as our graph may take them, checked like a state write:

    1. a valid tool-call history (`valid_history`);
    2. at most `MAX_REPLY_MESSAGES`, the newest whole turns, with a note of how many were left
       out (`newest_messages`);
    3. each message within `max_message_tokens`, with a visible marker where it was cut, and
       only the fields a reply needs (`bounded_message`).

    Linear: steps 1 and 2 count nothing; step 3 counts each kept message once (a cut one a few
    times more), so 20,000 messages from a server cost what the kept ones cost."""
    kept = newest_messages(valid_history(added), MAX_REPLY_MESSAGES)
    return [bounded_message(m, counter, max_message_tokens) for m in kept]


def valid_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Only what leaves a valid tool-call history: every call of an assistant message answered
    by exactly one tool message right after it.

    A tool message that answers no call of the assistant message just before it (an orphan,
    or a second answer) is dropped; a call that no tool message answers becomes a line of its
    message's text, except the calls of the last message when one of them is a transfer (our
    handover node answers them all). Call ids are made unique within the reply (a repeated or
    unusable id is replaced, in its answer too). Only assistant and tool messages are kept:
    the conversation stores no others from an agent. One pass, nothing counted."""
    used: set[str] = set()
    out: list[BaseMessage] = []
    for start, end in tool_units(messages):
        message = messages[start]
        if not isinstance(message, AIMessage):
            continue  # an orphan tool message, or a kind an agent's reply does not store
        answers = [m for m in messages[start + 1 : end] if isinstance(m, ToolMessage)]
        # the last unit (an assistant message, then tool messages only) has the last one
        pending_ok = end == len(messages) and _transfers(message)
        out += _answered_turn(message, answers, used, pending_ok)
    return out


def _answered_turn(
    message: AIMessage, answers: list[ToolMessage], used: set[str], pending_ok: bool
) -> list[BaseMessage]:
    """One assistant message and the tool messages right after it, paired (see
    `valid_history`); `used` holds the call ids of the reply so far, and takes this turn's."""
    by_call = {a.tool_call_id: a for a in reversed(answers)}  # a second answer: dropped
    renamed: dict[int, str] = {}  # id() of each kept answer -> the call id it answers now
    kept: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    unanswered: list[dict[str, Any]] = []
    calls = [(dict(c), 0) for c in message.tool_calls]
    calls += [(dict(c), 1) for c in message.invalid_tool_calls]
    for call, bucket in calls:
        raw = call.get("id")
        found = by_call.pop(raw, None) if isinstance(raw, str) else None
        if found is None and not pending_ok:
            unanswered.append(call)  # a repeated id finds its answer taken: unanswered too
            continue
        call_id = sane_id(raw)
        if call_id is None or call_id in used:
            call_id = new_call_id()
        used.add(call_id)
        if found is not None:
            renamed[id(found)] = call_id
        kept[bucket].append({**call, "id": call_id})
    kept_answers = [
        a.model_copy(update={"tool_call_id": renamed[id(a)]}) for a in answers if id(a) in renamed
    ]
    update: dict[str, Any] = {"tool_calls": kept[0], "invalid_tool_calls": kept[1]}
    if unanswered:
        update["content"] = _with_text(message.content, "".join(map(_unanswered, unanswered)))
    return [message.model_copy(update=update), *kept_answers]


def _unanswered(call: dict[str, Any]) -> str:
    args = call.get("args")
    shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    note = CONSULT_NOTE if call.get("name") == CONSULT else UNANSWERED_NOTE
    return note.format(name=safe_tool_name(call.get("name")), args=one_line(shown[:400], 200))


def _with_text(content: Any, text: str, *, before: bool = False) -> Any:
    """`content` (a string or a list of blocks) with `text` added at its end (or start)."""
    if isinstance(content, list):
        block = {"type": "text", "text": text}
        return [block, *content] if before else [*content, block]
    content = content if isinstance(content, str) else str(content or "")
    if before:
        return text + content
    return content + text if content else text.lstrip("\n")


def newest_messages(messages: list[BaseMessage], cap: int) -> list[BaseMessage]:
    """At most `cap` messages: the newest whole turns (an assistant message with its tool
    messages is one), the oldest kept opening with a note of how many were left out. A single
    turn over `cap` keeps its first calls and their answers."""
    if len(messages) <= cap:
        return messages
    starts = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    first = min((s for s in starts if len(messages) - s <= cap), default=len(messages))
    if first == len(messages):  # the newest turn alone is over the cap: its first calls
        start = starts[-1]
        kept = _shrunk_turn(messages[start], messages[start + 1 :], cap)
    else:
        kept = list(messages[first:])
    left = len(messages) - len(kept)
    note = LEFT_OUT_NOTE.format(count=left, s="" if left == 1 else "s", cap=cap)
    head = kept[0]
    kept[0] = head.model_copy(update={"content": _with_text(head.content, note, before=True)})
    return kept


def _shrunk_turn(message: BaseMessage, answers: list[BaseMessage], cap: int) -> list[BaseMessage]:
    """An assistant message with its first `cap - 1` answered calls and their answers (its
    calls that no answer is for, left for our handover node, stay)."""
    assert isinstance(message, AIMessage)
    kept_answers = answers[: max(cap - 1, 0)]
    # the reply's call ids are unique (`valid_history`): an answer left out is its call's only one
    dropped = {a.tool_call_id for a in answers[len(kept_answers) :] if isinstance(a, ToolMessage)}
    update = {
        "tool_calls": [c for c in message.tool_calls if c.get("id") not in dropped],
        "invalid_tool_calls": [c for c in message.invalid_tool_calls if c.get("id") not in dropped],
    }
    return [message.model_copy(update=update), *kept_answers]
