"""MCP tools per profile (issue 27): `mcp:` in a profile gives its agent the servers' tools.

A real MCP server (tests/mcp_server.py, the `mcp` SDK's FastMCP) over stdio and over
streamable HTTP on 127.0.0.1. The offline model calls a tool the request names, so a
request such as `notes__echo "hi"` reaches the note keeper, which calls its MCP tool.
Each test that counts sessions uses a connection of its own (an env or header tag): the
process keeps one session per distinct connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client
from mcp.types import Tool

from specialist_handover import build_graph
from specialist_handover.graph.builder import agent_tools
from specialist_handover.nodes.models.resolve import ModelChoice
from specialist_handover.nodes.tools import mcp as mcp_module
from specialist_handover.nodes.tools.mcp import INSTALL, McpServer, mcp_tools, reason, server_for
from specialist_handover.specialists import (
    ORCHESTRATOR_PROFILE,
    Profile,
    ProfileFileError,
    parse_profile,
)
from specialist_handover.specialists.registry import resolve_profiles
from tests.support.langgraph_server import free_port, langgraph_dev_server
from tests.support.models import check_tool_history

SERVER = Path(__file__).resolve().with_name("mcp_server.py")


def stdio(**extra: object) -> dict:
    """A stdio connection to the test server, distinct from every other test's."""
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"MCP_TEST_TAG": uuid.uuid4().hex},
        **extra,
    }


def keeper(mcp: dict, name: str = "note_keeper") -> Profile:
    return Profile(
        name=name,
        emoji="🗒️",
        description="Keeps the team's notes: stores, echoes and looks up notes.",
        keywords=("notes", "note keeper"),
        examples=("note keeper, echo this note",),
        prompt="You are the Note Keeper.",
        mcp=mcp,
    )


def say(graph, text: str, ctx: dict, how: str = "invoke", thread: str = "t") -> dict:  # type: ignore[no-untyped-def]
    payload = {"messages": [HumanMessage(text)]}
    config = {"configurable": {"thread_id": thread}}
    if how == "invoke":
        return graph.invoke(payload, config, context=ctx)
    return asyncio.run(graph.ainvoke(payload, config, context=ctx))


def answers(values: dict, name: str) -> list[str]:
    return [
        str(m.content) for m in values["messages"] if isinstance(m, ToolMessage) and m.name == name
    ]


