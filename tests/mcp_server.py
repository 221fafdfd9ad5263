"""A small real MCP server for tests/test_mcp.py and bench/bench_mcp.py (the `mcp` SDK's FastMCP).

    python tests/mcp_server.py          # over stdio (one process per client session)
    python tests/mcp_server.py http     # streamable HTTP on 127.0.0.1, a free port; prints
                                        # "PORT <n>" on its first line, serves /mcp
    python tests/mcp_server.py sse      # the same over SSE, at /sse

Tools: `echo(text)`, `add(a, b)`, `whoami()` (this process's pid and which of its client
sessions is asking, counted from 1, so a test can tell a kept session from a new one),
`fail()` (an MCP tool error), `read.me()` (a name an OpenAI tool name cannot hold),
`sleep(seconds)`, `where()` (its working folder and $MCP_TEST_TAG), `header(name)` (an HTTP
request header) and `mixed()` (text, an embedded text resource and an image).
"""

from __future__ import annotations

import os
import socket
import sys
import time
import weakref

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

server = FastMCP("test-server", log_level="WARNING")
_sessions: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
    """This server's pid and the number of the client session asking."""
    number = _sessions.setdefault(ctx.session, len(_sessions) + 1)
    return f"pid={os.getpid()} session={number}"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise RuntimeError("this tool always fails")


@server.tool(name="read.me")
def read_me() -> str:
    """A tool whose name holds a dot."""
    return "read me"


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "awake"


@server.tool()
def where() -> str:
    """This server's working folder and its MCP_TEST_TAG variable."""
    return f"{os.getcwd()} {os.environ.get('MCP_TEST_TAG', '')}"


@server.tool()
def header(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """The value of one header of the HTTP request that carried this call."""
    request = ctx.request_context.request
    return str(request.headers.get(name)) if request is not None else "no HTTP request"


@server.tool()
def mixed() -> list[object]:
    """Text, an embedded text resource and an image."""
    note = TextResourceContents(uri="note://1", text="the note")  # type: ignore[arg-type]
    return [
        TextContent(type="text", text="first"),
        EmbeddedResource(type="resource", resource=note),
        ImageContent(type="image", data="iVBORw0KGgo=", mimeType="image/png"),
    ]


def serve_http(mode: str) -> None:
    """Streamable HTTP (or SSE) on a port the OS picks, announced on stdout before serving."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # before the port is announced: a client that comes early waits, not refused
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.sse_app() if mode == "sse" else server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] in (["http"], ["sse"]):
        serve_http(sys.argv[1])
    else:
        server.run("stdio")
