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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import reprlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, messages_from_dict
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt, ParentCommand
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel.protocol import StreamProtocol
from langgraph.pregel.remote import RemoteException, RemoteGraph
from langgraph.runtime import get_runtime
from langgraph_sdk import get_client
from langgraph_sdk.errors import APIConnectionError, APIStatusError, APITimeoutError

from ...specialists import Profile, Remote
from ...specialists.remote import safe_url
from ...state import (
    MEMBER_RUN_KEY,
    MemberRun,
    ProfileAgentState,
    TokenCounter,
    coerce_context,
    token_counter,
)
from ...state.defaults import MAX_MESSAGE_TOKENS, MAX_REPLY_MESSAGES
from ...state.langgraph_internals import remote_error_of
from ..history.budget import tool_units
from ..tools.names import CONSULT, HANDOVER, RETURN
from .replies import capped_message, graph_reply, new_call_id, safe_tool_name

REMOTE_FAILED = "remote_specialist_failed"
"""Metadata flag of the reply that stands for a remote run that failed: the conversation goes
back to the orchestrator, which answers in the same run."""
REMOTE_STEP = "remote"
"""The one node of a remote agent's graph."""
STREAM_TAGS = ("agent", "persona_marker")
"""Metadata of the agent's node that tags each streamed chunk of the remote reply."""


def build_remote_agent(*, agent: str, profile: Profile) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent of a remote profile (one with `remote`): one step that runs its graph."""

    def run_remotely(state: ProfileAgentState, config: RunnableConfig) -> dict[str, Any]:
        """Run the server's graph on this agent's view; what it added, or the ERROR reply."""
        view = list(state.get("messages") or [])
        counter, cap = reply_bounds(config)
        return {
            "messages": remote_reply(
                agent=agent,
                profile=profile,
                view=view,
                config=config,
                counter=counter,
                max_message_tokens=cap,
            )
        }

    builder = StateGraph(ProfileAgentState).add_node(REMOTE_STEP, run_remotely)
    return builder.add_edge(START, REMOTE_STEP).add_edge(REMOTE_STEP, END).compile(name=agent)


def reply_bounds(config: RunnableConfig) -> tuple[TokenCounter, int]:
    """The agent's token counter (its node's, from the `MemberRun` in the config) and the run
    context's `max_message_tokens`; the defaults when the agent runs outside our graph."""
    member = (config.get("configurable") or {}).get(MEMBER_RUN_KEY)
    counter = member.counter if isinstance(member, MemberRun) else None
    try:
        cap = coerce_context(get_runtime().context).max_message_tokens
    except (RuntimeError, TypeError, ValueError):  # outside our graph; or a context it refuses
        cap = MAX_MESSAGE_TOKENS
    return counter or token_counter(), cap


def remote_reply(
    *,
    agent: str,
    profile: Profile,
    view: Sequence[BaseMessage],
    config: RunnableConfig,
    counter: TokenCounter | None = None,
    max_message_tokens: int = MAX_MESSAGE_TOKENS,
) -> list[BaseMessage]:
    """The messages the remote run added to `view`, checked (`checked_reply`), or one
    `ERROR:` reply flagged `REMOTE_FAILED`; never raises for anything the server (or the way
    to it) does."""
    remote = profile.remote
    assert remote is not None
    sent = {m.id for m in view if m.id}
    try:
        values = run_blocking(
            lambda: asyncio.wait_for(
                remote_values(remote, agent, view, local_config(config)), remote.timeout
            )
        )
        added = checked_reply(
            until_transfer([m for m in output_messages(values) if not m.id or m.id not in sent]),
            counter=counter or token_counter(),
            max_message_tokens=max_message_tokens,
        )
        if not any(isinstance(m, AIMessage) for m in added):
            raise RemoteNoReply()
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
        graph = RemoteGraph(remote.graph_id, client=client, name=agent)
        last: Any = None
        async for chunk in graph.astream(
            {"messages": list(view)}, config, stream_mode="values", on_disconnect="cancel"
        ):
            last = chunk
        return last
    finally:
        await client.aclose()


class RemoteRedirect(Exception):
    """The server answered the run with a redirect (HTTP 3xx), which is never followed. `base`:
    the address to set as `remote.url` when the redirect's target is the same server API at
    another place (its path ends as ours did), else ""."""

    def __init__(self, status: int, location: str | None, base: str) -> None:
        super().__init__(status, location)
        self.status, self.location, self.base = status, location, base


