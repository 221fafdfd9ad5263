"""Every way of writing a thread's state is checked like input is, and a thread can always answer.

`invoke`/`stream` input, `Command(update=...)` and `update_state` (the server's
state edits go through it too, see tests/test_server.py) refuse a malformed
value with an `InputError` before anything is stored; a value already stored
by other means reads as its default. A caller's `recursion_limit` cannot lower
the graph's safety net, a pending review is never dropped by a new message, and
the input's size counts everything it holds.
"""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateUpdate

from specialist_handover import InputError, build_graph
from tests.support.graphs import REQUESTS, say, state_of
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history

CONFIG = {"configurable": {"thread_id": "t"}}


@pytest.fixture
def graph(ctx):  # type: ignore[no-untyped-def]
    built = build_graph(checkpointer=InMemorySaver())
    say(built, REQUESTS["frontend_designer"], ctx)
    return built


@pytest.mark.parametrize(
    ("update", "error"),
    [
        ({"handover": 42}, "handover must be null or a handover package"),
        ({"handover": "zzz"}, "handover must be null or a handover package"),
        ({"handover": {"specialist": "hacker"}}, "handover must be null or a handover package"),
        ({"active_agent": "nobody"}, "active_agent 'nobody' names no agent of this graph"),
        ({"active_agent": 7}, "active_agent 7 names no agent of this graph"),
        ({"agent_turns": -1}, "agent_turns must be an integer >= 0"),
        ({"handover_depth": "2"}, "handover_depth must be an integer >= 0"),
        ({"turn_trail": [1, 2]}, "turn_trail must be a list of strings"),
        ({"handovers": [{"kind": "x"}]}, "handovers must be trail records"),
        ({"messages": [ToolMessage("x", tool_call_id="c")]}, "messages[0] has role 'tool'"),
        ({"bogus": 1}, "unknown state key 'bogus'"),
    ],
)
def test_a_malformed_state_write_is_refused_whichever_way_it_comes(graph, ctx, update, error):
    before = state_of(graph)
    with pytest.raises(InputError, match=error.replace("[", r"\[").replace("]", r"\]")):
        graph.update_state(CONFIG, update)
    with pytest.raises(InputError, match=error.replace("[", r"\[").replace("]", r"\]")):
        graph.invoke(Command(update=update), CONFIG, context=ctx)
    assert state_of(graph) == before
    assert say(graph, "Make the button bigger.", ctx)["messages"][-1].name == "frontend_designer"


def test_a_well_formed_state_write_is_stored(graph, ctx):
    graph.update_state(CONFIG, {"active_agent": "orchestrator", "agent_turns": 0})
    assert state_of(graph)["active_agent"] == "orchestrator"
    assert say(graph, "Hello again.", ctx)["messages"][-1].name == "orchestrator"


def test_a_value_stored_around_the_checks_reads_as_its_default_and_the_thread_answers(graph, ctx):
    for bad in ({"handover": 42}, {"active_agent": ["x"]}, {"turn_trail": "zzz"}):
        # LangGraph's own update, around the graph's checks (as an older version could write)
        CompiledStateGraph.bulk_update_state(graph, CONFIG, [[StateUpdate(bad, None, None)]])
    values = say(graph, "Hello again.", ctx)
    assert values["messages"][-1].name == "orchestrator"
    check_tool_history(values["messages"])


def test_an_input_message_reusing_a_stored_id_is_refused_not_overwriting(graph, ctx):
    stored = state_of(graph)["messages"][0]
    with pytest.raises(InputError, match="has the id .* of a message the thread already stores"):
        graph.invoke({"messages": [HumanMessage("overwrite!", id=stored.id)]}, CONFIG, context=ctx)
    assert state_of(graph)["messages"][0] == stored


def test_unserialisable_content_is_a_clear_error_not_a_msgpack_typeerror(graph, ctx):
    odd = HumanMessage(content=[{"type": "text", "text": "hi", "extra": object()}])
    with pytest.raises(InputError, match=r"messages\[0\] cannot be stored"):
        graph.invoke({"messages": [odd]}, CONFIG, context=ctx)


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("hello", name="x" * 400_000),
        HumanMessage(
            content=[{"type": "text", "text": "hi"}, {"type": "json", "j": "y " * 200_000}]
        ),
        HumanMessage("hello", additional_kwargs={"blob": "z " * 200_000}),
    ],
    ids=["huge name", "huge non-text block", "huge extra field"],
)
def test_max_input_tokens_counts_every_part_of_a_message(graph, ctx, message):
    with pytest.raises(InputError, match="over max_input_tokens=32,000 tokens"):
        graph.invoke({"messages": [message]}, CONFIG, context=ctx)


def test_max_input_tokens_counts_all_the_messages_of_one_input_together(graph, ctx):
    many = [("user", "word " * 2_000) for _ in range(30)]  # each fits, together they do not
    with pytest.raises(InputError, match=r"messages\[\d+\] is over max_input_tokens"):
        graph.invoke({"messages": many}, CONFIG, context=ctx)


