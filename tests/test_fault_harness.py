"""SIGKILL at seeded random moments never loses or duplicates anything (tests/support/faults.py).

The harness test kills 16 child processes mid-conversation on one SQLite file
and verifies every thread afterwards; `pytest -s` prints its figures. The
verifier tests prove the checks are not vacuous: a thread with a duplicated or
lost turn, an unanswered turn, a broken tool history, a missing or doubled
briefing entry, a trail out of step or pending work is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from tests.support.faults import (
    SCRIPT,
    HarnessReport,
    ThreadRecord,
    briefing_markers,
    play_thread,
    prepare_project,
    read_thread,
    reference_shape,
    run_kill_harness,
    thread_shape,
    verify,
    verify_store,
)

pytestmark = pytest.mark.slow

SEED = 20260605


def test_seeded_kill_and_resume_harness_loses_nothing(tmp_path):
    report = run_kill_harness(workdir=tmp_path / "harness", kills=16, seed=SEED)
    print(report)
    assert report.kills >= 16
    assert report.seed == SEED
    assert report.threads >= 1 and report.turns_stored == report.threads * len(SCRIPT)
    assert report.handovers > 0 and report.briefing_entries == report.handovers
    assert report.losses == 0
    assert report.duplicates == 0
    assert report.invalid_histories == 0
    assert report.briefing_mismatches == 0
    assert report.unanswered == 0
    assert report.trail_mismatches == 0
    assert report.unfinished == 0
    assert report.shape_mismatches == 0
    assert report.problems == [], str(report)


# -- the verifier catches what it should --------------------------------------------------------
@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[ThreadRecord, list[tuple[str, str]], Path]:
    """The script played once, unkilled, in this process: the thread and its briefing markers."""
    workdir = tmp_path_factory.mktemp("verifier")
    root = workdir / "project"
    root.mkdir()
    prepare_project(root)
    db = workdir / "checkpoints.sqlite"
    graph = build_graph(checkpointer=sqlite_checkpointer(str(db)))
    assert play_thread(graph, "t0", {"project_root": str(root), "model": "offline"})
    clean = verify_store(db, root, expected_threads=1, reference=reference_shape(workdir))
    assert clean.problems == [], str(clean)
    assert clean.handovers == clean.briefing_entries == 6
    return read_thread(graph, "t0"), briefing_markers(root), workdir


def _human_at(record: ThreadRecord) -> list[int]:
    return [i for i, m in enumerate(record.messages) if isinstance(m, HumanMessage)]


def _duplicate_turn(record, markers):  # type: ignore[no-untyped-def]
    """The third user turn stored twice (each copy answered)."""
    at = _human_at(record)[3]
    again = [HumanMessage(SCRIPT[2], id="dup-user"), AIMessage("again", name="frontend_designer")]
    return replace(record, messages=[*record.messages[:at], *again, *record.messages[at:]]), markers


def _lose_turn(record, markers):  # type: ignore[no-untyped-def]
    """'What does main() print?' and its reply gone."""
    start, end = _human_at(record)[6], _human_at(record)[7]
    return replace(record, messages=record.messages[:start] + record.messages[end:]), markers


def _reorder_turns(record, markers):  # type: ignore[no-untyped-def]
    """The first two user turns stored in the wrong order."""
    first, second = _human_at(record)[:2]
    messages = list(record.messages)
    messages[first], messages[second] = (
        messages[first].model_copy(update={"content": SCRIPT[1]}),
        messages[second].model_copy(update={"content": SCRIPT[0]}),
    )
    return replace(record, messages=messages), markers


def _unanswered_turn(record, markers):  # type: ignore[no-untyped-def]
    """The last user turn without its reply."""
    return replace(record, messages=record.messages[: _human_at(record)[-1] + 1]), markers


def _orphan_tool_call(record, markers):  # type: ignore[no-untyped-def]
    """The read_file result lost: a tool call left unanswered."""
    kept = [
        m for m in record.messages if not (isinstance(m, ToolMessage) and m.name == "read_file")
    ]
    return replace(record, messages=kept), markers


def _missing_briefing(record, markers):  # type: ignore[no-untyped-def]
    return record, markers[1:]


def _doubled_briefing(record, markers):  # type: ignore[no-untyped-def]
    return record, [*markers, markers[0]]


def _orphan_briefing(record, markers):  # type: ignore[no-untyped-def]
    return record, [*markers, ("call_never_made", markers[0][1])]


def _trail_out_of_step(record, markers):  # type: ignore[no-untyped-def]
    first = next(i for i, r in enumerate(record.handovers) if r["kind"] == "handover")
    return replace(record, handovers=record.handovers[:first] + record.handovers[first + 1 :]), (
        markers
    )


def _pending_work(record, markers):  # type: ignore[no-untyped-def]
    return replace(record, next=("orchestrator",)), markers


Tamper = Callable[[ThreadRecord, list], tuple[ThreadRecord, list]]


@pytest.mark.parametrize(
    ("tamper", "counter"),
    [
        (_duplicate_turn, "duplicates"),
        (_lose_turn, "losses"),
        (_reorder_turns, "misordered"),
        (_unanswered_turn, "unanswered"),
        (_orphan_tool_call, "invalid_histories"),
        (_missing_briefing, "briefing_mismatches"),
        (_doubled_briefing, "briefing_mismatches"),
        (_orphan_briefing, "briefing_mismatches"),
        (_trail_out_of_step, "trail_mismatches"),
        (_pending_work, "unfinished"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else v,
)
def test_the_verifier_reports_what_a_kill_could_break(played, tamper: Tamper, counter: str):
    record, markers, _ = played
    assert verify([record], markers, reference=thread_shape(record)).problems == []
    bad_record, bad_markers = tamper(record, list(markers))
    report = verify([bad_record], bad_markers, reference=thread_shape(record))
    assert getattr(report, counter) >= 1, str(report)
    assert report.problems and not report.ok


def test_the_verifier_counts_a_duplicate_and_a_loss_exactly(played):
    record, markers, _ = played
    doubled, _ = _duplicate_turn(record, markers)
    lost, _ = _lose_turn(record, markers)
    report = verify([doubled, replace(lost, thread_id="t1")], markers)
    assert (report.duplicates, report.losses, report.threads) == (1, 1, 2)
    assert any("t0: user turn stored 2x" in p for p in report.problems)
    assert any("t1: script turn 6 lost: 'What does main() print?'" in p for p in report.problems)


def test_a_missing_thread_is_a_loss(played):
    _, _, workdir = played
    report = verify_store(workdir / "checkpoints.sqlite", workdir / "project", expected_threads=2)
    assert report.losses == len(SCRIPT)
    assert any("t1: thread missing" in p for p in report.problems)
    assert isinstance(report, HarnessReport) and not report.ok
