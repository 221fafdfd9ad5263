"""No model behaviour can loop the graph.

Handovers within one user turn are counted across returns and bounded by
`max_handovers_per_turn`; one more is refused as a loop and the turn ends with
an answer to the user. A model emitting random valid and invalid tool calls
never ends a run in `GraphRecursionError`, and every request stays valid.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.specialists import builtin_profiles
from tests.support.faults import handover_entries
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history
from tests.support.openai_server import OpenAICompatibleServer

PROFILES = builtin_profiles()


def briefing_markers(root: Path | str) -> int:
    """Handover entries in the project's briefings (outcome entries are not handovers)."""
    return len(handover_entries(Path(root)))


def bouncing_orchestrator() -> ScriptedChatModel:
    """Re-hands the same task after every return, for ever."""

    def step(messages):  # type: ignore[no-untyped-def]
        return ai_call(
            "handover_to_specialist",
            specialist_profile="test_debug_engineer",
            topic="flaky-test",
            summary="The test is flaky.",
            handover_reason="debugging",
            return_condition="task_complete",
        )

    return ScriptedChatModel(fallback=step)


def test_a_model_that_rehands_after_every_return_is_stopped_after_three_handovers(ctx):
    orchestrator = bouncing_orchestrator()
    specialist = ScriptedChatModel(fallback=lambda _m: AIMessage("Fixed it."))
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "test_debug_engineer": specialist},
    )
    values = say(graph, "The unit test is flaky, fix it and report back.", ctx)
    state = state_of(graph)
    handovers = [r for r in state["handovers"] if r["kind"] == "handover"]
    assert len(handovers) == 3
    assert briefing_markers(ctx["project_root"]) == 3
    refusal = [m for m in values["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(refusal) == 1
    assert refusal[0].content.startswith(
        "ERROR: handover loop refused: this user turn already made 3 handovers "
        "(max_handovers_per_turn=3): orchestrator -> test_debug_engineer, "
        "test_debug_engineer -> orchestrator (returned), orchestrator -> test_debug_engineer"
    )
    answer = values["messages"][-1]
    assert answer.name == "orchestrator" and answer.content.startswith("⚠️ I stopped handing")
    assert answer.response_metadata["handover_loop_stopped"] is True
    assert len(orchestrator.requests) == 4 and len(specialist.requests) == 3
    check_tool_history(values["messages"])


def test_the_next_user_turn_counts_its_handovers_afresh(ctx):
    orchestrator = bouncing_orchestrator()
    specialist = ScriptedChatModel(fallback=lambda _m: AIMessage("Fixed it."))
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "test_debug_engineer": specialist},
    )
    say(graph, "first turn", ctx)
    say(graph, "second turn", ctx)
    handovers = [r for r in state_of(graph)["handovers"] if r["kind"] == "handover"]
    assert len(handovers) == 6


def test_max_handovers_per_turn_is_a_context_field(ctx):
    orchestrator = bouncing_orchestrator()
    specialist = ScriptedChatModel(fallback=lambda _m: AIMessage("Fixed it."))
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "test_debug_engineer": specialist},
    )
    values = say(graph, "go", {**ctx, "max_handovers_per_turn": 1})
    assert len([r for r in state_of(graph)["handovers"] if r["kind"] == "handover"]) == 1
    assert "max_handovers_per_turn=1" in values["messages"][-1].content


def test_a_specialist_chain_that_bounces_counts_against_the_same_bound(ctx):
    """A -> B, then B returns, the orchestrator hands to A again, A to B again ..."""

    def hand(target):  # type: ignore[no-untyped-def]
        return lambda _m: ai_call(
            "handover_to_specialist",
            specialist_profile=target,
            topic="auth",
            summary="s",
            handover_reason="r",
            return_condition="task_complete",
        )

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "default": ScriptedChatModel(fallback=hand("solution_architect")),
            "solution_architect": ScriptedChatModel(fallback=hand("security_data_engineer")),
            "security_data_engineer": ScriptedChatModel(fallback=lambda _m: AIMessage("ok")),
        },
    )
    values = say(graph, "design the auth", ctx)
    assert len([r for r in state_of(graph)["handovers"] if r["kind"] == "handover"]) == 3
    assert values["messages"][-1].response_metadata.get("handover_loop_stopped")
    check_tool_history(values["messages"])


