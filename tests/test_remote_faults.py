"""A red team's findings about remote specialists, each reproduced, and what holds now.

1. No error shows a credential from any part of a URL: userinfo, query or fragment values
   (`safe_url`), in validation errors, run failures and "cannot reach the server" lines.
2. A URL with a control character (CR, LF, TAB, other C0, DEL) is refused where it enters.
3. A redirect from the server is reported as a redirect, and never followed.
4. What a remote run returns is checked before it joins our graph: a valid tool-call history
   only (no orphan tool message), at most `MAX_REPLY_MESSAGES` (the newest, with a note),
   no message over `max_message_tokens` (cut with a marker), with linear counting.
5. A remote specialist's own `consult_specialists` call leaves no trail record naming 'None'.

No `langgraph dev` is needed: a fake `RemoteGraph` stands for the server where only its
reply matters, and small HTTP servers on loopback where the HTTP exchange does.
"""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk.errors import APIConnectionError

from specialist_handover import Profile, ProfileFileError, build_graph
from specialist_handover.nodes.agents import remote as remote_module
from specialist_handover.nodes.agents.remote import (
    REMOTE_FAILED,
    checked_reply,
    describe_failure,
    remote_reply,
)
from specialist_handover.specialists import parse_profile
from specialist_handover.specialists.remote import safe_url
from specialist_handover.state import TokenCounter, token_counter
from specialist_handover.state.defaults import MAX_REPLY_MESSAGES
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history

SECRET = "SECRETVALUE42"


def remote_profile(name: str = "remote_x", url: str = "http://127.0.0.1:9", **more: Any) -> Profile:
    return Profile(
        name=name,
        emoji="🛰️",
        description=f"Runs {name} on a LangGraph server.",
        prompt="(the remote graph brings its own prompt)",
        remote={"url": url, "graph_id": "g", **more},
    )


FILE = """\
---
name: remote_reviewer
emoji: "🛰️"
description: "Reviews code on the review team's deployment."
remote:
  url: "{url}"
  graph_id: reviewer
---

(the remote graph brings its own prompt)
"""


def refusal(url: str, *, from_file: bool) -> str:
    """The error a profile with this `remote.url` raises (from a file's front matter or from a
    `Profile` object)."""
    with pytest.raises(ProfileFileError) as refused:
        if from_file:
            parse_profile(FILE.format(url=url), source="team/remote_reviewer.md")
        else:
            remote_profile(url=url)
    return str(refused.value)


# --- 1. no credential in any message that shows a URL --------------------------------------------

LEAKING_URLS = [
    f"ftp://user:{SECRET}@host/x",
    f"http://host/?api_key={SECRET}",
    f"http://host/#access_token={SECRET}",
    f"http://user:{SECRET}@host:99999/",
    f"https://host/api?v=2&token={SECRET}",
    f"http://host/?{SECRET}",
    f"http://user:{SECRET}/x@host/",  # a password with a slash: a parser reads it as a path
    f"http://[::1/?token={SECRET}",  # a host that cannot be read
]


@pytest.mark.parametrize("from_file", [False, True], ids=["object", "file"])
@pytest.mark.parametrize("url", LEAKING_URLS)
def test_url_errors_never_echo_a_credential(url, from_file):
    said = refusal(url.replace('"', ""), from_file=from_file)
    where = "team/remote_reviewer.md" if from_file else "profile 'remote_x'"
    assert said.startswith(f"{where}: remote.url "), said
    assert SECRET not in said, said


def test_safe_url_hides_userinfo_and_every_query_and_fragment_value():
    assert safe_url("https://me:pw@host:8443/api?api_key=S&v=2#access_token=T") == (
        "https://***@host:8443/api?api_key=***&v=***#access_token=***"
    )
    assert safe_url("http://host/?BARETOKEN") == "http://host/?***"
    assert safe_url("//me:pw@host/x") == "//***@host/x"  # no scheme: userinfo still hidden
    assert safe_url("http://127.0.0.1:2024") == "http://127.0.0.1:2024"  # nothing to hide
    assert safe_url(None) == "None" and safe_url("http://[::1") == "http://[::1"  # never raises


