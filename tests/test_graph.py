"""The orchestrator graph end to end: routing, return conditions, guards, history validity.

Every model here records its requests and checks each one for a valid
tool-call history (tests/support/models.py), so every test below also checks
invariant 1 on every request it causes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from graph import build_graph
from nodes.conversation import pending_tool_calls
from specialists import ORCHESTRATOR_PROFILE, PROFILES, SPECIALISTS
from state import TokenCounter
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
    system_text,
)

REQUESTS = {
    "codebase_explorer": "I'm new to this repo: where is the entry point of the server?",
    "frontend_designer": "Please design the landing page hero with bold typography.",
    "hacker": "Run a pentest against our login form and try sql injection.",
    "implementation_engineer": "Implement a new feature: an export endpoint for invoices.",
    "quality_reviewer": "Can you do a code review of my pull request?",
    "release_auditor": "Prepare the changelog and release notes for the version bump.",
    "requirements_analyst": "Write user stories with acceptance criteria for the signup.",
    "runtime_devops_engineer": "Write a Dockerfile and deploy it to kubernetes.",
    "security_data_engineer": "Add JWT authentication and password hashing to the service.",
    "solution_architect": "Which architecture should we pick: microservices or a monolith?",
    "test_debug_engineer": "The unit test crashes with a stack trace in pytest.",
    "ui_design_specialist": "Check the accessibility of the user flow against WCAG.",
}


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "offline"}


def make(model=None):
    model = model if model is not None else RecordingOfflineModel()
    return build_graph(checkpointer=InMemorySaver(), model=model), model


def say(graph, text, ctx, thread="t"):
    return graph.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
        durability="sync",
    )


def state_of(graph, thread="t"):
    return graph.get_state({"configurable": {"thread_id": thread}}).values


def replies(values, name):
    return [
        m
        for m in values["messages"]
        if isinstance(m, AIMessage) and m.name == name and str(m.content).strip()
    ]


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
    assert model.bound_tools[0] == ["handover_to_specialist"]
    from nodes.tools import handover_schema

    description = handover_schema(caller=ORCHESTRATOR_PROFILE)["function"]["description"]
    for name in SPECIALISTS:
        assert f"{name}: {PROFILES[name].description}" in description
    params = handover_schema(caller=ORCHESTRATOR_PROFILE)["function"]["parameters"]
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
    assert values["messages"][-1].name == "frontend_designer"
    assert values["active_agent"] == "orchestrator"
    before = len(model.requests)
    say(graph, "Thanks. Hello again.", ctx)
    assert "(profile `a0_software_orchestrator`)" in system_text(model.requests[before])


def _chain_models(chain, *, final="done"):
    """Scripted models: each profile in `chain` hands to the next; the last replies."""
    models = {}
    hops = [ORCHESTRATOR_PROFILE, *chain]
    for caller, target in zip(hops, hops[1:], strict=False):
        models[caller] = ScriptedChatModel(
            script=[
                ai_call(
                    "handover_to_specialist",
                    specialist_profile=target,
                    topic="chain",
                    summary=f"{caller} passes on",
                    handover_reason=f"{target} is better placed",
                    return_condition="task_complete",
                )
            ],
            fallback=lambda messages: AIMessage(content=final),
        )
    models.setdefault(hops[-1], ScriptedChatModel(fallback=lambda m: AIMessage(content=final)))
    models["default"] = RecordingOfflineModel()
    return models


def test_depth_guard_refuses_the_fourth_handover_and_the_caller_continues(ctx):
    chain = ["solution_architect", "security_data_engineer", "runtime_devops_engineer", "hacker"]
    models = _chain_models(chain)
    graph = build_graph(checkpointer=InMemorySaver(), model=models)
    values = say(graph, "start the chain", ctx)
    trail = state_of(graph)["handovers"]
    kinds = [(r["kind"], r["to_agent"]) for r in trail]
    assert kinds[:4] == [
        ("handover", "solution_architect"),
        ("handover", "security_data_engineer"),
        ("handover", "runtime_devops_engineer"),
        ("refused", "hacker"),
    ]
    assert "max_handover_depth=3" in trail[3]["error"]
    # the refused caller saw the ERROR as a tool result and went on to reply
    devops = models["runtime_devops_engineer"]
    assert any(
        isinstance(m, ToolMessage) and m.content.startswith("ERROR: handover depth limit")
        for m in devops.requests[-1]
    )
    # it finished; the chain returns to the orchestrator under the first condition
    assert values["active_agent"] == "orchestrator"
    assert trail[-1]["kind"] == "return"
    assert state_of(graph)["handover_depth"] == 0


def test_depth_guard_respects_context_limit(ctx):
    models = _chain_models(["solution_architect", "security_data_engineer"])
    graph = build_graph(checkpointer=InMemorySaver(), model=models)
    say(graph, "go", {**ctx, "max_handover_depth": 1})
    trail = state_of(graph)["handovers"]
    assert [r["kind"] for r in trail[:2]] == ["handover", "refused"]
    assert "max_handover_depth=1" in trail[1]["error"]


def test_circular_handover_is_refused_naming_the_chain(ctx):
    models = _chain_models(["solution_architect", "security_data_engineer", "solution_architect"])
    graph = build_graph(checkpointer=InMemorySaver(), model=models)
    say(graph, "go", ctx)
    refused = [r for r in state_of(graph)["handovers"] if r["kind"] == "refused"]
    assert len(refused) == 1
    assert refused[0]["error"].startswith("ERROR: circular handover refused: ")
    assert (
        "solution_architect -> security_data_engineer -> solution_architect" in refused[0]["error"]
    )


def test_handover_to_oneself_is_refused(ctx):
    models = {
        "a0_software_orchestrator": ScriptedChatModel(
            script=[
                ai_call(
                    "handover_to_specialist",
                    specialist_profile="a0_software_orchestrator",
                    topic="x",
                )
            ],
            fallback=lambda m: AIMessage(content="ok, I answer myself"),
        ),
        "default": RecordingOfflineModel(),
    }
    graph = build_graph(checkpointer=InMemorySaver(), model=models)
    values = say(graph, "go", ctx)
    assert state_of(graph)["handovers"][0]["error"].startswith(
        "ERROR: the orchestrator cannot hand over to itself"
    )
    assert values["messages"][-1].content == "ok, I answer myself"


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            {"specialist_profile": "frontend_designr", "topic": "x"},
            "ERROR: unknown specialist profile 'frontend_designr'",
        ),
        ({"specialist_profile": "frontend_designer"}, "ERROR: topic is required"),
        (
            {"specialist_profile": "frontend_designer", "topic": "x", "return_condition": "never"},
            "ERROR: invalid return_condition 'never'",
        ),
        (
            {"specialist_profile": "frontend_designer", "topic": "x", "decisions": {"a": 1}},
            "ERROR: decisions must be a list of strings",
        ),
    ],
)
def test_failed_handover_is_a_tool_result_and_the_orchestrator_continues(args, expected, ctx):
    orchestrator = ScriptedChatModel(
        script=[ai_call("handover_to_specialist", **args)],
        fallback=lambda m: AIMessage(content="I'll handle it myself."),
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"a0_software_orchestrator": orchestrator, "default": RecordingOfflineModel()},
    )
    values = say(graph, "please hand this over", ctx)
    tool_results = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_results) == 1 and tool_results[0].content.startswith(expected)
    assert values["messages"][-1].content == "I'll handle it myself."
    assert values["active_agent"] == "orchestrator"
    # the second request carried the call and its ERROR answer, in order
    second = orchestrator.requests[1]
    assert isinstance(second[-2], AIMessage) and second[-2].tool_calls
    assert isinstance(second[-1], ToolMessage) and second[-1].content.startswith(expected)
    assert not (
        tmp := __import__("pathlib").Path(ctx["project_root"]) / ".a0proj"
    ).exists() or not any(tmp.rglob("*.md"))


def test_failed_append_is_a_tool_result_and_nothing_is_left(ctx, tmp_path):
    root = tmp_path / "project"
    (root / ".a0proj").write_text("not a folder")  # a real append failure
    graph, model = make()
    values = say(graph, REQUESTS["frontend_designer"], ctx)
    results = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert results[0].content.startswith("ERROR: failed to append briefing file")
    assert values["active_agent"] == "orchestrator"
    assert values["messages"][-1].name == "orchestrator"
    assert (root / ".a0proj").read_text() == "not a folder"


def test_two_handover_calls_in_one_message_are_each_answered_once(ctx):
    two = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "handover_to_specialist",
                "args": {
                    "specialist_profile": "hacker",
                    "topic": "a",
                    "summary": "s",
                    "handover_reason": "r",
                },
                "id": "call_a",
            },
            {
                "name": "handover_to_specialist",
                "args": {
                    "specialist_profile": "solution_architect",
                    "topic": "b",
                    "summary": "s",
                    "handover_reason": "r",
                },
                "id": "call_b",
            },
        ],
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "a0_software_orchestrator": ScriptedChatModel(script=[two]),
            "default": RecordingOfflineModel(),
        },
    )
    values = say(graph, "go", ctx)
    check_tool_history(values["messages"])
    answers = {m.tool_call_id: m.content for m in values["messages"] if isinstance(m, ToolMessage)}
    assert json.loads(answers["call_a"].splitlines()[0])["status"] == "ok"
    assert answers["call_b"].startswith("ERROR: only one handover per turn")
    assert values["active_agent"] == "hacker"


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


def test_max_turns_stops_an_agent_with_a_clear_message(ctx):
    looping = ScriptedChatModel(fallback=lambda m: ai_call("no_such_tool", x=1))
    graph = build_graph(checkpointer=InMemorySaver(), model=looping)
    values = say(graph, "loop forever", {**ctx, "max_turns": 4})
    last = values["messages"][-1]
    assert "stopped after 4 model calls" in last.content
    assert last.response_metadata["max_turns_reached"] is True
    assert len(looping.requests) == 4
    check_tool_history(values["messages"])
    # the next message just works
    looping.fallback = lambda m: AIMessage(content="fine now")
    assert say(graph, "again", ctx)["messages"][-1].content == "fine now"


def test_max_turns_counts_refused_handovers_and_never_raises_recursion_error(ctx):
    bouncing = ScriptedChatModel(
        fallback=lambda m: ai_call("handover_to_specialist", specialist_profile="nobody", topic="x")
    )
    graph = build_graph(checkpointer=InMemorySaver(), model=bouncing)
    try:
        values = say(graph, "go", {**ctx, "max_turns": 10})
    except GraphRecursionError:  # pragma: no cover - the failure this test guards against
        pytest.fail("GraphRecursionError instead of a max_turns stop")
    assert "stopped after 10 model calls" in values["messages"][-1].content
    assert len(bouncing.requests) == 10


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
    # the orchestrator's request is bounded too (invariant 9)
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


def test_chain_of_two_specialists_returns_under_the_first_condition(ctx):
    graph, model = make()
    say(graph, "Which architecture should we pick: microservices or a monolith?", ctx)
    values = say(graph, "Please ask the security data engineer about the auth design.", ctx)
    trail = state_of(graph)["handovers"]
    assert [(r["kind"], r["from_agent"], r["to_agent"]) for r in trail] == [
        ("handover", "orchestrator", "solution_architect"),
        ("handover", "solution_architect", "security_data_engineer"),
    ]
    assert values["active_agent"] == "security_data_engineer"
    handover = state_of(graph)["handover"]
    assert handover["chain"] == ["solution_architect", "security_data_engineer"]
    assert handover["root_return_condition"] == "user_request"
    assert state_of(graph)["handover_depth"] == 2
    # each handover of the chain has its own briefing entry
    paths = {r["briefing_path"] for r in trail}
    assert len(paths) == 2 and all(Path(p).exists() for p in paths)
    # under user_request the last specialist keeps the conversation, then returns
    before = len(model.requests)
    say(graph, "And the token expiry?", ctx)
    assert "(profile `security_data_engineer`)" in system_text(model.requests[before])
    values = say(graph, "Thanks, go back to the orchestrator.", ctx)
    assert values["active_agent"] == "orchestrator"
    assert state_of(graph)["handover_depth"] == 0
    assert values["messages"][-1].name == "orchestrator"


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


def test_specialist_handing_over_to_the_orchestrator_profile_is_a_return(ctx):
    architect = ScriptedChatModel(
        script=[
            AIMessage(content="Here is my take."),
            ai_call(
                "handover_to_specialist",
                specialist_profile="a0_software_orchestrator",
                topic="done",
                summary="Architecture settled: a modular monolith.",
                handover_reason="finished",
            ),
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"solution_architect": architect, "default": RecordingOfflineModel()},
    )
    say(graph, REQUESTS["solution_architect"], ctx)
    values = say(graph, "ok, that's it", ctx)
    assert values["active_agent"] == "orchestrator"
    trail = state_of(graph)["handovers"]
    assert [(r["kind"], r["to_agent"]) for r in trail] == [
        ("handover", "solution_architect"),
        ("return", "orchestrator"),
    ]
    assert trail[-1]["reason"] == "Architecture settled: a modular monolith."
    assert values["messages"][-1].name == "orchestrator"
    check_tool_history(values["messages"])


def test_context_defaults_come_from_the_environment(monkeypatch, tmp_path):
    from state import HandoverContext

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HANDOVER_PROJECT_ROOT", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ctx = HandoverContext().validated()
    assert (ctx.project_root, ctx.model) == (str(tmp_path), "offline")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert HandoverContext().validated().model == "openai:gpt-4o-mini"
    monkeypatch.setenv("HANDOVER_MODEL", "openai:gpt-5")
    monkeypatch.setenv("HANDOVER_PROJECT_ROOT", "/srv/project")
    ctx = HandoverContext().validated()
    assert (ctx.project_root, ctx.model) == ("/srv/project", "openai:gpt-5")
    # an explicit value wins over the environment
    assert HandoverContext(model="offline").validated().model == "offline"


def test_unparsable_tool_call_is_answered_and_the_agent_retries(ctx):
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "handover_to_specialist",
                "args": '{"specialist_profile": "hacker", "topic": ',
                "id": "call_broken",
                "error": "Unterminated string",
                "type": "invalid_tool_call",
            }
        ],
    )
    orchestrator = ScriptedChatModel(
        script=[broken], fallback=lambda m: AIMessage(content="Let me answer directly.")
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"a0_software_orchestrator": orchestrator, "default": RecordingOfflineModel()},
    )
    values = say(graph, "go", ctx)
    answer = next(m for m in values["messages"] if isinstance(m, ToolMessage))
    assert answer.tool_call_id == "call_broken"
    assert answer.content.startswith("ERROR: the call to handover_to_specialist could not be read")
    assert values["messages"][-1].content == "Let me answer directly."
    check_tool_history(values["messages"])  # the recorder checked the retry request too
    assert len(orchestrator.requests) == 2


def test_a_specialist_without_its_package_never_gets_the_turn(ctx):
    graph, model = make()
    config = {"configurable": {"thread_id": "t"}}
    graph.update_state(config, {"active_agent": "hacker"}, as_node="orchestrator")
    say(graph, "hello", ctx)
    assert "(profile `a0_software_orchestrator`)" in system_text(model.requests[-1])


def test_streamed_messages_say_which_agent_speaks(ctx):
    graph, _ = make()
    seen = []
    for message, metadata in graph.stream(
        {"messages": [HumanMessage(REQUESTS["frontend_designer"])]},
        {"configurable": {"thread_id": "s"}},
        context=ctx,
        stream_mode="messages",
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
    assert (
        "frontend_designer",
        "frontend_designer",
        "[frontend designer]",
        "frontend_designer",
    ) in seen
