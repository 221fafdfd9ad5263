"""A person reviews each handover before it is carried out (`review_handovers`).

The handover pauses (LangGraph `interrupt()`) after validation and before the
briefing is written; `Command(resume=...)` approves, edits (validated and
counted again; an invalid edit pauses again with the error) or rejects it (an
`ERROR:` with the reason for the caller; nothing written).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import ReviewPending, run_turn
from tests.support.models import check_tool_history

HERO = "Please design the landing page hero with bold typography."
FIELDS = {
    "specialist_profile",
    "topic",
    "summary",
    "handover_reason",
    "decisions",
    "artifacts",
    "return_condition",
    "estimated_tokens",
    "max_context_tokens",
    "warnings",
    "from_agent",
    "ledger",  # what the graph adds to the package: the thread ledger and earlier turns
    "ledger_omitted",
    "earlier_turns",
}


@pytest.fixture
def setup(ctx):  # type: ignore[no-untyped-def]
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "r"}}
    return graph, config, {**ctx, "review_handovers": True}


HITL = {"action_requests", "review_configs"}
"""LangChain's human-in-the-loop format, beside the package's own fields."""


def briefings(ctx) -> list[Path]:  # type: ignore[no-untyped-def]
    return list(Path(ctx["project_root"], ".a0proj", "handover").glob("*.md"))


APPROVE = {"decisions": [{"type": "approve"}]}


def rejecting(message: str) -> dict:
    return {"decisions": [{"type": "reject", "message": message}]}


def editing(request: dict, **fields) -> dict:  # type: ignore[no-untyped-def]
    """A human-in-the-loop edit of the paused request's action, with these fields changed."""
    args = {**request["action_requests"][0]["args"], **fields}
    return {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "handover_to_specialist", "args": args}}
        ]
    }


def paused(out) -> dict:  # type: ignore[no-untyped-def]
    (item,) = out["__interrupt__"]
    return item.value


def test_a_handover_pauses_before_the_briefing_is_written_showing_the_package(setup):
    graph, config, ctx = setup
    out = graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    request = paused(out)
    assert set(request) == FIELDS | HITL
    assert request["specialist_profile"] == "frontend_designer"
    assert request["from_agent"] == "orchestrator"
    assert request["estimated_tokens"] > 0 and request["max_context_tokens"] == 3000
    assert briefings(ctx) == []  # nothing written yet
    assert graph.get_state(config).next == ("handover",)


def test_approve_carries_it_out(setup):
    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    out = graph.invoke(Command(resume=APPROVE), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"
    assert len(briefings(ctx)) == 1
    check_tool_history(out["messages"])


def test_an_edit_is_validated_counted_and_carried_out_at_once(setup):
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    edit = editing(first, topic="hero v2", summary="A much longer summary. " * 40)
    out = graph.invoke(Command(resume=edit), config, context=ctx)
    handover = graph.get_state(config).values["handover"]
    assert handover["estimated_tokens"] > first["estimated_tokens"]  # counted again
    assert out["active_agent"] == "frontend_designer"
    assert [p.name.startswith("frontend-designer-hero-v2-") for p in briefings(ctx)] == [True]
    assert graph.get_state(config).values["handover"]["topic"] == "hero-v2"


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        ({"return_condition": "bogus"}, "ERROR: invalid return_condition 'bogus'"),
        ({"specialist_profile": "nobody"}, "ERROR: unknown specialist profile 'nobody'"),
        ({"specialist_profile": "a0_software_orchestrator"}, "cannot be turned into a return"),
        ({"topic": "!!!"}, "has no usable characters"),
        ({"project_root": "/etc"}, "ERROR: cannot edit project_root"),
        ({"decisions": 42}, "ERROR: decisions must be a list of strings"),
    ],
)
def test_an_invalid_edit_pauses_again_showing_the_error_and_the_package_as_it_stood(
    setup, edit, error
):
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    again = paused(graph.invoke(Command(resume=editing(first, **edit)), config, context=ctx))
    assert error in again["error"]
    assert {k: again[k] for k in FIELDS} == {k: first[k] for k in FIELDS}  # not applied
    assert briefings(ctx) == []
    # approving what the form shows (the reviewer's values) fails the same way
    still = paused(graph.invoke(Command(resume=APPROVE), config, context=ctx))
    assert error in still["error"] and briefings(ctx) == []
    fixed = editing(first, topic="hero v4")  # the form's values replaced by good ones
    out = graph.invoke(Command(resume=fixed), config, context=ctx)
    assert out["active_agent"] == "frontend_designer" and len(briefings(ctx)) == 1


