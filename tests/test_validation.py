"""Validation by the models that describe it: one wording of a `ValidationError` for the
handover's arguments, a consult's and the run context; the transfer tool's `Literal` of
targets, validated by the agent's `ToolNode`."""

from __future__ import annotations

from typing import get_args

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from specialist_handover.nodes.handover.arguments import (
    ConsultArguments,
    ConsultQuestion,
    HandoverArguments,
    read_consult,
    validate_arguments,
)
from specialist_handover.nodes.handover.transfer import handover_tools
from specialist_handover.specialists import builtin_profiles
from specialist_handover.state import HandoverContext, coerce_context, validation

PROFILES = builtin_profiles()
ENTRY = {"specialist_profile": "hacker", "question": "q"}


def test_one_formatter_words_the_mistakes_of_all_three_models(monkeypatch, tmp_path):
    worded: list[type] = []
    schema_of = validation._schema

    def recording(model: type) -> dict:
        worded.append(model)
        return schema_of(model)

    monkeypatch.setattr(validation, "_schema", recording)
    args = {"specialist_profile": "hacker", "topic": 42, "project_root": str(tmp_path)}
    assert validate_arguments(args, PROFILES) == "ERROR: topic must be a string, got int 42"
    consult = {"consults": [ENTRY, {**ENTRY, "specialist_profile": "solution_architect"}]}
    assert read_consult({**consult, "summary": 3}, profiles=PROFILES) == (
        "ERROR: summary must be a string, got int 3"
    )
    with pytest.raises(ValueError, match=r"^model must be a string, got int 5$"):
        coerce_context({"project_root": str(tmp_path), "model": 5})
    assert worded == [HandoverArguments, ConsultArguments, HandoverContext]

    # unknown names read alike too, each model naming what it takes
    assert validate_arguments({**args, "topic": "x", "colour": 1}, PROFILES).startswith(
        "ERROR: unknown argument(s) colour; handover_to_specialist takes: specialist_profile, "
    )
    assert read_consult({**consult, "colour": 1}, profiles=PROFILES) == (
        "ERROR: unknown argument(s) colour; consult_specialists takes: consults, topic, "
        "summary, decisions, artifacts"
    )
    with pytest.raises(ValueError, match=r"^unknown context field\(s\) colour; HandoverContext"):
        coerce_context({"colour": 1})
    read = read_consult(
        {"consults": [ENTRY, {**ENTRY, "specialist_profile": 7, "x": 1}]}, profiles=PROFILES
    )
    assert not isinstance(read, str)
    assert read.entries[1].error == (
        "ERROR: consults[1]: unknown field(s) x; an entry takes: specialist_profile, question"
    )
    assert ConsultQuestion in worded


def test_the_transfer_tools_arguments_are_a_model_with_a_literal_of_the_targets():
    (handover, *_) = handover_tools("solution_architect", PROFILES)
    model = handover.args_schema
    assert isinstance(model, type)
    targets = get_args(model.model_fields["specialist_profile"].annotation)
    assert set(targets) == set(PROFILES) - {"solution_architect"}
    shown = handover.tool_call_schema.model_json_schema()["properties"]  # type: ignore[union-attr]
    assert shown["specialist_profile"]["enum"] == list(targets)
    assert "runtime" not in shown and "project_root" not in shown


def _tool_node_answer(caller: str, args: dict) -> ToolMessage:
    """The handover tool's answer when `caller`'s ToolNode runs the call."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(handover_tools(caller, PROFILES)))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = {"name": "handover_to_specialist", "args": args, "id": "call_1"}
    out = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call])]})
    [answer] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return answer


@pytest.mark.parametrize(
    ("caller", "args", "expected"),
    [
        (
            "a0_software_orchestrator",
            {"specialist_profile": "frontend_desginer", "topic": "hero"},
            PROFILES.unknown_profile_message("frontend_desginer"),
        ),
        (
            "a0_software_orchestrator",
            {"specialist_profile": "a0_software_orchestrator", "topic": "hero"},
            "ERROR: the orchestrator cannot hand over to itself; answer the user directly.",
        ),
        (
            "hacker",
            {"specialist_profile": "hacker", "topic": "hero"},
            "ERROR: hacker cannot hand over to itself; pick another specialist.",
        ),
        ("hacker", {"specialist_profile": "frontend_designer"}, "ERROR: topic is required"),
        (
            "hacker",
            {"specialist_profile": "frontend_designer", "topic": "x", "return_condition": "never"},
            "ERROR: invalid return_condition 'never'; valid conditions: user_request, "
            "task_complete, after_reply",
        ),
    ],
)
def test_a_bad_call_through_a_tool_node_is_answered_with_our_error_line(caller, args, expected):
    answer = _tool_node_answer(caller, args)
    assert answer.status == "error"
    assert answer.content == expected
    if "desginer" in str(args):
        assert "Did you mean 'frontend_designer'" in answer.content
