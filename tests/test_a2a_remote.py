"""Any A2A agent as a specialist: a profile's `remote` with `protocol: a2a`.

The agent is a real a2a-sdk server on 127.0.0.1 (tests/a2a_agent_server.py: its JSON-RPC
routes and agent card under uvicorn, answering by a script); our graph runs the offline model,
whose orchestrator hands a request over to the profile it names (`a2a_reviewer`) with the
return condition its wording asks for: `quickly` is after_reply, `report back` task_complete,
neither user_request. Every graph test runs under `invoke` and `ainvoke`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.types.a2a_pb2 import Message, Part, Role, StreamResponse, Task, TaskState, TaskStatus
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import Profile, ProfileFileError, build_graph
from specialist_handover.nodes.agents import a2a, member
from specialist_handover.nodes.agents.a2a import A2A_DATA, A2AFailed, outcome
from specialist_handover.nodes.agents.remote import AWAITS_USER, REMOTE_FAILED, checked_reply
from specialist_handover.specialists import Remote, parse_profile
from specialist_handover.state import token_counter
from tests.a2a_agent_server import (
    QUESTION,
    ScriptedAgent,
    a2a_server,
    free_port,
)
from tests.support.graphs import state_of
from tests.support.models import check_tool_history

REPO = Path(__file__).resolve().parents[1]
NAME = "a2a_reviewer"
ASK = f"Hand this to {NAME}: please review the cache module"


def a2a_profile(url: str, timeout: float = 20.0) -> Profile:
    return Profile(
        name=NAME,
        emoji="🛰️",
        description="Reviews pull requests on the review team's A2A agent.",
        prompt="(the A2A agent has its own)",
        remote={"url": url, "protocol": "a2a", "timeout": timeout},
    )


@pytest.fixture(scope="module")
def agent():
    return ScriptedAgent()


@pytest.fixture(scope="module")
def url(agent):
    with a2a_server(agent) as running:
        yield running


@pytest.fixture
def fresh(agent):
    """The agent with an empty script and record, for one test."""
    agent.script.clear()
    agent.received.clear()
    return agent


@pytest.fixture(params=["invoke", "ainvoke"])
def run(request):
    """One user turn on a thread, through `invoke` or `ainvoke`."""

    def turn(graph, text, ctx, thread="t"):  # type: ignore[no-untyped-def]
        args = ({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
        if request.param == "invoke":
            return graph.invoke(*args, context=ctx, durability="sync")
        return asyncio.run(graph.ainvoke(*args, context=ctx, durability="sync"))

    return turn


def graph_for(url: str, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    return build_graph(checkpointer=InMemorySaver(), profiles=[a2a_profile(url, timeout)])


def replies_of(values: dict, name: str = NAME) -> list[AIMessage]:
    return [m for m in values["messages"] if isinstance(m, AIMessage) and m.name == name]


# --- the profile field ------------------------------------------------------------------------

FILE = """\
---
name: a2a_reviewer
emoji: "🛰️"
description: "Reviews code on the review team's A2A agent."
remote:
{remote}---