@pytest.mark.parametrize(
    "sent",
    [
        '["Bold serif headline", "No carousel"]',
        "Bold serif headline\n- No carousel\n",
        "Bold serif headline; No carousel",
    ],
    ids=["json", "lines", "semicolons"],
)
def test_a_list_field_edited_as_a_form_sends_it_is_read_as_a_list(setup, sent):
    """Agent Chat UI's edit form sends every field as a string."""
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    out = graph.invoke(Command(resume=editing(first, decisions=sent)), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"
    handover = graph.get_state(config).values["handover"]
    assert handover["decisions"][-2:] == ["Bold serif headline", "No carousel"]


def test_an_invalid_edit_keeps_the_reviewers_values_in_the_form(setup):
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    edit = editing(first, return_condition="bogus", topic="hero v3")
    again = paused(graph.invoke(Command(resume=edit), config, context=ctx))
    (request,) = again["action_requests"]
    assert request["args"]["return_condition"] == "bogus" and request["args"]["topic"] == "hero v3"
    assert "ERROR: invalid return_condition 'bogus'" in request["description"]
    assert again["topic"] == first["topic"]  # the package as it stood: not applied
    # the conversation says so too: the call is answered with the error and made again
    messages = graph.get_state(config).values["messages"]
    note, remade = messages[-2:]
    assert note.status == "error" and note.content.startswith(
        "ERROR: the reviewer's edit was not applied: invalid return_condition 'bogus'"
    )
    assert remade.tool_calls[0]["args"]["return_condition"] == first["return_condition"]
    check_tool_history(messages[:-1])  # the new call waits for its review
    out = graph.invoke(Command(resume=editing(first, topic="hero v3")), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"
    assert graph.get_state(config).values["handover"]["topic"] == "hero-v3"
    check_tool_history(out["messages"])


def test_after_an_edit_the_call_in_the_conversation_carries_the_edited_arguments(setup):
    """Stored messages never change: the edited call is answered, and made again as edited
    (what LangChain's HumanInTheLoopMiddleware shows by replacing the call's arguments)."""
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    edit = editing(first, specialist_profile="quality_reviewer", decisions="Serif; No carousel")
    out = graph.invoke(Command(resume=edit), config, context=ctx)
    assert out["active_agent"] == "quality_reviewer"
    calls = [m for m in out["messages"] if getattr(m, "tool_calls", None)]
    assert [c.tool_calls[0]["args"]["specialist_profile"] for c in calls] == [
        "frontend_designer",
        "quality_reviewer",
    ]
    assert calls[-1].tool_calls[0]["args"]["decisions"] == ["Serif", "No carousel"]
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results[0].content.startswith("The reviewer edited this handover (")
    assert results[1].content.startswith("Handed over to quality_reviewer")
    new_call = calls[-1].tool_calls[0]["id"]
    assert results[1].tool_call_id == new_call and f"handover_id={new_call};" in results[1].content
    assert graph.get_state(config).values["handover"]["handover_id"] == new_call
    check_tool_history(out["messages"])


def test_an_approval_or_an_edit_that_changes_nothing_keeps_one_call(setup):
    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    out = graph.invoke(Command(resume=editing(first)), config, context=ctx)
    assert out["active_agent"] == "frontend_designer"
    assert sum(bool(getattr(m, "tool_calls", None)) for m in out["messages"]) == 1


def test_mark_as_resolved_ends_the_review_without_handing_over_and_says_so(setup):
    """Agent Chat UI's "Mark as Resolved" sends a run with `Command(goto="__end__")`."""
    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    out = graph.invoke(Command(goto="__end__"), config, context=ctx)
    state = graph.get_state(config)
    assert state.next == () and not state.interrupts
    assert out["active_agent"] == "orchestrator" and briefings(ctx) == []
    assert out["messages"][-1].content.startswith("✅ Marked as resolved: I did not hand this over")
    (refused,) = [r for r in state.values["handovers"] if r["kind"] == "refused"]
    assert "marked as resolved" in refused["error"]
    check_tool_history(out["messages"])
    nxt = graph.invoke({"messages": [("user", "Thanks, what next?")]}, config, context=ctx)
    assert nxt["messages"][-1].name == "orchestrator"


def test_notes_that_end_a_review_carry_their_speakers_label_in_a_labelled_graph(ctx):
    """The served graph labels every reply (`label_replies=True`); the notes a review's end
    writes are replies too, and a chat that shows text only must say who speaks."""
    graph = build_graph(checkpointer=InMemorySaver(), label_replies=True)
    ctx = {**ctx, "review_handovers": True}
    ask = "Ask the solution architect and the frontend designer: should the hero render on the server?"
    for thread, first in (("h", HERO), ("c", ask), ("n", HERO)):
        config = {"configurable": {"thread_id": thread}}
        graph.invoke({"messages": [("user", first)]}, config, context=ctx)
        if thread == "n":  # a new message supersedes the review
            out = graph.invoke({"messages": [("user", "Never mind, hello.")]}, config, context=ctx)
            note = next(m for m in out["messages"] if "⏸️" in str(m.content))
        else:
            out = graph.invoke(Command(goto="__end__"), config, context=ctx)
            note = out["messages"][-1]
        assert note.content.startswith("🧭 **orchestrator**\n\n"), note.content


def test_mark_as_resolved_ends_a_consult_review_too(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "rc"}}
    ctx = {**ctx, "review_handovers": True}
    ask = "Ask the solution architect and the frontend designer: should the hero render on the server?"
    graph.invoke({"messages": [("user", ask)]}, config, context=ctx)
    assert graph.get_state(config).next == ("consult",)
    out = graph.invoke(Command(goto="__end__"), config, context=ctx)
    assert graph.get_state(config).next == ()
    assert out["messages"][-1].content.startswith("✅ Marked as resolved: I did not consult")
    answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
    assert "marked as resolved" in answer.content
    check_tool_history(out["messages"])


@pytest.mark.parametrize(
    "reason", ["we do the hero in-house", "we do the hero in-house.", "  we do the hero in-house. "]
)
def test_reject_answers_the_caller_with_the_reason_and_writes_nothing(setup, reason):
    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    out = graph.invoke(
        Command(resume=rejecting(reason)),
        config,
        context=ctx,
    )
    refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert refusal.status == "error"
    assert refusal.content.startswith(
        "ERROR: the handover to frontend_designer was rejected by the reviewer: "
        "we do the hero in-house. Carry on"
    )  # one full stop, whether the reason ends with one or not
    assert out["active_agent"] == "orchestrator"
    assert out["messages"][-1].name == "orchestrator"  # the caller went on and answered
    # what it tells the person is not the line meant for the model
    said = out["messages"][-1].content
    assert "rejected by the reviewer: we do the hero in-house" in said
    assert "Carry on without it" not in said and ".)" not in said
    assert briefings(ctx) == []
    check_tool_history(out["messages"])


@pytest.mark.parametrize(
    "answer",
    ["maybe", {"action": "ship it"}, 42, {"topic": "x"}, "approve", {"action": "approve"}],
    ids=["text", "action", "number", "fields", "old-text", "old-action"],  # the old answers too
)
def test_an_answer_that_is_no_action_pauses_again_saying_what_to_send(setup, answer):
    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    again = paused(graph.invoke(Command(resume=answer), config, context=ctx))
    assert again["error"].startswith("ERROR: resume with {'decisions': [{'type': 'approve'}]}")
    assert again["error"] in again["action_requests"][0]["description"]


# --- LangChain's human-in-the-loop format (Agent Chat UI, Studio) -------------------------


def test_the_pause_speaks_langchains_human_in_the_loop_format(setup):
    graph, config, ctx = setup
    request = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    (action,) = request["action_requests"]
    assert action["name"] == "handover_to_specialist"
    assert action["args"]["specialist_profile"] == "frontend_designer"
    assert set(action["args"]) == {
        "specialist_profile",
        "topic",
        "summary",
        "handover_reason",
        "decisions",
        "artifacts",
        "return_condition",
    }
    assert "**frontend_designer**" in action["description"]
    assert f"{request['estimated_tokens']:,} of 3,000 tokens" in action["description"]
    assert request["review_configs"] == [
        {
            "action_name": "handover_to_specialist",
            "allowed_decisions": ["approve", "edit", "reject"],
        }
    ]


def test_decisions_approve_and_reject(setup):
    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, context=ctx)
    assert out["active_agent"] == "frontend_designer" and len(briefings(ctx)) == 1
    graph2 = build_graph(checkpointer=InMemorySaver())
    graph2.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    reject = {"decisions": [{"type": "reject", "message": "not now"}]}
    out = graph2.invoke(Command(resume=reject), config, context=ctx)
    refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert "rejected by the reviewer: not now." in refusal.content
    check_tool_history(out["messages"])


