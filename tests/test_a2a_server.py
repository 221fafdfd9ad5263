"""The served graph over A2A: `langgraph dev` serves every assistant at `/a2a/<id>`, and an
a2a-sdk 1.x client holds a conversation with it.

One real `langgraph dev` (the project's `langgraph.json`, offline model) for the module. The
client is `examples/a2a_client.py`'s: JSON-RPC, protocol 1.0, not streaming (a2a-sdk 1.x
cannot read langgraph-api's 1.0 stream events), or streaming over the protocol-0.3 methods.
A data part never fails a task (the graph reads it as part of the user's message), and a
review pause is `input-required`, answered by a `{"resume": ...}` data part. The first
tests need no server: they run the graph the way the server's A2A endpoint does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client

from specialist_handover import build_graph
from specialist_handover.graph.handover_graph import A2A_DATA_HEADING, with_a2a_data
from specialist_handover.state import InputError
from tests.support.langgraph_server import REPO_ROOT, LangGraphServer, langgraph_dev_server

_spec = importlib.util.spec_from_file_location(
    "a2a_client", REPO_ROOT / "examples" / "a2a_client.py"
)
assert _spec is not None and _spec.loader is not None
example = importlib.util.module_from_spec(_spec)
sys.modules["a2a_client"] = example  # dataclasses look their module up by name
_spec.loader.exec_module(example)

HERO = "Please design the landing page hero with bold typography."
APPROVE = {"resume": {"decisions": [{"type": "approve"}]}}
DESIGNER = "**frontend designer**"
ORCHESTRATOR = "**orchestrator**"
Script = Callable[[Any], Awaitable[Any]]


def a2a_config(thread_id: str, **ids: str) -> dict[str, Any]:
    """A run's config as the A2A endpoint makes it: the run's metadata has `a2a`."""
    return {"configurable": {"thread_id": thread_id}, "metadata": {"a2a": ids}}


def test_an_a2a_data_part_is_read_as_part_of_the_users_message(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    alone = a2a_config("t", task_start_id="s1")
    graph.invoke({"ticket": "WEB-42"}, alone, context=ctx)  # a data part alone
    text = {"messages": [{"role": "human", "content": HERO, "id": "m2"}], "priority": 2}
    out = graph.invoke(text, a2a_config("t", task_id="t2"), context=ctx)
    first, second = [m for m in out["messages"] if isinstance(m, HumanMessage)]
    assert first.content == f'{A2A_DATA_HEADING}\n```json\n{{\n  "ticket": "WEB-42"\n}}\n```'
    assert first.additional_kwargs == {"a2a": {"task_start_id": "s1"}}  # its task's history
    assert second.id == "m2" and second.content.startswith(f"{HERO}\n\n{A2A_DATA_HEADING}")
    assert sent_data(second.content) == {"priority": 2}
    assert out["active_agent"] == "frontend_designer"


def test_only_a2a_runs_read_data_parts_and_file_parts_keep_their_blocks(ctx):
    with pytest.raises(InputError, match="unknown input key"):  # any other caller: refused
        build_graph().invoke({"messages": [("user", "hi")], "ticket": 1}, context=ctx)
    config = a2a_config("t")
    files = [{"type": "text", "text": "see the file"}, {"type": "file", "url": "u"}]
    with_file = with_a2a_data({"messages": [{"role": "human", "content": files}], "k": 1}, config)
    assert with_file["messages"][0]["content"][:2] == files  # a file part: a block more
    assert sent_data(with_file["messages"][0]["content"][2]["text"]) == {"k": 1}
    plain = {"messages": [{"role": "human", "content": "hi"}]}
    assert with_a2a_data(plain, config) is plain
    assert with_a2a_data({"ticket": 1}, {"configurable": {}}) == {"ticket": 1}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with langgraph_dev_server(log_dir=tmp_path_factory.mktemp("langgraph-dev")) as running:
        yield running


@pytest.fixture(autouse=True)
def _server_still_up(request: pytest.FixtureRequest):
    yield
    if "server" in request.fixturenames:  # the tests above start none
        server = request.getfixturevalue("server")
        assert server.is_running(), f"langgraph dev died during the test:\n{server.log_tail()}"


@pytest.fixture(scope="module")
def made(server: LangGraphServer):
    """The threads and assistants the tests made: deleted at the end (`langgraph dev`
    persists them)."""
    made: dict[str, list[str]] = {"threads": [], "assistants": []}
    yield made
    if server.is_running():
        client = get_sync_client(url=server.url, api_key=None, timeout=60)
        for thread_id in made["threads"]:
            client.threads.delete(thread_id)
        for assistant_id in made["assistants"]:
            client.assistants.delete(assistant_id)


@pytest.fixture(scope="module")
def lg(server: LangGraphServer):
    """The LangGraph SDK on the same server, to read the threads the A2A contexts are."""
    return get_sync_client(url=server.url, api_key=None, timeout=60)


def talk(url: str, made: dict[str, list[str]], script: Script, *, stream: bool = False) -> Any:
    """Run `script(conversation)` against the agent at `url`, in a new A2A context (its
    thread is deleted at the end of the module)."""

    async def run() -> Any:
        async with httpx.AsyncClient(timeout=120) as http:
            conversation = example.Conversation(await example.connect(http, url, stream=stream))
            try:
                return await script(conversation)
            finally:
                if conversation.context_id:
                    made["threads"].append(conversation.context_id)

    return asyncio.run(run())


def sent_data(text: str) -> Any:
    """The data of a user message's `Data sent with this message (JSON)` block."""
    return json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])


@pytest.fixture(scope="module")
def agent(server: LangGraphServer) -> str:
    """The A2A URL of the graph's own assistant (as the example finds it)."""

    async def find() -> str:
        async with httpx.AsyncClient(timeout=30) as http:
            return str(await example.agent_url(http, server.url))

    return asyncio.run(find())