# --- fuzz: 200 steps of random valid and invalid tool calls -------------------------------

NAMES = [*PROFILES, "nobody", "a0_software_orchestrator", "", "frontend-designer"]


def _random_reply(rng: random.Random) -> AIMessage:
    """One random reply: text, or one to three calls, valid or not."""
    if rng.random() < 0.15:
        return AIMessage(rng.choice(["ok", "Here is my answer.", ""]))
    calls, invalid = [], []
    shared_id = f"call_{rng.randrange(3)}"
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        call_id = rng.choice([shared_id, None, f"call_{uuid.uuid4().hex[:8]}"])
        if kind < 0.45:
            calls.append(
                {
                    "name": "handover_to_specialist",
                    "args": {
                        "specialist_profile": rng.choice(NAMES),
                        "topic": rng.choice(["t", "", "../x", "topic"]),
                        "summary": "s",
                        "handover_reason": "r",
                        "return_condition": rng.choice(
                            ["user_request", "task_complete", "after_reply", "bogus"]
                        ),
                    },
                    "id": call_id,
                }
            )
        elif kind < 0.6:
            calls.append(
                {"name": "return_to_orchestrator", "args": {"summary": "x"}, "id": call_id}
            )
        elif kind < 0.7:
            calls.append(
                {
                    "name": rng.choice(["request_full_history", "read_briefing"]),
                    "args": {},
                    "id": call_id,
                }
            )
        elif kind < 0.8:
            calls.append(
                {"name": rng.choice(["no_such_tool", "bad name!", ""]), "args": {}, "id": call_id}
            )
        else:
            invalid.append(
                {
                    "name": "handover_to_specialist",
                    "args": rng.choice(["{bad", "[1, 2]", "42", None]),
                    "id": call_id,
                    "error": "not valid JSON",
                    "type": "invalid_tool_call",
                }
            )
    return AIMessage("", tool_calls=calls, invalid_tool_calls=invalid)


def test_fuzz_200_steps_of_random_tool_calls_never_loop_or_poison_the_thread(ctx):
    rng = random.Random(20261129)
    model = ScriptedChatModel(fallback=lambda _m: _random_reply(rng))
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    turns = 0
    while len(model.requests) < 200:
        say(graph, f"user turn {turns}", ctx, thread="fuzz")  # never GraphRecursionError
        turns += 1
        assert turns < 200, "every turn should make at least one model call"
    messages = state_of(graph, "fuzz")["messages"]
    check_tool_history(messages)  # the stored history is valid ...
    ids = [
        c["id"]
        for m in messages
        if isinstance(m, AIMessage)
        for c in [*m.tool_calls, *m.invalid_tool_calls]
    ]
    assert len(ids) == len(set(ids)) and all(ids)  # ... every call id present and unique
    # ... and OpenAI accepts the whole stored history (the local server validates like OpenAI)
    with OpenAICompatibleServer(lambda _m, _t: {"content": "ok"}) as server:
        ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0).invoke(
            [HumanMessage("start"), *messages]
        )
        assert not server.rejected, server.rejected[0][1]
    loops = [
        m
        for m in messages
        if isinstance(m, AIMessage) and m.response_metadata.get("handover_loop_stopped")
    ]
    print(
        f"fuzz: {turns} user turns, {len(model.requests)} model steps, "
        f"{len(messages)} stored messages, {len(loops)} loops stopped"
    )
    assert json.dumps([m.content for m in messages])  # all stored content serialises