def test_a_valid_edit_decision_is_carried_out_at_once(setup):
    graph, config, ctx = setup
    request = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    args = {**request["action_requests"][0]["args"], "topic": "hero v2"}
    edit = {"type": "edit", "edited_action": {"name": "handover_to_specialist", "args": args}}
    out = graph.invoke(Command(resume={"decisions": [edit]}), config, context=ctx)
    assert "__interrupt__" not in out and out["active_agent"] == "frontend_designer"
    assert graph.get_state(config).values["handover"]["topic"] == "hero-v2"


def test_an_invalid_edit_decision_pauses_again_with_the_error_in_the_description(setup):
    graph, config, ctx = setup
    request = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    args = {**request["action_requests"][0]["args"], "return_condition": "bogus"}
    edit = {"type": "edit", "edited_action": {"name": "handover_to_specialist", "args": args}}
    again = paused(graph.invoke(Command(resume={"decisions": [edit]}), config, context=ctx))
    assert "invalid return_condition 'bogus'" in again["action_requests"][0]["description"]
    assert briefings(ctx) == []


def test_the_environment_turns_review_on_where_no_one_can_set_the_context(ctx, monkeypatch):
    monkeypatch.setenv("HANDOVER_REVIEW_HANDOVERS", "true")
    graph = build_graph(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [("user", HERO)]}, {"configurable": {"thread_id": "e"}}, context=ctx
    )
    assert out["__interrupt__"][0].value["action_requests"]


