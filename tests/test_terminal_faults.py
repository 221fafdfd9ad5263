"""The terminal under faults: failed turns resume without sending the message twice, errors
name the URL they tried, concurrent runs on one thread queue, checkpoint files are owner-only."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.types import RetryPolicy

from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.cli import main
from specialist_handover.graph.turns import thread_config
from tests.support.models import check_tool_history, model_responder
from tests.support.openai_server import HTTPFault, OpenAICompatibleServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
HERO = "Please design the landing page hero with bold typography."


@pytest.fixture
def root(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.chdir(project)
    monkeypatch.setattr(
        "specialist_handover.nodes.agents.retry.MODEL_RETRY",
        RetryPolicy(
            initial_interval=0.01,
            backoff_factor=1.0,
            max_interval=0.01,
            max_attempts=10,
        ),
    )
    return project


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def stored(root: Path, thread: str) -> list:
    graph = build_graph(
        checkpointer=sqlite_checkpointer(str(root / ".a0proj" / "checkpoints.sqlite"))
    )
    return graph.get_state(thread_config(thread)).values.get("messages", [])


class Switch:
    """A responder that fails with HTTP 500 while `down`, else answers like the offline model."""

    def __init__(self) -> None:
        from specialist_handover.nodes.models.offline import OfflineChatModel

        self.down = True
        self.answer = model_responder(OfflineChatModel())

    def __call__(self, messages, tools):  # type: ignore[no-untyped-def]
        if self.down:
            raise HTTPFault(500, "the model server is down")
        return self.answer(messages, tools)


def test_a_failed_turn_is_resumed_and_its_message_is_never_stored_twice(root, monkeypatch, capsys):
    responder = Switch()
    with OpenAICompatibleServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        args = ("--model", "openai:gpt-4o", "--thread", "h")
        code, _ = run_cli("run", HERO, *args)
        assert code == 1
        err = capsys.readouterr().err
        assert "orchestrator could not get an answer from its model at " in err
        assert f"{server.base_url}/chat/completions after 3 attempts" in err
        assert "Error code: 500 - the model server is down" in err
        assert "`handover resume --thread h` finishes it" in err
        assert len(server.requests) == 3  # the graph retried; the client itself did not
        responder.down = False
        code, text = run_cli("run", HERO, *args)  # the same command again ...
        assert code == 0, capsys.readouterr().err
        assert f"♻️  Resuming the unfinished turn of: {HERO!r}" in text
        assert "🔄 Handoff to: frontend_designer" in text
        code, text = run_cli("resume", *args)
        assert code == 0 and "Nothing to resume on thread 'h'." in text
    messages = stored(root, "h")
    assert [m.content for m in messages if m.type == "human"] == [HERO]  # ... stored it once
    check_tool_history(messages)


def test_resume_command_finishes_a_failed_turn(root, monkeypatch, capsys):
    responder = Switch()
    with OpenAICompatibleServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert run_cli("run", "hello there", "--model", "openai:gpt-4o", "--thread", "r")[0] == 1
        capsys.readouterr()
        responder.down = False
        code, text = run_cli("resume", "--model", "openai:gpt-4o", "--thread", "r")
        assert code == 0 and "🧭 [a0 software orchestrator]" in text
    assert [m.type for m in stored(root, "r")] == ["human", "ai"]


def test_a_connection_error_names_the_url_it_tried(root, monkeypatch, capsys):
    with OpenAICompatibleServer(lambda _m, _t: {"content": "x"}) as server:
        closed = server.base_url
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", closed)
    code, _ = run_cli("run", "hello", "--model", "openai:gpt-4o", "--thread", "c")
    assert code == 1
    err = capsys.readouterr().err
    assert f"at {closed}/chat/completions after 3 attempts: " in err
    assert "ConnectionError: Connection error." in err


def test_checkpoint_file_and_folders_are_owner_only(root):
    assert run_cli("run", "hello", "--thread", "p")[0] == 0
    db = root / ".a0proj" / "checkpoints.sqlite"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / ".a0proj").stat().st_mode) == 0o700


def test_four_processes_on_one_thread_queue_and_every_turn_is_stored(root):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(REPO)
    texts = [f"Note {i}: we decided to keep invoice ids stable." for i in range(4)]
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "specialist_handover.graph.cli",
                "run",
                text,
                "--thread",
                "shared",
                "--project-root",
                str(root),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for text in texts
    ]
    results = [run.communicate(timeout=180) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], [err for _, err in results]
    messages = stored(root, "shared")
    asked = [m.content for m in messages if m.type == "human"]
    assert sorted(asked) == sorted(texts)  # all four, once each
    check_tool_history(messages)
    # every user turn was answered before the next one
    kinds = [m.type for m in messages]
    assert all(kinds[i + 1] != "human" for i, k in enumerate(kinds) if k == "human")
