"""The graph served the way LangGraph users serve it: `langgraph dev` + the SDK.

One real `langgraph dev` server (the project's `langgraph.json`, offline model,
in-memory runtime) is started for this module on a free loopback port and
stopped by its process group afterwards (tests/support/langgraph_server.py).
Every test uses its own temporary project root, passed as the run context.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import NotFoundError

from specialist_handover.specialists import builtin_profiles
from specialist_handover.state import HandoverContext, speaker_label
from tests.support.langgraph_server import REPO_ROOT, LangGraphServer, langgraph_dev_server

pytestmark = pytest.mark.slow

SPECIALISTS = builtin_profiles().specialists

GRAPH_ID = "orchestrator"
HTTP_TIMEOUT = 60.0
"""Seconds any single HTTP call (including runs.wait) may take."""

HERO = "Please design the landing page hero with bold typography."
FOLLOW_UP = "Make the button bigger."
GO_BACK = "Thanks, go back to the orchestrator please."

CONCURRENT_REQUESTS = {
    "frontend_designer": HERO,
    "hacker": "Run a pentest against our login form and try sql injection.",
    "solution_architect": "Which architecture should we pick: microservices or a monolith?",
    "runtime_devops_engineer": "Write a Dockerfile and deploy it to kubernetes.",
}
INTERNAL_FIELDS = (
    "handover",
    "handover_depth",
    "handovers",
    "agent_turns",
    "consult",
    "consult_task",
)
THREAD_METADATA = {"created_by_test": "tests/test_server.py", "session": uuid.uuid4().hex}
"""Marks this session's threads, deleted at the end (the dev server persists threads)."""


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """One `langgraph dev` for the module; stopped by PGID even when tests fail."""
    with langgraph_dev_server(
        log_dir=tmp_path_factory.mktemp("langgraph-dev"), n_jobs_per_worker=16
    ) as running:
        yield running


@pytest.fixture(autouse=True)
def _server_still_up(server: LangGraphServer):
    yield
    assert server.is_running(), f"langgraph dev died during the test:\n{server.log_tail()}"


@pytest.fixture(scope="module")
def client(server: LangGraphServer):
    sync_client = get_sync_client(url=server.url, api_key=None, timeout=HTTP_TIMEOUT)
    yield sync_client
    # `langgraph dev` persists threads in <repo>/.langgraph_api/: leave none behind
    if server.is_running():
        for _ in range(20):
            threads = sync_client.threads.search(metadata=THREAD_METADATA, limit=100)
            if not threads:
                break
            for thread in threads:
                sync_client.threads.delete(thread["thread_id"])


@pytest.fixture(scope="module")
def assistant_id(client) -> str:
    """The server's own assistant for the graph (not one a user created in Studio)."""
    found = client.assistants.search(graph_id=GRAPH_ID, metadata={"created_by": "system"}, limit=10)
    assert len(found) == 1, found
    return found[0]["assistant_id"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def ctx(root: Path) -> dict[str, str]:
    return {"project_root": str(root), "model": "offline"}


# --- helpers --------------------------------------------------------------------------------


def new_thread(client) -> str:
    return client.threads.create(metadata=THREAD_METADATA)["thread_id"]


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def say(client, thread_id: str, assistant_id: str, text: str, ctx: dict) -> dict[str, Any]:
    """One user turn; returns the run's output (the graph's OutputState)."""
    out = client.runs.wait(thread_id, assistant_id, input=user(text), context=ctx)
    assert isinstance(out, dict) and "__error__" not in out, out
    return out


def ai_replies(messages: list[dict], name: str) -> list[dict]:
    return [
        m
        for m in messages
        if m["type"] in ("ai", "AIMessageChunk") and m.get("name") == name and m["content"]
    ]


def human_texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["type"] == "human"]


def run_statuses(client, thread_id: str) -> list[str]:
    return [r["status"] for r in client.runs.list(thread_id, limit=50)]


# --- tests ----------------------------------------------------------------------------------


