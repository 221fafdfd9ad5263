"""The terminal's edges and the package's face: Ctrl-C, exit codes, help, version, the demo.

- Ctrl-C during a turn stops it at its next step, tool call, model call or token
  and the chat goes on; the thread keeps what the finished steps wrote, the next
  message finishes the stopped turn first, and nothing is stored twice. Ctrl-C
  at the prompt clears the line; Ctrl-D and `exit` leave.
- `handover run --review` whose input ends before the review is answered exits 3.
- Every subcommand's `--help` says what it does.
- `specialist_handover.__version__`, `dir()` and `help()` show the public API.
- The demo shows no failing tool call, and counts read right.
- Slow tests carry the `slow` marker and `make test-fast` leaves them out.
"""

from __future__ import annotations

import ast
import io
import os
import pydoc
import re
import signal
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import specialist_handover
from specialist_handover import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.cli import DEMO_SCRIPT, main
from specialist_handover.graph.terminal import Printer, StopRequest, TurnStopped
from specialist_handover.graph.turns import TASK_EVENT, has_unfinished_step, run_turn, thread_config
from specialist_handover.nodes.handover.node import trail_record
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.state import HandoverContext
from tests.support import openai_server
from tests.support.models import RecordingOfflineModel, check_tool_history, model_responder
from tests.support.openai_server import OpenAICompatibleServer
from tests.test_terminal_live import EXE, Terminal, terminal_env

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Where is the entry point? Please read src/app.py"
BACK = "Thanks, that's all. Go back to the orchestrator please."
HERO = "Please design the landing page hero."
PROMPT = "🧑 You: "


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        'import sys\n\n\ndef main():\n    print("hello")\n\n\nif __name__ == "__main__":\n'
        "    main()\n",
        encoding="utf-8",
    )
    for name in ("OPENAI_API_KEY", "HANDOVER_MODEL", "HANDOVER_PROFILES", "HANDOVER_PROJECT_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HANDOVER_REVIEW_HANDOVERS", raising=False)
    monkeypatch.chdir(root)
    return root


def run_cli(monkeypatch, stdin: str, *argv: str) -> tuple[int, str]:
    """`handover ...` in this process, its answers read from `stdin`."""
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def stored(root: Path, thread: str) -> list:
    graph = build_graph(
        checkpointer=sqlite_checkpointer(str(root / ".a0proj" / "checkpoints.sqlite"))
    )
    return graph.get_state(thread_config(thread)).values.get("messages", [])


# --- 1. Ctrl-C ----------------------------------------------------------------------------

THINK_SECONDS = 0.5
PIECE_SECONDS = 0.4


@pytest.fixture
def slow_model(monkeypatch):
    """The offline model over HTTP: it thinks before each answer and streams it in 3 pieces."""
    answer = model_responder(OfflineChatModel())

    def think_then_answer(messages, tools):  # type: ignore[no-untyped-def]
        time.sleep(THINK_SECONDS)
        return answer(messages, tools)

    pieces = openai_server._stream_chunks

    def slow_pieces(base, message, finish, usage):  # type: ignore[no-untyped-def]
        for payload in pieces(base, message, finish, usage):
            if payload["choices"] and payload["choices"][0]["delta"].get("content"):
                time.sleep(PIECE_SECONDS)
            yield payload

    monkeypatch.setattr(openai_server, "_stream_chunks", slow_pieces)
    with OpenAICompatibleServer(think_then_answer) as server:
        yield server


def keyboard(argv: list[str], *, env: dict[str, str], cwd: Path) -> Terminal:
    """A process whose controlling terminal is the pty, so Ctrl-C (`\\x03`) is a keyboard's:
    the terminal sends SIGINT to it. SIGINT is set back to its default first, as a person's
    shell has it: a suite started in the background of a script inherits SIGINT ignored,
    and Python then leaves it ignored (Ctrl-C would do nothing)."""
    take_terminal = (
        "import fcntl, os, signal, sys, termios; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.argv[1], sys.argv[1:])"
    )
    return Terminal([sys.executable, "-c", take_terminal, *argv], env=env, cwd=cwd)


