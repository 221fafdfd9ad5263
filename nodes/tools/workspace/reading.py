"""read_file: numbered lines of a UTF-8 text file, a window at a time; binary files refused.

The file is read READ_CHUNK_BYTES at a time and each line keeps at most MAX_LINE_CHARS
characters (a marker says how many more were cut), so memory stays bounded whatever the
file holds. Control characters other than tab are shown as visible symbols
(`results._visible`), so an ANSI escape in a file never reaches a terminal raw.
"""

from __future__ import annotations

import codecs
import os
import stat

from ....state import TokenCounter
from .arguments import _check_budget, _check_int, _check_text
from .errors import _guarded, _Refused, _show
from .limits import (
    BINARY_PROBE_BYTES,
    MAX_LINE_CHARS,
    MAX_READ_LINES,
    READ_CHUNK_BYTES,
    WORKSPACE_MAX_TOKENS,
)
from .paths import _opened, _resolve, _Target
from .results import _plural, _printable, _render, _visible


def _binary_refusal(given: str) -> _Refused:
    """The refusal for a file that is not UTF-8 text."""
    return _Refused(
        f"ERROR: path {_show(given)} is a binary file (NUL bytes or not UTF-8); read_file shows "
        "text files only, so pick a text file or search_files for text."
    )


class _Window:
    """Lines first..last of a text fed in pieces, each cut to MAX_LINE_CHARS, and the count of
    all lines. Lines outside the window are only counted, so memory stays bounded whatever
    the file holds (one 200 MB line, or 200 million short ones)."""

    def __init__(self, first: int, limit: int) -> None:
        self.first, self.last = first, first + limit - 1
        self.kept: list[str] = []
        self.line = 1  # the number of the line being read
        self.open = False  # the current line has characters and no newline yet
        self.head: list[str] = []  # its first MAX_LINE_CHARS + 1 characters
        self.held = 0  # characters in head
        self.length = 0  # all its characters so far
        self.end = ""  # its last character

    def feed(self, text: str) -> None:
        """Take the next piece of the decoded file."""
        pos = 0
        while pos < len(text):
            if self.line < self.first or self.line > self.last:  # outside: count only
                newlines = text.count("\n", pos)
                skip = self.first - self.line if self.line < self.first else newlines + 1
                if newlines < skip:
                    self.line += newlines
                    self.open = not newlines or not text.endswith("\n")
                    return
                for _ in range(skip):
                    pos = text.index("\n", pos) + 1
                self.line += skip
                self.open = False
                continue
            cut = text.find("\n", pos)
            piece = text[pos:] if cut < 0 else text[pos:cut]
            self._extend(piece)
            if cut < 0:
                return
            self._close()
            pos = cut + 1

    def finish(self) -> int:
        """Close an unterminated last line; the file's line count."""
        if not self.open:
            return self.line - 1
        if self.first <= self.line <= self.last:
            self._close()
            return self.line - 1
        return self.line

    def _extend(self, piece: str) -> None:
        if not piece:
            return
        self.open = True
        if self.held <= MAX_LINE_CHARS:
            taken = piece[: MAX_LINE_CHARS + 1 - self.held]
            self.head.append(taken)
            self.held += len(taken)
        self.length += len(piece)
        self.end = piece[-1]

    def _close(self) -> None:
        """End the current line: keep its text (CR of a CRLF ending dropped), cut if long."""
        length = self.length - (self.end == "\r")
        text = "".join(self.head)[: min(length, MAX_LINE_CHARS)]
        self.kept.append(_visible(text) + _line_cut(length - len(text)))
        self.line += 1
        self.open, self.head, self.held, self.length, self.end = False, [], 0, 0, ""


def _line_cut(cut: int) -> str:
    """The marker ending a line longer than MAX_LINE_CHARS ('' when nothing was cut)."""
    if cut <= 0:
        return ""
    return (
        f" …[line cut: {cut:,} more characters; read_file shows at most "
        f"{MAX_LINE_CHARS:,} characters of a line]"
    )


def _read_lines(target: _Target, given: str, start: int, limit: int) -> tuple[list[str], int]:
    """Lines start..start+limit-1 of a text file and its total line count, in bounded chunks."""
    window = _Window(start, limit)
    decoder = codecs.getincrementaldecoder("utf-8")()  # strict: not UTF-8 is binary
    with _opened(target, given) as fd:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Refused(
                f"ERROR: path {_show(given)} is not a regular file; pick a text file from "
                "list_files('.')."
            )
        if b"\0" in os.pread(fd, BINARY_PROBE_BYTES, 0):
            raise _binary_refusal(given)
        try:
            while chunk := os.read(fd, READ_CHUNK_BYTES):
                window.feed(decoder.decode(chunk))
            window.feed(decoder.decode(b"", final=True))
        except UnicodeDecodeError:
            raise _binary_refusal(given) from None
    return window.kept, window.finish()


@_guarded("read_file")
def read_file(
    project_root: str,
    path: str,
    start_line: int = 1,
    max_lines: int = 400,
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """Numbered lines of a text file (like `cat -n`), a window at a time, for an agent to read."""
    _check_budget(counter, max_tokens)
    _check_text(path, "path", "src/app.py")
    start = _check_int(start_line, "start_line", 1)
    limit = min(_check_int(max_lines, "max_lines", 400), MAX_READ_LINES)
    target = _resolve(project_root, path)
    if target.kind == "dir":
        raise _Refused(
            f"ERROR: path {_show(path)} is a folder, not a file; call "
            f"list_files({target.shown!r}) to see its files, then read_file one of them."
        )
    lines, total = _read_lines(target, path, start, limit)
    name = _printable(target.shown)
    if total == 0:
        return f"{name} (empty file, 0 lines)"
    if start > total:
        raise _Refused(
            f"ERROR: start_line {start} is past the end of {name!r} ({_plural(total, 'line')}); "
            f"pass start_line between 1 and {total}."
        )
    end = start + len(lines) - 1
    tail = []
    if end < total:
        tail = [
            f"... {_plural(total - end, 'more line')}; call read_file({name!r}, "
            f"start_line={end + 1}) to continue"
        ]
    return _render(
        lambda shown: [
            f"{name} (lines {start}-{start + shown - 1} of {total})"
            if shown
            else f"{name} ({_plural(total, 'line')})"
        ],
        [f"{number:>6}\t{text}" for number, text in enumerate(lines, start)],
        tail,
        counter=counter,
        max_tokens=max_tokens,
        hint=lambda shown: f"call read_file({name!r}, start_line={start + shown}) to continue",
        more=total - end,
    )
