"""The cost of every handover: what the package sent, what the full history would have cost,
and what the specialist's model calls used while it held the conversation.

The HTTP tests run the whole graph through ChatOpenAI against the local OpenAI-compatible
server, whose usage blocks are the figures the graph must add up.
"""

from __future__ import annotations

import io
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover.graph import build_graph
from specialist_handover.graph.cli import main
from specialist_handover.nodes.handover.cost import EVENT, saving_line, thread_stats
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.state import token_counter
from tests.support.graphs import say, state_of
from tests.support.models import (
    ScriptedChatModel,
    ai_call,
    model_responder,
    returning_responder,
    specialist_requests,
)
from tests.support.openai_server import OpenAICompatibleServer, rough_tokens

OFFLINE = OfflineChatModel()


@pytest.fixture(scope="module")
def server():
    with OpenAICompatibleServer(model_responder(OFFLINE)) as srv:
        yield srv


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "offline"}


def _chat_openai(server) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)


def _messages_before(graph, record) -> list:
    """The whole conversation up to the tool message that answered the handover."""
    transcript = graph.transcript({"configurable": {"thread_id": "t"}})
    ids = [m.id for m in transcript]
    return transcript[: ids.index(f"handover-{record['handover_id']}") - 1]


def test_a_handover_records_its_package_and_what_the_full_history_would_have_cost(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    for text in ["Hello, what can you do?", "We build a shop in React. " * 40, "ok, thanks"]:
        say(graph, text, ctx)
    say(graph, "Please design the landing page hero with bold typography.", ctx)
    (record,) = [
        r for r in graph.trail({"configurable": {"thread_id": "t"}}) if r["kind"] == "handover"
    ]
    before = _messages_before(graph, record)
    # everything up to and including the orchestrator's call, counted as a full-history
    # system sends it to the receiver
    transcript = graph.transcript({"configurable": {"thread_id": "t"}})
    upto = transcript[: len(before) + 1]
    assert isinstance(upto[-1], AIMessage) and upto[-1].tool_calls
    assert record["full_history_tokens"] == token_counter().count_messages(upto)
    assert record["estimated_tokens"] == state_of(graph)["handover"]["estimated_tokens"]
    assert record["full_history_tokens"] > record["estimated_tokens"]  # 40 long sentences


def test_the_full_history_includes_the_turns_archived_out_of_the_window(ctx):
    """A long thread: the state keeps a window; the figure still counts the whole thread."""

    def orchestrator(messages):
        last = messages[-1]
        if isinstance(last, HumanMessage) and "#hand" in last.text:
            return ai_call(
                "handover_to_specialist",
                specialist_profile="frontend_designer",
                topic="hero",
                summary="the hero",
                return_condition="after_reply",
                handover_reason="design",
            )
        return AIMessage("noted " + "x" * 40)

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "a0_software_orchestrator": ScriptedChatModel(fallback=orchestrator),
            "default": ScriptedChatModel(fallback=lambda m: AIMessage("done")),
        },
    )
    for turn in range(140):  # 2 messages a turn: 280 messages, over the 250 a window holds
        say(graph, f"turn {turn}: " + "words " * 30, ctx)
    state = state_of(graph)
    assert state["archived_tokens"] > 0
    say(graph, "now design the hero #hand", ctx)
    config = {"configurable": {"thread_id": "t"}}
    record = [r for r in graph.trail(config) if r["kind"] == "handover"][-1]
    transcript = graph.transcript(config)
    ids = [m.id for m in transcript]
    upto = transcript[: ids.index(f"handover-{record['handover_id']}")]
    assert len(upto) > len(state_of(graph)["messages"])  # more than the window
    assert record["full_history_tokens"] == token_counter().count_messages(upto)