def test_an_over_budget_package_says_so_in_warnings(setup):
    graph, config, ctx = setup
    out = graph.invoke(
        {"messages": [("user", HERO)]}, config, context={**ctx, "max_context_tokens": 50}
    )
    (warning,) = [w for w in paused(out)["warnings"] if w.startswith("WARNING:")]
    assert "over max_context_tokens=50" in warning


def test_without_review_nothing_pauses(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [("user", HERO)]}, {"configurable": {"thread_id": "n"}}, context=ctx
    )
    assert "__interrupt__" not in out and out["active_agent"] == "frontend_designer"


def test_run_turn_asks_a_reviewer_and_refuses_new_messages_while_one_waits(ctx, tmp_path):
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")))
    review = {**ctx, "review_handovers": True}
    seen: list[dict] = []
    values = run_turn(graph, HERO, thread_id="p", context=review)  # no reviewer: it waits
    assert values["active_agent"] == "orchestrator"
    with pytest.raises(ReviewPending, match="waiting for review"):
        run_turn(graph, "Something else", thread_id="p", context=review)

    def approve(request):  # type: ignore[no-untyped-def]
        seen.append(request)
        return APPROVE

    values = run_turn(graph, None, thread_id="p", context=review, on_review=approve)
    assert values["active_agent"] == "frontend_designer" and len(seen) == 1
    asked = [m.content for m in values["messages"] if m.type == "human"]
    assert asked == [HERO]


def test_a_command_that_carries_nothing_is_refused_before_anything_is_stored(setup):
    from specialist_handover import InputError

    graph, config, ctx = setup
    graph.invoke({"messages": [("user", HERO)]}, config, context=ctx)
    before = graph.get_state(config)
    with pytest.raises(InputError, match="carries nothing"):
        graph.invoke(Command(resume=None), config, context=ctx)
    assert graph.get_state(config).config == before.config


OFF = [
    pytest.param(lambda ctx: {**ctx, "review_handovers": False}, id="dict"),
    pytest.param(lambda ctx: None, id="none"),
]