@pytest.mark.slow
def test_ctrl_c_during_a_reply_stops_the_turn_and_the_next_message_finishes_it_once(
    project, slow_model
):
    term = keyboard(
        [EXE, "chat", "--thread", "live", "--model", "openai:gpt-4o"],
        env=terminal_env(OPENAI_API_KEY="k", OPENAI_BASE_URL=slow_model.base_url),
        cwd=project,
    )
    prompt = term.expect(PROMPT)
    term.send(QUESTION + "\r")
    tool = term.expect(r'🔧 read_file\(path="src/app\.py"\) → 9 lines', since=prompt.end())
    reply = term.expect(r"🔎 \[codebase explorer\] \S", since=tool.end())  # its first piece
    term.send("\x03")
    stopped = term.expect(r"⏹️ +Stopped\. Your message is saved", since=reply.start(), timeout=10)
    prompt = term.expect(PROMPT, since=stopped.end(), timeout=10)
    assert term.proc.poll() is None  # still chatting
    assert "main()" not in term.text[reply.start() : stopped.start()]  # the rest never showed
    assert "Traceback" not in term.text and "callback" not in term.text  # no log noise

    # the next message: the stopped turn is finished first (once), then the message answered
    term.send(BACK + "\r")
    resumed = term.expect(re.escape("♻️  Resuming"), since=prompt.end())
    answer = term.expect(r"🔎 \[codebase explorer\] \S", since=resumed.end())
    back = term.expect(
        re.escape("🧭 [a0 software orchestrator] Back with the orchestrator."), since=answer.end()
    )
    term.expect(re.escape("(next message goes to: orchestrator)"), since=back.end())
    term.expect(PROMPT, since=back.end())
    term.send("\x04")  # Ctrl-D leaves
    assert term.close() == 0
    assert "handover: error" not in term.text and "Traceback" not in term.text

    assert slow_model.rejected == [] and slow_model.errors == []  # no request was refused
    messages = stored(project, "live")
    check_tool_history(messages)
    assert [m.content for m in messages if m.type == "human"] == [QUESTION, BACK]
    explorer = [m for m in messages if m.name == "codebase_explorer" and m.type == "ai"]
    assert [bool(m.tool_calls) for m in explorer] == [True, False, True]  # read, answer, return
    assert 'print("hello")' in str(explorer[1].content)  # the answer, stored once


@pytest.mark.slow
def test_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_or_exit_still_leave(project):
    def interrupt(term: Terminal, typed: str, since: int) -> int:
        """Type `typed`, see it echoed, then Ctrl-C; a new prompt comes.

        The pause is a person's: a SIGINT that lands while readline is still handling the
        last key (it echoes before it returns) waits for the next key (CPython's readline)."""
        term.send(typed)
        shown = term.expect(re.escape(typed), since=since)
        time.sleep(0.3)
        term.send("\x03")
        return term.expect(PROMPT, since=shown.end()).end()

    term = keyboard([EXE, "chat", "--thread", "keys"], env=terminal_env(), cwd=project)
    at = interrupt(term, "half a thought", term.expect(PROMPT).end())
    at = interrupt(term, "and another", at)
    term.send("exit\r")  # "exit" alone: the lines were cleared
    assert term.close() == 0
    assert "Traceback" not in term.text and "interrupted" not in term.text

    again = keyboard([EXE, "chat", "--thread", "keys"], env=terminal_env(), cwd=project)
    interrupt(again, "never mind", again.expect(PROMPT).end())
    again.send("\x04")
    assert again.close() == 0
    assert stored(project, "keys") == []  # nothing was sent
    history = project / ".a0proj" / "chat_history"
    assert not history.exists() or "thought" not in history.read_text(encoding="utf-8")


def _stop_when(stop: StopRequest, node: str, *, inner: bool, by_signal: bool = False):  # type: ignore[no-untyped-def]
    """An `on_event` that asks the turn to stop when `node` starts (in an agent's loop when
    `inner`), by Ctrl-C's signal or directly."""
    fired: list[str] = []

    def on_event(event: str, update: dict) -> None:  # type: ignore[type-arg]
        if event != TASK_EVENT or fired or update["node"] != node or bool(update["ns"]) != inner:
            return
        fired.append(node)
        if by_signal:
            os.kill(os.getpid(), signal.SIGINT)
        else:
            stop.request()

    return on_event