(the A2A agent brings its own prompt)
"""


def test_protocol_a2a_is_read_from_a_file_and_a_profile_object():
    remote = '  url: "https://agents.example.com/reviewer/"\n  protocol: a2a\n  timeout: 30\n'
    profile = parse_profile(FILE.format(remote=remote), source="team/a2a_reviewer.md")
    assert profile.remote == Remote(
        url="https://agents.example.com/reviewer", protocol="a2a", timeout=30
    )
    assert profile.remote.graph_id is None
    langgraph = Remote(url="http://127.0.0.1:2024", graph_id="reviewer")
    assert langgraph.protocol == "langgraph"  # the default: unchanged
    assert a2a_profile("http://127.0.0.1:9").remote.protocol == "a2a"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("remote", "error"),
    [
        (
            {"url": "http://h", "protocol": "grpc"},
            "profile 'a2a_reviewer': remote.protocol must be 'langgraph' (a graph on a "
            "LangGraph server, the default) or 'a2a' (an A2A agent), got 'grpc'",
        ),
        ({"url": "http://h", "protocol": ["a2a"]}, "remote.protocol must be 'langgraph'"),
        (
            {"url": "http://h", "protocol": "a2a", "graph_id": "reviewer"},
            "remote.graph_id is for protocol 'langgraph' only, got 'reviewer' with protocol "
            "'a2a': an A2A agent is found by its url (its agent card); remove graph_id",
        ),
        ({"url": "http://h"}, "remote: missing graph_id"),  # langgraph, the default, needs it
        ({"protocol": "a2a"}, "remote: missing url"),
        ({"url": "ftp://h", "protocol": "a2a"}, "remote.url must be an http(s) URL"),
        ({"url": "http://h", "protocol": "a2a", "timeout": 0}, "remote.timeout must be"),
        (
            {"url": "http://me:s3cret@h", "protocol": "a2a"},
            "remote.url http://***@h carries credentials; leave them out (no credential is "
            "sent to an A2A agent)",
        ),
        (
            {"url": "http://h/?key=s3cret", "protocol": "a2a"},
            "remote.url must have no query or fragment, got 'http://h/?key=***'",
        ),
        ({"url": "http://h", "protocol": "a2a", "auth": "x"}, "unknown field(s) auth"),
    ],
)
def test_bad_a2a_remotes_are_refused_naming_the_field(remote, error):
    with pytest.raises(ProfileFileError) as raised:
        Profile(name=NAME, emoji="🛰️", description="d", prompt="p", remote=remote)
    assert error in str(raised.value)
    assert "s3cret" not in str(raised.value)


def test_a_file_names_its_own_path_in_the_error():
    remote = '  url: "http://h"\n  protocol: a2a\n  graph_id: reviewer\n'
    with pytest.raises(ProfileFileError, match=r"^team/a2a_reviewer\.md: remote\.graph_id is"):
        parse_profile(FILE.format(remote=remote), source="team/a2a_reviewer.md")


# --- the a2a-sdk is optional ------------------------------------------------------------------

BLOCK_A2A = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "a2a" or name.startswith("a2a."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocker())
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HANDOVER_MODEL": "offline"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_a2a_sdk_is_imported_only_for_an_a2a_profile_and_its_absence_says_what_to_do():
    code = (
        "import sys\n"
        "from specialist_handover import Profile, build_graph\n"
        "def profile(name, **remote):\n"
        "    return Profile(name=name, emoji='x', description='d', prompt='p',\n"
        "                   remote={'url': 'http://127.0.0.1:9', **remote})\n"
        "build_graph(profiles=[profile('lg_reviewer', graph_id='reviewer')])\n"
        "print(sorted(m for m in sys.modules if m == 'a2a' or m.startswith('a2a.')))\n"
        f"{BLOCK_A2A}\n"
        "try:\n"
        "    build_graph(profiles=[profile('a2a_reviewer', protocol='a2a')])\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",  # the package and a graph with a LangGraph remote: no a2a-sdk
        "profile 'a2a_reviewer' has remote.protocol 'a2a', which needs the a2a-sdk (an "
        'optional extra): pip install "specialist-handover[a2a]"',
    ]


# --- what an answer becomes -------------------------------------------------------------------


def test_an_answer_becomes_its_text_and_the_conversation_it_is_in():
    said = Message(role=Role.ROLE_AGENT, parts=[Part(text="Checked.")], context_id="c-9")
    data = new_data_part({"findings": 2})
    task = Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=said),
        artifacts=[{"parts": [Part(text="Checked."), data, Part(url="https://u:p@f/r.pdf")]}],
    )
    text, found = outcome(task, "ours")
    assert (
        text
        == 'Checked.\n\nChecked.\n{"findings": 2.0}\n[file unnamed (unknown type) at https://***@f/r.pdf]'
    )
    assert found == {"context_id": "c-1", "task_id": "t-1", "state": "completed"}
    assert outcome(said, "ours") == (
        "Checked.",
        {"context_id": "c-9", "task_id": "", "state": "message"},
    )
    with pytest.raises(A2AFailed, match=r"answered \(completed\) without any text"):
        outcome(Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED)), "c")
    working = Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_UNSPECIFIED))
    with pytest.raises(A2AFailed, match=r"ended unspecified \(without a message\)"):
        outcome(working, "c")


# --- through our graph ------------------------------------------------------------------------


def test_a_handover_gets_the_agents_reply_under_its_name_and_one_hold_is_one_context(
    url, fresh, run, ctx
):
    graph = graph_for(url)
    values = run(graph, ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content == "Done (1).\n\nReview 1: looks good."
    assert values["active_agent"] == NAME  # user_request: it keeps the conversation
    first = fresh.received[0]
    package = state_of(graph)["handover"]["rendered"]
    assert first.text == package  # the package as the agent's first message
    assert "HANDOVER PACKAGE" in first.text and ASK in first.text
    assert reply.response_metadata[A2A_DATA] == {
        "context_id": first.context_id,
        "task_id": first.task_id,
        "state": "completed",
    }

    values = run(graph, "And the queue module too.", ctx)
    second = fresh.received[1]
    assert second.context_id == first.context_id  # the same hold: the same A2A conversation
    assert second.task_id != first.task_id and not second.continued  # a new task in it
    assert second.text == "User: And the queue module too."  # only what it has not seen
    assert replies_of(values)[-1].content == "Done (2).\n\nReview 2: looks good."
    check_tool_history(values["messages"])


def test_the_user_can_go_back_from_a_user_request_hold(url, fresh, run, ctx):
    """An A2A agent has no tool of ours to hand back with: when the user asks to go back,
    the graph hands back for it, without asking the agent."""
    graph = graph_for(url)
    values = run(graph, ASK, ctx)
    assert values["active_agent"] == NAME  # user_request: it keeps the conversation
    values = run(graph, "Thanks, that's all: back to the orchestrator please.", ctx)
    assert values["active_agent"] == "orchestrator"
    assert len(fresh.received) == 1  # the agent was not asked again
    trail = state_of(graph)["handovers"]
    assert [(r["kind"], r["from_agent"]) for r in trail][-1] == ("return", NAME)
    assert values["messages"][-1].name == "orchestrator"
    check_tool_history(values["messages"])


def test_a_new_handover_opens_a_new_context(url, fresh, run, ctx):
    graph = graph_for(url)
    values = run(graph, f"{ASK} quickly", ctx)  # after_reply: hands back after its reply
    assert values["active_agent"] == "orchestrator"
    values = run(graph, f"Hand this to {NAME}: quickly review the queue module", ctx)
    assert values["active_agent"] == "orchestrator"
    assert [r.content for r in replies_of(values)] == [
        "Done (1).\n\nReview 1: looks good.",
        "Done (2).\n\nReview 2: looks good.",
    ]
    first, second = fresh.received
    assert first.context_id != second.context_id
    assert "queue module" in second.text and "HANDOVER PACKAGE" in second.text


@pytest.mark.parametrize("wording", ["quickly", "and report back"])
def test_input_required_keeps_the_thread_and_the_next_turn_continues_the_task(
    url, fresh, run, ctx, wording
):
    graph = graph_for(url)
    fresh.script[:] = ["input", "completed"]
    values = run(graph, f"{ASK} {wording}", ctx)
    (question,) = replies_of(values)
    assert question.content == QUESTION
    assert question.response_metadata[AWAITS_USER] is True
    assert question.response_metadata[A2A_DATA]["state"] == "input-required"
    # after_reply or task_complete would hand back: a question keeps the conversation
    assert values["active_agent"] == NAME
    assert values["messages"][-1] == question  # the orchestrator did not answer for it

    values = run(graph, "Start with cache.py", ctx)
    asked, answered = fresh.received
    assert answered.continued  # the same task, continued
    assert (answered.task_id, answered.context_id) == (asked.task_id, asked.context_id)
    assert answered.text == "User: Start with cache.py"
    assert replies_of(values)[-1].content == "Done (2).\n\nReview 2: looks good."
    assert values["active_agent"] == "orchestrator"  # its return condition, once answered
    if wording == "and report back":  # task_complete: the orchestrator answers in this run
        assert values["messages"][-1].name == "orchestrator"
    check_tool_history(values["messages"])


@pytest.mark.parametrize(
    ("script", "what"),
    [
        (
            "failed",
            "the agent's task ended failed (its message: 'the reviewer broke; logs at "
            "https://***@logs.example.com/run?token=***')",
        ),
        ("rejected", "the agent's task ended rejected (its message: 'I only review Python.')"),
        ("canceled", "the agent's task ended canceled (its message: 'Cancelled by its operator.')"),
        (
            "auth",
            "the agent's task ended auth-required (needs credentials, which this client does "
            "not send; its message: 'Sign in to the review service first.')",
        ),
    ],
)
def test_a_task_that_ends_badly_is_an_error_and_the_orchestrator_answers(
    url, fresh, run, ctx, script, what
):
    graph = graph_for(url)
    fresh.script[:] = [script]
    values = run(graph, ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content == f"ERROR: remote specialist {NAME} at {url} (A2A agent): {what}"
    assert reply.response_metadata[REMOTE_FAILED] is True
    assert values["active_agent"] == "orchestrator"
    assert values["messages"][-1].name == "orchestrator"  # it answers in the same run
    assert "hunter2" not in str(values) and "token=abc" not in str(values)
    trail = state_of(graph)["handovers"]
    assert [r["kind"] for r in trail] == ["handover", "return"]
    check_tool_history(values["messages"])


def test_a_plain_message_answer_is_a_reply(url, fresh, run, ctx):
    graph = graph_for(url)
    fresh.script[:] = ["message"]
    values = run(graph, f"{ASK} quickly", ctx)
    assert replies_of(values)[0].content == "Plain answer 1."
    assert replies_of(values)[0].response_metadata[A2A_DATA]["state"] == "message"


def test_an_unreachable_agent_is_an_error(run, ctx):
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    values = run(graph_for(down), ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content.startswith(
        f"ERROR: remote specialist {NAME} at {down} (A2A agent): cannot reach the server ("
    ), reply.content
    assert values["messages"][-1].name == "orchestrator"


def test_a_slow_agent_times_out_with_an_error(url, fresh, run, ctx):
    fresh.script[:] = ["slow"]
    values = run(graph_for(url, timeout=1), ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content == (
        f"ERROR: remote specialist {NAME} at {url} (A2A agent): no answer within the timeout of 1 s"
    )
    assert values["active_agent"] == "orchestrator"


def test_a_card_behind_a_redirect_is_not_followed(url, fresh, run, ctx):
    values = run(graph_for(f"{url}/moved"), ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content == (
        f"ERROR: remote specialist {NAME} at {url}/moved (A2A agent): the server redirected "
        f"the run (HTTP 302) to {url}/.well-known/agent-card.json; redirects are not "
        f"followed: set remote.url to {url} if that is the server you mean"
    )
    assert not fresh.received


def test_a_missing_card_names_its_address(url, fresh, run, ctx):
    values = run(graph_for(f"{url}/nowhere"), ASK, ctx)
    (reply,) = replies_of(values)
    assert reply.content.endswith(
        f"no agent card at {url}/nowhere/.well-known/agent-card.json (HTTP 404); remote.url "
        "must be the A2A agent's base URL"
    )


def test_a_run_resumed_after_a_crash_does_not_ask_the_agent_again(url, fresh, ctx, monkeypatch):
    real = member.stored_replies
    crashes = {"left": 1}

    def crash_once(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("agent") == NAME and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("killed after the agent answered")
        return real(*args, **kwargs)

    monkeypatch.setattr(member, "stored_replies", crash_once)
    graph = graph_for(url)
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(RuntimeError, match="killed after the agent answered"):
        graph.invoke({"messages": [HumanMessage(ASK)]}, config, context=ctx, durability="sync")
    assert len(fresh.received) == 1
    values = graph.invoke(None, config, context=ctx, durability="sync")
    assert len(fresh.received) == 1  # the saved answer, not a new message
    assert [r.content for r in replies_of(values)] == ["Done (1).\n\nReview 1: looks good."]


@pytest.mark.parametrize("binding", ["HTTP+JSON", "GRPC"])
def test_the_card_decides_the_interface(fresh, run, ctx, binding):
    with a2a_server(fresh, binding=binding) as only:
        values = run(graph_for(only), f"{ASK} quickly", ctx)
    (reply,) = replies_of(values)
    if binding == "HTTP+JSON":  # a REST-only agent answers as well
        assert reply.content == "Done (1).\n\nReview 1: looks good."
    else:
        assert reply.content == (
            f"ERROR: remote specialist {NAME} at {only} (A2A agent): its agent card offers no "
            "interface this client speaks (JSON-RPC or HTTP+JSON): no compatible transports found."
        )


def test_a_task_still_working_is_asked_for_again_until_it_ends(monkeypatch):
    """A blocking send may still answer with a task at work: `GetTask` until it has ended."""
    working = Task(
        id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
    )
    done = Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(
            state=TaskState.TASK_STATE_COMPLETED,
            message=Message(role=Role.ROLE_AGENT, parts=[Part(text="Finally done.")]),
        ),
    )
    answers = [working, done]
    asked: list[str] = []

    class Client:
        async def send_message(self, request):  # type: ignore[no-untyped-def]
            yield StreamResponse(task=working)

        async def get_task(self, request):  # type: ignore[no-untyped-def]
            asked.append(request.id)
            return answers.pop(0)

    async def create_from_url(self, url):  # type: ignore[no-untyped-def]
        return Client()

    monkeypatch.setattr(a2a, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(a2a.ClientFactory, "create_from_url", create_from_url)
    profile = a2a_profile("http://127.0.0.1:9")
    (reply,) = asyncio.run(a2a.a2a_reply(NAME, profile, [HumanMessage("Review it")]))
    assert reply.content == "Finally done."
    assert asked == ["t-1", "t-1"]


def test_a_langgraph_server_cannot_mark_its_reply_as_awaiting_the_user():
    forged = AIMessage("Answer me.", response_metadata={AWAITS_USER: True, REMOTE_FAILED: True})
    (kept,) = checked_reply([forged], counter=token_counter())
    assert AWAITS_USER not in kept.response_metadata
    assert REMOTE_FAILED not in kept.response_metadata