def refuse_redirects(remote_url: str) -> Callable[[httpx.Response], Any]:
    """The remote client's response hook: a redirect (any HTTP 3xx) ends the run as what it
    is, instead of being read as a broken event stream ("cannot reach the server"). httpx does
    not follow it, and neither do we, to the same host or another."""
    base_path = urlsplit(remote_url).path.rstrip("/")

    async def hook(response: httpx.Response) -> None:
        if not 300 <= response.status_code < 400:
            return
        location = response.headers.get("location")
        base = ""
        if location:
            try:
                target = response.request.url.join(location)
            except (httpx.InvalidURL, ValueError, TypeError):
                target = None
            if target is not None:
                location = str(target)
                asked = response.request.url.path
                suffix = asked[len(base_path) :] if asked.startswith(base_path) else ""
                if suffix.strip("/") and target.path.endswith(suffix):
                    netloc = target.netloc.decode("ascii", "replace")  # no userinfo
                    base = f"{target.scheme}://{netloc}{target.path[: -len(suffix)]}"
        raise RemoteRedirect(response.status_code, location, base.rstrip("/"))

    return hook


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
            shown = _one_line(_SHORT.repr(item), 80)
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
KEPT_METADATA = frozenset(
    "model_name model_provider finish_reason system_fingerprint service_tier token_usage".split()
)
"""What a remote reply's `response_metadata` keeps (small, and nothing our graph reads as a
flag: a server must not mark its reply as a failure, a stop or a note of the graph's)."""
MESSAGE_SLACK = 64
"""Tokens of `max_message_tokens` a remote message leaves free for what storing it adds (the
chat framing, the specialist's name, a speaker label): stored, it stays within the cap."""
METADATA_MAX_CHARS = 2000
"""A remote reply's kept metadata as JSON at most; larger, it is left out."""
ID_MAX_CHARS = 128
"""A message or tool-call id from the server longer than this (or not printable) is replaced."""


def checked_reply(
    added: Sequence[BaseMessage],
    *,
    counter: TokenCounter,
    max_message_tokens: int = MAX_MESSAGE_TOKENS,
    max_messages: int = MAX_REPLY_MESSAGES,
) -> list[BaseMessage]:
    """The remote run's messages as our graph may take them, checked like a state write:

    1. a valid tool-call history (`valid_history`);
    2. at most `max_messages`, the newest whole turns, with a note of how many were left out
       (`newest_messages`);
    3. each message within `max_message_tokens`, with a visible marker where it was cut, and
       only the fields a reply needs (`bounded_message`).

    Linear: steps 1 and 2 count nothing; step 3 counts each kept message once (a cut one a few
    times more), so 20,000 messages from a server cost what the `max_messages` kept cost."""
    kept = newest_messages(valid_history(added), max_messages)
    cap = max(max_message_tokens - MESSAGE_SLACK, 1)
    why = f"max_message_tokens={max_message_tokens:,}"
    return [bounded_message(m, counter=counter, cap=cap, why=why) for m in kept]


def _sane_id(value: Any) -> str | None:
    """An id as the server gave it when it is usable as ours (short printable text), else
    None."""
    usable = isinstance(value, str) and 0 < len(value) <= ID_MAX_CHARS and value.isprintable()
    return value if usable else None


