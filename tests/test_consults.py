"""Consults: the orchestrator asks 2 to 4 specialists at once (`consult_specialists`).

The call ends the orchestrator's run like a transfer; the consult node checks it
(a bad call is one `ERROR:`, a bad entry an `ERROR:` for that entry only), builds
each entry's stage-1 package with the handover's core, writes its briefing entry,
records it in the trail, and sends one task per entry (LangGraph `Send`, one step)
to run that specialist's agent once; the answers, each capped, come back in ONE
tool message and the orchestrator answers the user in the same turn.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from specialist_handover import build_graph
from specialist_handover.graph.terminal.chat import print_trail
from specialist_handover.graph.terminal.printer import Printer
from specialist_handover.nodes.handover.arguments import read_consult
from specialist_handover.nodes.handover.consult import QUOTED_NOTE
from specialist_handover.nodes.handover.node import describe_trail
from specialist_handover.nodes.handover.transfer import handover_tools
from specialist_handover.nodes.history.conversation import recent_turns
from specialist_handover.nodes.history.full_history import build_full_history
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.nodes.tools.names import CONSULT, GRAPH_TOOLS, HANDOVER
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, builtin_profiles
from specialist_handover.state import InputError, token_counter
from specialist_handover.state.defaults import CONSULT_ANSWER_MAX_TOKENS
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
    model_responder,
    orchestrator_tools,
)
from tests.support.openai_server import OpenAICompatibleServer

ASK = "Ask the solution architect and the frontend designer: should the hero render on the server?"
QUESTION = "should the hero render on the server?"
PROFILES = builtin_profiles()


def consult_call(*entries: tuple[str, str], **shared: Any) -> AIMessage:
    """The orchestrator's reply asking these (specialist, question) entries."""
    consults = [{"specialist_profile": p, "question": q} for p, q in entries]
    return ai_call(CONSULT, consults=consults, topic="hero", **shared)


def run(graph, text: str, ctx: dict, thread: str = "c", **kwargs: Any) -> dict:  # type: ignore[no-untyped-def]
    return graph.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
        durability="sync",
        **kwargs,
    )


def consult_answer(values: dict) -> ToolMessage:
    """The consult call's answer (the last one: an edit that did not validate answers a call
    before it is made again)."""
    return [m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == CONSULT][-1]


def briefing_entries(ctx: dict) -> list[str]:
    folder = Path(ctx["project_root"], ".a0proj", "handover")
    return [p.read_text() for p in sorted(folder.glob("*.md"))] if folder.exists() else []


def scripted_build(orchestrator: list[Any], **specialists: Any):  # type: ignore[no-untyped-def]
    """A graph whose orchestrator plays `orchestrator` (then replies 'Done.'), each named
    specialist its own model, every other agent the recording offline model."""
    boss = ScriptedChatModel(script=list(orchestrator), fallback=lambda m: AIMessage("Done."))
    models = {"orchestrator": boss, "default": RecordingOfflineModel(), **specialists}
    return build_graph(checkpointer=InMemorySaver(), model=models), boss


def answering(text: str) -> ScriptedChatModel:
    return ScriptedChatModel(fallback=lambda m: AIMessage(text))


# --- the tool ---------------------------------------------------------------------------------


def test_the_orchestrator_holds_consult_specialists_and_specialists_do_not():
    assert CONSULT in GRAPH_TOOLS
    tools = {t.name: t for t in handover_tools(ORCHESTRATOR_PROFILE)}
    assert set(tools) == {HANDOVER, CONSULT}
    schema = tools[CONSULT].args_schema
    assert isinstance(schema, dict)
    consults = schema["properties"]["consults"]
    assert (consults["minItems"], consults["maxItems"]) == (2, 4)
    entry = consults["items"]
    assert entry["required"] == ["specialist_profile", "question"]
    assert ORCHESTRATOR_PROFILE not in entry["properties"]["specialist_profile"]["enum"]
    assert set(schema["properties"]) == {"consults", "topic", "summary", "decisions", "artifacts"}
    assert CONSULT not in {t.name for t in handover_tools("solution_architect")}


