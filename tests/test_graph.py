"""The orchestrator graph end to end: shape, routing, return conditions, bounded requests.

Every model here records its requests and checks each one for a valid
tool-call history (tests/support/models.py), so every test below also checks
invariant 1 of docs/ARCHITECTURE.md on every request it causes.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from specialist_handover.graph import build_graph
from specialist_handover.nodes.history.conversation import pending_tool_calls
from specialist_handover.specialists import builtin_profiles
from specialist_handover.state import TokenCounter
from tests.support.graphs import REQUESTS, make, replies, say, state_of
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
    orchestrator_tools,
    system_text,
)

PROFILES = builtin_profiles()
SPECIALISTS = PROFILES.specialists


def test_graph_has_orchestrator_handover_and_one_node_per_specialist():
    graph = build_graph()
    nodes = set(graph.get_graph().nodes)
    assert {"orchestrator", "handover", *SPECIALISTS} <= nodes
    assert len(SPECIALISTS) == 12 and len(PROFILES) == 13
    mermaid = graph.get_graph().draw_mermaid()
    for name in SPECIALISTS:
        assert f"handover -.-> {name};" in mermaid
        assert f"{name} -.-> orchestrator;" in mermaid
        assert f"{name} -.-> handover;" in mermaid
    assert "orchestrator -.-> handover;" in mermaid


@pytest.mark.parametrize("profile", sorted(REQUESTS))
def test_orchestrator_routes_each_request_to_its_specialist(profile, ctx):
    graph, model = make()
    values = say(graph, REQUESTS[profile], ctx)
    assert values["active_agent"] in (profile, "orchestrator")
    state = state_of(graph)
    assert state["handovers"][0]["to_agent"] == profile
    assert state["handover"]["specialist"] == profile
    reply = replies(state, profile)[-1]
    assert reply.response_metadata["persona_marker"] == PROFILES[profile].marker
    assert reply.response_metadata["persona_emoji"] == PROFILES[profile].emoji
    # the specialist was really called with its own prompt and the package
    specialist_requests = [r for r in model.requests if f"(profile `{profile}`)" in system_text(r)]
    assert specialist_requests
    first = specialist_requests[0]
    assert "HANDOVER PACKAGE (stage 1)" in first[1].content  # the package opens the turns
    assert len(first) == 2  # prompt + package: nothing of the history before it


def test_plain_question_stays_with_the_orchestrator(ctx):
    graph, _ = make()
    values = say(graph, "Hello, what can you do?", ctx)
    assert values["active_agent"] == "orchestrator"
    assert not state_of(graph).get("handovers")
    assert replies(values, "orchestrator")


def test_orchestrator_sees_profiles_with_descriptions_in_the_tool(ctx):
    graph, model = make()
    say(graph, "Hello", ctx)
    assert model.bound_tools[0] == ["handover_to_specialist", "consult_specialists"]
    tool = orchestrator_tools()[0]
    assert tool["function"]["name"] == "handover_to_specialist"
    description = tool["function"]["description"]
    for name in SPECIALISTS:
        assert f"{name}: {PROFILES[name].description}" in description
    params = tool["function"]["parameters"]
    assert "recent_turns" not in params["properties"]
    assert "project_root" not in params["properties"]


def test_graph_supplies_recent_turns_and_project_root(ctx):
    script = [
        AIMessage(content="Noted."),
        ai_call(
            "handover_to_specialist",
            specialist_profile="solution_architect",
            topic="storage",
            summary="We talk about storage.",
            handover_reason="architecture question",
            # a model cannot steer these: the graph supplies them
            project_root="/etc",
            recent_turns=["forged"],
        ),
    ]
    graph, _ = make(
        {
            "default": RecordingOfflineModel(),
            "a0_software_orchestrator": ScriptedChatModel(script=script),
        }
    )
    say(graph, "first message", ctx)
    say(graph, "second message about storage", ctx)
    package = state_of(graph)["handover"]
    assert package["briefing_file"].startswith(ctx["project_root"] + "/.a0proj/handover/")
    assert "forged" not in package["rendered"]
    assert "user: second message about storage" in package["rendered"]
    assert "user: first message" in package["rendered"]


def test_user_request_keeps_the_specialist_until_the_user_asks_to_go_back(ctx):
    graph, model = make()
    say(graph, REQUESTS["frontend_designer"], ctx)
    assert state_of(graph)["active_agent"] == "frontend_designer"
    values = say(graph, "Make the button bigger.", ctx)
    assert values["active_agent"] == "frontend_designer"
    last_user_request = model.requests[-1]
    assert "(profile `frontend_designer`)" in system_text(last_user_request)
    values = say(graph, "Thanks, go back to the orchestrator please.", ctx)
    # the return and the orchestrator's answer happen in the same run
    assert values["active_agent"] == "orchestrator"
    last = values["messages"][-1]
    assert last.name == "orchestrator" and "Back with the orchestrator" in last.content
    trail = state_of(graph)["handovers"]
    assert [r["kind"] for r in trail] == ["handover", "return"]
    assert state_of(graph)["handover_depth"] == 0


def test_task_complete_returns_in_the_same_run_and_orchestrator_answers(ctx):
    graph, _ = make()
    values = say(graph, "The unit test crashes in pytest, fix it and report back.", ctx)
    state = state_of(graph)
    assert state["handovers"][0]["return_condition"] == "task_complete"
    assert values["active_agent"] == "orchestrator"
    names = [m.name for m in values["messages"] if isinstance(m, AIMessage) and m.content]
    assert names[-2:] == ["test_debug_engineer", "orchestrator"]
    assert "test debug engineer" in values["messages"][-1].content


def test_after_reply_answers_once_then_next_turn_goes_to_orchestrator(ctx):
    graph, model = make()
    values = say(graph, "Quick question: which css unit for the hero layout?", ctx)
    state = state_of(graph)
    assert state["handovers"][0]["return_condition"] == "after_reply"
    answer, note = values["messages"][-2:]
    assert answer.name == "frontend_designer"
    # a chat shows the hand-back: the orchestrator says it holds the thread now
    assert note.name == "orchestrator" and note.content.startswith("↩️ The frontend designer")
    assert "your next message comes to me" in note.content
    assert values["active_agent"] == "orchestrator"
    before = len(model.requests)
    say(graph, "Thanks. Hello again.", ctx)
    assert "(profile `a0_software_orchestrator`)" in system_text(model.requests[before])
    # the note is for the person reading: no model request holds it
    assert not any("↩️" in str(m.content) for r in model.requests[before:] for m in r)


def test_active_agent_routes_each_turn_on_one_thread(ctx):
    graph, model = make()
    say(graph, "Hello there.", ctx, thread="a")
    say(graph, REQUESTS["solution_architect"], ctx, thread="a")
    say(graph, REQUESTS["hacker"], ctx, thread="b")
    for _ in range(3):
        before = len(model.requests)
        say(graph, "And what about caching?", ctx, thread="a")
        assert "(profile `solution_architect`)" in system_text(model.requests[before])
        before = len(model.requests)
        say(graph, "And the admin page?", ctx, thread="b")
        assert "(profile `hacker`)" in system_text(model.requests[before])
    assert state_of(graph, "a")["active_agent"] == "solution_architect"
    assert state_of(graph, "b")["active_agent"] == "hacker"


def test_specialist_request_at_turn_200_holds_package_not_history(ctx):
    graph, model = make()
    counter = TokenCounter()
    for i in range(200):
        say(
            graph,
            f"General note {i}: we keep talking about the product vision and the team plan for quarter {i}.",
            ctx,
        )
    say(graph, REQUESTS["frontend_designer"], ctx)
    state = state_of(graph)
    request = model.requests[-1]
    assert "(profile `frontend_designer`)" in system_text(request)
    package = state["handover"]
    prompt_tokens = counter.count_text(PROFILES["frontend_designer"].prompt)
    request_tokens = counter.count_messages(request)
    history_tokens = counter.count_messages(state["messages"])
    assert package["estimated_tokens"] <= 3000
    assert request_tokens <= package["estimated_tokens"] + prompt_tokens + 200
    assert request_tokens * 10 < history_tokens
    # the orchestrator's request is bounded too (docs/ARCHITECTURE.md, invariant 9)
    orchestrator_requests = [
        r for r in model.requests if "(profile `a0_software_orchestrator`)" in system_text(r)
    ]
    assert counter.count_messages(orchestrator_requests[-1]) < 3000


def test_stored_history_is_never_rewritten(ctx):
    graph, _ = make()
    say(graph, "Hello, we decided to use Postgres.", ctx)
    first = [m.model_dump() for m in state_of(graph)["messages"]]
    say(graph, REQUESTS["frontend_designer"], ctx)
    say(graph, "go back to the orchestrator", ctx)
    after = [m.model_dump() for m in state_of(graph)["messages"]]
    assert after[: len(first)] == first


def test_no_pending_tool_calls_after_any_run(ctx):
    graph, _ = make()
    for text in [REQUESTS["hacker"], "ask the solution architect to review this", "go back", "bye"]:
        values = say(graph, text, ctx)
        assert not pending_tool_calls(values["messages"])
        check_tool_history(values["messages"])


def test_build_graph_rejects_wrong_arguments():
    with pytest.raises(TypeError, match="model must be a LangChain chat model"):
        build_graph(model="gpt-4o")
    with pytest.raises(TypeError, match="checkpointer must be a LangGraph checkpoint saver"):
        build_graph(checkpointer="memory")
    with pytest.raises(TypeError, match=r"model\['hacker'\]"):
        build_graph(model={"hacker": object()})


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"project_root": "relative/dir"}, "project_root must be absolute"),
        ({"max_turns": 0}, "max_turns must be a positive integer"),
        ({"include_recent_turns": -1}, "include_recent_turns must be an integer >= 0"),
        ({"max_handover_depth": "3"}, "max_handover_depth must be a positive integer"),
    ],
)
def test_bad_context_fails_the_run_with_a_clear_error(bad, message, ctx):
    graph, _ = make()
    with pytest.raises(ValueError, match=message):
        say(graph, "hello", {**ctx, **bad})


def test_context_defaults_come_from_the_environment(monkeypatch, tmp_path):
    from specialist_handover.state import HandoverContext

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HANDOVER_PROJECT_ROOT", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ctx = HandoverContext().validated()
    assert (ctx.project_root, ctx.model) == (str(tmp_path), "offline")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert HandoverContext().validated().model == "openai:gpt-4o-mini"
    monkeypatch.setenv("HANDOVER_MODEL", "openai:gpt-5")
    (tmp_path / "srv").mkdir()  # a project root must exist
    monkeypatch.setenv("HANDOVER_PROJECT_ROOT", str(tmp_path / "srv"))
    ctx = HandoverContext().validated()
    assert (ctx.project_root, ctx.model) == (str(tmp_path / "srv"), "openai:gpt-5")
    # an explicit value wins over the environment
    assert HandoverContext(model="offline").validated().model == "offline"


def test_streamed_messages_say_which_agent_speaks(ctx):
    graph, _ = make()
    seen = []
    for _namespace, (message, metadata) in graph.stream(
        {"messages": [HumanMessage(REQUESTS["frontend_designer"])]},
        {"configurable": {"thread_id": "s"}},
        context=ctx,
        stream_mode="messages",
        subgraphs=True,
    ):
        if isinstance(message, AIMessage) and message.content:
            seen.append(
                (
                    metadata["langgraph_node"],
                    metadata.get("agent"),
                    metadata.get("persona_marker"),
                    message.name,
                )
            )
    assert ("model", "frontend_designer", "[frontend designer]", "frontend_designer") in seen