@pytest.mark.parametrize(
    "exc",
    [
        APIConnectionError(
            message=f"failed for http://u:{SECRET}@h/?api_key={SECRET}",
            request=httpx.Request("POST", "http://h/runs/stream"),
        ),
        httpx.ConnectError(f"cannot connect to https://h/x#access_token={SECRET}"),
        ValueError(f"Refusing to follow cross-origin reconnect Location: 'http://e/?t={SECRET}'"),
    ],
)
def test_run_failures_never_echo_a_credential(exc):
    if isinstance(exc, APIConnectionError):  # the SDK's: its cause says what happened
        exc.__cause__ = httpx.ConnectError(f"all attempts at http://u:{SECRET}@h failed")
    said = describe_failure(exc, 5.0)
    assert SECRET not in said and "***" in said, said
    reply = remote_module.failure_reply("remote_x", remote_profile(), said)
    assert SECRET not in reply.text and reply.response_metadata[REMOTE_FAILED]


# --- 2. control characters are refused where the URL enters ---------------------------------------

CONTROLS = {"CR": "\r", "LF": "\n", "TAB": "\t", "NUL": "\x00", "ESC": "\x1b", "DEL": "\x7f"}


@pytest.mark.parametrize("from_file", [False, True], ids=["object", "file"])
@pytest.mark.parametrize("name", list(CONTROLS))
def test_a_control_character_in_a_url_is_refused_naming_the_field(name, from_file):
    char = CONTROLS[name]
    # a header smuggled into the URL, and a key after it: refused, and not echoed
    url = f"http://127.0.0.1:2024/api{char}X-Api-Key: {SECRET}"
    if from_file:  # written with a YAML escape in a double-quoted string
        url = url.replace(char, f"\\x{ord(char):02x}")
    said = refusal(url, from_file=from_file)
    where = "team/remote_reviewer.md" if from_file else "profile 'remote_x'"
    assert said.startswith(
        f"{where}: remote.url must not contain control characters or spaces: it holds a "
        f"control character (U+{ord(char):04X}) at position 25"
    ), said
    assert SECRET not in said


@pytest.mark.parametrize("url", ["http://127.0.0.1:2024\r\n", "\thttp://h", "http://h ost"])
def test_a_control_character_or_space_at_either_end_or_inside_is_refused_too(url):
    assert "must not contain control characters or spaces" in refusal(url, from_file=False)


# --- 3. a redirect is reported as a redirect, and never followed ------------------------------------


