"""Concurrency: many runs at once lose nothing.

- 32 threads x 10 turns in one process, on one SQLite file: four threads share
  each conversation, so runs on the same conversation queue on its lock;
- 8 processes on one project root and one SQLite file, each with its own
  conversation and briefings in the same folder.

Every turn is stored once and answered, every history is valid, and every
handover has exactly one briefing entry.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path

import pytest

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import run_turn, thread_config
from tests.support.faults import OUTCOME, briefing_markers, handover_entries
from tests.support.models import check_tool_history

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TURNS = [
    "Hello, we decided to use React for the site.",
    "Please design the landing page hero with bold typography.",
    "Make the call-to-action stand out more.",
    "Thanks, go back to the orchestrator please.",
    "What should we do next?",
]


def briefing_ids(root: Path) -> Counter:
    """How often each handover's entry is in the briefings (outcome entries: each once, for
    a handover that is there)."""
    ids = Counter(hid for hid, _ in handover_entries(root))
    outcomes = Counter(hid for hid, _ in briefing_markers(root) if hid.endswith(OUTCOME))
    assert set(outcomes.values()) <= {1}, outcomes
    assert {hid.removesuffix(OUTCOME) for hid in outcomes} <= set(ids)
    return ids


def verify(graph, thread: str, expected: list[str]) -> list:  # type: ignore[no-untyped-def]
    """The thread stores exactly these user turns (in some order), each answered."""
    messages = graph.get_state(thread_config(thread)).values["messages"]
    asked = [m.content for m in messages if m.type == "human"]
    assert Counter(asked) == Counter(expected), thread
    kinds = [m.type for m in messages]
    assert kinds[-1] != "human" and all(
        kinds[i + 1] != "human" for i, kind in enumerate(kinds[:-1]) if kind == "human"
    ), thread
    check_tool_history(messages)
    return messages


def successful_handover_ids(messages: list) -> list[str]:
    return [
        m.tool_call_id
        for m in messages
        if m.type == "tool" and m.name == "handover_to_specialist" and m.status == "success"
    ]


def test_32_threads_times_10_turns_in_one_process_lose_nothing(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    graph = build_graph(checkpointer=sqlite_checkpointer(str(tmp_path / "cp.sqlite")))
    context = {"project_root": str(root), "model": "offline"}
    errors: list[BaseException] = []
    sent: dict[str, list[str]] = {f"conv-{i}": [] for i in range(8)}
    lock = threading.Lock()

    def worker(n: int) -> None:
        thread = f"conv-{n % 8}"  # four workers share each conversation
        try:
            for turn in range(10):
                text = f"[worker {n}, turn {turn}] {TURNS[turn % len(TURNS)]}"
                run_turn(graph, text, thread_id=thread, context=context)
                with lock:
                    sent[thread].append(text)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=600)
    assert not errors, errors[:3]
    assert sum(len(v) for v in sent.values()) == 320
    handover_ids = []
    for thread, texts in sent.items():
        handover_ids += successful_handover_ids(verify(graph, thread, texts))
    assert handover_ids, "the turns should include handovers"
    ids = briefing_ids(root)
    assert sorted(ids) == sorted(handover_ids) and set(ids.values()) == {1}


DRIVER = textwrap.dedent(
    """
    import sys
    from specialist_handover import build_graph
    from specialist_handover.graph.turns import run_turn
    from specialist_handover.graph.checkpointers import sqlite_checkpointer
    db, root, thread, *texts = sys.argv[1:]
    graph = build_graph(checkpointer=sqlite_checkpointer(db))
    for text in texts:
        run_turn(graph, text, thread_id=thread, context={"project_root": root, "model": "offline"})
    """
)


def test_8_processes_on_one_project_root_lose_nothing(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    db = str(tmp_path / "cp.sqlite")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(REPO)
    scripts = {f"proc-{i}": [f"(p{i}) {text}" for text in TURNS] for i in range(8)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, db, str(root), thread, *texts],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for thread, texts in scripts.items()
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0] * 8, [err[-2000:] for _, err in outputs]
    graph = build_graph(checkpointer=sqlite_checkpointer(db))
    handover_ids = []
    for thread, texts in scripts.items():
        handover_ids += successful_handover_ids(verify(graph, thread, texts))
    assert len(handover_ids) == 8  # one handover per conversation
    ids = briefing_ids(root)
    assert sorted(ids) == sorted(handover_ids) and set(ids.values()) == {1}
