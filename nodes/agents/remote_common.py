"""What every remote specialist shares, a LangGraph graph (`remote.py`) or an A2A agent
(`a2a.py`): its one step and its flags, its reply bounded before it joins our graph
(`bounded_message`), redirects refused, and a failure said in one line (`failure_reply`),
never showing a credential. Kept apart from both runners, which import it, so that
`remote.py` can choose the A2A runner without an import cycle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt, ParentCommand
from langgraph.pregel.remote import RemoteException
from langgraph.runtime import get_runtime
from langgraph_sdk.errors import APIConnectionError, APIStatusError, APITimeoutError

from ...specialists import Profile
from ...specialists.remote import safe_url
from ...state import MEMBER_RUN_KEY, MemberRun, TokenCounter, coerce_context, token_counter
from ...state.defaults import MAX_MESSAGE_TOKENS
from ...state.langgraph_internals import remote_error_of
from .replies import capped_message, graph_reply, safe_tool_name

REMOTE_FAILED = "remote_specialist_failed"
"""Metadata flag of the reply that stands for a remote run that failed: the conversation goes
back to the orchestrator, which answers in the same run."""
AWAITS_USER = "remote_awaits_user"
"""Metadata flag of a remote specialist's reply that asks the user for input (an A2A task
`input-required`): the conversation stays with it whatever its return condition, so the
user's next turn answers it (`member.py`). A LangGraph server cannot set it: its replies keep
only `KEPT_METADATA`."""
REMOTE_STEP = "remote"
"""The one node of a remote agent's graph."""


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
        target = None  # a Location that does not join as a URL: shown as it is
        with contextlib.suppress(httpx.InvalidURL, ValueError, TypeError):
            target = response.request.url.join(location) if location else None
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


def sane_id(value: Any) -> str | None:
    """An id as the server gave it when it is usable as ours (short printable text), else
    None."""
    usable = isinstance(value, str) and 0 < len(value) <= ID_MAX_CHARS and value.isprintable()
    return value if usable else None


def bounded_message(
    message: BaseMessage, counter: TokenCounter, max_message_tokens: int
) -> BaseMessage:
    """The message within `max_message_tokens` (less `MESSAGE_SLACK`), cut as any agent's
    message is (`capped_message`: a visible `[cut: ...]` marker naming `max_message_tokens`,
    a transfer's arguments keeping their shape), text safe to store (no NUL, no lone
    surrogate), with only the fields an agent's reply needs: a fresh message, so nothing else
    the server sent (metadata, artifacts) is stored or read as one of our flags."""
    if isinstance(message, AIMessage):
        metadata = {k: v for k, v in message.response_metadata.items() if k in KEPT_METADATA}
        if len(json.dumps(metadata, default=str)) > METADATA_MAX_CHARS:
            metadata = {}
        invalid = [{**c, "error": _short(c.get("error"))} for c in message.invalid_tool_calls]
        fresh: BaseMessage = AIMessage(
            content=message.content,
            tool_calls=list(message.tool_calls),
            invalid_tool_calls=invalid,
            id=sane_id(message.id) or f"msg-{uuid.uuid4().hex}",
            name=message.name if sane_id(message.name) else None,
            response_metadata=metadata,
            usage_metadata=message.usage_metadata,
        )
    else:
        assert isinstance(message, ToolMessage)
        fresh = ToolMessage(
            content=message.content,
            tool_call_id=message.tool_call_id,
            name=safe_tool_name(message.name) if message.name else None,
            id=sane_id(message.id) or f"tool-{uuid.uuid4().hex}",
            status="error" if message.status == "error" else "success",
        )
    cap = max(max_message_tokens - MESSAGE_SLACK, 1)
    why = f"max_message_tokens={max_message_tokens:,}"
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
    """The remote run ended without a reply we can store; the message says how."""


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
        return f"cannot reach the server ({one_line(cause)}); is it running?"
    if isinstance(exc, APIStatusError | httpx.HTTPStatusError):
        status = exc.status_code if isinstance(exc, APIStatusError) else exc.response.status_code
        return f"the server refused the run: HTTP {status}: {one_line(exc)}"
    if isinstance(exc, RemoteException):
        data = remote_error_of(exc)
        if isinstance(data, dict):
            return f"the remote run failed: {data.get('error')}: {one_line(data.get('message'))}"
        return f"the remote run failed: {one_line(data)}"
    if isinstance(exc, GraphInterrupt):
        return "the remote graph paused for input (an interrupt); a remote specialist must answer"
    if isinstance(exc, ParentCommand):
        return "the remote graph sent a command to its parent graph, which it cannot do from there"
    if isinstance(exc, RemoteNoReply):
        return str(exc)
    return f"{type(exc).__name__}: {one_line(exc)}"


def _redirect_line(exc: RemoteRedirect, url: str | None) -> str:
    if not exc.location:
        return (
            f"the server answered the run with HTTP {exc.status} (a redirect without a "
            "Location), which is not followed; check remote.url"
        )
    shown = safe_url(one_line(exc.location, 300))
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


def one_line(value: Any, limit: int = 300) -> str:
    line = " ".join(str(value).split()) or type(value).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failure_reply(agent: str, profile: Profile, what: str) -> AIMessage:
    """The specialist's reply for a remote run that failed (no URL in it shows a credential)."""
    remote = profile.remote
    assert remote is not None
    where = "A2A agent" if remote.protocol == "a2a" else f"graph {remote.graph_id}"
    return graph_reply(
        agent,
        profile,
        f"ERROR: remote specialist {profile.name} at {safe_url(remote.url)} ({where}): "
        f"{_scrubbed(what)}",
        REMOTE_FAILED,
    )
