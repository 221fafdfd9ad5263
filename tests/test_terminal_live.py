"""A terminal that feels alive: `handover chat` driven in a pseudo-terminal.

Against the local OpenAI-compatible server, whose model (the offline one, over HTTP)
thinks 1.5 s before each answer and streams its text in pieces, the chat shows a
spinner with elapsed seconds until the first token, then the reply under the
speaker's persona marker as its pieces arrive, one line per tool call, and keeps a
history per project that the up arrow recalls, in this run and the next. Plus the
printer's words (plurals, markers, tool lines) and `--version`.
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import select
import shutil
import stat
import struct
import subprocess
import sys
import termios
import time
from importlib import metadata
from pathlib import Path

import pytest

from specialist_handover.graph.terminal import Printer, tool_line
from specialist_handover.graph.turns import STEP_EVENT, TASK_EVENT, TOKEN_EVENT
from specialist_handover.nodes.models.offline import OfflineChatModel
from tests.support import openai_server
from tests.support.models import model_responder
from tests.support.openai_server import OpenAICompatibleServer

pytestmark = pytest.mark.slow

EXE = shutil.which("handover") or str(Path(sys.executable).with_name("handover"))
THINK_SECONDS = 1.5
PIECE_SECONDS = 0.3
SPINNER = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ([a-z0-9 ]+) is thinking… (\d+)s")
QUESTION = "Where is the entry point? Please read src/app.py"


class Terminal:
    """A process on a pseudo-terminal: what it printed (with arrival times), and keys to send."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.raw = b""
        self.reads: list[tuple[float, int, int]] = []  # (when, first byte, end) of each read
        self.start = time.monotonic()

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    def _pump(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the process closed the terminal
            return False
        if not data:
            return False
        self.reads.append((time.monotonic() - self.start, len(self.raw), len(self.raw) + len(data)))
        self.raw += data
        return True

    def expect(self, pattern: str, *, since: int = 0, timeout: float = 30) -> re.Match[str]:
        """Wait until `pattern` appears in the output after character `since`."""
        end = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.text, since)
            if found:
                return found
            if time.monotonic() > end or not self._pump(0.05):
                found = re.compile(pattern).search(self.text, since)
                if found:
                    return found
                raise AssertionError(f"{pattern!r} did not appear; output:\n{self.text[-3000:]}")

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        while self._pump(0):
            if not select.select([self.master], [], [], 0)[0]:
                break
        os.close(self.master)
        return code


def terminal_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "HANDOVER_")) and k not in ("TERM", "NO_COLOR")
    }
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8", **extra)
    return env


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        'import sys\n\n\ndef main():\n    print("hello")\n\n\nif __name__ == "__main__":\n'
        "    main()\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def slow_server(monkeypatch):
    """The offline model over HTTP, thinking 1.5 s per answer, its text streamed in pieces."""
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


def chat(project: Path, server: OpenAICompatibleServer) -> Terminal:
    return Terminal(
        [EXE, "chat", "--thread", "live", "--model", "openai:gpt-4o"],
        env=terminal_env(OPENAI_API_KEY="k", OPENAI_BASE_URL=server.base_url),
        cwd=project,
    )


def test_chat_streams_with_a_spinner_shows_tool_calls_and_recalls_history(project, slow_server):
    term = chat(project, slow_server)
    term.expect("🧑 You: ")
    sent_at = len(term.text)
    term.send(QUESTION + "\r")
    # the orchestrator thinks, hands over; the explorer reads the file, then answers
    handoff = term.expect(r"🔄 Handoff to: codebase_explorer", since=sent_at)
    tool = term.expect(r'🔧 read_file\(path="src/app\.py"\) → 9 lines', since=handoff.end())
    reply = term.expect(r"🔎 \[codebase explorer\] ", since=tool.end())
    term.expect(r"\(next message goes to: codebase_explorer\)", since=reply.end())
    prompt = term.expect("🧑 You: ", since=reply.end())
    out = term.text

    # 1. a spinner with elapsed seconds until the first token, on this TTY
    spins = [m for m in SPINNER.finditer(out, sent_at, reply.start())]
    assert {m.group(1) for m in spins} >= {"a0 software orchestrator", "codebase explorer"}
    thinking_before_reply = [
        m for m in spins if m.start() > tool.end() and m.group(1) == "codebase explorer"
    ]
    assert max(int(m.group(2)) for m in thinking_before_reply) >= 1  # 1.5 s: "1s" was shown
    assert "\r\x1b[K" in out[tool.end() : reply.end()]  # wiped before the reply
    assert not SPINNER.search(out, reply.end(), prompt.start())  # not while it streams

    # 2. the reply came token by token under its marker: several reads, spread in time
    body_start = len(out[: reply.end()].encode())
    body_end = len(out[: out.index("(next message goes to", reply.end())].encode())
    reads = [when for when, first, end in term.reads if first < body_end and end > body_start]
    assert len(reads) >= 2, term.reads
    assert reads[-1] - reads[0] >= PIECE_SECONDS  # pieces arrived one by one
    assert out.count("🔎 [codebase explorer]") == 1  # the marker once, when it starts
    assert 'print("hello")' in out[reply.end() : out.index("(next message", reply.end())]

    # 3. up arrow brings the previous line back
    term.send("\x1b[A")
    term.expect(re.escape("Please read src/app.py"), since=prompt.end(), timeout=10)
    term.send("\x15exit\r")  # Ctrl-U clears the line
    assert term.close() == 0
    history = project / ".a0proj" / "chat_history"
    assert history.read_text(encoding="utf-8").splitlines() == [QUESTION]
    assert stat.S_IMODE(history.stat().st_mode) == 0o600

    # 4. the next run: who holds the thread, and the history loaded from the file
    again = chat(project, slow_server)
    again.expect(re.escape("↪ Thread 'live' continues with 🔎 [codebase explorer]."))
    prompt = again.expect("🧑 You: ")
    again.send("\x1b[A")
    again.expect(re.escape(QUESTION), since=prompt.end(), timeout=10)
    again.send("\x15exit\r")
    assert again.close() == 0
    assert len(slow_server.requests) == 3  # orchestrator, explorer's tool call, its answer