def test_assistant_for_the_orchestrator_graph_is_served(client):
    found = client.assistants.search(graph_id=GRAPH_ID, limit=10)
    assert [a["graph_id"] for a in found] == [GRAPH_ID] * len(found) and found
    assistant = client.assistants.get(found[0]["assistant_id"])
    assert assistant["graph_id"] == GRAPH_ID
    with pytest.raises(NotFoundError, match="no-such-graph"):
        client.assistants.search(graph_id="no-such-graph")


def test_three_turns_handover_follow_up_and_return(client, assistant_id, ctx, root):
    thread_id = new_thread(client)

    out = say(client, thread_id, assistant_id, HERO, ctx)
    assert out["active_agent"] == "frontend_designer"
    assert set(out) == {"messages", "active_agent"}  # the output schema, not the whole state
    values = client.threads.get_state(thread_id)["values"]
    package = values["handover"]
    assert package["specialist"] == "frontend_designer"
    assert package["return_condition"] == "user_request"
    assert isinstance(package["estimated_tokens"], int) and 0 < package["estimated_tokens"] <= 3000
    handover_dir = root / ".a0proj" / "handover"
    briefing = Path(package["briefing_file"])
    assert briefing.parent == handover_dir and briefing.name.startswith("frontend-designer-")
    assert briefing.is_file()
    [entry] = values["handovers"]
    assert entry["kind"] == "handover" and entry["to_agent"] == "frontend_designer"
    assert entry["from_agent"] == "orchestrator" and entry["briefing_path"] == str(briefing)
    assert ai_replies(out["messages"], "frontend_designer")

    out = say(client, thread_id, assistant_id, FOLLOW_UP, ctx)
    assert out["active_agent"] == "frontend_designer"
    last = out["messages"][-1]
    assert last["name"] == "frontend_designer" and FOLLOW_UP in last["content"]
    assert len(client.threads.get_state(thread_id)["values"]["handovers"]) == 1

    out = say(client, thread_id, assistant_id, GO_BACK, ctx)
    assert out["active_agent"] == "orchestrator"
    last = out["messages"][-1]
    # the return and the orchestrator's answer happen in the same run
    assert last["name"] == "orchestrator" and "Back with the orchestrator" in last["content"]
    values = client.threads.get_state(thread_id)["values"]
    assert [r["kind"] for r in values["handovers"]] == ["handover", "return"]
    assert values["handover_depth"] == 0
    assert human_texts(values["messages"]) == [HERO, FOLLOW_UP, GO_BACK]
    assert run_statuses(client, thread_id) == ["success"] * 3
    # the briefing is on disk under the run's project root, and only there
    assert briefing.is_file() and "landing" in briefing.read_text(encoding="utf-8").lower()
    assert sorted(p.name for p in handover_dir.iterdir()) == [briefing.name]


@pytest.fixture(scope="module")
def streamed_handover(client, assistant_id, tmp_path_factory) -> dict[str, Any]:
    """One streamed handover run (stream_mode updates + messages-tuple), shared below."""
    root = tmp_path_factory.mktemp("streamed") / "project"
    root.mkdir()
    thread_id = new_thread(client)
    events = list(
        client.runs.stream(
            thread_id,
            assistant_id,
            input=user(HERO),
            context={"project_root": str(root), "model": "offline"},
            stream_mode=["updates", "messages-tuple"],
        )
    )
    return {"thread_id": thread_id, "events": events}


def _specialist_tuples(events) -> list[tuple[dict, dict]]:
    """messages-tuple events of the specialist's reply (found by the node that produced it)."""
    tuples = [e.data for e in events if e.event == "messages"]
    assert tuples and all(isinstance(t, list) and len(t) == 2 for t in tuples)
    return [
        (msg, meta)
        for msg, meta in tuples
        if meta.get("langgraph_node") == "frontend_designer" and msg.get("content")
    ]