@pytest.mark.parametrize(
    ("node", "inner", "by_signal"),
    [
        ("handover", False, False),  # the orchestrator's handover call is stored, not answered
        ("tools", True, False),  # the explorer's read_file call, not run yet
        ("model", True, True),  # the explorer asking its model; by SIGINT, as Ctrl-C sends
    ],
)
def test_a_stopped_turn_leaves_a_thread_the_next_message_finishes_and_nothing_twice(
    project, node, inner, by_signal
):
    model = RecordingOfflineModel()  # checks every request's tool-call history
    stop = StopRequest()
    graph = stop.bind(build_graph(checkpointer=InMemorySaver(), model=model))
    ctx = HandoverContext(project_root=str(project), model="offline")
    on_event = _stop_when(stop, node, inner=inner, by_signal=by_signal)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(TurnStopped), stop.catching_ctrl_c():
        run_turn(graph, QUESTION, thread_id="t", context=ctx, on_event=on_event, live=True)
    assert signal.getsignal(signal.SIGINT) is before  # given back
    assert has_unfinished_step(graph, thread_config("t"))
    messages = graph.get_state(thread_config("t")).values["messages"]
    assert [m.content for m in messages if m.type == "human"] == [QUESTION]

    values = run_turn(graph, BACK, thread_id="t", context=ctx, live=True)  # a new request
    check_tool_history(values["messages"])
    assert [m.content for m in values["messages"] if m.type == "human"] == [QUESTION, BACK]
    answers = [
        m
        for m in values["messages"]
        if m.type == "ai" and m.name == "codebase_explorer" and not m.tool_calls
    ]
    assert len(answers) == 1 and 'print("hello")' in str(answers[0].content)
    assert values["active_agent"] == "orchestrator"
    assert not has_unfinished_step(graph, thread_config("t"))


# --- 2. a review left waiting -------------------------------------------------------------


def test_run_review_whose_input_ends_before_the_answer_exits_3_and_says_so(
    project, monkeypatch, capsys
):
    code, text = run_cli(monkeypatch, "", "run", HERO, "--review", "--thread", "w")
    assert code == 3
    assert "⏸️  The handover waits for your review" in text
    err = capsys.readouterr().err
    assert "a handover on thread 'w' waits for your review" in err
    assert "handover resume --review --thread w" in err
    code, text = run_cli(monkeypatch, "a\n", "resume", "--review", "--thread", "w")
    assert code == 0, capsys.readouterr().err
    assert "🔄 Handoff to: frontend_designer" in text
    code, _ = run_cli(monkeypatch, "", "run", "Make it darker.", "--review", "--thread", "w")
    assert code == 0  # nothing to review: done


def test_resume_review_that_leaves_the_review_waiting_exits_3_too(project, monkeypatch, capsys):
    assert run_cli(monkeypatch, "", "run", HERO, "--review", "--thread", "v")[0] == 3
    capsys.readouterr()
    code, _ = run_cli(monkeypatch, "", "resume", "--review", "--thread", "v")
    assert code == 3 and "waits for your review" in capsys.readouterr().err


# --- 3. help -----------------------------------------------------------------------------


def subcommands(capsys) -> list[str]:
    assert main(["--help"]) == 0
    usage = capsys.readouterr().out
    found = re.search(r"\{([a-z,]+)\}", usage)
    assert found, usage
    return found.group(1).split(",")


def test_every_subcommand_help_says_what_it_does(capsys):
    commands = subcommands(capsys)
    assert {"chat", "run", "demo", "trail", "resume", "profiles"} <= set(commands)
    for command in commands:
        assert main([command, "--help"]) == 0
        blocks = capsys.readouterr().out.strip().split("\n\n")
        assert blocks[0].startswith("usage: handover " + command), command
        description = " ".join(blocks[1].split())
        assert not description.endswith(":"), f"{command} --help has no description"
        assert len(description.split()) >= 5 and description.endswith("."), (command, description)


