"""A process killed (SIGKILL) mid-consult resumes without asking a finished specialist again.

The model is `ChatOpenAI` over HTTP against the local OpenAI-compatible server,
which records every request and answers with the offline model. The first
process consults the solution architect and the frontend designer; the
designer's request hangs until the architect's answer is saved in the SQLite
checkpoint (a finished `Send` task's write), and the process is killed. A second
process resumes the turn: only the designer is asked again, the orchestrator
answers from both answers, and each briefing entry was written once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from specialist_handover.nodes.models.offline import OfflineChatModel
from tests.support.models import model_responder
from tests.support.openai_server import OpenAICompatibleServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
ASK = "Ask the solution architect and the frontend designer: should the hero render on the server?"

CHILD = textwrap.dedent(
    """
    import sys
    from langchain_openai import ChatOpenAI
    from specialist_handover import build_graph
    from specialist_handover.graph.turns import run_turn
    from specialist_handover.graph.checkpointers import sqlite_checkpointer

    base_url, db, root, text = sys.argv[1:5]
    model = ChatOpenAI(model="gpt-4o", base_url=base_url, api_key="k", max_retries=0)
    graph = build_graph(checkpointer=sqlite_checkpointer(db), model=model)
    values = run_turn(graph, text or None, thread_id="k", context={"project_root": root})
    print("LAST:", values["messages"][-1].content.splitlines()[0])
    """
)


def of(body: dict, profile: str) -> bool:
    first = body["messages"][0]
    return first["role"] == "system" and f"(profile `{profile}`)" in (first["content"] or "")


class HangingDesigner:
    """The offline model's answers; the designer's first request waits for `release`."""

    def __init__(self) -> None:
        self.answer = model_responder(OfflineChatModel())
        self.release = threading.Event()
        self.designer = 0

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        if "(profile `frontend_designer`)" in (messages[0].get("content") or ""):
            self.designer += 1
            if self.designer == 1:
                self.release.wait(timeout=120)
        return self.answer(messages, tools)


def _child(args: list[str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _consult_writes(db: str) -> int:
    """The saved writes to the state's `consult` key: the round, then one per answer."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM writes WHERE channel = 'consult'").fetchone()
    except sqlite3.Error:
        return 0
    return int(n)


def test_sigkill_after_one_consultant_answered_resumes_without_asking_it_again(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    db = str(tmp_path / "cp.sqlite")
    responder = HangingDesigner()
    with OpenAICompatibleServer(responder) as server:
        first = _child([server.base_url, db, str(root), ASK])
        deadline = time.monotonic() + 90
        while _consult_writes(db) < 2 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the round, then the architect's answer
        assert _consult_writes(db) >= 2, first.communicate(timeout=5)
        assert responder.designer == 1  # the designer's request is still open
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        responder.release.set()
        assert first.returncode == -signal.SIGKILL

        second = _child([server.base_url, db, str(root), ""])
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert "LAST: I asked the specialists at once." in out
        assert not server.rejected, server.rejected
        sent = list(server.requests)
    assert sum(of(body, "solution_architect") for body in sent) == 1  # not asked again
    assert sum(of(body, "frontend_designer") for body in sent) == 2  # killed, then asked again
    final = sent[-1]["messages"]
    (answer,) = [m for m in final if m["role"] == "tool"]
    assert "[1] solution_architect" in answer["content"]
    assert "[2] frontend_designer" in answer["content"]
    entries = [p.read_text() for p in (root / ".a0proj" / "handover").glob("*.md")]
    assert len(entries) == 2 and all(e.count("<!-- handover-id:") == 1 for e in entries)