def test_stream_updates_and_messages_tuple(client, streamed_handover):
    events = streamed_handover["events"]
    kinds = [e.event for e in events]
    assert "error" not in kinds, [e.data for e in events if e.event == "error"]
    assert kinds[0] == "metadata" and {"updates", "messages"} <= set(kinds)

    updates = [e.data for e in events if e.event == "updates"]
    assert [next(iter(u)) for u in updates] == ["orchestrator", "handover", "frontend_designer"]
    # `updates` carries the graph's output channels (messages, active_agent)
    handover_update = updates[1]["handover"]
    assert handover_update["active_agent"] == "frontend_designer"
    [answer] = handover_update["messages"]
    assert answer["type"] == "tool" and answer["name"] == "handover_to_specialist"
    assert answer["content"].startswith("Handed over to frontend_designer [frontend designer]")

    specialist = _specialist_tuples(events)
    assert len(specialist) == 1, specialist
    message, metadata = specialist[0]
    assert message["type"] in ("ai", "AIMessageChunk")
    assert HERO in message["content"]
    assert metadata["langgraph_node"] == "frontend_designer"
    # the streamed reply is the one stored in the thread
    values = client.threads.get_state(streamed_handover["thread_id"])["values"]
    stored = ai_replies(values["messages"], "frontend_designer")
    assert [m["id"] for m in stored] == [message["id"]]
    # the served graph opens the stored reply with its speaker's label; the stream carries
    # what the model said, and a chat UI shows the stored text once the reply is done
    label = speaker_label(builtin_profiles()["frontend_designer"].emoji, "frontend_designer")
    assert stored[0]["content"] == label + message["content"]


def test_streamed_specialist_reply_carries_its_name(streamed_handover):
    [(message, _)] = _specialist_tuples(streamed_handover["events"])
    assert message["name"] == "frontend_designer"


def test_thread_state_and_history(client, assistant_id, ctx):
    thread_id = new_thread(client)
    say(client, thread_id, assistant_id, HERO, ctx)
    say(client, thread_id, assistant_id, FOLLOW_UP, ctx)

    state = client.threads.get_state(thread_id)
    values = state["values"]
    assert values["active_agent"] == "frontend_designer"
    assert values["handover"]["specialist"] == "frontend_designer"
    assert values["handover"]["briefing_file"].startswith(ctx["project_root"])
    assert [r["kind"] for r in values["handovers"]] == ["handover"]
    assert state["next"] == [] and state["tasks"] == []

    history = client.threads.get_history(thread_id, limit=100)
    assert len(history) > 1
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    steps = [h["metadata"]["step"] for h in history]
    assert steps == sorted(steps, reverse=True), steps  # newest first
    created = [h["created_at"] for h in history]
    assert created == sorted(created, reverse=True)
    # both runs are in the history: two input checkpoints, the first with empty values
    assert [h["metadata"]["source"] for h in history].count("input") == 2
    assert history[-1]["values"].get("messages", []) == []
    assert history[0]["values"]["messages"] == values["messages"]
    # a checkpoint in the middle still shows the state right after the handover
    after_handover = [h for h in history if h["next"] == ["frontend_designer"]]
    assert after_handover and after_handover[-1]["values"]["active_agent"] == "frontend_designer"


def test_sixteen_threads_run_concurrently_and_keep_their_own_state(server, assistant_id, tmp_path):
    agents = list(CONCURRENT_REQUESTS)
    jobs = []
    for i in range(16):
        agent = agents[i % len(agents)]
        root = tmp_path / f"project-{i:02d}"
        root.mkdir()
        marker = f"zq{i:02d}x"
        jobs.append(
            {
                "agent": agent,
                "root": root,
                "marker": marker,
                "texts": [
                    f"{CONCURRENT_REQUESTS[agent]} Reference: {marker}.",
                    f"Make it better for {marker}.",
                ],
            }
        )

    async def one(aclient, job: dict) -> dict:
        thread = await aclient.threads.create(metadata={**THREAD_METADATA, "marker": job["marker"]})
        ctx = {"project_root": str(job["root"]), "model": "offline"}
        for text in job["texts"]:
            out = await aclient.runs.wait(
                thread["thread_id"], assistant_id, input=user(text), context=ctx
            )
            assert isinstance(out, dict) and "__error__" not in out, out
        state = await aclient.threads.get_state(thread["thread_id"])
        runs = await aclient.runs.list(thread["thread_id"])
        return {"state": state, "runs": runs, "thread_id": thread["thread_id"]}

    async def main() -> list[dict]:
        aclient = get_client(url=server.url, api_key=None, timeout=HTTP_TIMEOUT)
        try:
            return await asyncio.wait_for(
                asyncio.gather(*(one(aclient, job) for job in jobs)), timeout=150
            )
        finally:
            await aclient.aclose()

    results = asyncio.run(main())

    assert len({r["thread_id"] for r in results}) == 16
    markers = [job["marker"] for job in jobs]
    for job, result in zip(jobs, results, strict=True):
        values = result["state"]["values"]
        assert [r["status"] for r in result["runs"]] == ["success", "success"]
        assert values["active_agent"] == job["agent"], job
        assert [r["to_agent"] for r in values["handovers"]] == [job["agent"]]
        assert human_texts(values["messages"]) == job["texts"]
        assert ai_replies(values["messages"], job["agent"])
        # no other thread's request leaked into this thread or its briefing
        dumped = json.dumps(values)
        others = [m for m in markers if m != job["marker"]]
        assert job["marker"] in dumped and not [m for m in others if m in dumped], job
        briefing = Path(values["handover"]["briefing_file"])
        assert briefing.parent == job["root"] / ".a0proj" / "handover"
        text = briefing.read_text(encoding="utf-8")
        assert job["marker"] in text and not [m for m in others if m in text]