def valid_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Only what leaves a valid tool-call history: every call of an assistant message answered
    by exactly one tool message right after it.

    A tool message that answers no call of the assistant message just before it (an orphan,
    or a second answer) is dropped; a call that no tool message answers becomes a line of its
    message's text, except the calls of the last message when one of them is a transfer (our
    handover node answers them all). Call ids are made unique within the reply (a repeated or
    unusable id is replaced, in its answer too). Only assistant and tool messages are kept:
    the conversation stores no others from an agent. One pass, nothing counted."""
    last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    used: set[str] = set()
    out: list[BaseMessage] = []
    for start, end in tool_units(messages):
        message = messages[start]
        if not isinstance(message, AIMessage):
            continue  # an orphan tool message, or a kind an agent's reply does not store
        answers = [m for m in messages[start + 1 : end] if isinstance(m, ToolMessage)]
        pending_ok = start == last_ai and end == len(messages) and _transfers(message)
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
        call_id = _sane_id(raw)
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
    return note.format(name=safe_tool_name(call.get("name")), args=_one_line(shown[:400], 200))


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
    kept = {a.tool_call_id for a in kept_answers if isinstance(a, ToolMessage)}
    answered = {a.tool_call_id for a in answers if isinstance(a, ToolMessage)}

    def stays(call: Any) -> bool:
        return call.get("id") in kept or call.get("id") not in answered

    update = {
        "tool_calls": [c for c in message.tool_calls if stays(c)],
        "invalid_tool_calls": [c for c in message.invalid_tool_calls if stays(c)],
    }
    return [message.model_copy(update=update), *kept_answers]


def bounded_message(
    message: BaseMessage, *, counter: TokenCounter, cap: int, why: str = ""
) -> BaseMessage:
    """The message within `cap` tokens, cut as any agent's message is (`capped_message`: a
    visible `[cut: ...]` marker, a transfer's arguments keeping their shape), text safe to
    store (no NUL, no lone surrogate), with only the fields an agent's reply needs: a fresh
    message, so nothing else the server sent (metadata, artifacts) is stored or read as one of
    our flags. `why` names the bound in the marker (default: `cap`)."""
    if isinstance(message, AIMessage):
        metadata = {k: v for k, v in message.response_metadata.items() if k in KEPT_METADATA}
        if len(json.dumps(metadata, default=str)) > METADATA_MAX_CHARS:
            metadata = {}
        invalid = [{**c, "error": _short(c.get("error"))} for c in message.invalid_tool_calls]
        fresh: BaseMessage = AIMessage(
            content=message.content,
            tool_calls=list(message.tool_calls),
            invalid_tool_calls=invalid,
            id=_sane_id(message.id) or f"msg-{uuid.uuid4().hex}",
            name=message.name if _sane_id(message.name) else None,
            response_metadata=metadata,
            usage_metadata=message.usage_metadata,
        )
    else:
        assert isinstance(message, ToolMessage)
        fresh = ToolMessage(
            content=message.content,
            tool_call_id=message.tool_call_id,
            name=safe_tool_name(message.name) if message.name else None,
            id=_sane_id(message.id) or f"tool-{uuid.uuid4().hex}",
            status="error" if message.status == "error" else "success",
        )
    short, _ = capped_message(fresh, cap, counter, why=why)
    fields = ["content"]
    if isinstance(short, AIMessage):
        fields += ["tool_calls", "invalid_tool_calls", "response_metadata"]
    return short.model_copy(update={field: _clean(getattr(short, field)) for field in fields})


def _short(error: Any) -> str | None:
    return error[:500] if isinstance(error, str) else None


_UNSAFE_TEXT = re.compile("[\x00\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """Strings safe to store anywhere (PostgreSQL refuses NUL, UTF-8 lone surrogates): each
    replaced by U+FFFD, in nested lists and mappings too."""
    if isinstance(value, str):
        return _UNSAFE_TEXT.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


class RemoteNoReply(Exception):
    """The remote run ended without a reply we can store."""

    def __init__(self, what: str = "the remote run ended without a new assistant message") -> None:
        super().__init__(what)


def describe_failure(exc: BaseException, timeout: float, url: str | None = None) -> str:
    """What happened, in a line a person (and the orchestrator's model) can act on; every URL in
    it shown as `safe_url` shows it (`url`: the remote's, to say whether a redirect leaves its
    host)."""
    return _scrubbed(_what_failed(exc, timeout, url))


def _what_failed(exc: BaseException, timeout: float, url: str | None) -> str:
    if isinstance(exc, RemoteRedirect):
        return _redirect_line(exc, url)
    if isinstance(exc, TimeoutError | APITimeoutError | httpx.TimeoutException):
        return f"no answer within the timeout of {timeout:g} s; the remote run was cancelled"
    if isinstance(exc, APIConnectionError | httpx.TransportError):
        cause = exc.__cause__ or exc.__context__ or exc
        return f"cannot reach the server ({_one_line(cause)}); is it running?"
    if isinstance(exc, APIStatusError | httpx.HTTPStatusError):
        status = exc.status_code if isinstance(exc, APIStatusError) else exc.response.status_code
        return f"the server refused the run: HTTP {status}: {_one_line(exc)}"
    if isinstance(exc, RemoteException):
        data = remote_error_of(exc)
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


def _redirect_line(exc: RemoteRedirect, url: str | None) -> str:
    if not exc.location:
        return (
            f"the server answered the run with HTTP {exc.status} (a redirect without a "
            "Location), which is not followed; check remote.url"
        )
    shown = safe_url(_one_line(exc.location, 300))
    elsewhere = url is not None and _origin(exc.location) != _origin(url)
    where = "to another host, " if elsewhere else "to "
    fix = f"set remote.url to {safe_url(exc.base) if exc.base else 'the final address'}"
    return (
        f"the server redirected the run (HTTP {exc.status}) {where}{shown}; redirects are not "
        f"followed: {fix} if that is the server you mean"
    )


def _origin(url: str) -> tuple[str, str, int | None]:
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        return parts.scheme, (parts.hostname or "").lower(), port
    except ValueError:
        return "", url, None


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*[^\s'\"<>`.,;:!?)\]]")


def _scrubbed(text: str) -> str:
    """`text` with every URL in it shown as `safe_url` shows it (no userinfo, no query or
    fragment values): a server's error, a client's message or a redirect's Location may
    carry a credential."""
    return _URL.sub(lambda m: safe_url(m.group(0)), text)


def _one_line(value: Any, limit: int = 300) -> str:
    line = " ".join(str(value).split()) or type(value).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failure_reply(agent: str, profile: Profile, what: str) -> AIMessage:
    """The specialist's reply for a remote run that failed (no URL in it shows a credential)."""
    remote = profile.remote
    assert remote is not None
    return graph_reply(
        agent,
        profile,
        f"ERROR: remote specialist {profile.name} at {safe_url(remote.url)} (graph "
        f"{remote.graph_id}): {_scrubbed(what)}",
        REMOTE_FAILED,
    )
