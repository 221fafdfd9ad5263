"""Asking the person: line editing (`readline`) on a terminal, plain lines from a pipe, and the
chat's history per project (`<project_root>/.a0proj/chat_history`, 0600).

Without the `readline` module (some Python builds) the chat still works: no line
editing, and the history file is still written, for the next run that has it.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import TextIO

from ...nodes.briefing.writer import STATE_DIR
from .printer import Printer

HISTORY_FILE = "chat_history"
HISTORY_LIMIT = 1000


def load_readline() -> ModuleType | None:
    """The `readline` module, or None when this Python has none."""
    try:
        import readline
    except ImportError:  # pragma: no cover - depends on the Python build
        return None
    return readline


def _interactive(stdin: TextIO, out: TextIO) -> bool:
    try:
        return stdin is sys.stdin and out is sys.stdout and stdin.isatty() and out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class Prompter:
    """Reads one answer per `ask(prompt)`; EOFError at the end of input.

    On a terminal it is `input()`, with `readline`'s line editing when loaded; from
    a pipe the prompt and the answer are printed, so a transcript reads like the chat.
    """

    def __init__(self, printer: Printer, stdin: TextIO | None = None) -> None:
        self.printer = printer
        self.stdin = stdin if stdin is not None else sys.stdin
        self.interactive = _interactive(self.stdin, printer.out)

    def ask(self, prompt: str) -> str:
        self.printer.idle()
        if self.interactive:
            return input(prompt)
        self.printer.write(prompt)
        line = self.stdin.readline()
        if not line:
            self.printer.say("")
            raise EOFError
        answer = line.rstrip("\r\n")
        self.printer.say(answer)
        return answer


class ChatHistory:
    """The chat's lines, per project: loaded into `readline` at start, appended as you go.

    The file holds one line per entry (plain text, the same with GNU readline and
    libedit), is created 0600 inside the 0700 `.a0proj/` folder, and keeps the last
    `HISTORY_LIMIT` entries. Any failure to read or write it is said once; the chat
    goes on without it.
    """

    def __init__(
        self,
        project_root: str,
        printer: Printer,
        *,
        readline: ModuleType | None = None,
        limit: int = HISTORY_LIMIT,
    ) -> None:
        self.path = os.path.join(project_root, STATE_DIR, HISTORY_FILE)
        self.printer = printer
        self.readline = readline
        self.limit = limit
        self.failed = False
        self._last = ""

    def load(self) -> list[str]:
        """Read the file into readline's history; the entries, oldest first."""
        if self.readline is not None:
            try:
                self.readline.set_auto_history(False)  # only chat lines, not review answers
            except AttributeError:  # pragma: no cover - very old readline modules
                pass
            self.readline.set_history_length(self.limit)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return []
        except OSError as exc:
            self._failed("read", exc)
            return []
        with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
            entries = [line.rstrip("\n") for line in fh if line.strip()]
        if len(entries) > 2 * self.limit:  # keep the file from growing without end
            self._rewrite(entries[-self.limit :])
        entries = entries[-self.limit :]
        if self.readline is not None:
            self.readline.clear_history()
            for entry in entries:
                self.readline.add_history(entry)
        self._last = entries[-1] if entries else ""
        return entries

    def add(self, line: str) -> None:
        """Remember a line the person sent (not a repeat of the one before)."""
        line = " ".join(line.splitlines()).strip()
        if not line or line == self._last:
            return
        self._last = line
        if self.readline is not None:
            self.readline.add_history(line)
        if self.failed:
            return
        try:
            folder = os.path.dirname(self.path)
            if os.path.islink(folder):
                raise OSError(f"refusing a symlinked folder: {folder}")
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd = os.open(
                self.path,
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, (line + "\n").encode("utf-8", errors="replace"))
            finally:
                os.close(fd)
        except OSError as exc:
            self._failed("write", exc)

    def _rewrite(self, entries: list[str]) -> None:
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
                fh.write("".join(entry + "\n" for entry in entries))
            os.replace(temp, self.path)
        except OSError as exc:
            self._failed("trim", exc)
            try:
                os.unlink(temp)
            except OSError:
                pass

    def _failed(self, what: str, exc: OSError) -> None:
        self.failed = True
        self.printer.say(f"(chat history: cannot {what} {self.path}: {exc}; going on without it)")
