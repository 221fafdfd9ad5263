"""A corpus of failing models: the whole graph through ChatOpenAI against a misbehaving server.

Each scenario scripts the local OpenAI-compatible server (tests/support/openai_server.py)
request by request: normal replies, HTTP faults (429, 5xx, 400, 401, 404), replies slower
than the client's timeout, a closed port, malformed tool calls (bad JSON, non-object
arguments, shared or missing ids, invalid or unknown tool names), refused handovers, a
handover loop, empty, null and huge replies. The client never retries by itself
(`max_retries=0`): the agent's model step does (`nodes/agents/retry.py`), made fast here.

For every scenario the test checks that the run answers or raises a `ModelUnavailableError`
naming the agent, the base URL and the cause; that the server saw exactly the expected number
of requests and rejected none; that the stored history is valid with unique ids; that refused
or failed calls are `ERROR:` tool results with status "error"; and that the next user message
(`run_turn`, SQLite checkpointer) answers both turns without storing a message twice.
`pytest -s` prints one line per scenario and the corpus figures.
"""

from __future__ import annotations

import copy
import http.server
import json
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError
from langgraph.types import RetryPolicy
from pydantic import ValidationError

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import run_turn, thread_config
from specialist_handover.nodes.agents.retry import ModelUnavailableError
from tests.support import openai_server
from tests.support.faults import handover_entries
from tests.support.models import check_tool_history
from tests.support.openai_server import HTTPFault, OpenAICompatibleServer

FIRST = "Please design the landing page hero with bold typography."
SECOND = "Thanks. Now make the call-to-action button bigger."
HANDOVER = "handover_to_specialist"
RETURN = "return_to_orchestrator"
DESIGNER = "frontend_designer"
TIMEOUT = 1.0  # the client's timeout in the slow scenarios
SLOW = 1.5  # how long a slow reply takes (longer than TIMEOUT)
HUGE = "The hero section, again and in detail. " * 5200  # ~200 KB of text
CORPUS: list[str] = []
"""One summary line per scenario played (printed by the last test)."""


# -- the scripted responder -----------------------------------------------------------------------
@dataclass
class Slow:
    """A reply that takes longer than the client waits."""

    reply: dict
    seconds: float = SLOW


Step = dict | HTTPFault | Slow | Callable[[list[dict], list[dict]], dict]


def agent_of(messages: list[dict], tools: list[dict]) -> str:
    """Who is asking: a specialist (bound to return_to_orchestrator, named in its prompt)."""
    if RETURN not in {t["function"]["name"] for t in tools}:
        return "orchestrator"
    found = re.search(r"\(profile `([a-z0-9_]+)`\)", str(messages[0].get("content") or ""))
    return found.group(1) if found else "specialist"


class Script:
    """A responder: one behaviour per request, in order, then `fallback` for every later one."""

    def __init__(self, steps: list[Step], fallback: Step | None = None) -> None:
        self.steps = list(steps)
        self.fallback = fallback if fallback is not None else self.polite
        self.lock = threading.Lock()
        self.answered = 0

    def polite(self, messages: list[dict], tools: list[dict]) -> dict:
        return {"content": f"{agent_of(messages, tools)}: answer #{self.answered}."}

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        with self.lock:
            step = self.steps.pop(0) if self.steps else self.fallback
            self.answered += 1
        if isinstance(step, HTTPFault):
            raise step
        if isinstance(step, Slow):
            time.sleep(step.seconds)
            return copy.deepcopy(step.reply)
        if callable(step):
            return step(messages, tools)
        return copy.deepcopy(step)


AUTO = object()


def call(name: str, args: Any, call_id: Any = AUTO) -> dict:
    """One tool call as the server sends it; `args` a string is sent as is (raw JSON text)."""
    out: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": name,
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }
    if call_id is AUTO:
        out["id"] = f"call_{uuid.uuid4().hex[:16]}"
    elif call_id is not None:
        out["id"] = call_id
    return out


