"""Benchmark: one MCP tool call over a kept stdio session vs a new session per call.

    .venv/bin/python bench/bench_mcp.py [--calls 20]

The server is tests/mcp_server.py over stdio (the `mcp` SDK's FastMCP), its `echo` tool.

- `kept session`: the tool as a profile's `mcp:` gives it (nodes/tools/mcp.py): the
  session opened at build time stays open, each call goes to the background loop that owns
  it; measured through the tool's `ainvoke` and its `invoke`;
- `new session per call`: langchain-mcp-adapters' tool made from a connection only
  (`load_mcp_tools(None, connection=...)`), which starts the server, initialises a session,
  calls and stops it, every call.

Figures are the median and min over `--calls` calls, in milliseconds (after one warm-up call).
Needs the `mcp` extra: pip install -e ".[mcp]".
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from langchain_mcp_adapters.tools import load_mcp_tools

from specialist_handover.nodes.tools.mcp import mcp_tools
from specialist_handover.specialists import Profile

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp_server.py"
CONNECTION = {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)]}


async def _timed(call: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    await call()  # warm-up: the first call of each kind imports and connects
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    calls = parser.parse_args().calls
    profile = Profile(name="bench", description="Bench.", prompt="Bench.", mcp={"s": CONNECTION})
    kept = {t.name: t for t in mcp_tools(profile)}["s__echo"]
    (fresh,) = [
        t for t in asyncio.run(load_mcp_tools(None, connection=CONNECTION)) if t.name == "echo"
    ]
    args = {"text": "hi"}

    async def sync_path() -> object:
        return kept.invoke(args)

    rows = {
        "kept session (ainvoke)": asyncio.run(_timed(lambda: kept.ainvoke(args), calls)),
        "kept session (invoke)": asyncio.run(_timed(sync_path, calls)),
        "new session per call": asyncio.run(_timed(lambda: fresh.ainvoke(args), calls)),
    }
    print(f"MCP tool call over stdio, {calls} calls, ms")
    print(f"{'':26} {'median':>8} {'min':>8}")
    for label, times in rows.items():
        print(f"{label:26} {statistics.median(times):8.1f} {min(times):8.1f}")
    ratio = statistics.median(rows["new session per call"]) / statistics.median(
        rows["kept session (ainvoke)"]
    )
    print(f"a kept session is {ratio:.0f}x faster per call")


if __name__ == "__main__":
    main()