def test_top_level_help_names_the_exit_codes(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "3 a handover waits for your review" in text
    assert "130 interrupted" in text


# --- 4. version, dir, help ----------------------------------------------------------------


def test_version_dir_and_help_show_the_public_api(capsys):
    package = specialist_handover
    assert package.__version__ == metadata.version("specialist-handover")
    listed = dir(package)
    assert set(package.__all__) <= set(listed) and "__version__" in listed
    assert {"TYPE_CHECKING", "Any", "annotations"}.isdisjoint(listed)
    assert not [name for name in listed if name.startswith("_") and not name.endswith("__")]
    docstring = package.__doc__ or ""
    for name in package.__all__:  # one line each
        assert re.search(rf"^ *`?{name}`?:? +\S.*$", docstring, re.M), name
    shown = pydoc.render_doc(package, renderer=pydoc.plaintext)
    for name in package.__all__:
        assert re.search(rf"\b{name}\b", shown), name
    assert re.search(rf"VERSION\s+{re.escape(package.__version__)}", shown)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"handover {package.__version__}\n"


def test_version_without_installed_metadata_says_so(monkeypatch):
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert specialist_handover.__version__ == "0+unknown"
    from specialist_handover.graph.cli import package_version

    assert package_version() == "0+unknown"


# --- 5. the demo and its counts -----------------------------------------------------------

COUNT_NOUNS = r"(?:event|token|line|message|profile|specialist|turn|hit|file|attempt|handover)"
ONE_PLURAL = re.compile(rf"(?<![\d.,\-])\b1 {COUNT_NOUNS}s\b")


def test_the_demo_shows_no_failing_tool_call(project, monkeypatch):
    assert not any("tests/" in line or ".py" in line for line in DEMO_SCRIPT)
    code, text = run_cli(monkeypatch, "", "demo", "--thread", "d")
    assert code == 0
    assert "ERROR" not in text and "did not work" not in text
    assert "🔄 Handoff to: test_debug_engineer" in text  # the flaky test still goes to them
    assert "🐞 [test debug engineer]" in text
    assert not ONE_PLURAL.search(text)
    code, text = run_cli(monkeypatch, "", "demo", "--scenario", "deep", "--thread", "deep")
    assert code == 0 and "ERROR" not in text and "did not work" not in text
    assert not ONE_PLURAL.search(text)


def test_counts_in_the_trail_and_the_chat_read_right(project, monkeypatch):
    code, _ = run_cli(monkeypatch, "", "run", HERO, "--thread", "c")
    assert code == 0
    code, text = run_cli(monkeypatch, "trail\nexit\n", "chat", "--thread", "c")
    assert code == 0
    assert "Handover trail of thread 'c' (1 event):" in text
    assert not ONE_PLURAL.search(text)
    code, text = run_cli(monkeypatch, "", "trail", "--thread", "c")
    assert code == 0 and "(1 event)" in text and not ONE_PLURAL.search(text)

    out = io.StringIO()
    Printer(out)(
        "handover",
        {
            "handovers": [
                trail_record(
                    "handover",
                    from_agent="orchestrator",
                    to_agent="hacker",
                    reason="a pentest",
                    topic="login",
                    return_condition="user_request",
                    estimated_tokens=1,
                    briefing_path="/p/.a0proj/handover/hacker-login.md",
                )
            ]
        },
    )
    assert "📦 Package: 1 token, return condition user_request;" in out.getvalue()


# --- 6. the slow marker and `make test-fast` ----------------------------------------------

SLOW_FILES = (
    "test_fault_harness.py",
    "test_rerun_after_kill.py",
    "test_crash_during_tool.py",
    "test_concurrency.py",
    "test_briefing_concurrency.py",
    "test_terminal_faults.py",
    "test_storage.py",
    "test_persistence.py",
    "test_server.py",
    "test_terminal_live.py",
    "test_packaging.py",
    "test_postgres.py",
)


def _module_marks(path: Path) -> str:
    """The source of a test module's `pytestmark` value ("" without one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return ast.unparse(node.value)
    return ""


def test_slow_tests_are_marked_and_make_test_fast_leaves_them_out():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)
    for name in SLOW_FILES:
        assert "pytest.mark.slow" in _module_marks(REPO / "tests" / name), name
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^test-fast:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert target, "no test-fast target"
    assert '-m "not slow and not browser"' in target.group(1) and "-m pytest -q" in target.group(1)
    assert re.search(r"^\.PHONY:.*\btest-fast\b", makefile, re.M)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    test_command = next(
        c for c in re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", readme) if "pytest" in c
    )
    assert " -m " not in test_command.split("-m pytest", 1)[1]  # it still runs everything
