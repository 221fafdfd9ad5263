"""A red team's third round, the findings of the graph's own doors: huge consult questions, a
caller's `Command(goto=...)` into an internal node, and one project spelled two ways."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from specialist_handover import InputError, build_graph
from specialist_handover.state.defaults import MAX_QUESTION_TOKENS
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call


def test_huge_consult_questions_are_cut_before_they_are_stored(ctx):
    question = "Which database? " + "really " * 500_000  # 3.5 MB each
    boss = ScriptedChatModel(
        script=[
            ai_call(
                "consult_specialists",
                consults=[
                    {"specialist_profile": "solution_architect", "question": question},
                    {"specialist_profile": "frontend_designer", "question": question},
                ],
            )
        ]
    )
    spec = ScriptedChatModel(fallback=lambda messages: AIMessage("Postgres."))
    graph = build_graph(
        checkpointer=InMemorySaver(), model={"a0_software_orchestrator": boss, "default": spec}
    )
    values = say(graph, "ask both", ctx)
    (result,) = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert len(result.content) < 40_000
    assert result.content.count(f"[question cut at {MAX_QUESTION_TOKENS} tokens]") == 2
    for request in spec.requests:  # what each consultant was asked
        assert sum(len(str(m.content)) for m in request) < 60_000
    for path in Path(ctx["project_root"], ".a0proj", "handover").glob("*.md"):
        assert path.stat().st_size < 40_000
    assert all(len(r["reason"]) < 20_000 for r in state_of(graph)["handovers"])


@pytest.mark.parametrize("goto", ["consultant", "consult", "handover", "solution_architect"])
def test_a_callers_goto_into_the_graph_is_refused_by_name(ctx, goto):
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "g"}}
    with pytest.raises(InputError, match=f"goto='{goto}'.* is not accepted"):
        graph.invoke(Command(goto=goto), config, context=ctx)
    assert graph.get_state(config).values == {}  # nothing stored


def test_memory_is_recalled_whether_the_project_root_ends_with_a_slash_or_not(ctx):
    def architect(messages):  # type: ignore[no-untyped-def]
        last = messages[-1]
        if last.type == "human" and not last.name and "go back" in str(last.content):
            return ai_call("return_to_orchestrator", summary="Chose Postgres.")
        return AIMessage("On it.")

    boss = ScriptedChatModel(
        fallback=lambda messages: (
            ai_call(
                "handover_to_specialist",
                specialist_profile="solution_architect",
                topic="db",
                summary="s",
                handover_reason="r",
            )
            if "design" in str(messages[-1].content)
            else AIMessage("Noted.")
        )
    )
    spec = ScriptedChatModel(fallback=architect)
    graph = build_graph(
        checkpointer=InMemorySaver(),
        store=InMemoryStore(),
        model={"a0_software_orchestrator": boss, "default": spec},
    )
    say(graph, "please design the database", ctx)
    say(graph, "thanks, go back", ctx)
    slashed = {**ctx, "project_root": ctx["project_root"] + "/"}
    seen = len(spec.requests)
    say(graph, "please design the cache", slashed, thread="other")
    package = str(spec.requests[seen][1].content)
    assert "## Last time" in package and "Chose Postgres." in package
