"""Guards and failures: depth limit, circular and self handovers, failed handovers,
max_turns, unparsable calls, chains. Every request is checked for a valid tool-call
history by the recording models (docs/ARCHITECTURE.md, invariant 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from specialist_handover.graph import build_graph
from specialist_handover.specialists import ORCHESTRATOR_PROFILE
from tests.support.graphs import REQUESTS, make, say, state_of
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
    system_text,
)


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
    # its own profile is no target of its tool (a Literal): its ToolNode refuses the call
    [refused] = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert refused.status == "error"
    assert refused.content.startswith("ERROR: the orchestrator cannot hand over to itself")
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
    assert answers["call_a"].startswith("Handed over to hacker [hacker] (handover_id=call_a;")
    assert answers["call_b"].startswith("ERROR: only one handover per turn")
    assert values["active_agent"] == "hacker"


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