def calls(*items: dict, content: str | None = None) -> dict:
    """An assistant reply with these tool calls."""
    return {"content": content, "tool_calls": list(items)}


def text(content: str | None) -> dict:
    return {"content": content}


def handover_args(profile: str = DESIGNER, **over: Any) -> dict:
    return {
        "specialist_profile": profile,
        "topic": "landing-page-hero",
        "summary": "The user wants a bold landing page hero.",
        "handover_reason": "visual design request",
        **over,
    }


def hand(profile: str = DESIGNER, call_id: Any = AUTO, **over: Any) -> dict:
    """A reply handing over to `profile`."""
    return calls(call(HANDOVER, handover_args(profile, **over), call_id))


def looping(messages: list[dict], tools: list[dict]) -> dict:
    """The orchestrator re-hands after every return; the specialist answers at once."""
    if agent_of(messages, tools) == "orchestrator":
        return hand("test_debug_engineer", return_condition="task_complete")
    return text("Fixed the flaky test.")


F400, F401, F404 = HTTPFault(400, "bad request"), HTTPFault(401, "bad key"), HTTPFault(404, "gone")
F429, F500 = HTTPFault(429, "rate limited"), HTTPFault(500, "server error")
F502, F503, F504 = HTTPFault(502, "bad gateway"), HTTPFault(503, "overloaded"), HTTPFault(504)


# -- a scenario -----------------------------------------------------------------------------------
@dataclass
class Case:
    """One failing-model scenario and what must come of it."""

    name: str
    steps: list[Step]
    requests: int  # requests the server sees during the first turn
    follow_up: int  # requests of the next turn (resuming a failed step first)
    error: str | None = None  # a cause the ModelUnavailableError names; None: the turn answers
    agent: str = "orchestrator"  # who answers the first turn, or whose model failed
    attempts: int | None = None  # "after N attempts" in the error
    tool_errors: tuple[str, ...] = ()  # texts of ERROR tool results of the first turn
    context: dict = field(default_factory=dict)
    client: dict = field(default_factory=dict)  # more ChatOpenAI arguments
    fallback: Step | None = None
    dead: str | None = None  # "all": the model's port is closed; or the agent whose port is
    keep_ids: bool = True  # False: ids the responder left out go out as null (not filled in)
    empty_answer: bool = False
    check: Callable[[Played], None] | None = None


@dataclass
class Played:
    """What a scenario did."""

    case: Case
    first: list  # stored messages after the first turn (or its failure)
    values: dict  # the thread's values after the next turn
    error: BaseException | None
    bodies: list[dict]  # every request body the servers received, in order
    root: Path
    port: int  # the port of the model that failed (or answered)
    first_requests: int
    next_requests: int


