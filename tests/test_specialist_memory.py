"""Specialists that remember: an outcome entry at each return (briefing file and store), and a
bounded "last time" section in the next package to the same specialist in the same project."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from specialist_handover.graph import build_graph
from specialist_handover.nodes.briefing.outcomes import last_time, write_outcome
from specialist_handover.nodes.briefing.reader import read_briefing
from specialist_handover.state import token_counter
from specialist_handover.state.defaults import (
    LAST_TIME_ENTRIES,
    LAST_TIME_MAX_TOKENS,
    OUTCOME_TAIL_BYTES,
)
from tests.support.graphs import say, state_of
from tests.support.models import (
    ScriptedChatModel,
    ai_call,
    returning_responder,
    specialist_requests,
)
from tests.support.openai_server import OpenAICompatibleServer

DECISIONS = ["Headline in Inter Bold 64px", "One blue call-to-action button"]
HERO = "Please design the landing page hero with bold typography."


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "offline"}


def _briefings(root: str) -> dict[str, str]:
    folder = Path(root, ".a0proj", "handover")
    return {p.name: p.read_text() for p in sorted(folder.glob("*.md"))}


def _chat_openai(srv) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=srv.base_url, api_key="k", max_retries=0)


def test_a_return_appends_an_outcome_entry_and_the_next_package_recalls_it_over_http(ctx):
    with OpenAICompatibleServer(returning_responder(DECISIONS)) as srv:
        graph = build_graph(checkpointer=InMemorySaver(), model=_chat_openai(srv))
        say(graph, HERO, ctx)
        say(graph, "Thanks, go back to the orchestrator please.", ctx)
        (text,) = _briefings(ctx["project_root"]).values()
        # the handover entry, then its outcome, in the same file
        assert text.index("## Handover ") < text.index("## Outcome ")
        outcome = text[text.index("## Outcome ") :]
        assert "← frontend_designer" in outcome
        assert "Hero designed: bold headline, one blue button." in outcome
        for decision in DECISIONS:
            assert f"- {decision}" in outcome
        assert re.search(r"\*\*Model calls:\*\* 2 \(", outcome)

        before = len(srv.requests)
        say(graph, "Now design the pricing page hero with the same style.", ctx)
        assert state_of(graph)["active_agent"] == "frontend_designer"
        sent = specialist_requests(srv.requests[before:], "frontend_designer")
    package = state_of(graph)["handover"]
    assert len(package["last_time"]) == 1
    line = package["last_time"][0]
    assert "topic landing-page-hero" in line and "Hero designed" in line
    assert "Decisions: Headline in Inter Bold 64px; One blue call-to-action button." in line
    # the specialist saw it over HTTP, and it is counted in the package's tokens
    assert "## Last time" in sent[0]["messages"][1]["content"]
    assert line in sent[0]["messages"][1]["content"]
    assert package["estimated_tokens"] == token_counter().count_text(package["rendered"])
    assert "## Last time" in package["rendered"]


def test_a_plain_reply_return_writes_its_first_sentences_as_the_outcome(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    say(
        graph,
        "Quick question: the unit test for the landing page is flaky, what should I check?",
        ctx,
    )
    (text,) = _briefings(ctx["project_root"]).values()
    outcome = text[text.index("## Outcome ") :]
    assert "after_reply: replied" in outcome
    assert "test debug engineer" in outcome.split("### Summary", 1)[1]


def test_only_the_same_specialist_in_the_same_project_is_reminded(ctx, tmp_path):
    graph = build_graph(checkpointer=InMemorySaver())
    say(
        graph,
        "Quick question: the unit test for the landing page is flaky, what should I check?",
        ctx,
    )
    say(graph, HERO, ctx)  # another specialist: nothing to recall
    assert state_of(graph)["handover"]["last_time"] == []
    other = tmp_path / "other-project"
    other.mkdir()
    ctx2 = {**ctx, "project_root": str(other)}
    say(graph, "Quick question: another flaky unit test, what now?", ctx2, thread="t2")
    assert state_of(graph, "t2")["handover"]["last_time"] == []  # another project
    say(graph, "Quick question: a third flaky unit test, what now?", ctx, thread="t3")
    assert len(state_of(graph, "t3")["handover"]["last_time"]) == 1  # the first project again


def test_last_time_is_bounded_newest_first(ctx):
    counter = token_counter()
    root = ctx["project_root"]
    for n in range(8):
        handover = {
            "specialist": "solution_architect",
            "handover_id": f"call_{n}",
            "topic": f"topic-{n}",
            "briefing_file": f"{root}/.a0proj/handover/solution-architect-topic-{n}-2026-11-2{n}.md",
        }
        write_outcome(
            project_root=root,
            handover=handover,
            how="return_to_orchestrator",
            summary=f"Outcome number {n}. " + "A long explanation of the trade-offs. " * 60,
            decisions=[f"decision {n}"],
        )
    lines = last_time(project_root=root, specialist="solution_architect", counter=counter)
    assert 1 <= len(lines) <= LAST_TIME_ENTRIES
    assert sum(counter.count_text(line) for line in lines) <= LAST_TIME_MAX_TOKENS
    assert ", topic topic-7: Outcome number 7." in lines[0]  # the newest file first
    assert last_time(project_root=root, specialist="hacker", counter=counter) == []


def test_an_outcome_is_written_once_per_handover(ctx):
    root = ctx["project_root"]
    handover = {
        "specialist": "hacker",
        "handover_id": "call_once",
        "topic": "pentest",
        "briefing_file": f"{root}/.a0proj/handover/hacker-pentest-2026-12-01.md",
    }
    for _ in range(3):  # a resumed run hands back again
        assert write_outcome(project_root=root, handover=handover, how="x", summary="done") is None
    (text,) = _briefings(root).values()
    assert text.count("## Outcome ") == 1


def test_outcomes_are_found_at_the_end_of_a_long_briefing(ctx):
    root = ctx["project_root"]
    path = Path(root, ".a0proj", "handover", "hacker-pentest-2026-12-01.md")
    handover = {
        "specialist": "hacker",
        "handover_id": "call_a",
        "topic": "pentest",
        "briefing_file": str(path),
    }
    write_outcome(project_root=root, handover=handover, how="x", summary="first finding")
    with path.open("a") as f:  # a long briefing since: the first outcome is far back
        f.write("\nfiller line of an older entry\n" * (OUTCOME_TAIL_BYTES // 10))
    counter = token_counter()
    assert last_time(project_root=root, specialist="hacker", counter=counter) == []
    write_outcome(
        project_root=root, handover={**handover, "handover_id": "call_b"}, how="x", summary="second"
    )
    (line,) = last_time(project_root=root, specialist="hacker", counter=counter)
    assert "second" in line


def test_secrets_in_an_outcome_are_redacted(ctx):
    root = ctx["project_root"]
    handover = {
        "specialist": "hacker",
        "handover_id": "call_s",
        "topic": "keys",
        "briefing_file": f"{root}/.a0proj/handover/hacker-keys-2026-12-01.md",
    }
    key = "sk-proj-" + "A1b2C3d4" * 6
    write_outcome(
        project_root=root, handover=handover, how="x", summary=f"used {key}", decisions=[key]
    )
    (text,) = _briefings(root).values()
    assert key not in text and "[REDACTED:openai-key]" in text


def test_read_briefing_shows_the_outcomes_too(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    say(
        graph,
        "Quick question: the unit test for the landing page is flaky, what should I check?",
        ctx,
    )
    text = read_briefing(
        project_root=ctx["project_root"], specialist="test_debug_engineer", counter=token_counter()
    )
    assert "## Outcome " in text and "## Handover " in text
    assert text.index("## Outcome ") < text.index("## Handover ")  # newest first


def test_with_a_store_outcomes_are_put_there_and_recalled_from_there(ctx, tmp_path):
    store = InMemoryStore()

    def specialist(messages):
        return ai_call(
            "return_to_orchestrator", summary="Chose a monolith.", decisions=["monolith"]
        )

    graph = build_graph(
        checkpointer=InMemorySaver(),
        store=store,
        model={
            "a0_software_orchestrator": ScriptedChatModel(
                fallback=lambda m: (
                    ai_call(
                        "handover_to_specialist",
                        specialist_profile="solution_architect",
                        topic="architecture",
                        summary="pick one",
                        return_condition="task_complete",
                        handover_reason="design",
                    )
                    if m[-1].type == "human"
                    else AIMessage("ok")
                )
            ),
            "default": ScriptedChatModel(fallback=specialist),
        },
    )
    say(graph, "Which architecture?", ctx)
    items = store.search(("briefings", "solution_architect"), filter={"kind": "outcome"})
    assert len(items) == 1 and "Chose a monolith." in items[0].value["markdown"]
    # another replica: its files are elsewhere, the store is shared
    for p in Path(ctx["project_root"], ".a0proj", "handover").glob("*.md"):
        p.unlink()
    say(graph, "And the database?", ctx)
    (line,) = state_of(graph)["handover"]["last_time"]
    assert "Chose a monolith." in line and "Decisions: monolith." in line