def test_drawn_graph_lists_every_node_and_edge(client, assistant_id):
    drawn = client.assistants.get_graph(assistant_id)
    nodes = {n["id"] for n in drawn["nodes"]}
    assert {"__start__", "__end__", "orchestrator", "handover", *SPECIALISTS} <= nodes
    assert len(SPECIALISTS) == 12
    consults = {"consult", "consultant", "consult_answers"}
    assert nodes - {"__start__", "__end__"} == {"orchestrator", "handover", *consults, *SPECIALISTS}
    edges = {(e["source"], e["target"]) for e in drawn["edges"]}
    assert ("orchestrator", "consult") in edges and ("consult", "consultant") in edges
    assert ("consultant", "consult_answers") in edges and (
        "consult_answers",
        "orchestrator",
    ) in edges
    assert ("__start__", "orchestrator") in edges
    assert ("orchestrator", "handover") in edges and ("orchestrator", "__end__") in edges
    for name in SPECIALISTS:
        assert ("__start__", name) in edges
        assert ("handover", name) in edges
        assert (name, "orchestrator") in edges
        assert (name, "handover") in edges
        assert (name, "__end__") in edges


def test_schemas_input_output_and_context(client, assistant_id):
    schemas = client.assistants.get_schemas(assistant_id)
    assert schemas["graph_id"] == GRAPH_ID

    input_props = schemas["input_schema"]["properties"]
    assert "messages" in input_props
    assert not [f for f in (*INTERNAL_FIELDS, "active_agent") if f in input_props]

    output_props = schemas["output_schema"]["properties"]
    assert {"messages", "active_agent"} <= set(output_props)
    assert output_props["active_agent"]["type"] == "string"
    assert not [f for f in INTERNAL_FIELDS if f in output_props]

    context = schemas["context_schema"]
    props = context["properties"]
    fields = dataclasses.fields(HandoverContext)
    assert set(props) == {f.name for f in fields}
    assert not context.get("required"), "every context field has a default"
    for f in fields:
        prop = props[f.name]
        assert prop.get("description") == f.metadata["description"], f.name
        if f.default is not dataclasses.MISSING:
            assert prop.get("default") == f.default, f.name
        else:
            # default_factory (environment-dependent): JSON schema carries no value,
            # so the description must say what the default is
            assert f.default_factory is not dataclasses.MISSING, f.name
            assert "Default:" in prop["description"], f.name


