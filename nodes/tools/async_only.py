"""Async-only tools under a sync run.

A `StructuredTool` made with only a coroutine (every tool langchain-mcp-adapters
makes is one) raises `NotImplementedError` under `invoke`. Under `ainvoke` the
agents await it on the run's own loop; under `invoke` (the terminal, plain
Python) `sync_capable` gives it a sync function that runs its coroutine on one
event loop per process, kept in a daemon thread, so whatever the tool keeps open
between calls (a client session) stays on one loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's loop for async-only tools called from sync code (started on first use)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="async-only-tools", daemon=True).start()
            _loop = loop
        return _loop


def is_async_only(tool: BaseTool) -> bool:
    """A tool that has a coroutine and no sync function."""
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


def sync_capable(tool: BaseTool) -> BaseTool:
    """`tool` itself, or for an async-only tool a copy that also runs under `invoke` (its
    coroutine on `background_loop`); `ainvoke` still awaits the coroutine directly."""
    if not is_async_only(tool):
        return tool
    assert isinstance(tool, StructuredTool) and tool.coroutine is not None
    coroutine = tool.coroutine

    @functools.wraps(coroutine)  # the same parameters: config and callbacks reach it as before
    def run(*args: Any, **kwargs: Any) -> Any:
        awaitable = coroutine(*args, **kwargs)

        async def awaited() -> Any:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(awaited(), background_loop()).result()

    return tool.model_copy(update={"func": run})