@pytest.mark.parametrize(
    ("consults", "error"),
    [
        ([], "ERROR: consults holds 0 entries; ask 2 to 4"),
        ([{"specialist_profile": "hacker", "question": "q"}], "ERROR: consults holds 1 entry"),
        (
            [{"specialist_profile": n, "question": "q"} for n in list(PROFILES.specialists)[:5]],
            "ERROR: consults holds 5 entries",
        ),
        ("hacker and solution_architect", "ERROR: consults must be a list"),
        ({"specialist_profile": "hacker"}, "ERROR: consults must be a list"),
        (None, "ERROR: consults must be a list"),
    ],
)
def test_a_call_with_too_few_too_many_or_no_list_is_one_error_and_the_orchestrator_goes_on(
    ctx, consults, error
):
    bad = ai_call(CONSULT, consults=consults)
    graph, boss = scripted_build([bad])
    values = run(graph, "Ask them both.", ctx)
    answer = consult_answer(values)
    assert answer.content.startswith(error) and answer.status == "error"
    assert values["messages"][-1].content == "Done."  # the orchestrator went on
    assert values["active_agent"] == "orchestrator" and values.get("consult") is None
    assert briefing_entries(ctx) == []
    check_tool_history(values["messages"])
    assert len(boss.requests) == 2


def test_read_consult_never_raises_on_any_shape():
    for args in (None, [], "x", {"consults": [1, "a", None]}, {"bogus": 1}, {"consults": [{}] * 2}):
        read = read_consult(args, profiles=PROFILES)
        assert isinstance(read, str) or all(e.error for e in read.entries)


def test_an_invalid_entry_is_an_error_for_that_entry_only_the_others_are_asked(ctx):
    call = consult_call(
        ("solution_architect", "Which database?"),
        ("ui_designer", "Which colours?"),  # unknown: a did-you-mean
        (ORCHESTRATOR_PROFILE, "What do you think?"),
        ("solution_architect", "And the cache?"),  # asked twice
    )
    graph, _ = scripted_build([call], solution_architect=answering("Use PostgreSQL."))
    values = run(graph, "Ask around.", ctx)
    text = consult_answer(values).content
    blocks = text.split("\n\n")
    assert blocks[0] == (
        f"Consult answers: 1 of 4 specialists answered (each answer at most "
        f"{CONSULT_ANSWER_MAX_TOKENS} tokens).\n{QUOTED_NOTE}"
    )
    assert blocks[1] == "[1] solution_architect — Which database?\nUse PostgreSQL."
    assert blocks[2].startswith("[2] ui_designer — Which colours?\nERROR: unknown specialist ")
    assert "Did you mean 'ui_design_specialist'" in blocks[2]
    assert "ERROR: the orchestrator cannot consult itself" in blocks[3]
    assert "ERROR: solution_architect is asked twice in this consult (entries 1 and 4)" in blocks[4]
    assert len(briefing_entries(ctx)) == 1
    check_tool_history(values["messages"])


def test_a_call_whose_entries_all_fail_is_answered_at_once_as_an_error(ctx):
    call = consult_call(("nobody", "q"), ("no_one", "q"))
    graph, _ = scripted_build([call])
    answer = consult_answer(run(graph, "Ask them.", ctx))
    assert answer.status == "error" and answer.content.startswith("ERROR: no specialist could")
    assert briefing_entries(ctx) == []


# --- the fan-out ------------------------------------------------------------------------------