@pytest.mark.parametrize("context_off", OFF)
def test_a_new_message_supersedes_a_waiting_review_even_when_its_run_has_review_off(
    setup, context_off
):
    """The review bypass the red team found: the next message's run had review off, and the
    waiting handover was carried out without review (briefing written, specialist in)."""
    graph, config, ctx = setup
    paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    off = context_off(ctx)
    out = graph.invoke({"messages": [("user", "Something else, please.")]}, config, context=off)
    assert out["active_agent"] == "orchestrator"
    assert briefings(ctx) == []  # nothing carried out
    (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answer.content.startswith("ERROR:")
    check_tool_history(out["messages"])


@pytest.mark.parametrize(
    "resume", [None, Command(resume={"decisions": [{"type": "reject", "message": "no"}]})]
)
def test_a_waiting_review_is_answered_only_by_a_review_decision_whatever_the_context(setup, resume):
    graph, config, ctx = setup
    paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    out = graph.invoke(resume, config, context={**ctx, "review_handovers": False})
    assert briefings(ctx) == [] and out["active_agent"] == "orchestrator"
    if resume is None:  # no decision: it asks again
        paused(out)
    else:  # the reviewer's decision is what happens
        (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert "rejected by the reviewer: no" in answer.content


def test_a_waiting_consult_review_is_not_carried_out_by_a_run_with_review_off(ctx):
    from tests.support.models import ScriptedChatModel, ai_call

    boss = ScriptedChatModel(
        script=[
            ai_call(
                "consult_specialists",
                consults=[
                    {"specialist_profile": "solution_architect", "question": "Schema?"},
                    {"specialist_profile": "frontend_designer", "question": "Font?"},
                ],
            )
        ]
    )
    specialist = ScriptedChatModel()
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"a0_software_orchestrator": boss, "default": specialist},
    )
    config = {"configurable": {"thread_id": "c"}}
    out = graph.invoke(
        {"messages": [("user", "ask them both")]}, config, context={**ctx, "review_handovers": True}
    )
    assert out.get("__interrupt__")
    graph.invoke(None, config, context={**ctx, "review_handovers": False})
    graph.invoke({"messages": [("user", "never mind")]}, config, context=ctx)
    assert specialist.requests == []  # neither consultant was asked


def test_a_huge_reject_message_with_a_lone_surrogate_is_bounded_and_the_run_goes_on(setup):
    graph, config, ctx = setup
    paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    message = "\ud800 not now, " + "too long " * 600_000  # 5 MB, a lone surrogate first
    decision = {"decisions": [{"type": "reject", "message": message}]}
    out = graph.invoke(Command(resume=decision), config, context=ctx)
    assert out["active_agent"] == "orchestrator"
    (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(answer.content) < 10_000 and "[cut at 1000 tokens]" in answer.content
    assert "\ud800" not in answer.content
    history = list(graph.get_state_history(config))
    assert sum(len(str(h.values)) for h in history) < 2_000_000  # nothing stored whole


def test_a_resume_value_that_cannot_be_stored_is_refused_as_input(setup):
    from specialist_handover import InputError

    graph, config, ctx = setup
    paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    with pytest.raises(InputError, match="the resume value cannot be stored"):
        graph.invoke(Command(resume={"decisions": [object()]}), config, context=ctx)
    paused(graph.invoke(None, config, context=ctx))  # the review still waits, unharmed


def test_the_terminal_approving_after_an_invalid_edit_approves_the_package_it_shows(setup):
    """The terminal shows the package as it stood (not the reviewer's failed values, which a
    form shows again): approving there carries that out."""
    import io

    from specialist_handover.graph.terminal.printer import Printer
    from specialist_handover.graph.terminal.review import TerminalReviewer

    graph, config, ctx = setup
    first = paused(graph.invoke({"messages": [("user", HERO)]}, config, context=ctx))
    again = paused(
        graph.invoke(Command(resume=editing(first, return_condition="bogus")), config, context=ctx)
    )
    assert again["action_requests"][0]["args"]["return_condition"] == "bogus"
    out = io.StringIO()
    reviewer = TerminalReviewer(Printer(out, spinner=False), lambda prompt: "a")
    answer = reviewer(again)
    assert "❌ ERROR: invalid return_condition 'bogus'" in out.getvalue()
    values = graph.invoke(Command(resume=answer), config, context=ctx)
    assert values["active_agent"] == "frontend_designer"
    assert graph.get_state(config).values["handover"]["return_condition"] == "user_request"