class Stub(http.server.ThreadingHTTPServer):
    """A loopback HTTP server answering every request with `answer(path)` -> (status,
    headers); it counts the requests it got."""

    def __init__(self, answer: Callable[[str], tuple[int, dict[str, str]]]) -> None:
        self.answer = answer
        self.requests: list[str] = []

        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _reply(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                stub.requests.append(f"{self.command} {self.path}")
                status, headers = stub.answer(self.path)
                self.send_response(status)
                for key, value in {**headers, "content-length": "0"}.items():
                    self.send_header(key, value)
                self.end_headers()

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@contextlib.contextmanager
def stub_server(answer: Callable[[str], tuple[int, dict[str, str]]]) -> Iterator[Stub]:
    server = Stub(answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def run_remote(profile: Profile, **kwargs: Any) -> list[BaseMessage]:
    view = [HumanMessage("HANDOVER PACKAGE (stage 1) ...", name="handover", id="package-1")]
    return remote_reply(agent=profile.name, profile=profile, view=view, config={}, **kwargs)


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_to_another_host_is_reported_as_one_and_not_followed(status):
    with stub_server(lambda path: (200, {})) as elsewhere:
        # `localhost`, not 127.0.0.1: another host name, on loopback
        target = f"http://user:{SECRET}@localhost:{elsewhere.port}/runs/stream?api_key={SECRET}"
        with stub_server(lambda path: (status, {"Location": target})) as server:
            url = f"http://127.0.0.1:{server.port}"
            started = time.monotonic()
            (reply,) = run_remote(remote_profile(url=url, timeout=5))
            took = time.monotonic() - started
    said = reply.text
    assert reply.response_metadata[REMOTE_FAILED]
    assert said.startswith(
        f"ERROR: remote specialist remote_x at {url} (graph g): the server redirected the run "
        f"(HTTP {status}) to another host, http://***@localhost:{elsewhere.port}/runs/stream"
        "?api_key=***; redirects are not followed: set remote.url to "
        f"http://localhost:{elsewhere.port} if that is the server you mean"
    ), said
    assert "cannot reach" not in said and SECRET not in said
    assert server.requests == ["POST /runs/stream"]  # asked once: no retry of a redirect
    assert elsewhere.requests == []  # never followed
    assert took < 5, took


def test_a_redirect_on_the_same_server_names_the_address_to_set():
    with stub_server(lambda path: (308, {"Location": "/v2/runs/stream"})) as server:
        url = f"http://127.0.0.1:{server.port}"
        (reply,) = run_remote(remote_profile(url=url, timeout=5))
        assert server.requests == ["POST /runs/stream"]
    assert reply.text.endswith(
        f"the server redirected the run (HTTP 308) to {url}/v2/runs/stream; redirects are not "
        f"followed: set remote.url to {url}/v2 if that is the server you mean"
    ), reply.text


# --- 4. what a remote run returns is checked before it joins our graph ---------------------------


class FakeRemoteGraph:
    """Stands for `RemoteGraph`: its one values chunk is the view and `reply(view)`."""

    reply: Callable[[list[Any]], list[Any]] = staticmethod(lambda view: [])

    def __init__(self, graph_id: str, *, client: Any = None, name: str | None = None) -> None:
        self.graph_id = graph_id

    async def astream(self, input: Any, config: Any = None, **kwargs: Any):  # type: ignore[no-untyped-def]
        view = list(input["messages"])
        yield {"messages": [*view, *type(self).reply(view)]}


@pytest.fixture
def fake_remote(monkeypatch):  # type: ignore[no-untyped-def]
    """Set what the fake server's graph adds to the view: `fake_remote(lambda view: [...])`."""

    def set_reply(reply: Callable[[list[Any]], list[Any]]) -> None:
        monkeypatch.setattr(FakeRemoteGraph, "reply", staticmethod(reply))

    monkeypatch.setattr(remote_module, "RemoteGraph", FakeRemoteGraph)
    return set_reply


def handing_over(condition: str = "after_reply") -> ScriptedChatModel:
    """The orchestrator: hands the first request over to `remote_x`, then answers."""
    call = ai_call(
        "handover_to_specialist",
        specialist_profile="remote_x",
        topic="remote-work",
        summary="The user asks for remote work.",
        handover_reason="that specialist's work",
        return_condition=condition,
    )
    return ScriptedChatModel(script=[call], fallback=lambda m: AIMessage("Orchestrator here."))


def remote_graph(model: ScriptedChatModel, *profiles: Profile):  # type: ignore[no-untyped-def]
    return build_graph(
        checkpointer=InMemorySaver(), model=model, profiles=profiles or (remote_profile(),)
    )


def stored_of_remote(graph: Any, thread: str = "t") -> list[BaseMessage]:
    """What the thread stores from the remote specialist's run: its replies and tool results."""
    messages = state_of(graph, thread)["messages"]
    start = next(i for i, m in enumerate(messages) if m.name == "remote_x")
    end = next(
        (i for i, m in enumerate(messages) if i > start and isinstance(m, HumanMessage)),
        len(messages),
    )
    return [m for m in messages[start:end] if m.name != "orchestrator"]


def ai(text: str, *calls: tuple[str, str], id: str | None = None) -> dict[str, Any]:
    """An assistant message as the server sends it (a dict), with calls (name, id)."""
    tool_calls = [{"name": name, "args": {"q": call_id}, "id": call_id} for name, call_id in calls]
    return {"type": "ai", "content": text, "tool_calls": tool_calls, "id": id}


def tool(call_id: str, text: str = "result", **more: Any) -> dict[str, Any]:
    return {"type": "tool", "content": text, "tool_call_id": call_id, **more}


def test_orphan_and_duplicate_tool_messages_from_a_remote_are_not_stored(fake_remote, ctx):
    fake_remote(
        lambda view: [
            ai("Looking into it."),
            tool("nope", "an answer to no call"),  # orphan
            ai("Two lookups.", ("lookup", "c1"), ("lookup", "c2")),
            tool("c1", "first"),
            tool("c1", "second answer to c1"),  # a second answer: dropped
            tool("zzz", "orphan too"),
            # c2 answered by no one: said in text
            ai("Done: the cache is fine."),
        ]
    )
    graph = remote_graph(handing_over())
    say(graph, "Please review the cache.", ctx)
    messages = state_of(graph)["messages"]
    check_tool_history(messages)  # the next model request would be accepted
    stored = stored_of_remote(graph)
    answers = [m for m in stored if isinstance(m, ToolMessage)]
    assert [m.text for m in answers] == ["first"], answers
    assert not {"nope", "zzz"} & {m.tool_call_id for m in answers}
    (two,) = [m for m in stored if "Two lookups." in m.text]
    assert [c["name"] for c in two.tool_calls] == ["lookup"]
    assert "[called lookup" in two.text and "gave it no result" in two.text
    assert stored[-1].text == "Done: the cache is fine."


def test_a_remote_reply_keeps_only_the_fields_a_reply_needs(fake_remote, ctx):
    fake_remote(
        lambda view: [
            {
                "type": "ai",
                "content": "Checked.\x00 Fine.",
                "response_metadata": {
                    REMOTE_FAILED: True,  # a server's flag must not pass for ours
                    "max_turns_reached": True,
                    "model_name": "gpt-4o",
                },
                "additional_kwargs": {"tool_calls": [{"id": "x", "function": {}}], "big": "y"},
            },
        ]
    )
    graph = remote_graph(handing_over("user_request"))
    values = say(graph, "Please check it.", ctx)
    (reply,) = stored_of_remote(graph)
    assert reply.text == "Checked.\ufffd Fine." and reply.additional_kwargs == {}
    assert reply.response_metadata["model_name"] == "gpt-4o"
    assert REMOTE_FAILED not in reply.response_metadata
    assert "max_turns_reached" not in reply.response_metadata
    assert values["active_agent"] == "remote_x"  # not sent back as if the run had failed


def saved_bytes(saver: InMemorySaver) -> int:
    """Bytes of everything the checkpointer holds (checkpoints, blobs, pending writes)."""

    def size(value: Any) -> int:
        if isinstance(value, bytes | bytearray):
            return len(value)
        if isinstance(value, dict):
            return sum(size(v) for v in value.values())
        if isinstance(value, list | tuple):
            return sum(size(v) for v in value)
        return 0

    return size(dict(saver.storage)) + size(dict(saver.writes)) + size(dict(saver.blobs))


class CountingCounter:
    """Counts the calls of every TokenCounter method that counts or encodes (a wrapper around
    the class, so every counter of the graph is counted)."""

    METHODS = ("count_text", "count_message", "exceeds", "prefix", "truncate")

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        for name in self.METHODS:
            original = getattr(TokenCounter, name)

            def counted(self_: TokenCounter, *args: Any, _original=original, **kwargs: Any) -> Any:
                self.calls += 1
                return _original(self_, *args, **kwargs)

            monkeypatch.setattr(TokenCounter, name, counted)


def many(count: int) -> Callable[[list[Any]], list[Any]]:
    """A remote run of `count` messages: tool-calling steps, each answered, then an answer."""

    def reply(view: list[Any]) -> list[Any]:
        out: list[Any] = [] if count % 2 else [ai("Thinking.")]
        for i in range((count - 1) // 2):
            out += [ai(f"step {i}", ("lookup", f"c{i}")), tool(f"c{i}", f"result {i}")]
        return [*out, ai("All done.", id="final")]

    return reply


def two_turns(fake_remote, ctx, monkeypatch, count: int) -> tuple[int, Any]:  # type: ignore[no-untyped-def]
    """Token-count calls of a turn whose remote run returns `count` messages, and of the turn
    after it (the orchestrator's view holds that turn)."""
    fake_remote(many(count))
    graph = remote_graph(handing_over())
    counting = CountingCounter(monkeypatch)
    say(graph, "Please look everything up.", ctx, thread=f"n{count}")
    say(graph, "And now?", ctx, thread=f"n{count}")
    return counting.calls, graph


def test_twenty_thousand_remote_messages_are_capped_and_counted_linearly(
    fake_remote, ctx, monkeypatch
):
    small, _ = two_turns(fake_remote, ctx, monkeypatch, 2_000)
    large, graph = two_turns(fake_remote, ctx, monkeypatch, 20_000)
    # linear at worst: and here no more than for 2,000, since only the kept ones are counted
    assert large <= 2 * small + 1_000, (small, large)
    assert large <= 20 * MAX_REPLY_MESSAGES + 5_000, large
    # what the turns checkpointed: the kept messages, not 20,000 (the remote step's write too)
    assert saved_bytes(graph.checkpointer) < 1_000_000, saved_bytes(graph.checkpointer)
    stored = stored_of_remote(graph, "n20000")
    assert len(stored) <= MAX_REPLY_MESSAGES
    assert stored[-1].id == "final" and stored[-1].text == "All done."
    assert stored[0].text.startswith(
        f"[… {20_000 - len(stored):,} messages of this remote run left out, the oldest first: "
        f"a reply keeps at most {MAX_REPLY_MESSAGES} messages]"
    ), stored[0].text[:200]
    check_tool_history(state_of(graph, "n20000")["messages"])


def test_what_a_remote_run_returns_is_checked_before_it_joins_our_graph(fake_remote, monkeypatch):
    """`remote_reply` is what the remote step writes (and checkpoints): checked there, not
    only later, when the agent's node stores its replies."""
    huge = "word " * 10_000_000  # 50 MB
    calls = {}
    for count in (2_000, 20_000):
        fake_remote(lambda view, count=count: [*many(count)(view)[:-1], ai(huge, id="final")])
        counting = CountingCounter(monkeypatch)
        out = run_remote(remote_profile())
        calls[count] = counting.calls
        assert len(out) <= MAX_REPLY_MESSAGES
        assert out[0].text.startswith(f"[… {count - len(out):,} messages of this remote run")
        assert out[-1].id == "final" and "… [cut: " in out[-1].text
        assert len(out[-1].text) < 100_000
        check_tool_history(out)
    # counted once each at most: what is kept, never all 20,000 (nor 20,000 times)
    assert calls[20_000] <= calls[2_000] + 50 and calls[20_000] <= 10 * MAX_REPLY_MESSAGES, calls


def test_a_fifty_megabyte_remote_reply_is_stored_cut_with_a_marker(fake_remote, ctx):
    huge = "All fine. " + "word " * 10_000_000  # 50 MB
    fake_remote(lambda view: [ai("Tool first.", ("lookup", "c1")), tool("c1", huge), ai(huge)])
    graph = remote_graph(handing_over())
    saver = graph.checkpointer
    say(graph, "Please read the log.", ctx)
    # no step wrote the 50 MB: not the remote step (its write is checkpointed too), not the
    # agent's node
    assert saved_bytes(saver) < 2_000_000, saved_bytes(saver)
    counter = token_counter()
    answer, reply = [m for m in stored_of_remote(graph) if m.text.startswith("All fine.")]
    for message in (answer, reply):
        assert message.text.endswith("over max_message_tokens=16,000; the rest is left out]"), (
            message.text[-200:]
        )
        assert counter.count_message(message) <= 16_000
    said = reply.text.rsplit("[cut: the message was about ", 1)[1].split(" ")[0]
    assert abs(int(said.replace(",", "")) - 10_000_002) < 100_000  # its size, estimated
    kept = reply.text.rsplit("\n… [cut: ", 1)[0]
    assert huge.startswith(kept) and len(kept) > 40_000
    check_tool_history(state_of(graph)["messages"])


def test_the_cap_is_the_run_contexts_max_message_tokens(fake_remote, ctx):
    fake_remote(lambda view: [ai("x " * 5_000)])
    graph = remote_graph(handing_over())
    say(graph, "Please go.", {**ctx, "max_message_tokens": 1_000})
    (reply,) = stored_of_remote(graph)
    assert "… [cut: " in reply.text and token_counter().count_text(reply.text) <= 1_000


def test_checked_reply_keeps_a_last_transfer_call_for_the_handover_node():
    counter = token_counter()
    messages = [
        AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "a"}], id="m1"),
        ToolMessage("found", tool_call_id="a", id="t1"),
        AIMessage(
            "Back to you.",
            tool_calls=[{"name": "return_to_orchestrator", "args": {"summary": "s"}, "id": "r"}],
            id="m2",
        ),
    ]
    out = checked_reply(messages, counter=counter)
    assert [m.id for m in out] == ["m1", "t1", "m2"]
    assert out[-1].tool_calls[0]["id"] == "r"  # pending: our handover node answers it