def test_remote_graph_invoke_and_get_state(server, client, ctx):
    remote = RemoteGraph(GRAPH_ID, url=server.url, api_key=None)
    thread_id = new_thread(client)
    config = {"configurable": {"thread_id": thread_id}}

    out = remote.invoke(user(HERO), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"

    snapshot = remote.get_state(config)
    assert snapshot.values["active_agent"] == "frontend_designer"
    assert snapshot.values["handover"]["specialist"] == "frontend_designer"
    assert [r["kind"] for r in snapshot.values["handovers"]] == ["handover"]
    assert snapshot.next == ()
    assert snapshot.config["configurable"]["thread_id"] == thread_id

    out = remote.invoke(user(FOLLOW_UP), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"
    assert out["messages"][-1]["name"] == "frontend_designer"
    history = list(remote.get_state_history(config, limit=100))
    assert len(history) > len(snapshot.values["messages"]) // 2
    assert history[0].values["messages"][-1]["content"] == out["messages"][-1]["content"]


def _failed_run(client, thread_id: str, out: Any) -> str | None:
    """The error message when the thread's only run ended in error, else None."""
    statuses = run_statuses(client, thread_id)
    assert statuses in (["error"], ["success"]), statuses
    if statuses == ["success"]:
        return None
    error = out["__error__"]
    assert set(error) == {"error", "message"} and "Traceback" not in error["message"], error
    assert client.threads.get(thread_id)["status"] == "error"
    return f"{error['error']}: {error['message']}"


def test_relative_project_root_fails_with_a_clear_error(client, assistant_id, ctx, root):
    """A context value of the wrong kind over HTTP: a clear error naming project_root.

    The run ends in status "error" with `{"error": "ValueError", "message":
    "project_root must be absolute, got 'relative/path'"}`; nothing is written,
    and the thread goes on with a good context.
    """
    thread_id = new_thread(client)
    bad = {"project_root": "relative/path", "model": "offline"}
    out = client.runs.wait(
        thread_id, assistant_id, input=user(HERO), context=bad, raise_error=False
    )
    error = _failed_run(client, thread_id, out)
    assert error == "ValueError: project_root must be absolute, got 'relative/path'"
    for base in (REPO_ROOT, Path.cwd()):
        assert not (base / "relative").exists()
    assert not (root / ".a0proj").exists()

    out = say(client, thread_id, assistant_id, HERO, ctx)
    assert out["active_agent"] == "frontend_designer"
    assert client.threads.get(thread_id)["status"] == "idle"
    assert Path(
        client.threads.get_state(thread_id)["values"]["handover"]["briefing_file"]
    ).is_file()


def test_unknown_model_ends_the_run_in_error_and_the_thread_goes_on(client, assistant_id, ctx):
    """A bad `model` fails the run (HTTP error state naming the model); the next turn works."""
    thread_id = new_thread(client)
    run = client.runs.create(
        thread_id, assistant_id, input=user(HERO), context={**ctx, "model": "nosuch:model"}
    )
    joined = client.runs.join(thread_id, run["run_id"])
    assert client.runs.get(thread_id, run["run_id"])["status"] == "error"
    error = joined["__error__"]
    assert "nosuch:model" in error["message"] and "Traceback" not in error["message"]
    assert client.threads.get(thread_id)["status"] == "error"

    out = say(client, thread_id, assistant_id, HERO, ctx)
    assert out["active_agent"] == "frontend_designer"
    assert client.threads.get(thread_id)["status"] == "idle"


@pytest.mark.parametrize(
    "field, value",
    [
        ("max_turns", "abc"),
        ("max_turns", -1),
        ("max_handover_depth", 0),
        ("include_recent_turns", -2),
        ("full_history_max_tokens", 1.5),
        ("project_root", 5),
        ("model", 5),
    ],
)
def test_context_value_of_the_wrong_kind_is_an_error_naming_the_field(
    client, assistant_id, ctx, root, field, value
):
    thread_id = new_thread(client)
    out = client.runs.wait(
        thread_id, assistant_id, input=user(HERO), context={**ctx, field: value}, raise_error=False
    )
    error = _failed_run(client, thread_id, out)
    assert error is not None, out
    assert error.startswith(f"ValueError: {field} must be "), error
    assert repr(value) in error, error
    assert not (root / ".a0proj").exists()


@pytest.mark.parametrize(
    "bad, error",
    [
        ({"messages": [{"role": "bogus", "content": "x"}]}, "messages[0] is not a chat message"),
        ({"messages": [None]}, "messages[0] is None"),
        ({"messages": [{"role": "user", "content": "word " * 40_000}]}, "over max_input_tokens"),
    ],
)
def test_bad_input_over_http_fails_the_run_and_stores_nothing(
    client, assistant_id, ctx, bad, error
):
    """Over the SDK too: the run ends in error naming the problem; the thread is unchanged."""
    thread_id = new_thread(client)
    say(client, thread_id, assistant_id, "Hello there", ctx)
    before = client.threads.get_state(thread_id)
    out = client.runs.wait(thread_id, assistant_id, input=bad, context=ctx, raise_error=False)
    assert out["__error__"]["error"] == "InputError", out
    assert error in out["__error__"]["message"] and "Traceback" not in out["__error__"]["message"]
    assert sorted(run_statuses(client, thread_id)) == ["error", "success"]
    after = client.threads.get_state(thread_id)
    assert after["values"]["messages"] == before["values"]["messages"]
    out = say(client, thread_id, assistant_id, "And now?", ctx)
    assert out["messages"][-2]["content"] == "And now?"


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"handover": 42}, "handover must be null or a handover package"),
        ({"active_agent": "nobody"}, "names no agent of this graph"),
    ],
)
def test_a_malformed_state_edit_over_the_server_api_is_refused_and_the_thread_answers(
    client, assistant_id, ctx, values, error
):
    """`threads.update_state` (Studio's state edit) is checked like input: nothing stored."""
    thread_id = new_thread(client)
    say(client, thread_id, assistant_id, "Hello there", ctx)
    before = client.threads.get_state(thread_id)
    with pytest.raises(Exception) as refused:
        client.threads.update_state(thread_id, values)
    assert error in str(refused.value), refused.value
    assert client.threads.get_state(thread_id)["values"] == before["values"]
    out = say(client, thread_id, assistant_id, "And now?", ctx)
    assert out["messages"][-2]["content"] == "And now?"