def test_consultants_run_in_one_step_and_answer_in_one_tool_message_in_the_calls_order(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    config = {"configurable": {"thread_id": "p"}}
    tasks = [
        (event["step"], event["payload"]["name"])
        for event in graph.stream(
            {"messages": [HumanMessage(ASK)]},
            config,
            context=ctx,
            durability="sync",
            stream_mode="debug",
        )
        if event["type"] == "task"
    ]
    steps = [step for step, name in tasks if name == "consultant"]
    assert len(steps) == 2 and len(set(steps)) == 1  # both in the same superstep
    names = [name for _, name in tasks]
    assert names == [
        "orchestrator",
        "consult",
        "consultant",
        "consultant",
        "consult_answers",
        "orchestrator",
    ]
    values = graph.get_state(config).values
    assert values["active_agent"] == "orchestrator" and values["consult"] is None
    kinds = [(type(m).__name__, m.name) for m in values["messages"]]
    assert kinds == [
        ("HumanMessage", None),
        ("AIMessage", "orchestrator"),
        ("ToolMessage", CONSULT),
        ("AIMessage", "solution_architect"),
        ("AIMessage", "frontend_designer"),
        ("AIMessage", "orchestrator"),
    ]  # the consultants' own steps are not in the conversation: only each answer, under its
    # speaker's name, for the person reading (the orchestrator reads them in the tool message)
    shown = values["messages"][3:5]
    assert all(m.response_metadata.get("for_readers") for m in shown)
    tool_text = consult_answer(values).content
    for m, who in zip(shown, ("solution architect", "frontend designer"), strict=True):
        assert m.content.startswith(f"As the {who}") and m.content[:80] in tool_text
    after = model.requests[-1]  # the orchestrator's answer: the tool message, not the copies
    assert [type(m).__name__ for m in after[-2:]] == ["AIMessage", "ToolMessage"]
    # nor a later package's turns, nor the full history (stage 2)
    turns = recent_turns(values["messages"], 10)
    assert not any(t.startswith(("solution_architect:", "frontend_designer:")) for t in turns)
    full = build_full_history(values["messages"], package_text="", counter=token_counter())
    assert full.total_messages == len(values["messages"]) - 2
    text = consult_answer(values).content
    assert text.index("[1] solution_architect") < text.index("[2] frontend_designer")
    assert values["messages"][-1].content.startswith("I asked the specialists at once.")
    for request in model.requests:
        check_tool_history(request)


def test_each_consultant_runs_its_agent_once_on_its_package_and_the_question(ctx):
    architect, designer = RecordingOfflineModel(), RecordingOfflineModel()
    call = consult_call(("solution_architect", "Which database?"), ("frontend_designer", "Font?"))
    graph, boss = scripted_build([], solution_architect=architect, frontend_designer=designer)
    run(graph, "An early turn with a marker: ZEBRA-42.", ctx)
    for i in range(6):  # enough turns that the early one is not among the recent ones
        run(graph, f"Small talk {i}.", ctx)
    boss.script.append(call)
    run(graph, "Now ask them.", ctx)
    for model, question in ((architect, "Which database?"), (designer, "Font?")):
        assert len(model.requests) == 1  # once
        (request,) = model.requests
        package, asked = request[1], request[2]
        assert "HANDOVER PACKAGE (stage 1)" in str(package.content)
        assert asked.name == "consult" and str(asked.content).endswith(f"Question: {question}")
        assert f"at most {CONSULT_ANSWER_MAX_TOKENS} tokens" in str(asked.content)
        assert len(request) == 3  # prompt, package, question: never the history
        # the early turn reaches it only through the package's thread ledger
        verbatim = str(package.content).split("## Recent turns")[1].split("## Decisions")[0]
        assert "ZEBRA-42" not in verbatim and "ZEBRA-42" not in str(asked.content)


def test_a_long_answer_comes_back_within_the_cap_with_a_visible_marker(ctx):
    long = " ".join(f"word{i}" for i in range(5000))
    call = consult_call(("solution_architect", "Tell me all."), ("frontend_designer", "Brief?"))
    graph, _ = scripted_build(
        [call], solution_architect=answering(long), frontend_designer=answering("Short.")
    )
    text = consult_answer(run(graph, "Ask.", ctx)).content
    first = text.split("\n\n")[1].split("\n", 1)[1]
    counter = token_counter("offline")
    assert counter.count_text(long) > 5000
    assert counter.count_text(first) <= CONSULT_ANSWER_MAX_TOKENS
    assert first.endswith(f"[… answer cut at {CONSULT_ANSWER_MAX_TOKENS} tokens]")
    assert first.startswith("word0 word1")
    assert text.split("\n\n")[2].endswith("\nShort.")  # a short answer stays whole


def test_the_cap_comes_from_the_run_context(ctx):
    long = " ".join(f"word{i}" for i in range(500))
    call = consult_call(("solution_architect", "All?"), ("frontend_designer", "All?"))
    graph, _ = scripted_build(
        [call], solution_architect=answering(long), frontend_designer=answering(long)
    )
    text = consult_answer(run(graph, "Ask.", {**ctx, "consult_answer_max_tokens": 50})).content
    for block in text.split("\n\n")[1:]:
        answer = block.split("\n", 1)[1]
        assert token_counter("offline").count_text(answer) <= 50
        assert answer.endswith("[… answer cut at 50 tokens]")


def test_a_consultant_cannot_hand_over_it_is_told_so_and_answers(ctx):
    tries = ai_call(
        HANDOVER, specialist_profile="hacker", topic="t", summary="s", handover_reason="r"
    )
    architect = ScriptedChatModel(script=[tries], fallback=lambda m: AIMessage("My answer."))
    call = consult_call(("solution_architect", "Q1?"), ("frontend_designer", "Q2?"))
    graph, _ = scripted_build([call], solution_architect=architect)
    values = run(graph, "Ask.", ctx)
    trail = graph.get_state({"configurable": {"thread_id": "c"}}).values["handovers"]
    refusal = architect.requests[1][-1]
    assert isinstance(refusal, ToolMessage)
    assert refusal.content.startswith("ERROR: you are answering a consult")
    assert "[1] solution_architect — Q1?\nMy answer." in consult_answer(values).content
    assert values["active_agent"] == "orchestrator"
    assert {r["kind"] for r in trail} == {"consult"}


def test_an_agent_that_transfers_anyway_has_it_ignored_with_a_note(ctx):
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from specialist_handover.nodes.handover.transfer import TRANSFER_KEY

    said = AIMessage(
        "Partly: use a queue.",
        tool_calls=[{"name": "return_to_orchestrator", "args": {"summary": "x"}, "id": "call_r"}],
    )

    @tool
    def leave() -> Command:
        """Leave the way a transfer does, whatever the graph says."""
        return Command(graph=Command.PARENT, update={TRANSFER_KEY: [said]})

    own = create_agent(ScriptedChatModel(script=[ai_call("leave")]), [leave])
    boss = ScriptedChatModel(
        script=[consult_call(("solution_architect", "Q?"), ("frontend_designer", "Q?"))],
        fallback=lambda m: AIMessage("Done."),
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"orchestrator": boss, "default": RecordingOfflineModel()},
        agents={"solution_architect": own},
    )
    values = run(graph, "Ask.", ctx)
    first = consult_answer(values).content.split("\n\n")[1]
    assert first == (
        "[1] solution_architect — Q?\nPartly: use a queue.\n(note: solution_architect tried to "
        "call return_to_orchestrator, which a consult does not carry out; this is what it said "
        "before)"
    )
    assert values["active_agent"] == "orchestrator"
    check_tool_history(values["messages"])