def served(mode: str):  # type: ignore[no-untyped-def]
    """The test server over HTTP (`http`: streamable, `sse`) on a free loopback port."""
    proc = subprocess.Popen([sys.executable, str(SERVER), mode], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/{'sse' if mode == 'sse' else 'mcp'}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def http_url():
    yield from served("http")


@pytest.fixture(scope="module")
def sse_url():
    yield from served("sse")


# --- the profile field -------------------------------------------------------------------


PROFILE = """---
name: note_keeper
emoji: "🗒️"
description: Keeps notes.
mcp:
  notes:
    transport: stdio
    command: python
    args: [server.py, --quiet]
    env: {LEVEL: debug}
  web:
    transport: http
    url: "http://127.0.0.1:8000/mcp"
    headers: {Authorization: "Bearer ${TOKEN}"}
    timeout: 20
---
You keep notes.
"""


def test_front_matter_mcp_is_read_and_normalised():
    profile = parse_profile(PROFILE, source="note_keeper.md")
    assert profile.mcp == {
        "notes": {
            "transport": "stdio",
            "command": "python",
            "args": ["server.py", "--quiet"],
            "env": {"LEVEL": "debug"},
        },
        "web": {
            "transport": "streamable_http",
            "url": "http://127.0.0.1:8000/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
            "timeout": 20.0,
        },
    }
    python = Profile(
        name="x", description="d", prompt="p", mcp={"s": {"transport": "stdio", "command": "c"}}
    )
    assert python.mcp == {"s": {"transport": "stdio", "command": "c", "args": []}}
    assert Profile(name="x", description="d", prompt="p").mcp == {}
    assert hash(profile) == hash(replace(profile, mcp={}))  # still hashable; mcp is left out


@pytest.mark.parametrize(
    ("mcp", "error"),
    [
        (["notes"], "mcp must be a mapping of server name -> connection, got list"),
        ({"a__b": {"transport": "stdio", "command": "c"}}, "server name 'a__b' must be"),
        ({"9x": {"transport": "stdio", "command": "c"}}, "server name '9x' must be"),
        ({"s": "python server.py"}, "mcp.s must be a mapping"),
        ({"s": {"command": "c"}}, "mcp.s.transport must be one of stdio, streamable_http, sse"),
        ({"s": {"transport": "ws", "url": "u"}}, "got 'ws'"),
        ({"s": {"transport": "stdio"}}, "mcp.s.command must be a non-empty string"),
        ({"s": {"transport": "stdio", "command": "c", "args": "a b"}}, "mcp.s.args must be a list"),
        (
            {"s": {"transport": "stdio", "command": "c", "args": [1]}},
            "mcp.s.args[0] must be a string",
        ),
        (
            {"s": {"transport": "stdio", "command": "c", "env": {"P": 80}}},
            "mcp.s.env.P must be a string",
        ),
        ({"s": {"transport": "stdio", "command": "c", "url": "u"}}, "mcp.s: unknown field(s) url"),
        ({"s": {"transport": "streamable_http"}}, "mcp.s.url must be a non-empty string"),
        (
            {"s": {"transport": "streamable_http", "url": "ftp://h/mcp"}},
            "mcp.s.url must be an http(s)",
        ),
        (
            {"s": {"transport": "sse", "url": "http://h/sse", "timeout": -1}},
            "mcp.s.timeout must be",
        ),
        (
            {"s": {"transport": "sse", "url": "http://h/sse", "headers": ["a"]}},
            "mcp.s.headers must be a mapping",
        ),
    ],
)
def test_bad_mcp_fields_are_refused_naming_the_profile_and_field(mcp, error):
    with pytest.raises(ProfileFileError, match="^profile 'x': ") as raised:
        Profile(name="x", description="d", prompt="p", mcp=mcp)
    assert error in str(raised.value)


def test_a_profile_file_error_names_the_file_and_a_remote_profile_with_mcp_is_refused():
    bad = PROFILE.replace("transport: stdio", "transport: pipe")
    with pytest.raises(ProfileFileError, match=r"^note_keeper.md: mcp.notes.transport must be"):
        parse_profile(bad, source="note_keeper.md")
    remote = PROFILE.replace("mcp:", 'remote: {url: "http://127.0.0.1:2024", graph_id: g}\nmcp:')
    with pytest.raises(ProfileFileError, match="note_keeper.md: mcp: a remote specialist runs"):
        parse_profile(remote, source="note_keeper.md")


# --- the optional extra ------------------------------------------------------------------


def test_a_graph_without_mcp_never_imports_the_mcp_packages():
    code = textwrap.dedent(
        """
        import sys
        from specialist_handover import build_graph
        build_graph()
        print([m for m in sys.modules if m.split(".")[0] in ("mcp", "langchain_mcp_adapters")])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_a_profile_naming_mcp_without_the_extra_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters", None)
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters.sessions", None)
    with pytest.raises(ValueError, match="profile 'note_keeper': mcp: MCP servers need") as raised:
        build_graph(profiles=[keeper({"notes": stdio()})])
    assert INSTALL in str(raised.value) and INSTALL == 'pip install "specialist-handover[mcp]"'


# --- the agent's tools, through the graph ------------------------------------------------


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_the_specialist_calls_its_mcp_tools_over_one_kept_stdio_session(ctx, how):
    connection = stdio()
    graph = build_graph(checkpointer=InMemorySaver(), profiles=[keeper({"notes": connection})])
    values = say(graph, 'Note keeper, please notes__echo "hello"', ctx, how)
    assert values["active_agent"] == "note_keeper"
    assert answers(values, "notes__echo") == ["echo: hello"]
    check_tool_history(values["messages"])
    first = say(graph, "Note keeper, notes__whoami please", ctx, how)
    again = say(
        graph, "note keeper: notes__whoami again", ctx, "ainvoke" if how == "invoke" else how
    )
    (pid_a, session_a), (pid_b, session_b) = (
        answers(v, "notes__whoami")[-1].split() for v in (first, again)
    )
    assert pid_a == pid_b and session_a == session_b == "session=1"  # one process, one session
    # another build of the same profile in this process keeps using it
    other = build_graph(checkpointer=InMemorySaver(), profiles=[keeper({"notes": connection})])
    third = say(other, "Note keeper, notes__whoami please", ctx, how, thread="u")
    assert answers(third, "notes__whoami") == [f"{pid_a} session=1"]
    assert server_for(connection).opened == 1


def test_the_specialist_calls_its_mcp_tools_over_streamable_http(ctx, http_url):
    connection = {
        "transport": "streamable_http",
        "url": http_url,
        "headers": {"X-Tag": uuid.uuid4().hex},
    }
    graph = build_graph(checkpointer=InMemorySaver(), profiles=[keeper({"web": connection})])
    values = say(graph, 'Note keeper, please web__echo "over http"', ctx, "ainvoke")
    assert answers(values, "web__echo") == ["echo: over http"]
    numbers = [
        answers(say(graph, "Note keeper, web__whoami please", ctx, how), "web__whoami")[-1]
        for how in ("invoke", "ainvoke")
    ]
    assert numbers[0] == numbers[1] and numbers[0].endswith("session=1")
    assert server_for(connection).opened == 1


def test_sse_headers_env_and_cwd_reach_the_server(tmp_path, sse_url, monkeypatch):
    tag = uuid.uuid4().hex
    monkeypatch.setenv("MCP_TEST_SECRET", f"secret-{tag}")
    headers = {"X-Tag": tag, "Authorization": "Bearer ${MCP_TEST_SECRET}"}
    web = {"transport": "sse", "url": sse_url, "headers": headers}
    local = {**stdio(), "cwd": str(tmp_path), "env": {"MCP_TEST_TAG": "${MCP_TEST_SECRET}"}}
    profile = keeper({"web": web, "local": local})
    assert "secret" not in repr(profile) and "MCP_TEST" not in repr(profile)
    tools = {t.name: t for t in mcp_tools(profile)}
    assert tools["web__header"].invoke({"name": "x-tag"}) == tag
    assert tools["web__header"].invoke({"name": "authorization"}) == f"Bearer secret-{tag}"
    assert asyncio.run(tools["web__echo"].ainvoke({"text": "sse"})) == "echo: sse"
    assert tools["local__where"].invoke({}) == f"{tmp_path} secret-{tag}"


def test_only_that_specialist_gets_the_tools_named_server__tool():
    connection = stdio()
    registry = resolve_profiles([keeper({"notes": connection, "more": connection})])
    models = ModelChoice(None, registry)
    names = [t.name for t in agent_tools(registry, "note_keeper", models, [])]
    mine = [n for n in names if "__" in n]
    listed = ("echo", "add", "whoami", "fail", "read_me", "sleep", "where", "header", "mixed")
    assert mine == [f"{s}__{t}" for s in ("notes", "more") for t in listed]
    assert not [
        n
        for n in (t.name for t in agent_tools(registry, ORCHESTRATOR_PROFILE, models, []))
        if "__" in n
    ]
    assert server_for(connection).opened == 1  # one session for both names of one connection


def test_a_tool_error_is_an_error_answer_and_the_session_stays(ctx):
    connection = stdio()
    tools = {t.name: t for t in mcp_tools(keeper({"notes": connection}))}
    assert tools["notes__fail"].invoke({}).startswith("ERROR: Error executing tool fail: this tool")
    assert tools["notes__add"].invoke({"a": 2, "b": 3}) == "5"
    assert asyncio.run(tools["notes__read_me"].ainvoke({})) == "read me"
    assert tools["notes__mixed"].invoke({}) == "first\nthe note\n[image content, not shown]"
    assert server_for(connection).opened == 1


def test_a_call_that_takes_too_long_is_an_error_answer_and_the_next_call_reconnects(monkeypatch):
    connection = stdio()
    tools = {t.name: t for t in mcp_tools(keeper({"notes": connection}))}
    monkeypatch.setattr(mcp_module, "CALL_TIMEOUT", 0.5)
    late = tools["notes__sleep"].invoke({"seconds": 30})
    assert late == "ERROR: MCP server 'notes' failed: TimeoutError; the next call reconnects to it"
    assert tools["notes__whoami"].invoke({}).endswith("session=1")
    assert server_for(connection).opened == 2


def test_a_server_that_dies_during_a_call_answers_at_once_with_an_error():
    connection = stdio()
    tools = {t.name: t for t in mcp_tools(keeper({"notes": connection}))}
    pid = int(tools["notes__whoami"].invoke({}).split()[0].removeprefix("pid="))
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    started = time.monotonic()
    dying = tools["notes__sleep"].invoke({"seconds": 30})
    assert time.monotonic() - started < 10
    assert dying.startswith("ERROR: MCP server 'notes' failed: McpError: Connection closed")
    assert not tools["notes__whoami"].invoke({}).startswith(f"pid={pid} ")


def test_every_page_of_tools_is_listed_and_errors_are_read_inside_groups():
    pages = {None: (["a", "b"], "p2"), "p2": (["c"], "")}

    class Paged:
        async def list_tools(self, cursor=None):  # type: ignore[no-untyped-def]
            names, after = pages[cursor]
            schema = {"type": "object"}
            return SimpleNamespace(
                tools=[Tool(name=n, inputSchema=schema) for n in names], nextCursor=after
            )

    server = McpServer({"transport": "stdio", "command": "unused", "args": []})
    server.session = Paged()  # type: ignore[assignment]
    assert [t.name for t in asyncio.run(server.list_tools())] == ["a", "b", "c"]
    group = BaseExceptionGroup("unhandled errors in a TaskGroup", [ValueError("the cause")])
    assert reason(BaseExceptionGroup("outer", [group])) == "ValueError: the cause"


def test_a_server_killed_mid_thread_gives_an_error_answer_then_reconnects(ctx):
    connection = stdio()
    graph = build_graph(checkpointer=InMemorySaver(), profiles=[keeper({"notes": connection})])
    first = answers(say(graph, "Note keeper, notes__whoami please", ctx), "notes__whoami")[-1]
    pid = int(first.split()[0].removeprefix("pid="))
    os.kill(pid, signal.SIGKILL)
    failed = say(graph, 'Note keeper, please notes__echo "anyone?"', ctx)
    (error,) = answers(failed, "notes__echo")
    assert error.startswith("ERROR: MCP server 'notes' ") and "the next call reconnects" in error
    check_tool_history(failed["messages"])
    back = answers(say(graph, "note keeper: notes__whoami again", ctx, "ainvoke"), "notes__whoami")
    assert back[-1].startswith("pid=") and back[-1] != first and back[-1].endswith("session=1")
    assert server_for(connection).opened == 2


@pytest.mark.parametrize(
    ("connection", "reason"),
    [
        ({"transport": "stdio", "command": "/no/such/mcp-server"}, "No such file or directory"),
        (
            {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-c", "raise SystemExit(3)"],
            },
            "",
        ),
    ],
)
def test_a_server_that_cannot_start_fails_the_build_naming_profile_and_server(connection, reason):
    with pytest.raises(
        ValueError, match=r"^profile 'note_keeper': mcp.files: the MCP server \("
    ) as raised:
        build_graph(profiles=[keeper({"files": {**connection, "env": {"T": uuid.uuid4().hex}}})])
    assert "cannot start: " in str(raised.value) and reason in str(raised.value)
    assert "check its command" in str(raised.value)


def test_a_server_that_never_answers_fails_the_build_after_the_start_timeout(monkeypatch):
    monkeypatch.setattr(mcp_module, "START_TIMEOUT", 1.0)
    mute = {
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-c", "import time; time.sleep(60)"],
    }
    with pytest.raises(ValueError, match=r"mcp.mute: the MCP server .* cannot start: TimeoutError"):
        build_graph(profiles=[keeper({"mute": mute})])


def test_an_http_server_that_is_not_there_fails_the_build():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(
        ValueError, match=r"mcp.web: the MCP server \(http://127.0.0.1:\d+/mcp\) cannot"
    ):
        build_graph(profiles=[keeper({"web": {"transport": "streamable_http", "url": url}})])


def test_names_cannot_clash_with_the_users_tools_or_each_other():
    connection = stdio()

    @tool("notes__echo")
    def mine(text: str) -> str:
        """My own echo."""
        return text

    with pytest.raises(ValueError, match="tools\\['note_keeper'\\]: a tool named 'notes__echo'"):
        build_graph(profiles=[keeper({"notes": connection})], tools={"note_keeper": [mine]})
    # two tools whose names become one: refused at build, naming both
    clashing = stdio()
    schema = {"type": "object", "properties": {}}
    server_for(clashing).tools = [
        Tool(name="a.b", inputSchema=schema),
        Tool(name="a_b", inputSchema=schema),
    ]
    with pytest.raises(ValueError, match=r"mcp.s: tools 's.a.b' and 's.a_b' both become 's__a_b'"):
        mcp_tools(keeper({"s": clashing}))
    # a long name is cut to the 64 characters OpenAI allows
    long = stdio()
    server_for(long).tools = [Tool(name="x" * 80, inputSchema=schema)]
    (cut,) = mcp_tools(keeper({"s": long}))
    assert cut.name == "s__" + "x" * 61


# --- served by `langgraph dev` -----------------------------------------------------------

SERVED = """
import sys
from specialist_handover import Profile, build_graph

keeper = Profile(
    name="note_keeper",
    emoji="🗒️",
    description="Keeps the team's notes: stores, echoes and looks up notes.",
    keywords=("notes", "note keeper"),
    examples=("note keeper, echo this note",),
    prompt="You are the Note Keeper.",
    mcp={"notes": {"transport": "stdio", "command": sys.executable, "args": [SERVER]}},
)
graph = build_graph(profiles=[keeper])
"""


@pytest.mark.slow
def test_an_mcp_tool_works_when_served_by_langgraph_dev(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "graph.py").write_text(SERVED.replace("SERVER", repr(str(SERVER))), encoding="utf-8")
    config = {"dependencies": ["."], "graphs": {"team": "./graph.py:graph"}}
    (app / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    root = tmp_path / "project"
    root.mkdir()
    with langgraph_dev_server(log_dir=tmp_path / "logs", config=app / "langgraph.json") as server:
        client = get_sync_client(url=server.url, api_key=None)
        thread = client.threads.create()
        outputs = []
        for text in (
            'Note keeper, please notes__echo "served"',
            "Note keeper, notes__whoami please",
            "note keeper: notes__whoami again",
        ):
            out = client.runs.wait(
                thread["thread_id"],
                "team",
                input={"messages": [{"role": "user", "content": text}]},
                context={"project_root": str(root), "model": "offline"},
            )
            outputs.append(
                [
                    m["content"]
                    for m in out["messages"]
                    if m["type"] == "tool" and m["name"].startswith("notes__")
                ]
            )
        log = server.log_tail()
    assert outputs[0] == ["echo: served"], log
    assert outputs[1][-1] == outputs[2][-1] and outputs[2][-1].endswith("session=1"), log