def omit_missing_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the server send tool calls without an id (it fills one in otherwise)."""
    normalize = openai_server._normalize_reply

    def keep_missing(reply: Any) -> dict:
        message = normalize(reply)
        for raw, sent in zip(
            reply.get("tool_calls") or [], message.get("tool_calls") or [], strict=False
        ):
            if "id" not in raw:
                sent["id"] = None  # JSON null, as a careless provider might send
        return message

    monkeypatch.setattr(openai_server, "_normalize_reply", keep_missing)


def chat(base_url: str, case: Case) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-4o",
        base_url=base_url,
        api_key="k",
        max_retries=0,
        **{"timeout": 10.0, **case.client},
    )


def play(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Played:
    """Run the first turn (it may fail), then the next one once the server behaves."""
    if not case.keep_ids:
        omit_missing_ids(monkeypatch)
    root = tmp_path / "project"
    root.mkdir()
    script = Script(case.steps, case.fallback)
    servers = [OpenAICompatibleServer(script).start()]
    main = servers[0]
    dead_port = None
    try:
        if case.dead == "all":
            dead_port = main.port
            main.stop()  # connection refused from now on
            model: Any = chat(main.base_url, case)
        elif case.dead:
            closed = OpenAICompatibleServer(script).start()
            closed.stop()
            dead_port = closed.port
            model = {"default": chat(main.base_url, case), case.dead: chat(closed.base_url, case)}
        else:
            model = chat(main.base_url, case)
        graph = build_graph(
            checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")), model=model
        )
        ctx = {"project_root": str(root), **case.context}
        error = None
        try:
            run_turn(graph, FIRST, thread_id="t", context=ctx)
        except Exception as exc:  # noqa: BLE001 - judged below
            error = exc
        first = list(graph.get_state(thread_config("t")).values.get("messages") or [])
        seen = sum(len(s.requests) for s in servers)
        if dead_port is not None:  # the server comes back on the same port
            servers.append(OpenAICompatibleServer(script, port=dead_port).start())
        values = run_turn(graph, SECOND, thread_id="t", context=ctx)
        snapshot = graph.get_state(thread_config("t"))
        assert not snapshot.next and not snapshot.tasks, (snapshot.next, snapshot.tasks)
        total = sum(len(s.requests) for s in servers)
        for server in servers:
            assert not server.rejected, [reason for _, reason in server.rejected]
            assert not server.errors, server.errors
        bodies = [b for s in servers for b in s.requests]
        port = dead_port if dead_port is not None else main.port
        return Played(case, first, values, error, bodies, root, port, seen, total - seen)
    finally:
        for server in servers:
            server.stop()


# -- what every scenario must show ------------------------------------------------------------
def check_ids(messages: list) -> None:
    """Every stored tool-call id is present and unique; every tool result answers one of them."""
    ids = [
        c.get("id")
        for m in messages
        if isinstance(m, AIMessage)
        for c in [*m.tool_calls, *m.invalid_tool_calls]
    ]
    assert all(isinstance(i, str) and i for i in ids), ids
    assert len(ids) == len(set(ids)), f"duplicate tool-call ids in the thread: {ids}"
    answers = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert len(answers) == len(set(answers)) and set(answers) <= set(ids), (answers, ids)


def check_tool_results(messages: list) -> None:
    """Refusals and failures are ERROR: results with status error, and only they are."""
    for m in messages:
        if isinstance(m, ToolMessage):
            failed = str(m.content).startswith("ERROR:")
            assert failed == (m.status == "error"), (m.status, str(m.content)[:200])


def check_turns(messages: list) -> None:
    """Both user messages stored once each, and each answered by an agent's final reply."""
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    assert [messages[i].content for i in humans] == [FIRST, SECOND], [
        str(messages[i].content)[:60] for i in humans
    ]
    for start, end in zip(humans, [*humans[1:], len(messages)], strict=True):
        last = messages[end - 1]
        assert end - start > 1 and isinstance(last, AIMessage), f"turn at {start} unanswered"
        assert not last.tool_calls, f"turn at {start} ends with a tool call"


def briefing_markers(root: Path | str) -> int:
    """Handover entries in the project's briefings (outcome entries are not handovers)."""
    return len(handover_entries(Path(root)))