def _server_run(config: dict) -> dict:
    """The config of a run as LangGraph Server starts it: the run's id at the top and in
    `configurable` (whence it goes into each checkpoint's metadata)."""
    run_id = uuid.uuid4()
    return {
        **config,
        "run_id": run_id,
        "configurable": {**config["configurable"], "run_id": str(run_id)},
    }


@pytest.mark.parametrize("ui", [False, True], ids=["plain", "like Agent Chat UI"])
@pytest.mark.parametrize("served", [False, True], ids=["in Python", "run as the server runs it"])
def test_a_new_message_while_a_review_waits_supersedes_it_visibly_and_is_answered(ctx, ui, served):
    graph = build_graph(checkpointer=InMemorySaver())
    review = {**ctx, "review_handovers": True}
    out = graph.invoke(
        {"messages": [("user", REQUESTS["frontend_designer"])]}, CONFIG, context=review
    )
    assert out["__interrupt__"]
    (pending,) = [c for c in state_of(graph)["messages"][-1].tool_calls]
    sent: list = [("user", "Never mind, what is a monorepo?")]
    if ui:  # the UI answers the call it sees unanswered, then sends the message
        sent.insert(
            0,
            ToolMessage(
                "Successfully handled tool call.", tool_call_id=pending["id"], id="do-not-render-1"
            ),
        )
    run = _server_run(CONFIG) if served else CONFIG
    if served and ui:  # Agent Chat UI also names the checkpoint it shows
        head = graph.get_state(CONFIG).config["configurable"]["checkpoint_id"]
        run = {**run, "configurable": {**run["configurable"], "checkpoint_id": head}}
    values = graph.invoke({"messages": sent}, run, context=review)
    assert not graph.get_state(CONFIG).interrupts  # nothing waits any more
    answer = next(
        m for m in values["messages"] if getattr(m, "tool_call_id", None) == pending["id"]
    )
    assert answer.content.startswith("ERROR: the handover to frontend_designer was not reviewed")
    note = next(m for m in values["messages"] if m.response_metadata.get("handover_turn_ended"))
    assert note.name == "orchestrator" and "your new message came before the review" in note.content
    assert values["messages"][-2].content == "Never mind, what is a monorepo?"
    assert values["messages"][-1].name == "orchestrator"  # the new message is answered
    assert state_of(graph)["handovers"][-1]["kind"] == "refused"
    assert not any(m.id == "do-not-render-1" for m in values["messages"])
    check_tool_history(values["messages"])


def looping(name: str) -> ScriptedChatModel:
    return ScriptedChatModel(fallback=lambda _m: ai_call(name, x=1))


@pytest.mark.parametrize("limit", [25, 100])
def test_a_callers_recursion_limit_cannot_lower_the_safety_net(ctx, limit):
    graph = build_graph(checkpointer=InMemorySaver(), model=looping("no_such_tool"))
    config = {**CONFIG, "recursion_limit": limit}
    try:
        values = graph.invoke(
            {"messages": [("user", "loop")]}, config, context={**ctx, "max_turns": 100}
        )
    except GraphRecursionError as exc:  # pragma: no cover - the failure this test guards
        pytest.fail(f"recursion_limit={limit} ended the run: {exc}")
    assert values["messages"][-1].response_metadata["max_turns_reached"]


def test_the_most_handovers_a_turn_may_make_fit_under_a_callers_low_recursion_limit(ctx):
    def hand(_messages):  # type: ignore[no-untyped-def]
        return ai_call(
            "handover_to_specialist",
            specialist_profile="hacker",
            topic="t",
            summary="s",
            handover_reason="r",
            return_condition="task_complete",
        )

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "default": ScriptedChatModel(fallback=hand),
            "hacker": ScriptedChatModel(fallback=lambda _m: AIMessage("done")),
        },
    )
    values = graph.invoke(
        {"messages": [("user", "go")]},
        {**CONFIG, "recursion_limit": 25},
        context={**ctx, "max_handovers_per_turn": 20},
    )
    assert values["messages"][-1].content.startswith("⚠️ I stopped handing")


def test_a_reply_that_hands_over_and_returns_at_once_returns_and_the_orchestrator_answers(ctx):
    both = AIMessage(
        "",
        tool_calls=[
            {
                "name": "handover_to_specialist",
                "args": {"specialist_profile": "hacker", "topic": "t", "summary": "s"},
                "id": "call_h",
            },
            {"name": "return_to_orchestrator", "args": {"summary": "done"}, "id": "call_r"},
        ],
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "default": ScriptedChatModel(
                script=[
                    ai_call(
                        "handover_to_specialist",
                        specialist_profile="solution_architect",
                        topic="t",
                        summary="s",
                        handover_reason="r",
                    )
                ],
                fallback=lambda _m: AIMessage("Here is what the architect found."),
            ),
            "solution_architect": ScriptedChatModel(script=[both]),
        },
    )
    values = say(graph, "Which architecture?", ctx)
    answers = {m.tool_call_id: m.content for m in values["messages"] if isinstance(m, ToolMessage)}
    assert answers["call_r"] == "Returned to the orchestrator."
    assert answers["call_h"].startswith("ERROR: cannot hand over and return")
    assert values["messages"][-1].content == "Here is what the architect found."
    assert values["active_agent"] == "orchestrator"
    check_tool_history(values["messages"])