def test_an_orchestrator_that_keeps_consulting_is_stopped_by_max_turns(ctx):
    entries = (("solution_architect", "Q?"), ("frontend_designer", "Q?"))
    boss = ScriptedChatModel(fallback=lambda m: consult_call(*entries))  # a fresh call each time
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"orchestrator": boss, "default": RecordingOfflineModel()},
    )
    values = run(graph, "Ask forever.", {**ctx, "max_turns": 3})
    assert "stopped after 3 model calls in a row" in values["messages"][-1].content
    trail = graph.get_state({"configurable": {"thread_id": "c"}}).values["handovers"]
    assert len(trail) == 2 * 3  # three consults of two, then the stop
    check_tool_history(values["messages"])


# --- the trail and the briefings --------------------------------------------------------------


def test_each_consult_is_in_the_trail_with_its_question_tokens_and_briefing(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    run(graph, ASK, ctx)
    records = graph.get_state({"configurable": {"thread_id": "c"}}).values["handovers"]
    assert [(r["kind"], r["from_agent"], r["to_agent"]) for r in records] == [
        ("consult", "orchestrator", "solution_architect"),
        ("consult", "orchestrator", "frontend_designer"),
    ]
    for record in records:
        assert record["reason"] == QUESTION and record["topic"]
        assert record["estimated_tokens"] > 0
        assert Path(record["briefing_path"]).is_file()
    shown = describe_trail(records)
    assert "consult orchestrator -> solution_architect on" in shown and QUESTION in shown
    out = io.StringIO()
    assert print_trail(graph, "c", Printer(out, spinner=False)) == 0
    assert "💬 orchestrator asked frontend_designer" in out.getvalue()
    assert f"❓ {QUESTION}" in out.getvalue()


def test_each_consult_record_carries_its_consultants_usage_and_stats_sum_it(ctx):
    def costly(tokens_in: int) -> ScriptedChatModel:
        reply = AIMessage(
            "My view.",
            usage_metadata={"input_tokens": tokens_in, "output_tokens": 7, "total_tokens": 0},
        )
        return ScriptedChatModel(fallback=lambda m: reply.model_copy(update={"id": None}))

    call = consult_call(("solution_architect", "a?"), ("frontend_designer", "b?"))
    graph, _ = scripted_build([call], solution_architect=costly(100), frontend_designer=costly(40))
    run(graph, "ask them", ctx)
    config = {"configurable": {"thread_id": "c"}}
    records = graph.get_state(config).values["handovers"]
    usage = {r["to_agent"]: r["usage"] for r in records if r["kind"] == "consult"}
    assert {
        name: (u["model_calls"], u["input_tokens"], u["output_tokens"]) for name, u in usage.items()
    } == {
        "solution_architect": (1, 100, 7),
        "frontend_designer": (1, 40, 7),
    }
    assert all(u["handover_id"] for u in usage.values())
    stats = graph.stats(config)
    assert (stats["consults"], stats["specialist_model_calls"]) == (2, 2)
    assert (stats["specialist_input_tokens"], stats["specialist_output_tokens"]) == (140, 14)


def test_each_consult_appends_a_briefing_entry_that_says_it_is_a_consult(ctx):
    store = InMemoryStore()
    graph = build_graph(checkpointer=InMemorySaver(), store=store)
    run(graph, ASK, ctx)
    entries = briefing_entries(ctx)
    assert len(entries) == 2
    for text in entries:
        assert text.count("<!-- handover-id:") == 1
        assert "- **Kind:** consult (one question, answered once" in text
        assert f"- **Reason:** {QUESTION}" in text
    for name in ("solution_architect", "frontend_designer"):
        (item,) = store.search(("briefings", name))
        assert "**Kind:** consult" in item.value["markdown"]


# --- review -----------------------------------------------------------------------------------


def review_setup(ctx):  # type: ignore[no-untyped-def]
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "r"}}
    return graph, config, {**ctx, "review_handovers": True}