def test_the_specialists_model_calls_and_tokens_over_http_are_on_its_return(ctx):
    with OpenAICompatibleServer(returning_responder()) as srv:
        graph = build_graph(checkpointer=InMemorySaver(), model=_chat_openai(srv))
        say(graph, "Please design the landing page hero with bold typography.", ctx)
        say(graph, "Make the button bigger.", ctx)
        live = graph.stats({"configurable": {"thread_id": "t"}})
        say(graph, "Thanks, go back to the orchestrator please.", ctx)
        sent = specialist_requests(srv.requests, "frontend_designer")
    assert not srv.rejected
    config = {"configurable": {"thread_id": "t"}}
    (back,) = [r for r in graph.trail(config) if r["kind"] == "return"]
    (handover,) = [r for r in graph.trail(config) if r["kind"] == "handover"]
    usage = back["usage"]
    assert usage["handover_id"] == handover["handover_id"] == back["handover_id"]
    assert usage["model_calls"] == len(sent) == 3  # two replies, then the return call
    assert usage["input_tokens"] == sum(rough_tokens(b["messages"]) for b in sent)
    assert usage["output_tokens"] > 0
    # while it still held the thread, the stats counted the live hold
    assert live["specialist_model_calls"] == 2 and live["returns"] == 0
    stats = graph.stats(config)
    assert stats["specialist_model_calls"] == 3
    assert stats["specialist_input_tokens"] == usage["input_tokens"]
    assert stats["package_tokens"] == handover["estimated_tokens"]
    assert stats["saved_tokens"] == handover["full_history_tokens"] - handover["estimated_tokens"]


def test_the_orchestrators_own_calls_are_not_counted_as_the_specialists(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    say(graph, "Hello, what can you do?", ctx)
    say(
        graph,
        "Quick question: the unit test for the landing page is flaky, what should I check?",
        ctx,
    )
    (back,) = [
        r for r in graph.trail({"configurable": {"thread_id": "t"}}) if r["kind"] == "return"
    ]
    assert back["usage"]["model_calls"] == 1  # the specialist's one after_reply answer
    assert back["usage"]["input_tokens"] > 0  # the offline model reports usage too


def test_a_chain_handover_ends_the_first_specialists_hold_with_its_usage(ctx):
    chain = {"n": 0}

    def specialist(messages):
        chain["n"] += 1
        if chain["n"] == 1:
            return ai_call(
                "handover_to_specialist",
                specialist_profile="test_debug_engineer",
                topic="hero-tests",
                summary="write tests for the hero",
                return_condition="after_reply",
                handover_reason="tests",
            )
        return AIMessage("done")

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "a0_software_orchestrator": OfflineChatModel(),
            "default": ScriptedChatModel(fallback=specialist),
        },
    )
    say(graph, "Please design the landing page hero with bold typography.", ctx)
    records = graph.trail({"configurable": {"thread_id": "t"}})
    first, onward = [r for r in records if r["kind"] == "handover"]
    assert onward["from_agent"] == "frontend_designer"
    assert onward["usage"]["handover_id"] == first["handover_id"]
    assert onward["usage"]["model_calls"] == 1
    assert thread_stats(records)["handovers"] == 2


def test_a_refused_handover_costs_nothing_and_saves_nothing(ctx):
    orchestrator = ScriptedChatModel(
        script=[
            ai_call("handover_to_specialist", specialist_profile="no_such_one", topic="x"),
            AIMessage("sorry"),
        ]
    )
    graph = build_graph(checkpointer=InMemorySaver(), model={"default": orchestrator})
    say(graph, "hello", ctx)
    (refused,) = graph.trail({"configurable": {"thread_id": "t"}})
    assert refused["kind"] == "refused" and "full_history_tokens" not in refused
    stats = graph.stats({"configurable": {"thread_id": "t"}})
    assert stats["refused"] == 1 and stats["package_tokens"] == stats["saved_tokens"] == 0