def check(played: Played) -> str:
    """Every assertion that applies to this scenario; returns its outcome for the summary."""
    case, error = played.case, played.error
    where = f"127.0.0.1:{played.port}"
    if case.error is None:
        assert error is None, f"the turn failed: {type(error).__name__}: {error}"
        last = played.first[-1]
        assert isinstance(last, AIMessage) and last.name == case.agent, last
        assert not last.tool_calls
        assert case.empty_answer or str(last.content).strip(), "empty answer"
        outcome = f"answer by {case.agent}"
    else:
        assert error is not None, "the turn should have failed"
        assert not isinstance(error, GraphRecursionError | ValidationError), repr(error)
        assert isinstance(error, ModelUnavailableError), f"{type(error).__name__}: {error}"
        message = str(error)
        assert message.startswith(f"{case.agent} could not get an answer"), message
        assert where in message, f"{where} not in {message}"
        assert case.error in message, f"{case.error!r} not in {message}"
        if case.attempts is not None:
            plural = "s" if case.attempts != 1 else ""
            assert f"after {case.attempts} attempt{plural}:" in message, message
        # the failed thread is still valid: the first message stored once, no dangling call
        check_tool_history(played.first)
        assert [m.content for m in played.first if isinstance(m, HumanMessage)] == [FIRST]
        outcome = f"{type(error).__name__}({case.agent}, {case.error}) -> next turn resumed"
    # transient faults retried up to model_attempts, the others not at all: exact request counts
    assert played.first_requests == case.requests, (
        f"first turn: {played.first_requests} requests, expected {case.requests}"
    )
    assert played.next_requests == case.follow_up, (
        f"next turn: {played.next_requests} requests, expected {case.follow_up}"
    )
    first_errors = [
        str(m.content) for m in played.first if isinstance(m, ToolMessage) and m.status == "error"
    ]
    for wanted in case.tool_errors:
        assert any(wanted in e for e in first_errors), f"no ERROR with {wanted!r}: {first_errors}"
    assert len(first_errors) == len(case.tool_errors), first_errors
    messages = played.values["messages"]
    check_tool_history(messages)
    check_ids(messages)
    check_tool_results(messages)
    check_turns(messages)
    carried_out = [r for r in played.values.get("handovers") or [] if r["kind"] == "handover"]
    if carried_out:
        assert briefing_markers(played.root) == len(carried_out)
    if case.check is not None:
        case.check(played)
    errors = sum(1 for m in messages if isinstance(m, ToolMessage) and m.status == "error")
    return f"{outcome}; ERROR results={errors}; handovers={len(carried_out)}"


# -- scenario-specific checks ---------------------------------------------------------------------
def all_streamed(played: Played) -> None:
    assert played.bodies and all(b.get("stream") is True for b in played.bodies)


def bad_name_sent_safely(played: Played) -> None:
    sent = [
        c["function"]["name"]
        for b in played.bodies
        for m in b["messages"]
        for c in m.get("tool_calls") or []
    ]
    assert "bad_name_" in sent and "bad name!" not in sent, sent


def loop_stopped(played: Played) -> None:
    first = played.first
    assert first[-1].response_metadata.get("handover_loop_stopped") is True
    assert first[-1].content.startswith("⚠️ I stopped handing")
    turn_one = [m for m in first if isinstance(m, ToolMessage) and m.name == HANDOVER]
    ok = [m for m in turn_one if m.status == "success" and m.content.startswith("Handed over to ")]
    assert len(ok) == 3, [str(m.content)[:80] for m in turn_one]
    assert played.values["messages"][-1].response_metadata.get("handover_loop_stopped")
    done = [r for r in played.values["handovers"] if r["kind"] == "handover"]
    assert len(done) == 6  # three per user turn


def huge_reply_cut(played: Played) -> None:
    stored = [m for m in played.values["messages"] if isinstance(m, AIMessage)]
    (cut,) = [m for m in stored if "[cut: the message was" in str(m.content)]
    assert HUGE.strip()[:1000] in cut.content  # its head is kept, the rest left out
    assert "over max_message_tokens=16,000; the rest is left out]" in cut.content
    assert len(cut.content) < len(HUGE) / 2
    assert any(HUGE.strip()[:1000] in json.dumps(b["messages"]) for b in played.bodies[1:])


def oversize_package_warned(played: Played) -> None:
    answer = next(m for m in played.first if isinstance(m, ToolMessage) and m.name == HANDOVER)
    assert answer.status == "success" and "WARNING:" in answer.content, answer.content[-300:]


def single_briefing_entry(played: Played) -> None:
    assert briefing_markers(played.root) == 1


def returned_with_summary(played: Played) -> None:
    returns = [m for m in played.first if isinstance(m, ToolMessage) and m.name == RETURN]
    assert returns and returns[-1].status == "success"
    assert played.first[-1].name == "orchestrator"