def paused(out: dict) -> dict:
    (item,) = out["__interrupt__"]
    return item.value


def test_review_pauses_once_with_one_action_request_per_entry_before_anything_is_written(ctx):
    graph, config, ctx = review_setup(ctx)
    request = paused(graph.invoke({"messages": [HumanMessage(ASK)]}, config, context=ctx))
    assert request["kind"] == "consult"
    actions = request["action_requests"]
    assert [a["args"]["specialist_profile"] for a in actions] == [
        "solution_architect",
        "frontend_designer",
    ]
    assert all(a["name"] == CONSULT and a["args"]["question"] == QUESTION for a in actions)
    assert (
        request["review_configs"]
        == [{"action_name": CONSULT, "allowed_decisions": ["approve", "edit", "reject"]}] * 2
    )
    assert briefing_entries(ctx) == []
    assert graph.get_state(config).next == ("consult",)


def test_review_approves_edits_and_rejects_each_entry_on_its_own(ctx):
    graph, config, ctx = review_setup(ctx)
    graph.invoke({"messages": [HumanMessage(ASK)]}, config, context=ctx)
    edit = {"name": CONSULT, "args": {"question": "Is caching worth it?"}}
    out = graph.invoke(
        Command(
            resume={
                "decisions": [
                    {"type": "edit", "edited_action": edit},
                    {"type": "reject", "message": "we design the hero in-house"},
                ]
            }
        ),
        config,
        context=ctx,
    )
    text = consult_answer(out).content
    assert "[1] solution_architect — Is caching worth it?\nAs the solution architect" in text
    assert (
        "[2] frontend_designer — should the hero render on the server?\nERROR: consulting "
        "frontend_designer was rejected by the reviewer: we design the hero in-house. Go on"
    ) in text
    (entry,) = briefing_entries(ctx)
    assert "- **Reason:** Is caching worth it?" in entry
    trail = graph.get_state(config).values["handovers"]
    assert [r["kind"] for r in trail] == ["consult", "refused"]
    assert out["messages"][-1].name == "orchestrator"
    check_tool_history(out["messages"])


def test_an_edit_that_does_not_validate_pauses_again_with_the_error(ctx):
    graph, config, ctx = review_setup(ctx)
    graph.invoke({"messages": [HumanMessage(ASK)]}, config, context=ctx)
    bad = {"name": CONSULT, "args": {"specialist_profile": "frontend_designer"}}
    again = paused(
        graph.invoke(
            Command(
                resume={"decisions": [{"type": "edit", "edited_action": bad}, {"type": "approve"}]}
            ),
            config,
            context=ctx,
        )
    )
    assert "frontend_designer is already asked in this consult" in again["error"]
    assert briefing_entries(ctx) == []
    # the conversation says so too: the call is answered with the error and made again
    messages = graph.get_state(config).values["messages"]
    note, remade = messages[-2:]
    assert note.status == "error" and note.content.startswith(
        "ERROR: the reviewer's edit was not applied: entry 1 (solution_architect): "
    )
    assert remade.tool_calls[0]["args"] == messages[-3].tool_calls[0]["args"]
    approve = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
    out = graph.invoke(Command(resume=approve), config, context=ctx)
    assert len(briefing_entries(ctx)) == 2
    assert "2 of 2 specialists answered" in consult_answer(out).content
    assert consult_answer(out).tool_call_id == remade.tool_calls[0]["id"]
    check_tool_history(out["messages"])


