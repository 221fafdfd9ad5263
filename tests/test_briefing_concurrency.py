"""Concurrent appends to one briefing file never interleave, lose or duplicate an entry.

Several OS processes (and threads) append to the same briefing file at once, released
together by a start signal. Each entry is compared, whole, with the entry the same
handover writes when run alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specialist_handover.nodes import perform_handover

pytestmark = pytest.mark.slow

PROCESSES = 8
APPENDS_EACH = 50
WHEN = datetime(2026, 6, 5, 21, 30, tzinfo=UTC)
HEADER = "# Briefing: frontend_designer — shared-topic\n"
ENTRY_START = re.compile(r"(?=\n## Handover )")
MARKER = re.compile(r"<!-- handover-id: (.+?) -->")

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from test_briefing_concurrency import WHEN, handover_args
from specialist_handover.nodes import perform_handover
from specialist_handover.state import token_counter

root, worker, count, id_prefix = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
token_counter().count_text("warm up")  # load the vocabulary before the start signal
print("ready", flush=True)
sys.stdin.readline()  # released together with the other workers
appended, errors = 0, []
for n in range(count):
    hid = f"{id_prefix}w{worker}-n{n}" if id_prefix != "same" else f"same-n{n}"
    args = handover_args(root, worker if id_prefix != "same" else 0, n)
    outcome = perform_handover(args, handover_id=hid, when=WHEN)
    if isinstance(outcome, str):
        errors.append(outcome)
    elif outcome.result["briefing"]["appended"]:
        appended += 1
print(json.dumps({"appended": appended, "errors": errors}), flush=True)
"""


def handover_args(root: str, worker: int, n: int) -> dict:
    """A distinct, ~1.5 kB package for handover n of a worker."""
    tag = f"w{worker}-n{n}"
    return {
        "specialist_profile": "frontend_designer",
        "topic": "shared-topic",
        "summary": f"summary {tag}: " + "the hero keeps one call to action; " * 12,
        "recent_turns": [f"{tag} turn {k}: " + "user and assistant talk " * 3 for k in range(6)],
        "decisions": [f"{tag} decision {k}" for k in range(3)],
        "artifacts": [f"src/{tag}/file{k}.tsx" for k in range(2)],
        "return_condition": ("user_request", "task_complete", "after_reply")[n % 3],
        "handover_reason": f"reason {tag}",
        "project_root": root,
        "include_recent_turns": 4,
    }


def run_workers(root: Path, processes: int, count: int, id_prefix: str) -> list[dict]:
    """Start the workers, wait until all are ready, release them at once, collect reports."""
    tests_dir = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, tests_dir, str(root), str(w), str(count), id_prefix],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in range(processes)
    ]
    try:
        for proc in procs:
            line = proc.stdout.readline()
            assert line == "ready\n", proc.communicate(timeout=60)[1]
        for proc in procs:  # the start signal
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err
            reports.append(json.loads(out))
        return reports
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def split_entries(text: str) -> dict[str, str]:
    """Entries of a briefing file by handover id; asserts the header and one id an entry."""
    assert text.startswith(HEADER)
    assert text.count("# Briefing: ") == 1
    header, *entries = ENTRY_START.split(text)
    assert "<!-- handover-id:" not in header
    by_id: dict[str, str] = {}
    for entry in entries:
        ids = MARKER.findall(entry)
        assert len(ids) == 1, entry[:300]
        assert ids[0] not in by_id, f"{ids[0]} appears twice"
        by_id[ids[0]] = entry
    return by_id


def reference_entries(root: Path, ids_and_args: list[tuple[str, dict]]) -> dict[str, str]:
    """Each handover's entry as it looks when written alone, one after the other."""
    root.mkdir()
    path = ""
    for handover_id, args in ids_and_args:
        outcome = perform_handover(
            {**args, "project_root": str(root)}, handover_id=handover_id, when=WHEN
        )
        assert not isinstance(outcome, str), outcome
        path = outcome.result["briefing"]["path"]
    return split_entries(Path(path).read_text("utf-8"))


def test_eight_processes_appending_50_entries_each_never_interleave(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    reports = run_workers(root, PROCESSES, APPENDS_EACH, id_prefix="")
    assert [r["errors"] for r in reports] == [[]] * PROCESSES
    assert [r["appended"] for r in reports] == [APPENDS_EACH] * PROCESSES

    files = list((root / ".a0proj" / "handover").iterdir())
    assert [f.name for f in files] == ["frontend-designer-shared-topic-2026-06-05.md"]
    written = split_entries(files[0].read_text("utf-8"))

    expected = reference_entries(
        tmp_path / "reference",
        [
            (f"w{w}-n{n}", handover_args("", w, n))
            for w in range(PROCESSES)
            for n in range(APPENDS_EACH)
        ],
    )
    assert len(expected) == PROCESSES * APPENDS_EACH
    assert sorted(written) == sorted(expected)  # every entry exactly once
    for handover_id, entry in expected.items():  # and each one whole
        assert written[handover_id] == entry.replace(str(tmp_path / "reference"), str(root)), (
            handover_id
        )
    # each worker's own entries keep their order
    order = list(written)
    for w in range(PROCESSES):
        mine = [order.index(f"w{w}-n{n}") for n in range(APPENDS_EACH)]
        assert mine == sorted(mine)


def test_processes_racing_on_the_same_handover_ids_append_each_once(tmp_path):
    # a resumed crash in one process while another retries: one entry per id, never two
    root = tmp_path / "project"
    root.mkdir()
    reports = run_workers(root, 3, 20, id_prefix="same")
    assert [r["errors"] for r in reports] == [[]] * 3
    assert sum(r["appended"] for r in reports) == 20  # one winner per id
    path = root / ".a0proj" / "handover" / "frontend-designer-shared-topic-2026-06-05.md"
    written = split_entries(path.read_text("utf-8"))
    assert sorted(written) == sorted(f"same-n{n}" for n in range(20))


def test_threads_racing_on_one_handover_id_append_it_once(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    threads = 8
    start = threading.Barrier(threads)
    args = handover_args(str(root), 0, 0)

    def one(_):
        start.wait(timeout=60)
        return perform_handover(args, handover_id="resumed-call", when=WHEN)

    with ThreadPoolExecutor(threads) as pool:
        outcomes = list(pool.map(one, range(threads)))
    assert not any(isinstance(o, str) for o in outcomes), outcomes
    assert sum(o.result["briefing"]["appended"] for o in outcomes) == 1
    assert sum(o.result["briefing"]["newly_created"] for o in outcomes) == 1
    path = outcomes[0].result["briefing"]["path"]
    assert list(split_entries(Path(path).read_text("utf-8"))) == ["resumed-call"]