@pytest.mark.parametrize("how", ["approve", "edit", "invalid edit", "reject"])
def test_handover_review_over_the_sdk(client, assistant_id, ctx, root, how):
    """review_handovers over HTTP: the run pauses with the package; Command(resume) answers."""
    thread_id = new_thread(client)
    review = {**ctx, "review_handovers": True}
    client.runs.wait(thread_id, assistant_id, input=user(HERO), context=review)
    state = client.threads.get_state(thread_id)
    (request,) = [i["value"] for task in state["tasks"] for i in task.get("interrupts", [])]
    assert request["specialist_profile"] == "frontend_designer"
    assert request["estimated_tokens"] > 0 and state["next"] == ["handover"]
    assert not (root / ".a0proj" / "handover").exists()

    def answer(resume: dict) -> dict:
        return client.runs.wait(thread_id, assistant_id, command={"resume": resume}, context=review)

    def edited(**fields: str) -> dict:
        args = {**request["action_requests"][0]["args"], **fields}
        action = {"name": "handover_to_specialist", "args": args}
        return {"decisions": [{"type": "edit", "edited_action": action}]}

    if how == "invalid edit":
        answer(edited(return_condition="bogus"))
        state = client.threads.get_state(thread_id)
        (again,) = [i["value"] for task in state["tasks"] for i in task.get("interrupts", [])]
        assert again["error"].startswith("ERROR: invalid return_condition 'bogus'")
        # approving now approves the reviewer's values (`bogus`) again: it pauses again
        answer({"decisions": [{"type": "approve"}]})
        assert client.threads.get_state(thread_id)["next"] == ["handover"]
        how = "edit"  # the form's box fixed: carried out
    if how == "edit":
        out = answer(edited(topic="hero over http"))
        assert out["active_agent"] == "frontend_designer"  # an edit is carried out at once
        (briefing,) = (root / ".a0proj" / "handover").glob("*.md")
        assert "hero-over-http" in briefing.name
    elif how == "approve":
        out = answer({"decisions": [{"type": "approve"}]})
        assert out["active_agent"] == "frontend_designer"
        assert len(list((root / ".a0proj" / "handover").glob("*.md"))) == 1
    else:
        out = answer({"decisions": [{"type": "reject", "message": "not now"}]})
        assert out["active_agent"] == "orchestrator"
        tool = [m for m in out["messages"] if m["type"] == "tool"]
        assert tool[-1]["content"].startswith(
            "ERROR: the handover to frontend_designer was rejected by the reviewer: not now"
        )
        assert not (root / ".a0proj" / "handover").exists()