def ids_renamed_across_turns(played: Played) -> None:
    ids = [
        c["id"] for m in played.values["messages"] if isinstance(m, AIMessage) for c in m.tool_calls
    ]
    assert ids.count("call_fixed") == 1 and len(ids) == 2, ids


def error_reason_is_not_json_object(played: Played) -> None:
    answers = [m for m in played.first if isinstance(m, ToolMessage) and m.status == "error"]
    assert all("call it again with a JSON object" in str(m.content) for m in answers)


# -- the corpus -----------------------------------------------------------------------------------
BAD_JSON = calls(call(HANDOVER, '{"specialist_profile": "frontend_designer", "topic": '))
AS_LIST = calls(call(HANDOVER, "[1, 2]"))
AS_STRING = calls(call(HANDOVER, '"x"'))
AS_NUMBER = calls(call(HANDOVER, "42"))
UNREADABLE = "could not be read"
SLOW_CLIENT = {"timeout": TIMEOUT}

CASES: list[Any] = [
    # transient faults at the orchestrator: retried, then answered
    Case("http_500_then_ok", [F500, text("Hero ready.")], 2, 1),
    Case("http_429_then_ok", [F429, text("Hero ready.")], 2, 1),
    Case("http_503_twice_then_ok", [F503, F503, text("Hero ready.")], 3, 1),
    Case("http_502_then_504_then_ok", [F502, F504, text("Hero ready.")], 3, 1),
    Case(
        "model_attempts_5_four_503s_then_ok",
        [F503] * 4 + [text("Hero ready.")],
        5,
        1,
        context={"model_attempts": 5},
    ),
    Case(
        "retry_budget_is_per_model_call",
        [F500, F500, hand(), F500, F500, text("Here is the hero.")],
        6,
        1,
        agent=DESIGNER,
    ),
    Case("timeout_then_ok", [Slow(text("late")), text("Hero ready.")], 2, 1, client=SLOW_CLIENT),
    Case("streaming_500_then_ok", [F500, text("Hero ready.")], 2, 1, client={"streaming": True}),
    # transient faults that last: the clear error after model_attempts, then the next turn works
    Case("http_500_exhausted", [F500] * 3, 3, 2, error="500", attempts=3),
    Case("http_429_exhausted", [F429] * 3, 3, 2, error="429", attempts=3),
    Case(
        "model_attempts_1_means_no_retry",
        [F500],
        1,
        2,
        error="500",
        attempts=1,
        context={"model_attempts": 1},
    ),
    Case("exhausted_then_resume_retries_again", [F500] * 4, 3, 3, error="500", attempts=3),
    Case(
        "timeout_exhausted",
        [Slow(text("late"))] * 3,
        3,
        2,
        error="Timeout",
        attempts=3,
        client=SLOW_CLIENT,
    ),
    Case("connection_refused", [], 0, 2, error="Connection", attempts=3, dead="all"),
    Case(
        "streaming_503_exhausted",
        [F503] * 3,
        3,
        2,
        error="503",
        attempts=3,
        client={"streaming": True},
        check=all_streamed,
    ),
    # transient faults at a specialist
    Case("specialist_500_then_ok", [hand(), F500, text("Here is the hero.")], 3, 1, agent=DESIGNER),
    Case(
        "specialist_503_exhausted",
        [hand(), F503, F503, F503],
        4,
        2,
        error="503",
        agent=DESIGNER,
        attempts=3,
        check=single_briefing_entry,
    ),
    Case(
        "specialist_model_connection_refused",
        [hand()],
        1,
        2,
        error="Connection",
        agent=DESIGNER,
        attempts=3,
        dead=DESIGNER,
        check=single_briefing_entry,
    ),
    Case(
        "orchestrator_fails_after_specialist_returns",
        [hand(return_condition="task_complete"), text("Hero designed."), F500, F500, F500],
        5,
        2,
        error="500",
        attempts=3,
    ),
    # non-transient faults: not retried
    Case("http_400_not_retried", [F400], 1, 2, error="400", attempts=1),
    Case("http_401_not_retried", [F401], 1, 2, error="401", attempts=1),
    Case("http_404_not_retried", [F404], 1, 2, error="404", attempts=1),
    Case(
        "specialist_401_not_retried",
        [hand(), F401],
        2,
        2,
        error="401",
        agent=DESIGNER,
        attempts=1,
        check=single_briefing_entry,
    ),
    # malformed replies: answered with ERROR, the model tries again
    Case(
        "malformed_json_arguments",
        [BAD_JSON, text("Hero ready.")],
        2,
        1,
        tool_errors=(f"{UNREADABLE} (the arguments are not valid JSON)",),
    ),
    Case(
        "non_object_arguments_list",
        [AS_LIST, AS_LIST, text("Hero ready.")],  # the client's parse fails: one streamed retry
        3,
        1,
        tool_errors=(UNREADABLE,),
        check=error_reason_is_not_json_object,
    ),
    Case(
        "non_object_arguments_string",
        [AS_STRING, AS_STRING, text("Hero ready.")],
        3,
        1,
        tool_errors=(UNREADABLE,),
    ),
    Case(
        "non_object_arguments_number",
        [AS_NUMBER, AS_NUMBER, text("Hero ready.")],
        3,
        1,
        tool_errors=(UNREADABLE,),
    ),
    Case(
        "non_object_arguments_streaming",
        [AS_LIST, text("Hero ready.")],
        2,
        1,
        tool_errors=(UNREADABLE,),
        client={"streaming": True},
        check=all_streamed,
    ),
    Case(
        "non_object_arguments_streaming_false",
        [AS_LIST, AS_LIST, text("Hero ready.")],
        3,
        1,
        tool_errors=(UNREADABLE,),
        client={"streaming": False},
    ),
    Case(
        "specialist_non_object_return_then_return",
        [
            hand(return_condition="task_complete"),
            calls(call(RETURN, "[1, 2]")),
            calls(call(RETURN, "[1, 2]")),
            calls(call(RETURN, {"summary": "Hero designed."})),
            text("The designer finished the hero."),
        ],
        5,
        1,
        tool_errors=(UNREADABLE,),
        check=returned_with_summary,
    ),
    Case(
        "malformed_then_500_then_ok",
        [BAD_JSON, F500, text("Hero ready.")],
        3,
        1,
        tool_errors=(UNREADABLE,),
    ),
    Case(
        "two_handovers_sharing_one_id",
        [
            calls(
                call(HANDOVER, handover_args(), "same"),
                call(HANDOVER, handover_args("hacker"), "same"),
            )
        ],
        2,
        1,
        agent=DESIGNER,
        tool_errors=("only one handover per turn",),
    ),
    Case(
        "two_unknown_calls_sharing_one_id",
        [calls(call("lookup", {"q": "a"}, "same"), call("lookup", {"q": "b"}, "same")), text("ok")],
        2,
        1,
        tool_errors=("unknown tool 'lookup'", "unknown tool 'lookup'"),
    ),
    Case(
        "id_reused_in_the_next_turn",
        [
            calls(call("lookup", {}, "call_fixed")),
            text("ok"),
            calls(call("lookup", {}, "call_fixed")),
        ],
        2,
        2,
        tool_errors=("unknown tool 'lookup'",),
        check=ids_renamed_across_turns,
    ),
    Case("handover_without_id", [hand(call_id=None)], 2, 1, agent=DESIGNER, keep_ids=False),
    Case(
        "handover_without_id_streaming",
        [hand(call_id=None)],
        2,
        1,
        agent=DESIGNER,
        keep_ids=False,
        client={"streaming": True},
    ),
    Case(
        "tool_name_openai_rejects",
        [calls(call("bad name!", {})), text("ok")],
        2,
        1,
        tool_errors=("unknown tool 'bad_name_'",),
        check=bad_name_sent_safely,
    ),
    Case(
        "unknown_tool",
        [calls(call("delete_everything", {"path": "/"})), text("ok")],
        2,
        1,
        tool_errors=("unknown tool 'delete_everything'",),
    ),
    # refused handovers: the caller keeps control and answers
    Case(
        "handover_to_unknown_profile",
        [hand("nobody"), text("I could not find that specialist.")],
        2,
        1,
        tool_errors=("unknown specialist profile 'nobody'",),
    ),
    Case(
        "handover_missing_required_arguments",
        [calls(call(HANDOVER, {"specialist_profile": DESIGNER})), text("Let me ask again.")],
        2,
        1,
        tool_errors=("topic is required",),
    ),
    Case(
        "handover_to_itself",
        [hand("a0_software_orchestrator"), text("I'll answer myself.")],
        2,
        1,
        tool_errors=("cannot hand over to itself",),
    ),
    Case(
        "handover_loop",
        [],
        7,  # the orchestrator 4 times, the specialist 3 times
        7,
        fallback=looping,
        tool_errors=("handover loop refused",),
        check=loop_stopped,
    ),
    # odd but valid replies
    Case("empty_content_no_tool_calls", [text("")], 1, 1, empty_answer=True),
    Case("null_content_no_tool_calls", [text(None)], 1, 1, empty_answer=True),
    Case("specialist_null_content", [hand(), text(None)], 2, 1, agent=DESIGNER, empty_answer=True),
    Case("huge_reply_200kb", [text(HUGE)], 1, 1, check=huge_reply_cut),
    Case(
        "huge_handover_summary_200kb",
        [hand(summary=HUGE)],
        2,
        1,
        agent=DESIGNER,
        check=oversize_package_warned,
    ),
]


