"""What was said reaches the specialist: the thread ledger and earlier turns through the graph,
with an orchestrator whose model writes a terse handover (one line, no decisions, no artifacts)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.state import InputError
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call

FACTS = [
    ("We're building a billing service. Let's go with Postgres for the database.", "Postgres"),
    ("The spec is in docs/spec/billing-v2.md", "docs/spec/billing-v2.md"),
    ("Hard requirement: p99 latency under 200 ms for the invoice API.", "200 ms"),
    ("Money is kept as integer cents everywhere, never floats.", "integer cents"),
    ("We deploy to eu-west-1.", "eu-west-1"),
    ("Auth goes through Auth0.", "Auth0"),
    (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    ("Keep raw events for 30 days, then purge them.", "30 days"),
    ("IDs are ULIDs.", "ULIDs"),
]
FILLER = [
    "ok thanks",
    "what do you think about the weather today",
    "the build took 5 minutes today",
    "can you explain how the retry logic works?",
    "I looked at src/util.go yesterday, it is long",
    "sounds good",
]


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def terse_orchestrator() -> ScriptedChatModel:
    """Answers in one word; on `HANDOVER:<profile> ...` hands over with a one-line summary and
    nothing else (no decisions, no artifacts)."""

    def act(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        text = str(last.content) if isinstance(last, HumanMessage) else ""
        if text.startswith("HANDOVER:"):
            target = text.split()[0].removeprefix("HANDOVER:")
            return ai_call(
                "handover_to_specialist",
                specialist_profile=target,
                topic=" ".join(text.split()[1:4]),
                summary="The user wants this done.",
                handover_reason="It is their field.",
            )
        return AIMessage("Noted.")

    return ScriptedChatModel(fallback=act)


def specialist(returns: dict[str, Any] | None = None) -> ScriptedChatModel:
    """Replies briefly; on `go back` returns with `returns` (summary, decisions, artifacts)."""

    def act(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        said = str(last.content) if isinstance(last, HumanMessage) and not last.name else ""
        if "go back" in said:
            return ai_call("return_to_orchestrator", **(returns or {"summary": "Done."}))
        if "full history" in said:
            return ai_call("request_full_history")
        return AIMessage("On it.")

    return ScriptedChatModel(fallback=act)


def build(spec: ScriptedChatModel, orchestrator: ScriptedChatModel | None = None, **kw):
    model = {"default": spec, "a0_software_orchestrator": orchestrator or terse_orchestrator()}
    return build_graph(checkpointer=InMemorySaver(), model=model, **kw)


def first_request_after(model: ScriptedChatModel, since: int) -> list[BaseMessage]:
    return model.requests[since]


def play_facts(graph, ctx, turns: int = 150) -> None:
    every = turns // len(FACTS)
    for t in range(turns):
        fact, rest = divmod(t, every)
        if rest == 3 and fact < len(FACTS):
            say(graph, FACTS[fact][0], ctx)
        else:
            say(graph, f"{FILLER[t % len(FILLER)]} ({t})", ctx)


def test_a_terse_handover_after_300_messages_still_carries_all_nine_facts(ctx):
    spec = specialist()
    graph = build(spec)
    play_facts(graph, ctx)
    state = state_of(graph)
    assert len(graph.transcript({"configurable": {"thread_id": "t"}})) >= 300
    assert FACTS[0][0] not in _text(state["messages"])  # the first facts were archived
    seen = len(spec.requests)
    say(graph, "HANDOVER:solution_architect design the invoice schema", ctx)
    request = _text(first_request_after(spec, seen))
    missing = [needle for _, needle in FACTS if needle not in request]
    assert not missing, missing
    package = state_of(graph)["handover"]
    assert package["estimated_tokens"] <= package["max_context_tokens"]
    # the facts came from the ledger: each entry names its source and turn
    assert "[decision, user, turn 4] We're building a billing service." not in request
    assert "Let's go with Postgres for the database." in request
    assert "[artifact, user, turn" in request


def test_a_decision_returned_by_one_specialist_reaches_the_next_one(ctx):
    returns = {
        "summary": "Designed the invoices API.",
        "decisions": ["Cursor pagination for every list endpoint"],
        "artifacts": ["api/openapi/invoices.yaml"],
    }
    spec = specialist(returns)
    graph = build(spec)
    say(graph, "HANDOVER:solution_architect design the invoices API", ctx)
    say(graph, "thanks, go back to the orchestrator", ctx)
    assert state_of(graph)["active_agent"] == "orchestrator"
    for i in range(8):
        say(graph, f"something else entirely ({i})", ctx)
    seen = len(spec.requests)
    say(graph, "HANDOVER:implementation_engineer implement the invoice endpoints", ctx)
    request = _text(first_request_after(spec, seen))
    assert "[decision, solution_architect return, turn 2] Cursor pagination" in request
    assert "api/openapi/invoices.yaml" in request
    ledger = state_of(graph)["ledger"]
    assert {(e["source"], e["by"]) for e in ledger} >= {("return", "solution_architect")}


def test_an_outcome_of_a_plain_reply_joins_the_ledger(ctx):
    def act(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("We'll use Redis for the session cache. Details follow.")

    graph = build(ScriptedChatModel(fallback=act))
    graph_ctx = dict(ctx)
    orchestrator = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="solution_architect",
                topic="cache",
                summary="s",
                handover_reason="r",
                return_condition="after_reply",
            )
        ]
    )
    graph = build(ScriptedChatModel(fallback=act), orchestrator)
    say(graph, "which cache should we use?", graph_ctx)
    (entry,) = [e for e in state_of(graph)["ledger"] if e["source"] == "outcome"]
    assert entry["by"] == "solution_architect" and "Redis" in entry["text"]


def test_the_relevant_archived_turn_comes_before_irrelevant_recent_ones(ctx):
    spec = specialist()
    graph = build(spec)
    say(graph, "The invoices table stores a tax breakdown per line for each invoice.", ctx)
    for i in range(140):
        say(graph, f"chat about lunch plans and the weather ({i})", ctx)
    assert "tax breakdown" not in _text(state_of(graph)["messages"])  # archived
    seen = len(spec.requests)
    say(graph, "HANDOVER:solution_architect invoices table schema, please", ctx)
    package = state_of(graph)["handover"]
    assert package["earlier_turns"] and "tax breakdown" in package["earlier_turns"][0]
    assert not any("lunch" in t for t in package["earlier_turns"])
    assert "tax breakdown" in _text(first_request_after(spec, seen))


def test_the_review_the_briefing_and_the_trail_show_the_ledger_part(ctx):
    graph = build(specialist())
    review = {**ctx, "review_handovers": True}
    say(graph, "Let's go with Postgres for the database.", review)
    for i in range(3):  # out of the package's recent turns: the ledger carries it
        say(graph, f"ok ({i})", review)
    out = say(graph, "HANDOVER:solution_architect design the schema", review)
    (pause,) = out["__interrupt__"]
    shown = pause.value
    assert any("Postgres" in line for line in shown["ledger"])
    description = shown["action_requests"][0]["description"]
    assert "**Thread ledger (added by the graph):**" in description
    from langgraph.types import Command

    graph.invoke(
        Command(resume={"decisions": [{"type": "approve"}]}),
        {"configurable": {"thread_id": "t"}},
        context=review,
    )
    (briefing,) = Path(ctx["project_root"], ".a0proj", "handover").glob("*.md")
    text = briefing.read_text()
    assert "### Thread ledger" in text and "Let's go with Postgres for the database." in text
    (record,) = [r for r in state_of(graph)["handovers"] if r["kind"] == "handover"]
    assert record["ledger_entries"] == 1 and record["ledger_omitted"] == 0


def test_a_consult_carries_the_ledger_too(ctx):
    spec = specialist()
    orchestrator = ScriptedChatModel(
        script=[
            *[AIMessage("Noted.")] * 4,
            ai_call(
                "consult_specialists",
                consults=[
                    {"specialist_profile": "solution_architect", "question": "Schema?"},
                    {"specialist_profile": "security_data_engineer", "question": "Auth?"},
                ],
            ),
        ]
    )
    graph = build(spec, orchestrator)
    say(graph, "IDs are ULIDs.", ctx)
    for i in range(3):  # out of the package's recent turns: the ledger carries it
        say(graph, f"ok ({i})", ctx)
    seen = len(spec.requests)
    say(graph, "ask two specialists", ctx)
    asked = spec.requests[seen:]
    assert len(asked) == 2 and all("IDs are ULIDs." in _text(r) for r in asked)
    records = [r for r in state_of(graph)["handovers"] if r["kind"] == "consult"]
    assert [r["ledger_entries"] for r in records] == [1, 1]


def test_stage_2_carries_the_whole_ledger(ctx):
    spec = specialist()
    graph = build(spec)
    say(graph, "IDs are ULIDs.", ctx)
    say(graph, "HANDOVER:solution_architect design it", ctx)
    values = say(graph, "please get the full history", ctx)
    (result,) = [
        m
        for m in values["messages"]
        if isinstance(m, ToolMessage) and m.name == "request_full_history"
    ]
    assert "## Thread ledger (all 1 current entries, oldest first)" in str(result.content)
    assert "IDs are ULIDs." in str(result.content)


def test_a_ledger_written_from_outside_is_checked_like_input(ctx):
    graph = build(specialist())
    say(graph, "hello", ctx)
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(InputError, match="ledger must be thread-ledger entries"):
        graph.update_state(config, {"ledger": [{"id": "x", "kind": "opinion"}]})
    entry = {
        "id": "l-manual",
        "kind": "decision",
        "text": "We ship on Fridays only.",
        "source": "user",
        "by": "user",
        "turn": 1,
        "time": "2026-12-02T00:00:00Z",
        "status": "current",
    }
    graph.update_state(config, {"ledger": [entry]})
    assert [e["id"] for e in state_of(graph)["ledger"]] == ["l-manual"]


def test_the_ledger_grows_by_the_entry_not_by_the_thread(ctx):
    graph = build(specialist())
    say(graph, "Let's go with Postgres for the database.", ctx)
    for i in range(60):
        say(graph, f"ok ({i})", ctx)
    state = state_of(graph)
    assert len(state["ledger"]) == 1
    assert state["ledger_mark"]["turns"] == 61
    assert json.dumps(state["ledger"]).count("Postgres") == 1


def test_a_handovers_own_decisions_join_the_ledger_for_the_next_specialist(ctx):
    spec = specialist()
    orchestrator = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="solution_architect",
                topic="rpc",
                summary="s",
                handover_reason="r",
                decisions=["Services talk gRPC to each other"],
                artifacts=["proto/billing/v1/invoice.proto"],
            )
        ],
        fallback=terse_orchestrator().fallback,
    )
    graph = build(spec, orchestrator)
    say(graph, "we need an RPC design", ctx)
    say(graph, "thanks, go back to the orchestrator", ctx)
    for i in range(4):
        say(graph, f"ok ({i})", ctx)
    seen = len(spec.requests)
    say(graph, "HANDOVER:implementation_engineer implement the invoice service", ctx)
    request = _text(first_request_after(spec, seen))
    assert "[decision, orchestrator handover, turn 1] Services talk gRPC to each other" in request
    assert "proto/billing/v1/invoice.proto" in request


def test_a_changed_mind_reaches_the_specialist_as_current_and_the_old_one_as_superseded(ctx):
    spec = specialist()
    graph = build(spec)
    say(graph, "Let's go with Postgres for the main database.", ctx)
    say(graph, "ok", ctx)
    say(graph, "Actually, scratch Postgres, we'll use MySQL instead.", ctx)
    for i in range(4):
        say(graph, f"fine ({i})", ctx)
    seen = len(spec.requests)
    say(graph, "HANDOVER:solution_architect design the schema", ctx)
    request = _text(first_request_after(spec, seen))
    current = request.index("[decision, user, turn 3] Actually, scratch Postgres")
    old = request.index("[decision, user, turn 1; SUPERSEDED at turn 3] Let's go with Postgres")
    assert current < old
    statuses = {e["text"][:20]: e["status"] for e in state_of(graph)["ledger"]}
    assert statuses["Let's go with Postgr"] == "superseded"
    assert statuses["Actually, scratch Po"] == "current"


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_the_ledger_reaches_the_specialist_under_every_durability_mode(ctx, durability):
    spec = specialist()
    graph = build(spec)
    config = {"configurable": {"thread_id": f"d-{durability}"}}

    def send(text: str) -> None:
        graph.invoke({"messages": [HumanMessage(text)]}, config, context=ctx, durability=durability)

    for fact, _ in FACTS:
        send(fact)
        for i in range(3):
            send(f"{FILLER[i]} ({i})")
    seen = len(spec.requests)
    send("HANDOVER:solution_architect design the invoice schema")
    request = _text(first_request_after(spec, seen))
    assert [needle for _, needle in FACTS if needle not in request] == []
    ledger = graph.get_state(config).values["ledger"]
    assert len({e["id"] for e in ledger}) == len(ledger)  # each entry once
    assert graph.get_state(config).values["ledger_mark"]["turns"] == len(FACTS) * 4 + 1


def test_the_ledger_reaches_the_specialist_under_ainvoke(ctx):
    spec = specialist()
    graph = build(spec)
    config = {"configurable": {"thread_id": "async"}}

    async def play() -> None:
        for fact, _ in FACTS:
            await graph.ainvoke({"messages": [HumanMessage(fact)]}, config, context=ctx)
            await graph.ainvoke({"messages": [HumanMessage("ok thanks")]}, config, context=ctx)
        await graph.ainvoke(
            {"messages": [HumanMessage("HANDOVER:solution_architect design it")]},
            config,
            context=ctx,
        )

    asyncio.run(play())
    request = _text(spec.requests[-1])
    assert [needle for _, needle in FACTS if needle not in request] == []
