"""Reviewing handovers in the terminal: `handover chat --review` in a pseudo-terminal and
`handover run --review` answered from stdin (the offline model; nothing here needs a network).

The package is shown readably (specialist with its persona marker, topic, summary,
reason, decisions, artifacts, return condition, tokens "N of 3000", warnings, any
error) and answered with approve / edit / reject; an edit is checked and shown
again, an invalid one shows its error and asks again; a rejection reaches the
orchestrator, which answers, and no briefing is written. A review a previous
process left waiting is asked first.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.cli import main
from specialist_handover.graph.turns import thread_config
from tests.test_terminal_live import EXE, Terminal, terminal_env

HERO = "Please design the landing page hero."
FLAKY = "Quick question: the unit test in tests/test_landing.py is flaky, what should I check?"
ACTION = re.escape("approve / edit / reject? [a/e/r] ")


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    for name in ("OPENAI_API_KEY", "HANDOVER_MODEL", "HANDOVER_PROFILES", "HANDOVER_PROJECT_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(root)
    return root


def briefings(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".a0proj" / "handover").glob("*.md"))


def run_cli(monkeypatch, answers: str, *argv: str) -> tuple[int, str]:
    """`handover ...` in this process, reading its answers from stdin."""
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def user_texts(root: Path, thread: str) -> list[str]:
    graph = build_graph(
        checkpointer=sqlite_checkpointer(str(root / ".a0proj" / "checkpoints.sqlite"))
    )
    messages = graph.get_state(thread_config(thread)).values.get("messages", [])
    return [m.content for m in messages if m.type == "human"]


def test_chat_review_asks_a_waiting_review_first_then_edits_approves_and_rejects(
    project, monkeypatch
):
    # an earlier process left a handover waiting: its input ended at the question
    code, text = run_cli(monkeypatch, "", "run", HERO, "--review", "--thread", "rv")
    assert code == 3  # a handover waits for review
    assert "approve / edit / reject? [a/e/r]" in text
    assert "⏸️  The handover waits for your review" in text
    assert briefings(project) == []

    term = Terminal([EXE, "chat", "--review", "--thread", "rv"], env=terminal_env(), cwd=project)
    waiting = term.expect(
        re.escape(
            "↪ Thread 'rv' continues with 🧭 [a0 software orchestrator]; its handover to "
            "🖌️ [frontend designer] waits for your review."
        )
    )
    shown = term.expect(ACTION, since=waiting.end())
    package = term.text[waiting.end() : shown.start()]
    assert "📋 Handover for your review: 🧭 [a0 software orchestrator] → 🖌️ [frontend designer]" in (
        package
    )
    for field in ("specialist", "topic", "summary", "reason", "decisions", "artifacts"):
        assert re.search(rf"\d {field} ", package), field
    assert "🖌️ [frontend designer] (frontend_designer)" in package
    assert "return condition  user_request" in package
    assert re.search(r"tokens +\d+ of 3000", package)

    # an invalid edit shows the error, the package as it stood, and asks again
    term.send("e\r")
    term.expect(re.escape("Which field?"), since=shown.end())
    term.send("return condition\r")
    term.expect(re.escape("New return condition (user_request, task_complete, after_reply): "))
    term.send("bogus\r")
    error = term.expect(re.escape("❌ ERROR: invalid return_condition 'bogus'"), since=shown.end())
    again = term.text[shown.end() : error.end()]
    assert re.search(r"\d topic +landing-page-hero", again)
    assert "return condition  user_request" in again
    shown = term.expect(ACTION, since=error.end())

    # edit the topic: checked, counted and carried out at once (LangChain's edit decision)
    term.send("e\r")
    term.expect(re.escape("Which field?"), since=shown.end())
    term.send("topic\r")
    term.expect(re.escape("New topic: "), since=shown.end())
    term.send("hero v2\r")
    edited = term.expect(re.escape("✏️  Edited;"), since=shown.end())
    handoff = term.expect(re.escape("🔄 Handoff to: frontend_designer"), since=edited.end())
    term.expect(re.escape("🖌️ [frontend designer] I'm the frontend designer"), since=handoff.end())
    prompt = term.expect("🧑 You: ", since=handoff.end())
    assert [n.startswith("frontend-designer-hero-v2-") for n in briefings(project)] == [True]

    # back to the orchestrator, then a handover that is rejected
    term.send("Thanks, that's all. Go back to the orchestrator please.\r")
    back = term.expect(re.escape("🧭 [a0 software orchestrator] Back with the orchestrator."))
    prompt = term.expect("🧑 You: ", since=back.end())
    term.send(FLAKY + "\r")
    shown = term.expect(ACTION, since=prompt.end())
    target = re.search(
        r"📋 Handover for your review: .* → .* \[([a-z ]+)\]", term.text[prompt.end() :]
    )
    assert target, term.text[prompt.end() :]
    term.send("r\r")
    term.expect(re.escape("Reason (the caller reads it): "), since=shown.end())
    term.send("we fix our tests ourselves\r")
    rejected = term.expect(re.escape("❌ Rejected: we fix our tests ourselves"), since=shown.end())
    answer = term.expect(r"🧭 \[a0 software orchestrator\] \S", since=rejected.end())
    term.expect(re.escape("(next message goes to: orchestrator)"), since=answer.end())
    prompt = term.expect("🧑 You: ", since=answer.end())
    assert "🔄 Handoff to" not in term.text[rejected.end() :]
    term.send("exit\r")
    assert term.close() == 0
    assert [n.startswith("frontend-designer-hero-v2-") for n in briefings(project)] == [True]
    assert user_texts(project, "rv") == [
        HERO,
        "Thanks, that's all. Go back to the orchestrator please.",
        FLAKY,
    ]


def test_run_review_answers_from_stdin_and_a_waiting_review_blocks_plain_runs(project, monkeypatch):
    # the input ends at the question: the handover waits, nothing is written
    code, text = run_cli(monkeypatch, "", "run", HERO, "--review", "--thread", "w")
    assert code == 3 and briefings(project) == []  # 3: a handover waits for review
    # a plain run cannot send past it, and stores nothing
    code, _ = run_cli(monkeypatch, "", "run", "Make it darker.", "--thread", "w")
    assert code == 2
    assert user_texts(project, "w") == [HERO]
    # --review asks the waiting one first (edit by number, list one per line: carried out
    # at once), then sends
    answers = "e\n5\nUse React\nKeep the hero short\n\n"
    code, text = run_cli(
        monkeypatch, answers, "run", "Make it darker.", "--review", "--thread", "w"
    )
    assert code == 0, text
    assert (
        "↪ Thread 'w' continues with 🧭 [a0 software orchestrator]; its handover to "
        "🖌️ [frontend designer] waits for your review." in text
    )
    assert text.count("📋 Handover for your review") == 1  # the edit is carried out at once
    assert "🔄 Handoff to: frontend_designer" in text
    assert "🖌️ [frontend designer] Continuing on" in text  # the new message, answered
    assert user_texts(project, "w") == [HERO, "Make it darker."]
    assert len(briefings(project)) == 1
    entry = (project / ".a0proj" / "handover" / briefings(project)[0]).read_text()
    assert "Use React" in entry and "Keep the hero short" in entry


def test_run_review_reject_lets_the_orchestrator_answer_and_writes_nothing(project, monkeypatch):
    code, text = run_cli(monkeypatch, "x\nr\nnot now\n", "run", HERO, "--review", "--thread", "r")
    assert code == 0, text
    assert "Please answer approve, edit or reject (a, e or r)." in text
    assert "❌ Rejected: not now" in text
    assert re.search(
        r"❌ Rejected: not now\n⛔ Handoff to frontend_designer refused: ERROR: the handover to "
        r"frontend_designer was rejected by the reviewer: not now\..*\n"
        r"🧭 \[a0 software orchestrator\] \S",
        text,
    )
    assert "(next message goes to: orchestrator)" in text
    assert "🔄 Handoff" not in text
    assert briefings(project) == []


def test_the_terminal_review_shows_what_the_graph_adds_to_the_package():
    from specialist_handover.graph.terminal.review import package_lines
    from specialist_handover.specialists import builtin_profiles

    request = {
        "specialist_profile": "solution_architect",
        "topic": "schema",
        "summary": "s",
        "handover_reason": "r",
        "decisions": [],
        "artifacts": [],
        "return_condition": "user_request",
        "estimated_tokens": 420,
        "max_context_tokens": 3000,
        "from_agent": "orchestrator",
        "ledger": [
            "- [decision, user, turn 4] Let's go with Postgres.",
            "- [artifact, user, turn 9] " + "x" * 200,
        ],
        "ledger_omitted": 2,
        "earlier_turns": ["(turn 3) user: the invoices table keeps a tax breakdown"],
    }
    text = "\n".join(package_lines(request, builtin_profiles()))
    assert "ledger (added)    • [decision, user, turn 4] Let's go with Postgres." in text
    assert "(+2 more; stage 2 has them)" in text
    assert "earlier turns" in text and "(turn 3) user: the invoices table" in text
    assert "x" * 100 not in text  # long lines are cut to the terminal's width