def case_id(case: Case) -> str:
    return case.name


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph's model retries without real waiting (read at each retry)."""
    monkeypatch.setattr(
        "specialist_handover.nodes.agents.retry.MODEL_RETRY",
        RetryPolicy(
            initial_interval=0.01,
            backoff_factor=1.0,
            max_interval=0.02,
            max_attempts=10,
            jitter=False,  # up to 1 s of jitter per retry: off in tests
        ),
    )


@pytest.fixture(autouse=True)
def quiet_hangups(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that timed out hung up: the server's late write is no error worth a traceback."""
    original = http.server.ThreadingHTTPServer.handle_error

    def handle_error(self: Any, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            return
        original(self, request, client_address)

    monkeypatch.setattr(http.server.ThreadingHTTPServer, "handle_error", handle_error)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_failing_model(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = time.monotonic()
    try:
        played = play(case, tmp_path, monkeypatch)
        outcome = check(played)
    except BaseException as exc:
        line = f"{case.name:<44} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}"
        CORPUS.append(line)
        print(line)
        raise
    line = (
        f"{case.name:<44} requests={played.first_requests}+{played.next_requests:<2} "
        f"{time.monotonic() - started:4.1f}s  {outcome}"
    )
    CORPUS.append(line)
    print(line)


def test_non_object_arguments_are_answered_with_the_real_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case("non_object_reason", [AS_LIST, AS_LIST, text("Hero ready.")], 3, 1)
    played = play(case, tmp_path, monkeypatch)
    (answer,) = [m for m in played.first if isinstance(m, ToolMessage)]
    assert answer.status == "error" and answer.content.startswith("ERROR:")
    assert "not a JSON object" in answer.content, answer.content


def test_zz_corpus_figures() -> None:
    """The corpus is at least 25 scenarios; print its figures (run last)."""
    names = [c.values[0].name if hasattr(c, "values") else c.name for c in CASES]
    assert len(names) == len(set(names)) >= 25
    played = [line for line in CORPUS if " FAILED: " not in line]
    print(
        f"\nfailing-model corpus: {len(names)} scenarios, {len(CORPUS)} played, "
        f"{len(played)} passed, {len(CORPUS) - len(played)} failed"
    )