def test_no_spinner_or_escape_codes_when_stdout_is_not_a_terminal(project):
    done = subprocess.run(
        [EXE, "run", "Please design the landing page hero.", "--thread", "p"],
        cwd=project,
        env=terminal_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    assert "is thinking" not in done.stdout
    assert "🖌️ [frontend designer] I'm the frontend designer" in done.stdout


def test_version_prints_the_installed_package_version(project):
    done = subprocess.run([EXE, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"handover {metadata.version('specialist-handover')}"


def test_help_names_the_default_threads(capsys):
    from specialist_handover.graph.cli import main

    assert main(["chat", "--help"]) == 0
    chat_help = " ".join(capsys.readouterr().out.split())
    assert "(default: main)" in chat_help
    assert "--review" in chat_help and "one item per line" in chat_help
    assert main(["demo", "--help"]) == 0
    assert "demo-<random>" in " ".join(capsys.readouterr().out.split())
    assert main(["--help"]) == 0
    assert "(default: main; demo makes a new demo-<random>" in " ".join(
        capsys.readouterr().out.split()
    )


def test_printer_streams_a_reply_under_its_marker_once_and_tools_as_one_line():
    out = io.StringIO()
    printer = Printer(out)
    ns = ("codebase_explorer:1",)
    printer(TASK_EVENT, {"agent": "codebase_explorer", "node": "model", "tool": None, "ns": ns})
    call = {"name": "read_file", "args": {"path": "src/app.py"}, "id": "c1"}
    from langchain_core.messages import AIMessage, ToolMessage

    asked = AIMessage(content="", tool_calls=[call], id="m1", name="codebase_explorer")
    printer(
        STEP_EVENT, {"agent": "codebase_explorer", "node": "model", "update": {"messages": [asked]}}
    )
    result = ToolMessage(
        content="src/app.py (lines 1-41 of 41)\n     1\timport sys",
        tool_call_id="c1",
        name="read_file",
    )
    printer(
        STEP_EVENT,
        {"agent": "codebase_explorer", "node": "tools", "update": {"messages": [result]}},
    )
    for piece in (" The entry", " point is", " main()."):
        printer(
            TOKEN_EVENT,
            {
                "agent": "codebase_explorer",
                "persona_marker": "[codebase explorer]",
                "text": piece,
                "id": "m2",
                "ns": ns,
            },
        )
    reply = AIMessage(content="The entry point is main().", id="m2", name="codebase_explorer")
    printer(
        STEP_EVENT, {"agent": "codebase_explorer", "node": "model", "update": {"messages": [reply]}}
    )
    # the graph step repeats what the loop added: nothing prints twice
    printer("codebase_explorer", {"messages": [asked, result, reply]})
    assert out.getvalue() == (
        '   🔧 read_file(path="src/app.py") → 41 lines\n'
        "🔎 [codebase explorer] The entry point is main().\n"
    )
    orchestrator = AIMessage(content="Back.", id="m3", name="orchestrator")
    printer("orchestrator", {"messages": [orchestrator]})
    assert out.getvalue().endswith("🧭 [a0 software orchestrator] Back.\n")


def test_tool_lines_and_counts_read_right():
    assert tool_line("read_file", {"path": "a.py"}, "a.py (lines 1-1 of 1)\n 1\tx") == (
        '🔧 read_file(path="a.py") → 1 line'
    )
    assert tool_line("read_file", {"path": "a.py", "start_line": 3}, "a.py (lines 3-4 of 7)") == (
        '🔧 read_file(path="a.py", start_line=3) → lines 3-4 of 7'
    )
    assert tool_line("search_files", {"query": "main"}, "3 hits in 1 file for 'main'\nx") == (
        "🔧 search_files(query=\"main\") → 3 hits in 1 file for 'main'"
    )
    assert tool_line("request_full_history", {}, "Full history: 12 messages\n...") == (
        "📚 request_full_history: Full history: 12 messages"
    )
    from specialist_handover.graph.terminal import plural

    assert [plural(n, "event") for n in (0, 1, 2)] == ["0 events", "1 event", "2 events"]