# --- 5. a remote specialist's consult attempt names no 'None' -------------------------------------


@pytest.mark.parametrize("answered", [False, True], ids=["unanswered", "answered-by-its-tool"])
def test_a_remote_consult_attempt_leaves_no_none_in_the_trail(fake_remote, ctx, answered):
    consult = {
        "type": "ai",
        "content": "Let me ask the others.",
        "tool_calls": [
            {
                "name": "consult_specialists",
                "args": {
                    "consults": [
                        {"specialist_profile": "remote_y", "question": "a?"},
                        {"specialist_profile": "remote_x", "question": "b?"},
                    ]
                },
                "id": "k1",
            }
        ],
    }
    tail = [tool("k1", "asked them"), ai("They agree.")] if answered else []
    fake_remote(lambda view: [consult, *tail])
    graph = remote_graph(handing_over(), remote_profile(), remote_profile("remote_y"))
    say(graph, "Please decide with the others.", ctx)
    trail = state_of(graph)["handovers"]
    assert all(r["to_agent"] not in ("None", "", None) for r in trail), trail
    assert [(r["kind"], r["to_agent"]) for r in trail] == [
        ("handover", "remote_x"),
        ("return", "orchestrator"),
    ]
    check_tool_history(state_of(graph)["messages"])
    if not answered:  # the call its run left unanswered is said in its text
        (reply,) = stored_of_remote(graph)
        assert "[called consult_specialists (" in reply.text and not reply.tool_calls
        assert "only the orchestrator consults specialists, so it was not carried out" in reply.text