def test_a_new_message_during_the_review_supersedes_the_consult(ctx):
    graph, config, ctx = review_setup(ctx)
    graph.invoke({"messages": [HumanMessage(ASK)]}, config, context=ctx)
    out = graph.invoke({"messages": [HumanMessage("Never mind, hello!")]}, config, context=ctx)
    answer = consult_answer(out)
    assert answer.content.startswith("ERROR: the consult was not reviewed")
    assert briefing_entries(ctx) == []
    assert out["messages"][-1].name == "orchestrator"
    check_tool_history(out["messages"])


def test_the_terminal_reviewer_shows_the_entries_and_answers_all_at_once(ctx):
    from specialist_handover.graph.terminal.review import TerminalReviewer
    from specialist_handover.graph.turns import run_turn

    graph, _, ctx = review_setup(ctx)
    out = io.StringIO()
    answers = iter(["r", "not this week"])
    reviewer = TerminalReviewer(Printer(out, spinner=False), lambda prompt: next(answers))
    values = run_turn(graph, ASK, thread_id="t", context=ctx, on_review=reviewer)
    shown = out.getvalue()
    assert "📋 Consult for your review:" in shown and f"solution architect]: {QUESTION}" in shown
    text = consult_answer(values).content
    assert text.startswith("ERROR: no specialist could be consulted.")
    assert text.count("was rejected by the reviewer: not this week.") == 2
    assert briefing_entries(ctx) == []


# --- crash safety -----------------------------------------------------------------------------


