"""MCP servers' tools for a profile's agent (`mcp:` in its front matter, `Profile(mcp=...)`).

Each server's tools join the agent's as `<server>__<tool>` (made safe for OpenAI's tool
names), so they cannot clash with the graph's tools, the tool sets' or another server's.

Sessions: one per server (per distinct connection) and per process, kept open between
calls, since opening one costs a process start or an HTTP handshake (bench/bench_mcp.py).
A session is bound to the event loop it was opened on, while the graph runs under many
(`invoke`, `ainvoke`, `langgraph dev`'s server loop), so every session lives on one
background loop (`async_only.background_loop`): a tool's coroutine hands its call there
and awaits the answer; its sync function waits for it.

Failures: a server that cannot start fails `build_graph` with a ValueError naming the
profile and the server. A server that fails later answers the call with `ERROR: ...`
(never an exception out of the tool) and its session is dropped, so the next call opens a
new one. A call is not retried by itself: a tool may not be safe to run twice.

langchain-mcp-adapters (the `mcp` extra) is imported only when a profile names a server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Coroutine, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool

from ...specialists import Profile
from ...specialists.remote import safe_url
from ..agents.replies import safe_tool_name
from .async_only import background_loop

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, Tool

T = TypeVar("T")

SEPARATOR = "__"
"""Between a server's name and its tool's: `files__read_file`."""

START_TIMEOUT = 30.0
"""Seconds a server may take to start, answer `initialize` and list its tools."""

CALL_TIMEOUT = 300.0
"""Seconds one tool call may take before it fails (and its session is dropped)."""

INSTALL = 'pip install "specialist-handover[mcp]"'


class McpServer:
    """One MCP server's kept session for this process; its coroutines run on the background
    loop only. `opened` counts the sessions opened so far (a reconnect adds one)."""

    def __init__(self, connection: Mapping[str, Any]) -> None:
        self.connection = dict(connection)
        self.session: ClientSession | None = None
        self.tools: list[Tool] | None = None
        self.opened = 0
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None  # the loop keeps only a weak reference
        self._lock: asyncio.Lock | None = None

    async def _open(self) -> ClientSession:
        """A new initialised session, held open by a task of its own until `_drop` (the
        transport's context must be entered and left by one task)."""
        from langchain_mcp_adapters.sessions import create_session

        connect = dict(self.connection)  # headers' `${VAR}`s now (the adapters expand env's)
        if "headers" in connect:
            connect["headers"] = {k: expand(v) for k, v in connect["headers"].items()}
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def hold() -> None:
            session = None
            try:
                async with create_session(connect) as session:  # type: ignore[arg-type]
                    await session.initialize()
                    ready.set_result(session)
                    await stop.wait()
            except Exception as exc:  # noqa: BLE001 - reported to the waiting caller
                if not ready.done():
                    ready.set_exception(exc)
            finally:
                if not ready.done():
                    ready.cancel()
                if session is not None and self.session is session:
                    self.session = None  # it ended by itself: the next call reconnects

        task = asyncio.create_task(hold())
        try:
            session = await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except BaseException:
            stop.set()
            task.cancel()
            raise
        self.session, self._stop, self._task = session, stop, task
        self.opened += 1
        return session

    async def _session(self) -> ClientSession:
        """The kept session, opened first when there is none."""
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            return self.session or await self._open()

    def _drop(self, session: ClientSession | None) -> None:
        """Close `session` if it is still the kept one: the next call opens a new one."""
        if session is not None and session is self.session:
            self.session = None
            if self._stop is not None:
                self._stop.set()

    async def list_tools(self) -> list[Tool]:
        """The server's tools (every page), listed once a process."""
        if self.tools is None:
            session = await self._session()
            found, cursor = [], None
            while True:
                page = await asyncio.wait_for(session.list_tools(cursor=cursor), START_TIMEOUT)
                found += page.tools
                cursor = page.nextCursor
                if not cursor:
                    break
            self.tools = found
        return self.tools

    async def call(self, server: str, tool: str, args: dict[str, Any]) -> str:
        """Call `tool`; a failure is an `ERROR: ...` answer, and its session is dropped (it
        may be dead or stuck), so the next call reconnects."""
        session = None
        try:
            session = await self._session()
            result = await asyncio.wait_for(session.call_tool(tool, args), CALL_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the outside world: the agent reads it
            self._drop(session)
            return (
                f"ERROR: MCP server {server!r} failed: {reason(exc)}; the next call reconnects "
                "to it"
            )
        return answer_text(result)


_servers: dict[str, McpServer] = {}
_servers_lock = threading.Lock()


def server_for(connection: Mapping[str, Any]) -> McpServer:
    """This process's `McpServer` for `connection` (one per distinct connection)."""
    key = json.dumps(connection, sort_keys=True, default=str)
    with _servers_lock:
        return _servers.setdefault(key, McpServer(connection))


def expand(value: str) -> str:
    """`${VAR}` in `value` replaced by the variable's value (left as it is when unset), so a
    profile file names a token instead of holding it."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: os.environ.get(m.group(1), m.group(0)), value)


def submit(coroutine: Coroutine[Any, Any, T]) -> Future[T]:
    """Run `coroutine` on the loop that owns every session."""
    return asyncio.run_coroutine_threadsafe(coroutine, background_loop())


def reason(exc: BaseException) -> str:
    """`Type: message` of the error itself, inside any exception groups anyio wraps it in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def answer_text(result: CallToolResult) -> str:
    """A call's result as the agent's text: its text blocks (an embedded text resource's
    too; a tool's structured content comes with its JSON as text), a placeholder for other
    content (images, audio), `ERROR: ...` for a tool error."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", getattr(getattr(block, "resource", None), "text", None))
        parts.append(text if isinstance(text, str) else f"[{block.type} content, not shown]")
    text = "\n".join(parts)
    return f"ERROR: {text or 'the tool failed'}" if result.isError else text


def mcp_tools(profile: Profile) -> list[BaseTool]:
    """The tools of `profile`'s MCP servers, named `<server>__<tool>`; each server is started
    now (once a process). Raises ValueError naming the profile and the server when the
    extra is missing, a server cannot start or two of its tools' names clash."""
    if not profile.mcp:
        return []
    where = profile.source or f"profile {profile.name!r}"
    try:
        import langchain_mcp_adapters.sessions  # noqa: F401
    except ImportError as exc:
        raise ValueError(
            f"{where}: mcp: MCP servers need langchain-mcp-adapters, which is not installed "
            f"({exc}); install it with: {INSTALL}"
        ) from None
    made: dict[str, str] = {}
    tools: list[BaseTool] = []
    for server_name, connection in profile.mcp.items():
        server = server_for(connection)
        try:
            listed = submit(server.list_tools()).result(START_TIMEOUT * 2)
        except Exception as exc:  # noqa: BLE001 - reported with the profile and server
            field, shown = (
                ("url", safe_url(connection["url"]))
                if "url" in connection
                else ("command", connection["command"])  # not its args: they may hold a key
            )
            raise ValueError(
                f"{where}: mcp.{server_name}: the MCP server ({shown}) cannot start: "
                f"{reason(exc)}; check its {field}"
            ) from None
        for spec in listed:
            tool = _tool(server, server_name, spec)
            origin = f"{server_name}.{spec.name}"
            if tool.name in made:
                raise ValueError(
                    f"{where}: mcp.{server_name}: tools {made[tool.name]!r} and {origin!r} both "
                    f"become {tool.name!r}; rename one on its server"
                )
            made[tool.name] = origin
            tools.append(tool)
    return tools


def _tool(server: McpServer, server_name: str, spec: Tool) -> StructuredTool:
    """One MCP tool as a LangChain tool whose sync and async paths both call it on the
    background loop (so `sync_capable` leaves it as it is)."""

    async def acall(**args: Any) -> str:
        return await asyncio.wrap_future(submit(server.call(server_name, spec.name, args)))

    def call(**args: Any) -> str:
        return submit(server.call(server_name, spec.name, args)).result()

    return StructuredTool(
        name=safe_tool_name(f"{server_name}{SEPARATOR}{spec.name}"),  # at most 64 characters
        description=spec.description or f"The {spec.name} tool of MCP server {server_name}.",
        args_schema=spec.inputSchema,
        func=call,
        coroutine=acall,
    )
