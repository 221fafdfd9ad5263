"""Every model request is bounded by `max_input_tokens`, counted over everything it sends.

A specialist's view is windowed like the orchestrator's (its recent turns since
the handover, with a summary of what came before), and each request is fitted
into `max_input_tokens` counting the system prompt, every message (names,
blocks, tool calls) and the tool schemas: older parts are cut or left out;
stored history is never changed.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.nodes.history.budget import RequestTooLargeError, fit_messages
from specialist_handover.state import TokenCounter
from tests.support.graphs import REQUESTS, say, state_of
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
)

COUNTER = TokenCounter()
PARAGRAPH = "We measured the checkout latency again and the numbers did not move at all. " * 130


def sent_tokens(request: list[BaseMessage], tools: list[dict]) -> int:
    """What a recorded request sends: its messages (system prompt included) and tool schemas."""
    return COUNTER.count_messages(request) + COUNTER.count_text(json.dumps(tools))


def test_a_specialist_holding_the_thread_for_53_turns_of_10_kb_stays_bounded(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    say(graph, REQUESTS["frontend_designer"], ctx)
    sizes = []
    for i in range(53):
        say(graph, f"Turn {i}: {PARAGRAPH}", ctx)  # ~10 KB each, the designer keeps the thread
        request = model.requests[-1]
        sizes.append(len(json.dumps([m.model_dump() for m in request], default=str)))
        assert sent_tokens(request, model.bound_tools_schemas[-1]) <= 32_000
    assert state_of(graph)["active_agent"] == "frontend_designer"
    assert sizes[-1] < 1.2 * sizes[10]  # flat once the window is full, not 18 KB -> 527 KB
    assert "HANDOVER NOTES" in str(model.requests[-1][2].content)  # earlier turns: summarised
    values = say(graph, "Thanks, go back to the orchestrator please.", ctx)
    assert values["active_agent"] == "orchestrator"
    check_tool_history(values["messages"])


def test_each_request_fits_max_input_tokens_counting_system_prompt_and_tool_schemas(ctx):
    @tool
    def dump_logs(service: str) -> str:
        """Dump the logs of a service."""
        return f"{service}: " + "GET /checkout 200 512ms " * 800  # ~5,000 tokens a call

    calls = [ai_call("dump_logs", service=f"s{i}") for i in range(6)]
    specialist = ScriptedChatModel(script=[*calls, AIMessage("The checkout is slow.")])
    orchestrator = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="runtime_devops_engineer",
                topic="latency",
                summary="s",
                handover_reason="r",
            )
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "runtime_devops_engineer": specialist},
        tools={"runtime_devops_engineer": [dump_logs]},
    )
    budget = 12_000
    values = say(graph, "Why is checkout slow?", {**ctx, "max_input_tokens": budget})
    assert values["messages"][-1].content == "The checkout is slow."
    for request, tools in zip(specialist.requests, specialist.bound_tools_schemas, strict=True):
        assert sent_tokens(request, tools) <= budget
    last = specialist.requests[-1]
    assert "cut to fit max_input_tokens" in json.dumps([m.model_dump() for m in last], default=str)
    assert [m.tool_call_id for m in last if isinstance(m, ToolMessage)][-1] == calls[-1].tool_calls[
        0
    ]["id"]  # the newest result is always there
    stored = [m for m in state_of(graph)["messages"] if isinstance(m, ToolMessage)]
    assert all("cut to fit" not in str(m.content) for m in stored)  # history is never shaped


def test_your_agents_view_is_bounded_too(ctx):
    seen: list[list[BaseMessage]] = []

    def record(messages):  # type: ignore[no-untyped-def]
        seen.append(list(messages))
        return AIMessage("ok")

    agent = create_agent(ScriptedChatModel(fallback=record), [])
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model=ScriptedChatModel(
            script=[
                ai_call(
                    "handover_to_specialist",
                    specialist_profile="hacker",
                    topic="t",
                    summary="s",
                    handover_reason="r",
                )
            ]
        ),
        agents={"hacker": agent},
    )
    say(graph, "Pentest the login.", ctx)
    for i in range(12):
        say(graph, f"Finding {i}: {PARAGRAPH}", {**ctx, "max_input_tokens": 8_000})
        assert COUNTER.count_messages(seen[-1]) <= 8_000


def test_a_budget_below_what_every_request_needs_is_refused_by_the_context(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    with pytest.raises(ValueError, match="max_input_tokens must be at least 4,000"):
        say(graph, "hi", {**ctx, "max_input_tokens": 500})


# --- fit_messages ------------------------------------------------------------------------

texts = st.text(alphabet="abc xyz.", min_size=1, max_size=3000)


@st.composite
def conversations(draw):  # type: ignore[no-untyped-def]
    messages: list[BaseMessage] = [HumanMessage(draw(texts), name="handover", id="package")]
    for i in range(draw(st.integers(1, 12))):
        messages.append(HumanMessage(draw(texts), id=f"h{i}"))
        for j in range(draw(st.integers(0, 2))):
            call = {"name": "t", "args": {"q": draw(texts)[:50]}, "id": f"c{i}{j}"}
            messages.append(AIMessage("", tool_calls=[call], id=f"a{i}{j}"))
            messages.append(ToolMessage(draw(texts), tool_call_id=f"c{i}{j}", id=f"t{i}{j}"))
        messages.append(AIMessage(draw(texts), id=f"r{i}"))
    return messages


@settings(max_examples=60, deadline=None)
@given(conversations(), st.integers(300, 4000), st.integers(0, 200))
def test_fit_messages_bounds_the_request_keeps_it_valid_and_never_changes_the_input(
    messages, budget, fixed
):
    before = [m.model_dump() for m in messages]
    fitted = fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
    assert COUNTER.count_messages(fitted) + fixed <= budget
    assert fitted[0].id == "package" and fitted[-1].id == messages[-1].id
    check_tool_history(fitted)
    assert [m.model_dump() for m in messages] == before


def test_fit_messages_refuses_when_the_fixed_part_leaves_no_room():
    with pytest.raises(RequestTooLargeError, match="raise max_input_tokens"):
        fit_messages([HumanMessage("hi")], budget=1000, counter=COUNTER, fixed=990)