class SignallingSaver(InMemorySaver):
    """Sets `answered` once a consultant's answer is saved (a finished task's write)."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = threading.Event()

    def put_writes(self, config, writes, task_id, task_path=""):  # type: ignore[no-untyped-def]
        super().put_writes(config, writes, task_id, task_path)
        if any(c == "consult" and isinstance(v, dict) and "answer" in v for c, v in writes):
            self.answered.set()


def test_a_consult_stopped_after_one_consultant_finished_resumes_without_asking_it_again(ctx):
    """Ctrl-C (or a kill: tests/test_consult_kill.py) while one consultant still works."""
    saver = SignallingSaver()
    architect = answering("Use PostgreSQL.")

    def stopped_once(messages):  # type: ignore[no-untyped-def]
        if len(designer.requests) == 1:
            assert saver.answered.wait(timeout=30), "the architect's answer was never saved"
            raise KeyboardInterrupt
        return AIMessage("Serif headings.")

    designer = ScriptedChatModel(fallback=stopped_once)
    boss = ScriptedChatModel(
        script=[consult_call(("solution_architect", "DB?"), ("frontend_designer", "Font?"))],
        fallback=lambda m: AIMessage("Done."),
    )
    models = {"orchestrator": boss, "solution_architect": architect, "frontend_designer": designer}
    graph = build_graph(checkpointer=saver, model=models)
    config = {"configurable": {"thread_id": "k"}}
    with pytest.raises(KeyboardInterrupt):
        graph.invoke({"messages": [HumanMessage("Ask.")]}, config, context=ctx, durability="sync")
    assert len(briefing_entries(ctx)) == 2
    assert graph.get_state(config).next == ("consultant",)  # only the unfinished one is left
    values = graph.invoke(None, config, context=ctx, durability="sync")
    assert len(architect.requests) == 1  # the finished one was not asked again
    assert len(designer.requests) == 2 and len(boss.requests) == 2
    text = consult_answer(values).content
    assert "\nUse PostgreSQL." in text and "\nSerif headings." in text
    entries = briefing_entries(ctx)
    assert len(entries) == 2 and all(e.count("<!-- handover-id:") == 1 for e in entries)
    assert len(graph.get_state(config).values["handovers"]) == 2
    check_tool_history(values["messages"])


def test_a_consultant_that_fails_is_an_error_for_its_entry_only(ctx):
    architect = answering("Use PostgreSQL.")

    def broken(messages):  # type: ignore[no-untyped-def]
        raise ValueError("the designer's model broke, key sk-proj-" + "A1b2C3d4" * 6)

    designer = ScriptedChatModel(fallback=broken)
    boss = ScriptedChatModel(
        script=[consult_call(("solution_architect", "DB?"), ("frontend_designer", "Font?"))],
        fallback=lambda m: AIMessage("Done."),
    )
    models = {"orchestrator": boss, "solution_architect": architect, "frontend_designer": designer}
    graph = build_graph(checkpointer=InMemorySaver(), model=models)
    config = {"configurable": {"thread_id": "k"}}
    values = graph.invoke({"messages": [HumanMessage("Ask.")]}, config, context=ctx)
    text = consult_answer(values).content
    assert "1 of 2 specialists answered" in text
    assert "\nUse PostgreSQL." in text
    assert "[2] frontend_designer — Font?\nERROR: frontend_designer could not answer: " in text
    assert "ValueError: the designer's model broke" in text
    assert "sk-proj-" not in text  # the detail is redacted
    assert values["messages"][-1].content == "Done."  # the orchestrator answered from them
    assert len(architect.requests) == 1 and len(boss.requests) == 2
    check_tool_history(values["messages"])


# --- the offline model ------------------------------------------------------------------------


def test_the_offline_model_consults_on_a_clear_cue():
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([HumanMessage(ASK)])
    (call,) = reply.tool_calls
    assert call["name"] == CONSULT
    assert call["args"]["consults"] == [
        {"specialist_profile": "solution_architect", "question": QUESTION},
        {"specialist_profile": "frontend_designer", "question": QUESTION},
    ]
    consult = "Consult the hacker, the release auditor and the ui designer about the launch."
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([HumanMessage(consult)])
    assert [e["specialist_profile"] for e in reply.tool_calls[0]["args"]["consults"]] == [
        "hacker",
        "release_auditor",
        "ui_designer",  # passed on as written: the graph refuses it with its suggestions
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Please ask the security data engineer to review the auth design.",  # one name
        "Can you ask someone to look at the logs and the database: it is slow.",
        "Please design the landing page hero with bold typography.",
    ],
)
def test_the_offline_model_does_not_consult_without_the_cue(text):
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([HumanMessage(text)])
    assert all(c["name"] != CONSULT for c in reply.tool_calls)


def test_the_offline_demo_shows_a_consult_and_the_orchestrator_answers_from_it(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    values = run(graph, ASK, ctx)
    last = values["messages"][-1]
    assert last.name == "orchestrator"
    assert "- solution_architect: As the solution architect" in last.content
    assert "- frontend_designer: As the frontend designer" in last.content


# --- over HTTP --------------------------------------------------------------------------------


def test_a_consult_through_chat_openai_over_http(ctx):
    with OpenAICompatibleServer(model_responder(OfflineChatModel())) as server:
        model = ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)
        graph = build_graph(checkpointer=InMemorySaver(), model=model)
        values = run(graph, ASK, {**ctx, "model": "openai:gpt-4o"})
        assert not server.rejected, server.rejected
        sent = server.requests
    first = sent[0]
    assert CONSULT in {t["function"]["name"] for t in first["tools"]}
    consultants = [b for b in sent if any(m.get("name") == "consult" for m in b["messages"])]
    assert len(consultants) == 2
    final = sent[-1]["messages"]
    (asked,) = [m for m in final if m["role"] == "assistant" and m.get("tool_calls")]
    assert asked["tool_calls"][0]["function"]["name"] == CONSULT
    answers = [m for m in final if m["role"] == "tool"]
    assert len(answers) == 1 and answers[0]["tool_call_id"] == asked["tool_calls"][0]["id"]
    assert "[1] solution_architect" in answers[0]["content"]
    assert "[2] frontend_designer" in answers[0]["content"]
    assert values["messages"][-1].content.startswith("I asked the specialists at once.")
    assert values["active_agent"] == "orchestrator"


# --- state writes -----------------------------------------------------------------------------


def test_state_writes_to_the_consult_key_are_checked(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "w"}}
    run(graph, "Hello there.", ctx, thread="w")
    with pytest.raises(InputError, match="consult must be null or a consult round"):
        graph.update_state(config, {"consult": {"call_id": 3}})
    graph.update_state(config, {"consult": None})
    assert graph.get_state(config).values.get("consult") is None
