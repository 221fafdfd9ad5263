"""Asking the person: line editing (`readline`) on a terminal, plain lines from a pipe, and the
chat's history per project (`<project_root>/.a0proj/chat_history`, 0600).

Without the `readline` module (some Python builds) the chat still works: no line
editing, and the history file is still written, for the next run that has it.
"""

from __future__ import annotations

import fcntl
import os
import sys
from types import ModuleType
from typing import TextIO

from ...nodes.briefing.writer import STATE_DIR
from ...nodes.redaction import redact
from ...state.linksafe import write_all
from ..private_files import UnsafePathError, open_private_file
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
        """The answer; EOFError at the end of input, KeyboardInterrupt on Ctrl-C (either way
        the line after the prompt is ended)."""
        self.printer.idle()
        try:
            if self.interactive:
                return input(prompt)
            self.printer.write(prompt)
            line = self.stdin.readline()
            if not line:
                raise EOFError
        except (EOFError, KeyboardInterrupt):
            self.printer.say("")  # the cursor is still after the prompt
            raise
        answer = line.rstrip("\r\n")
        self.printer.say(answer)
        return answer


class ChatHistory:
    """The chat's lines, per project: loaded into `readline` at start, appended as you go.

    The file holds one line per entry (plain text, the same with GNU readline and
    libedit), is created 0600 inside the 0700 `.a0proj/` folder, and keeps the last
    `HISTORY_LIMIT` entries. It is read and written by us through a descriptor
    opened like every private file (`graph/private_files.py`: no symlinked folder or file,
    no hard link, the user's own), never by readline's own history functions, which
    follow links. Secrets are redacted from a line before it is written (the line
    recalled in this session stays as typed). Any failure to read or write it is
    said once, with the fix; the chat goes on without it.
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
            self.readline.set_auto_history(False)  # only chat lines, not review answers
            self.readline.set_history_length(self.limit)
        try:
            opened = open_private_file(
                self.path, os.O_RDWR | os.O_APPEND, create=False, what="chat history"
            )
            try:
                fcntl.flock(opened.fd, fcntl.LOCK_EX)  # another chat on this project may append
                entries = _entries(os.pread(opened.fd, os.fstat(opened.fd).st_size, 0))
                if len(entries) > 2 * self.limit:  # keep the file from growing without end
                    entries = entries[-self.limit :]
                    os.ftruncate(opened.fd, 0)
                    write_all(opened.fd, _history_bytes(entries))
            finally:
                os.close(opened.fd)  # closing releases the flock
        except FileNotFoundError:  # no history yet
            return []
        except OSError as exc:
            self._failed("read", exc)
            return []
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
            opened = open_private_file(self.path, os.O_WRONLY | os.O_APPEND, what="chat history")
            try:
                fcntl.flock(opened.fd, fcntl.LOCK_EX)
                write_all(opened.fd, _history_bytes([line]))
            finally:
                os.close(opened.fd)
        except OSError as exc:
            self._failed("write", exc)

    def _failed(self, what: str, exc: OSError) -> None:
        self.failed = True
        reason = (
            str(exc) if isinstance(exc, UnsafePathError) else f"cannot {what} {self.path}: {exc}"
        )
        self.printer.say(f"(chat history: {reason}; going on without it)")


def _entries(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    return [line for line in text.splitlines() if line.strip()]


def _history_bytes(entries: list[str]) -> bytes:
    """The lines as written: secrets redacted, one line each."""
    text = "".join(" ".join(redact(entry).text.splitlines()) + "\n" for entry in entries)
    return text.encode("utf-8", errors="replace")