@pytest.fixture(scope="module")
def review_agent(
    server: LangGraphServer,
    lg: Any,
    made: dict[str, list[str]],
    tmp_path_factory: pytest.TempPathFactory,
):
    """An assistant whose runs pause every handover for review: A2A has no way to send a run
    context, so an assistant carries it."""
    root = tmp_path_factory.mktemp("review-project")
    assistant = lg.assistants.create(
        "orchestrator", context={"review_handovers": True, "project_root": str(root)}
    )
    made["assistants"].append(assistant["assistant_id"])
    return f"{server.url}/a2a/{assistant['assistant_id']}"


@pytest.mark.slow
def test_the_example_holds_three_turns_with_a_handover_on_one_context(server, lg, made):
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "a2a_client.py"), server.url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    context_id = out.rsplit("context: ", 1)[1].strip()
    made["threads"].append(context_id)
    turns = out.split("\nyou: ")[1:]
    assert len(turns) == 3, out
    assert f"[completed] 🧭 {ORCHESTRATOR}: I'm the orchestrator" in turns[0]
    assert f"[completed] 🖌️ {DESIGNER}: I'm the frontend designer, taking over" in turns[1]
    assert f"[completed] 🖌️ {DESIGNER}: Continuing on" in turns[2]
    state = lg.threads.get_state(context_id)["values"]  # the context is the graph's thread
    assert state["active_agent"] == "frontend_designer"
    assert [m["content"] for m in state["messages"] if m["type"] == "human"] == list(example.TURNS)
    assert [(h["kind"], h["to_agent"]) for h in state["handovers"]] == [
        ("handover", "frontend_designer")
    ]


@pytest.mark.slow
def test_streaming_over_the_0_3_methods_keeps_the_context(agent, made):
    async def script(conversation: Any) -> list[Any]:
        first = await conversation.send(new_text_part(HERO))
        second = await conversation.send(new_text_part("Make the button bigger."))
        return [first, second]

    first, second = talk(agent, made, script, stream=True)
    assert (first.state, second.state) == ("completed", "completed")
    assert first.context_id == second.context_id and first.task_id != second.task_id
    assert DESIGNER in first.text and "Continuing on" in second.text


@pytest.mark.slow
def test_a_data_part_alone_or_with_text_never_fails_the_task(agent, lg, made):
    data = {"ticket": "WEB-42", "priority": 2, "labels": ["web"]}

    async def script(conversation: Any) -> list[Any]:
        alone = await conversation.send(new_data_part(data))
        with_text = await conversation.send(new_text_part(HERO), new_data_part(data))
        return [alone, with_text]

    alone, with_text = talk(agent, made, script)
    assert alone.state == "completed" and ORCHESTRATOR in alone.text, alone
    assert with_text.state == "completed" and DESIGNER in with_text.text, with_text
    state = lg.threads.get_state(alone.context_id)["values"]
    first, second = [m for m in state["messages"] if m["type"] == "human"]
    assert first["content"].startswith("Data sent with this message (JSON):\n```json\n")
    assert second["content"].startswith(f"{HERO}\n\nData sent with this message (JSON):")
    assert sent_data(first["content"]) == sent_data(second["content"]) == data
    # the data-only message is stamped with its task, so the task's history lists it
    assert first["additional_kwargs"]["a2a"]["task_start_id"]
    assert state["active_agent"] == "frontend_designer"


@pytest.mark.slow
def test_a_review_pause_is_input_required_and_a_resume_data_part_answers_it(review_agent, lg, made):
    async def script(conversation: Any) -> list[Any]:
        paused = await conversation.send(new_text_part(HERO))
        unusable = await conversation.send(new_text_part("yes"), task_id=paused.task_id)
        answered = await conversation.send(new_data_part(APPROVE), task_id=paused.task_id)
        return [paused, unusable, answered]

    paused, unusable, answered = talk(review_agent, made, script)
    assert paused.state == "input-required"
    request = json.loads(paused.text)["value"]  # LangChain's human-in-the-loop format
    assert request["action_requests"][0]["name"] == "handover_to_specialist"
    assert request["action_requests"][0]["args"]["specialist_profile"] == "frontend_designer"
    assert request["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    # text sent to the waiting task is the resume value: not a decision, so it asks again
    assert unusable.state == "input-required"
    assert "Your last answer could not be used" in unusable.text
    assert answered.state == "completed" and answered.task_id == paused.task_id
    assert DESIGNER in answered.text
    assert lg.threads.get_state(paused.context_id)["values"]["active_agent"] == "frontend_designer"


@pytest.mark.slow
def test_a_new_message_to_a_paused_task_moves_on_instead_of_failing(review_agent, lg, made):
    async def script(conversation: Any) -> list[Any]:
        paused = await conversation.send(new_text_part(HERO))
        data = await conversation.send(new_data_part({"ticket": "WEB-7"}), task_id=paused.task_id)
        again = await conversation.send(new_text_part(HERO))
        text = await conversation.send(new_text_part("Hello!"))  # a new task, same context
        return [paused, data, again, text]

    paused, data, again, text = talk(review_agent, made, script)
    assert (paused.state, again.state) == ("input-required", "input-required")
    # a data part without `resume` is a new message: the handover waiting is not carried out
    assert data.state == "completed" and ORCHESTRATOR in data.text, data
    assert text.state == "completed" and ORCHESTRATOR in text.text, text
    thread = lg.threads.get(paused.context_id)
    assert thread["status"] == "idle" and thread["values"]["active_agent"] == "orchestrator"
    assert [h["kind"] for h in thread["values"]["handovers"]] == ["refused", "refused"]
