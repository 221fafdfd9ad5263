"""Stages 2 and 3 inside the graph: request_full_history and read_briefing as specialist tools."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover.graph import build_graph
from specialist_handover.state import TokenCounter
from tests.support.models import RecordingOfflineModel, ScriptedChatModel, ai_call, system_text

HERO = "Please design the landing page hero with bold typography."


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "offline"}


def seed(graph, thread, n):
    history = []
    for i in range(n // 2):
        history.append(
            HumanMessage(
                f"Earlier point {i}: we settled detail {i} of the billing flow and its limits."
            )
        )
        history.append(AIMessage(f"Noted detail {i}.", name="orchestrator"))
    graph.update_state(
        {"configurable": {"thread_id": thread}}, {"messages": history}, as_node="orchestrator"
    )


def received_full_histories(model):
    """The request_full_history results a recording model was given, in order (the stored
    conversation keeps only each one's header: `stage_2_record`)."""
    seen: dict[str, str] = {}
    for request in model.requests:
        for m in request:
            if isinstance(m, ToolMessage) and m.name == "request_full_history":
                seen.setdefault(m.tool_call_id, m.text)
    return list(seen.values())


def say(graph, text, ctx, thread="t"):
    return graph.invoke(
        {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, context=ctx
    )


def test_specialist_gets_a_capped_compacted_full_history_and_storage_is_unchanged(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    seed(graph, "t", 2000)
    say(graph, HERO, ctx | {"full_history_max_tokens": 5000})
    stored_before = [
        m.model_dump()
        for m in graph.get_state({"configurable": {"thread_id": "t"}}).values["messages"]
    ]
    values = say(
        graph,
        "Please read the full history before you go on.",
        ctx | {"full_history_max_tokens": 5000},
    )
    stored = [
        m
        for m in values["messages"]
        if isinstance(m, ToolMessage) and m.name == "request_full_history"
    ]
    assert len(stored) == 1
    results = received_full_histories(model)
    assert len(results) == 1
    text = results[0]
    # the conversation keeps its header line only: later loads and views do not carry it
    assert stored[0].text.splitlines()[0] == text.splitlines()[0]
    assert "is not stored again" in stored[0].text and len(stored[0].text) < 400
    counter = TokenCounter()
    assert counter.count_text(text) <= 5000
    assert text.startswith("FULL HISTORY (stage 2): ")
    assert "compacted" in text.splitlines()[0] and "(cap 5,000)" in text.splitlines()[0]
    assert "HANDOVER PACKAGE (stage 1)" in text  # the package stays verbatim
    assert "Please read the full history before you go on." in text  # the last turn too
    # the specialist's next request carries it; the stored history before it is untouched
    assert any(
        isinstance(m, ToolMessage) and m.name == "request_full_history" for m in model.requests[-1]
    )
    stored_after = [m.model_dump() for m in values["messages"]]
    assert stored_after[: len(stored_before)] == stored_before
    assert values["messages"][-1].name == "frontend_designer"


def test_full_history_is_not_in_the_request_until_asked_for(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    seed(graph, "t", 400)
    say(graph, HERO, ctx)
    request = model.requests[-1]
    assert "(profile `frontend_designer`)" in system_text(request)
    assert not any("Earlier point 3:" in str(m.content) for m in request)


def test_read_briefing_shows_what_was_decided_on_the_same_topic_before(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    say(graph, "We decided to use a dark theme for the site.", ctx, thread="one")
    say(graph, HERO, ctx, thread="one")
    say(graph, HERO, ctx, thread="two")
    values = say(graph, "What did we decide before? Check your briefing.", ctx, thread="two")
    result = next(
        m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "read_briefing"
    )
    assert "dark theme" in result.content
    assert result.content.count("## Handover") == 2  # both handovers, newest first


def test_read_briefing_cannot_leave_the_specialists_own_files(ctx, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET")
    probe = ScriptedChatModel(
        script=[
            ai_call("read_briefing", topic="../../secret"),
            ai_call("read_briefing", topic=str(secret)),
            ai_call("read_briefing", topic="hacker-x"),
        ],
        fallback=lambda m: AIMessage(content="done"),
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"frontend_designer": probe, "default": RecordingOfflineModel()},
    )
    say(graph, "Run a pentest against our login form and try sql injection.", ctx, thread="h")
    say(graph, HERO, ctx)
    values = say(graph, "check", ctx)
    results = [
        m.content
        for m in values["messages"]
        if isinstance(m, ToolMessage) and m.name == "read_briefing"
    ]
    assert len(results) == 3
    assert not any("TOP SECRET" in r or "pentest" in r for r in results)


def test_a_real_model_condenses_older_turns_for_stage_2(ctx):
    def reply(messages):
        if "Summarise this conversation excerpt" in system_text(messages):
            return AIMessage(content="MODEL SUMMARY: the billing flow details were settled.")
        return AIMessage(content="done")

    specialist = ScriptedChatModel(script=[ai_call("request_full_history")], fallback=reply)
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"frontend_designer": specialist, "default": RecordingOfflineModel()},
    )
    seed(graph, "t", 2000)
    say(graph, HERO, ctx | {"full_history_max_tokens": 4000})
    [result] = received_full_histories(specialist)
    assert "MODEL SUMMARY: the billing flow details were settled." in result
    assert TokenCounter().count_text(result) <= 4000
    summarizer_calls = [
        r for r in specialist.requests if "Summarise this conversation excerpt" in system_text(r)
    ]
    assert len(summarizer_calls) == 1


def test_stage_2_does_not_repeat_an_earlier_full_history(ctx):
    """A second request_full_history stubs the first one's result instead of nesting it."""
    specialist = ScriptedChatModel(
        script=[ai_call("request_full_history"), AIMessage(content="done")] * 2,
        fallback=lambda messages: AIMessage(content="done"),
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"frontend_designer": specialist, "default": RecordingOfflineModel()},
    )
    seed(graph, "t", 40)
    say(graph, HERO, ctx)
    say(graph, HERO + " Now the footer.", ctx)
    results = received_full_histories(specialist)
    assert len(results) == 2
    assert results[1].count("FULL HISTORY") == 1
    assert "an earlier request_full_history result, not repeated here" in results[1]