def test_the_stream_carries_one_custom_event_per_handover(server, ctx):
    graph = build_graph(checkpointer=InMemorySaver(), model=_chat_openai(server))
    config = {"configurable": {"thread_id": "t"}}
    events = []
    for text in [
        "Quick question: the unit test for the landing page is flaky, what should I check?",
        "Thanks!",
        "Please design the landing page hero with bold typography.",
    ]:
        for mode, chunk in graph.stream(
            {"messages": [HumanMessage(text)]},
            config,
            context=ctx,
            stream_mode=["custom", "updates"],
        ):
            if mode == "custom":
                events.append(chunk)
    handovers = [r for r in graph.trail(config) if r["kind"] == "handover"]
    assert len(events) == len(handovers) == 2
    for event, record in zip(events, handovers, strict=True):
        assert event["event"] == EVENT
        assert event["handover_id"] == record["handover_id"]
        assert event["package_tokens"] == record["estimated_tokens"]
        assert event["full_history_tokens"] == record["full_history_tokens"]
        assert event["saved_tokens"] == record["full_history_tokens"] - record["estimated_tokens"]
        assert event["text"] == saving_line(record)


def test_the_saving_line_says_when_the_package_cost_more():
    assert saving_line({"estimated_tokens": 300, "full_history_tokens": 1200}) == (
        "📉 300 tokens sent instead of 1,200 for the full history: 900 saved (75%)"
    )
    assert "cost 100 more" in saving_line({"estimated_tokens": 300, "full_history_tokens": 200})


def test_handover_trail_and_stats_commands_show_the_figures(tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("HANDOVER_PROJECT_ROOT", str(root))
    common = ["--project-root", str(root), "--thread", "c1"]

    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        code = main([*argv], out=out)
        return code, out.getvalue()

    assert (
        run("run", "Quick question: the unit test for the landing page is flaky?", *common)[0] == 0
    )
    code, trail = run("trail", *common)
    assert code == 0
    assert "tokens sent" in trail and "full history" in trail
    assert "1 model call," in trail and "while test_debug_engineer held it" in trail
    code, stats = run("stats", *common)
    assert code == 0
    assert "1 handover, 0 specialists consulted, 1 return, 0 refusals" in stats
    assert "by the specialists while they held the conversation" in stats
    code, raw = run("stats", "--json", *common)
    figures = json.loads(raw)
    assert figures["handovers"] == 1 and figures["specialist_model_calls"] == 1
    assert run("stats", "--project-root", str(root), "--thread", "empty")[0] == 1


def test_the_tool_result_of_a_handover_is_still_one_line(ctx):
    """The figures live in the trail, not in the stored conversation."""
    graph = build_graph(checkpointer=InMemorySaver())
    say(graph, "Please design the landing page hero with bold typography.", ctx)
    answer = next(m for m in state_of(graph)["messages"] if isinstance(m, ToolMessage))
    assert answer.text.startswith("Handed over to frontend_designer")
    assert "full_history" not in answer.text


def test_a_consult_records_each_package_against_the_full_history(server, ctx):
    graph = build_graph(checkpointer=InMemorySaver(), model=_chat_openai(server))
    config = {"configurable": {"thread_id": "t"}}
    say(graph, "We build a shop in React. " * 30, ctx)
    events = [
        chunk
        for mode, chunk in graph.stream(
            {
                "messages": [
                    HumanMessage(
                        "Ask the solution architect and the frontend designer: should the hero "
                        "render on the server or in the browser?"
                    )
                ]
            },
            config,
            context=ctx,
            stream_mode=["custom", "updates"],
        )
        if mode == "custom"
    ]
    consults = [r for r in graph.trail(config) if r["kind"] == "consult"]
    assert len(consults) == 2 == len(events)
    # before the consult's answer, the consultants' answers shown to the reader, the reply
    upto = graph.transcript(config)[:-4]
    assert (
        isinstance(upto[-1], AIMessage) and upto[-1].tool_calls[0]["name"] == "consult_specialists"
    )
    for record, event in zip(consults, events, strict=True):
        assert record["full_history_tokens"] == token_counter().count_messages(upto)
        assert event["kind"] == "consult" and event["handover_id"] == record["handover_id"]
    stats = graph.stats(config)
    assert stats["consults"] == 2 and stats["handovers"] == 0
    assert stats["package_tokens"] == sum(r["estimated_tokens"] for r in consults)
