"""Remote specialists: a profile's `remote` runs its agent on a LangGraph server.

Every model here is `ChatOpenAI` over HTTP to one local OpenAI-compatible server
(tests/support/openai_server.py), whose responder (`Team`) tells the agents
apart by their system prompts:
- the two remote specialists are `create_agent` graphs served by two real
  `langgraph dev` servers on loopback (`reviewer` on A, `translator` on B), their
  model `ChatOpenAI` reading `OPENAI_BASE_URL` and a dummy key from the served
  graph's environment; they answer, sleep (`SLOW`) or fail with HTTP 500 (`BREAK`);
- our orchestrator (the local handover graph) hands requests over to them and
  explains an `ERROR:` when one comes back.

The servers start once for the module (tests marked `slow`); the profile tests,
and a server that is down, need none.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphInterrupt, ParentCommand
from langgraph.pregel.protocol import StreamProtocol
from langgraph.pregel.remote import RemoteException
from langgraph.types import Command
from langgraph_sdk import get_sync_client

from specialist_handover import Profile, ProfileFileError, build_graph
from specialist_handover.nodes.agents import member
from specialist_handover.nodes.agents.remote import (
    RemoteNoReply,
    describe_failure,
    local_config,
    output_messages,
    run_blocking,
)
from specialist_handover.specialists import Remote, load_profile_dir, parse_profile
from specialist_handover.state.defaults import REMOTE_TIMEOUT
from tests.support.graphs import say, state_of
from tests.support.langgraph_server import LangGraphServer, free_port, langgraph_dev_server
from tests.support.models import check_tool_history
from tests.support.openai_server import HTTPFault, OpenAICompatibleServer

REVIEWER_PROMPT = "You are the remote code reviewer."
TRANSLATOR_PROMPT = "You are the remote translator."
SLOW_SECONDS = 12.0
"""How long the remote model takes for a request marked SLOW (the profile allows 6 s: longer
than the server's 5-second SSE heartbeat, so only a deadline on the whole run can end it)."""

SERVED_AGENT = '''\
"""A specialist served by `langgraph dev` for tests/test_remote_specialists.py."""
import os

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


@tool(return_direct=True)
def return_to_orchestrator(summary: str) -> str:
    """Hand the conversation back to the orchestrator, with a summary of what you did."""
    return "Handing back."


# ChatOpenAI reads OPENAI_BASE_URL and OPENAI_API_KEY from the server's environment
graph = create_agent(
    ChatOpenAI(model="gpt-4o", max_retries=0),
    [return_to_orchestrator],
    system_prompt=os.environ["AGENT_PROMPT"],
)
'''


def _call(name: str, args: dict) -> dict:
    return {
        "id": f"call_{name}_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


TARGETS = {
    "review": "remote_reviewer",
    "translate": "remote_translator",
    "audit": "remote_down",
    "proofread": "remote_unknown",
}


class Team:
    """The responder for every model, by its system prompt (see the module docstring)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[dict]]] = []

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        system = str(messages[0].get("content") or "") if messages[0]["role"] == "system" else ""
        role = {REVIEWER_PROMPT: "reviewer", TRANSLATOR_PROMPT: "translator"}.get(
            system, "orchestrator"
        )
        self.asked.append((role, messages))
        seen = json.dumps(messages)
        if role != "orchestrator":
            if "SLOW" in seen:
                time.sleep(SLOW_SECONDS)
            if "BREAK" in seen:
                raise HTTPFault(500, "the remote model broke")
            last = messages[-1]
            if "go back" in str(last.get("content")) and last.get("name") != "handover":
                summary = {"summary": f"{role}: reviewed what was asked."}
                return {"content": None, "tool_calls": [_call("return_to_orchestrator", summary)]}
            turns = sum(m["role"] == "assistant" for m in messages)
            return {"content": f"{role} answer {turns + 1}: looks good."}
        last = messages[-1]
        text = str(last.get("content") or "")
        errors = [
            str(m.get("content")) for m in messages if "ERROR: remote" in str(m.get("content"))
        ]
        if errors and last["role"] != "user":
            return {
                "content": f"Sorry, the specialist could not answer ({errors[-1]}). "
                "I'll help you myself."
            }
        if last["role"] == "tool":
            return {"content": "The specialist has it."}
        if last["role"] == "user" and "consult both" in text:
            entries = [
                {"specialist_profile": name, "question": text}
                for name in ("remote_reviewer", "remote_translator")
            ]
            return {
                "content": None,
                "tool_calls": [_call("consult_specialists", {"consults": entries})],
            }
        target = next((p for word, p in TARGETS.items() if word in text), None)
        if last["role"] == "user" and target:
            condition = next(
                (c for c in ("task_complete", "user_request") if c in text), "after_reply"
            )
            args = {
                "specialist_profile": target,
                "topic": "remote-work",
                "summary": f"The user asks: {text}",
                "handover_reason": "this is that specialist's work",
                "return_condition": condition,
            }
            return {"content": None, "tool_calls": [_call("handover_to_specialist", args)]}
        return {"content": f"Noted ({len(messages)} messages)."}

    def requests_of(self, role: str, since: int = 0) -> list[list[dict]]:
        return [messages for who, messages in self.asked[since:] if who == role]


def remote_profile(name: str, url: str, graph_id: str, timeout: float = 30.0) -> Profile:
    return Profile(
        name=name,
        emoji="🛰️",
        description=f"Runs {graph_id} on a LangGraph server.",
        prompt="(the remote graph brings its own prompt)",
        remote={"url": url, "graph_id": graph_id, "timeout": timeout},
    )


def chat_model(server: OpenAICompatibleServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)


def team_graph(models: OpenAICompatibleServer, *profiles: Profile):  # type: ignore[no-untyped-def]
    return build_graph(checkpointer=InMemorySaver(), model=chat_model(models), profiles=profiles)


# --- the profile field ------------------------------------------------------------------------

FILE = """\
---
name: remote_reviewer
emoji: "🛰️"
description: "Reviews code on the review team's deployment."
remote:
  url: "http://127.0.0.1:2024/"
  graph_id: reviewer
{extra}---

(the remote graph brings its own prompt)
"""


def test_front_matter_remote_is_read_into_the_profile():
    profile = parse_profile(FILE.format(extra="  timeout: 45\n"), source="team/remote_reviewer.md")
    assert profile.remote == Remote(url="http://127.0.0.1:2024", graph_id="reviewer", timeout=45)
    default = parse_profile(FILE.format(extra=""), source="x.md")
    assert default.remote is not None and default.remote.timeout == REMOTE_TIMEOUT == 120
    local = FILE.format(extra="").replace(
        '  url: "http://127.0.0.1:2024/"\n  graph_id: reviewer\n', ""
    )
    assert parse_profile(local, source="y.md").remote is None  # `remote:` left empty: local


def test_profile_objects_take_a_remote_or_a_mapping():
    mapping = remote_profile("remote_reviewer", "https://reviews.example.com/api", "reviewer")
    assert mapping.remote == Remote(
        url="https://reviews.example.com/api", graph_id="reviewer", timeout=30.0
    )
    given = Remote(url="http://127.0.0.1:9", graph_id="g")
    assert Profile(name="x_y", description="d", prompt="p", remote=given).remote is given
    assert Profile(name="x_y", description="d", prompt="p").remote is None


@pytest.mark.parametrize(
    "extra, error",
    [
        ("", None),
        ("  timeout: 0\n", "remote.timeout must be a number of seconds above 0 and at most 3600"),
        ("  timeout: 7200\n", "remote.timeout must be a number of seconds above 0 and at most"),
        ("  timeout: soon\n", "remote.timeout must be a number of seconds"),
        ("  timeout: true\n", "remote.timeout must be a number of seconds"),
        ("  colour: blue\n", "remote: unknown field(s) colour; known fields: url, graph_id"),
    ],
)
def test_bad_remote_values_are_refused_naming_the_file_and_field(extra, error):
    text = FILE.format(extra=extra)
    if error is None:
        assert parse_profile(text, source="team/remote_reviewer.md").remote is not None
        return
    with pytest.raises(ProfileFileError) as refused:
        parse_profile(text, source="team/remote_reviewer.md")
    assert str(refused.value).startswith(f"team/remote_reviewer.md: {error}"), refused.value


@pytest.mark.parametrize(
    "remote, error",
    [
        ("http://127.0.0.1:2024", "remote must be a mapping with url and graph_id"),
        ({"graph_id": "g"}, "remote: missing url"),
        ({"url": "ftp://host/x", "graph_id": "g"}, "remote.url must be an http(s) URL"),
        ({"url": "127.0.0.1:2024", "graph_id": "g"}, "remote.url must be an http(s) URL"),
        ({"url": "http://", "graph_id": "g"}, "remote.url must be an http(s) URL"),
        ({"url": 2024, "graph_id": "g"}, "remote.url must be an http(s) URL"),
        ({"url": "http://me:pw@host", "graph_id": "g"}, "remote.url http://***@host carries"),
        ({"url": "http://h:99999", "graph_id": "g"}, "remote.url 'http://h:99999' cannot be read"),
        ({"url": "http://h", "graph_id": ""}, "remote.graph_id must be a non-empty string"),
        ({"url": "http://h", "graph_id": "  "}, "remote.graph_id must be a non-empty string"),
        ({"url": "http://h", "graph_id": 7}, "remote.graph_id must be a non-empty string"),
        ({"url": "http://h", "graph_id": "g", "timeout": -1}, "remote.timeout must be"),
        ({"url": "http://h", "graph_id": "g", "timeout": float("nan")}, "remote.timeout must"),
    ],
)
def test_bad_remote_in_a_profile_object_is_refused_naming_the_field(remote, error):
    with pytest.raises(ProfileFileError) as refused:
        Profile(name="remote_reviewer", description="d", prompt="p", remote=remote)
    assert str(refused.value).startswith(f"profile 'remote_reviewer': {error}"), refused.value
    assert "pw" not in str(refused.value)


def test_a_remote_profile_takes_no_tool_sets_and_the_orchestrator_cannot_be_remote():
    with pytest.raises(ProfileFileError, match="tools: a remote specialist runs its server's"):
        Profile(
            name="r_x",
            description="d",
            prompt="p",
            tools=("workspace",),
            remote={"url": "http://h", "graph_id": "g"},
        )
    orchestrator = Profile(
        name="a0_software_orchestrator",
        description="d",
        prompt="p",
        remote={"url": "http://h", "graph_id": "g"},
    )
    with pytest.raises(ProfileFileError, match="the orchestrator runs in process"):
        build_graph(profiles=[orchestrator])


def test_build_graph_refuses_an_agent_or_tools_for_a_remote_profile():
    profile = remote_profile("remote_reviewer", "http://127.0.0.1:9", "reviewer")
    with pytest.raises(
        ValueError,
        match=r"agents\['remote_reviewer'\]: profile 'remote_reviewer' "
        "runs remotely",
    ):
        build_graph(profiles=[profile], agents={"remote_reviewer": build_graph()})
    with pytest.raises(
        ValueError, match=r"tools\['remote_reviewer'\]: .* its tools are its server"
    ):
        build_graph(profiles=[profile], tools={"remote_reviewer": [len]})
    drawn = build_graph(profiles=[profile]).get_graph(xray=True)
    assert "remote_reviewer:remote" in {n for n in drawn.nodes}


GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "GUIDE.md").read_text(encoding="utf-8")
GUIDE_SECTION = GUIDE[GUIDE.index("## Remote specialists") :]


def test_the_guides_remote_profile_file_parses_and_its_snippet_builds_the_node(tmp_path):
    shown = re.search(r"```markdown\n(.*?)```", GUIDE_SECTION, re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "security_reviewer.md").write_text(shown, encoding="utf-8")
    (profile,) = load_profile_dir(tmp_path)
    assert profile.remote == Remote(
        url="https://security-team.example.com", graph_id="reviewer", timeout=120
    )
    code = re.search(r"```python\n(.*?)```", GUIDE_SECTION, re.S).group(1)  # type: ignore[union-attr]
    namespace: dict = {}  # type: ignore[type-arg]
    exec(compile(code, "docs/GUIDE.md", "exec"), namespace)
    drawn = namespace["graph"].get_graph(xray=True)
    assert "security_reviewer:remote" in drawn.nodes


@pytest.mark.parametrize(
    "exc, what",
    [
        (TimeoutError(), "no answer within the timeout of 2.5 s; the remote run was cancelled"),
        (GraphInterrupt(), "the remote graph paused for input (an interrupt)"),
        (ParentCommand(Command(graph=Command.PARENT)), "the remote graph sent a command to its"),
        (
            RemoteException({"error": "ValueError", "message": "bad\n  input"}),
            "the remote run failed: ValueError: bad input",
        ),
        (KeyError("x" * 500), "KeyError: 'xxx"),
    ],
)
def test_each_kind_of_failure_is_said_in_one_line(exc, what):
    said = describe_failure(exc, 2.5)
    assert said.startswith(what) and "\n" not in said and len(said) <= 320, said


@pytest.mark.parametrize(
    "values, what",
    [
        ({"answer": 42}, "the remote graph's output has no 'messages' list"),
        ({"messages": [42]}, "the remote graph's output holds a non-message: 42"),
        (None, "the remote graph's output has no 'messages' list"),
    ],
)
def test_an_output_without_messages_is_refused(values, what):
    with pytest.raises(RemoteNoReply, match=re.escape(what)):
        output_messages(values)


def test_the_remote_run_is_given_nothing_of_our_config_to_send():
    relayed: list = []  # type: ignore[type-arg]
    ours = StreamProtocol(relayed.append, {"messages"})
    config = {
        "configurable": {
            "thread_id": "our-thread",
            "checkpoint_id": "our-checkpoint",
            "checkpoint_ns": "remote_reviewer:1|remote:2",
            "user_id": "u-1",
            "stream": ours,
        },
        "metadata": {"thread_id": "our-thread", "agent": "remote_reviewer"},
        "tags": ["ours"],
        "recursion_limit": 99,
    }
    local = local_config(config)  # type: ignore[arg-type]
    assert set(local) == {"configurable"}
    kept = local["configurable"]
    # what stays in process: our namespace (RemoteGraph drops it) and the relay (not data)
    assert kept["checkpoint_ns"] == "remote_reviewer:1|remote:2"
    assert {k for k, v in kept.items() if not isinstance(v, StreamProtocol)} == {"checkpoint_ns"}
    kept["stream"](
        (("remote_reviewer:1",), "messages", [{"type": "AIMessageChunk", "content": "hi"}, {}])
    )
    ((namespace, mode, (message, metadata)),) = relayed
    assert isinstance(message, AIMessageChunk) and metadata == {"agent": "remote_reviewer"}


def test_the_remote_run_gets_a_loop_of_its_own_even_under_a_running_one():
    async def inside_a_loop() -> int:
        return run_blocking(lambda: asyncio.sleep(0, result=7))  # called from sync code

    assert asyncio.run(inside_a_loop()) == 7
    assert run_blocking(lambda: asyncio.sleep(0, result=8)) == 8


# --- a server that is down (no server needed) ---------------------------------------------------


def test_a_server_that_is_down_gives_an_error_and_the_orchestrator_answers_in_the_same_turn(ctx):
    team = Team()
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with OpenAICompatibleServer(team) as models:
        graph = team_graph(models, remote_profile("remote_down", url, "auditor"))
        values = say(graph, "Please audit the payment module.", ctx)
        error = f"ERROR: remote specialist remote_down at {url} (graph auditor): cannot reach the server"
        (reply,) = [m for m in values["messages"] if m.name == "remote_down"]
        assert isinstance(reply, AIMessage) and reply.content.startswith(error), reply.content
        assert reply.content.endswith("is it running?")
        assert values["active_agent"] == "orchestrator"
        last = values["messages"][-1]
        assert last.name == "orchestrator" and last.content.startswith(
            "Sorry, the specialist could"
        )
        assert error in last.content  # the orchestrator's model was shown the error
        check_tool_history(values["messages"])
        trail = state_of(graph)["handovers"]
        assert [(r["kind"], r["to_agent"]) for r in trail] == [
            ("handover", "remote_down"),
            ("return", "orchestrator"),
        ]
        assert trail[-1]["reason"].startswith(error)

        # nothing more is written when the finished turn is run again
        config = {"configurable": {"thread_id": "t"}}
        before = state_of(graph)
        graph.invoke(None, config, context=ctx, durability="sync")
        assert state_of(graph)["messages"] == before["messages"]
        assert state_of(graph)["handovers"] == before["handovers"]
        # and the thread answers its next message, from the orchestrator
        assert say(graph, "Thanks, anything else?", ctx)["messages"][-1].name == "orchestrator"
        assert not models.rejected, models.rejected


# --- two real servers ---------------------------------------------------------------------------


def _serve(folder: Path, graph_id: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "specialist.py").write_text(SERVED_AGENT, encoding="utf-8")
    config = {"dependencies": ["."], "graphs": {graph_id: "./specialist.py:graph"}}
    (folder / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    return folder / "langgraph.json"


@pytest.fixture(scope="module")
def team() -> Team:
    return Team()


@pytest.fixture(scope="module")
def models(team: Team):
    with OpenAICompatibleServer(team) as server:
        yield server


def _agent_server(tmp_path_factory, models, graph_id: str, prompt: str):  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp(f"remote-{graph_id}")
    env = {"OPENAI_BASE_URL": models.base_url, "OPENAI_API_KEY": "dummy", "AGENT_PROMPT": prompt}
    return langgraph_dev_server(
        log_dir=base / "logs", config=_serve(base / "app", graph_id), env=env
    )


@pytest.fixture(scope="module")
def server_a(tmp_path_factory, models):
    with _agent_server(tmp_path_factory, models, "reviewer", REVIEWER_PROMPT) as running:
        yield running


@pytest.fixture(scope="module")
def server_b(tmp_path_factory, models):
    with _agent_server(tmp_path_factory, models, "translator", TRANSLATOR_PROMPT) as running:
        yield running


@pytest.fixture
def graph(models, server_a: LangGraphServer, server_b: LangGraphServer):  # type: ignore[no-untyped-def]
    return team_graph(
        models,
        remote_profile("remote_reviewer", server_a.url, "reviewer"),
        remote_profile("remote_translator", server_b.url, "translator"),
        remote_profile("remote_unknown", server_a.url, "no_such_graph"),
    )


@pytest.mark.slow
@pytest.mark.parametrize("condition", ["after_reply", "task_complete"])
def test_two_remote_specialists_take_handovers_see_the_package_and_hand_back(
    graph, team, models, ctx, condition
):
    for i in range(8):
        say(graph, f"Background note {i}: the codename is BLUEBIRD-{i}.", ctx)
    since = len(team.asked)
    for word, name, role in [
        ("review", "remote_reviewer", "reviewer"),
        ("translate", "remote_translator", "translator"),
    ]:
        before = len(state_of(graph)["messages"])
        values = say(graph, f"Please {word} the release notes ({condition}).", ctx)
        added = values["messages"][before:]
        (asked,) = team.requests_of(role, since)
        assert asked[0] == {
            "role": "system",
            "content": REVIEWER_PROMPT if role == "reviewer" else TRANSLATOR_PROMPT,
        }
        package = asked[1]
        assert package["role"] == "user" and package["name"] == "handover"
        assert "HANDOVER PACKAGE (stage 1)" in package["content"]
        assert f"Specialist: {name}" in package["content"]
        assert len(asked) == 2, asked  # the package only: never the older history
        # an older turn reaches it only through the package's thread ledger or earlier turns
        verbatim = package["content"].split("## Recent turns")[1].split("## Decisions")[0]
        assert "BLUEBIRD-0" not in verbatim and "BLUEBIRD-1" not in verbatim

        replies = [m for m in added if isinstance(m, AIMessage) and m.name == name]
        assert [r.content for r in replies] == [f"{role} answer 1: looks good."]
        assert replies[0].response_metadata["persona_marker"] == f"[{name.replace('_', ' ')}]"
        assert values["active_agent"] == "orchestrator"
        trail = state_of(graph)["handovers"]
        assert [(r["kind"], r["to_agent"]) for r in trail[-2:]] == [
            ("handover", name),
            ("return", "orchestrator"),
        ]
        assert trail[-1]["reason"] == f"{condition}: replied"
        *_, answer, last = values["messages"]
        if condition == "after_reply":  # the answer, then the note who holds the thread
            assert answer.name == name and last.response_metadata.get("for_readers")
        assert last.name == "orchestrator"
    check_tool_history(state_of(graph)["messages"])
    assert not models.rejected, models.rejected


@pytest.mark.slow
def test_a_user_request_remote_specialist_keeps_the_thread_on_stateless_remote_runs(
    graph, team, ctx, server_a
):
    client = get_sync_client(url=server_a.url, api_key=None)
    threads_before = len(client.threads.search(limit=100))
    since = len(team.asked)
    values = say(graph, "Please review the parser (user_request).", ctx)
    assert values["active_agent"] == "remote_reviewer"
    values = say(graph, "And the lexer too?", ctx)
    assert values["active_agent"] == "remote_reviewer"
    assert values["messages"][-1].content == "reviewer answer 2: looks good."
    first, second = team.requests_of("reviewer", since)
    # its second run got the package and its own turns since, from our checkpointer
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[1] == first[1] and second[2]["content"] == "reviewer answer 1: looks good."
    assert second[3]["content"] == "And the lexer too?"
    assert len(team.requests_of("orchestrator", since)) == 1  # the handover call, nothing after
    # stateless runs: the server kept no thread of ours
    assert len(client.threads.search(limit=100)) == threads_before

    # asked to go back, it calls its own return_to_orchestrator: our handover node returns
    values = say(graph, "Thanks, go back to the orchestrator please.", ctx)
    assert values["active_agent"] == "orchestrator"
    trail = state_of(graph)["handovers"]
    assert (trail[-1]["kind"], trail[-1]["reason"]) == (
        "return",
        "reviewer: reviewed what was asked.",
    )
    call = next(m for m in reversed(values["messages"]) if m.name == "remote_reviewer")
    assert [c["name"] for c in call.tool_calls] == ["return_to_orchestrator"]
    (answer,) = [
        m
        for m in values["messages"]
        if getattr(m, "tool_call_id", None) == call.tool_calls[0]["id"]
    ]
    assert answer.content == "Returned to the orchestrator."  # ours, not the remote tool's
    assert values["messages"][-1].name == "orchestrator"
    check_tool_history(values["messages"])


@pytest.mark.slow
def test_the_remote_reply_streams_under_the_specialist(graph, ctx):
    config = {"configurable": {"thread_id": "stream"}}
    chunks = [
        (namespace, message, metadata)
        for namespace, (message, metadata) in graph.stream(
            {"messages": [HumanMessage("Please review the parser.")]},
            config,
            context=ctx,
            stream_mode="messages",
            subgraphs=True,
        )
    ]
    remote = [c for c in chunks if c[2].get("agent") == "remote_reviewer"]
    assert remote, chunks
    *streamed, (whole_ns, whole, _) = remote
    tokens = [m for _, m, _ in streamed if m.content]
    assert len(tokens) > 1 and all(isinstance(m, AIMessageChunk) for _, m, _ in streamed)
    assert "".join(str(t.content) for t in tokens) == "reviewer answer 1: looks good."
    for namespace, _, metadata in streamed:  # as the server streamed them, under its step
        assert namespace[0].startswith("remote_reviewer:"), namespace
        assert namespace[1].startswith("remote:") and len(namespace) == 2, namespace
        assert metadata["persona_marker"] == "[remote reviewer]"
    # when the step ends, the whole reply once, with the tokens' id (clients merge by id)
    assert isinstance(whole, AIMessage) and whole.content == "reviewer answer 1: looks good."
    assert whole_ns == streamed[0][0][:1] and {m.id for _, m, _ in remote} == {whole.id}
    stored = [m for m in graph.get_state(config).values["messages"] if m.name == "remote_reviewer"][
        -1
    ]
    assert stored.content == "reviewer answer 1: looks good."
    assert stored.id == whole.id


@pytest.mark.slow
@pytest.mark.parametrize(
    "request_text, what",
    [
        (
            "Please proofread this.",
            "the server refused the run: HTTP 422: Invalid assistant: 'no_such_graph'.",
        ),
        (
            "Please review this; BREAK it.",
            "the remote run failed: OpenAIAPIError: ",  # the server's words for the model's 500
        ),
    ],
)
def test_a_refused_or_failed_remote_run_gives_an_error_and_the_orchestrator_answers(
    graph, models, ctx, server_a, request_text, what
):
    values = say(graph, request_text, ctx)
    name = "remote_unknown" if "proofread" in request_text else "remote_reviewer"
    graph_id = "no_such_graph" if name == "remote_unknown" else "reviewer"
    error = f"ERROR: remote specialist {name} at {server_a.url} (graph {graph_id}): {what}"
    (reply,) = [m for m in values["messages"] if m.name == name]
    assert reply.content.startswith(error), reply.content
    assert values["active_agent"] == "orchestrator"
    assert values["messages"][-1].name == "orchestrator" and error in values["messages"][-1].content
    assert state_of(graph)["handovers"][-1]["kind"] == "return"
    check_tool_history(values["messages"])
    assert not models.rejected, models.rejected


@pytest.mark.slow
def test_a_slow_remote_run_times_out_with_an_error(models, server_b, ctx):
    graph = team_graph(
        models, remote_profile("remote_translator", server_b.url, "translator", timeout=6)
    )
    started = time.monotonic()
    values = say(graph, "Please translate this, SLOW please.", ctx)
    took = time.monotonic() - started
    error = (
        f"ERROR: remote specialist remote_translator at {server_b.url} (graph translator): "
        "no answer within the timeout of 6 s; the remote run was cancelled"
    )
    (reply,) = [m for m in values["messages"] if m.name == "remote_translator"]
    assert reply.content == error
    assert values["messages"][-1].name == "orchestrator"
    assert 6 <= took < 9, took
    check_tool_history(values["messages"])


@pytest.mark.slow
def test_a_run_resumed_after_a_crash_does_not_ask_the_remote_again(graph, team, ctx, monkeypatch):
    real = member.stored_replies
    crashes = {"left": 1}

    def crash_once(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("agent") == "remote_reviewer" and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("killed after the remote answered")
        return real(*args, **kwargs)

    monkeypatch.setattr(member, "stored_replies", crash_once)
    since = len(team.asked)
    with pytest.raises(RuntimeError, match="killed after the remote answered"):
        say(graph, "Please review the cache (after_reply).", ctx)
    assert len(team.requests_of("reviewer", since)) == 1
    values = graph.invoke(
        None, {"configurable": {"thread_id": "t"}}, context=ctx, durability="sync"
    )
    assert len(team.requests_of("reviewer", since)) == 1  # the saved answer, not a new run
    replies = [m for m in values["messages"] if m.name == "remote_reviewer"]
    assert [r.content for r in replies] == ["reviewer answer 1: looks good."]
    assert [r["kind"] for r in state_of(graph)["handovers"]] == ["handover", "return"]


@pytest.mark.slow
def test_remote_specialists_answer_a_consult_each_on_its_own_server(graph, team, models, ctx):
    since = len(team.asked)
    values = say(graph, "Please consult both on the release notes.", ctx)
    (answer,) = [
        m
        for m in values["messages"]
        if isinstance(m, ToolMessage) and m.name == "consult_specialists"
    ]
    assert "2 of 2 specialists answered" in answer.text
    assert "reviewer answer 1: looks good." in answer.text
    assert "translator answer 1: looks good." in answer.text
    for role in ("reviewer", "translator"):
        (asked,) = team.requests_of(role, since)
        assert "HANDOVER PACKAGE (stage 1)" in asked[1]["content"]
    assert values["active_agent"] == "orchestrator"
    assert [r["kind"] for r in state_of(graph)["handovers"][-2:]] == ["consult", "consult"]
    check_tool_history(state_of(graph)["messages"])
    assert not models.rejected, models.rejected
