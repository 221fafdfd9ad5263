"""read_file: numbered lines of a UTF-8 text file, a window at a time; binary files refused."""

from __future__ import annotations

import os
import stat

from ....state import TokenCounter
from .arguments import _check_budget, _check_int, _check_text
from .errors import _guarded, _Refused, _show
from .limits import BINARY_PROBE_BYTES, MAX_READ_LINES, WORKSPACE_MAX_TOKENS
from .paths import _opened, _resolve, _Target
from .results import _cut_notice, _plural, _printable, _render


def _regular_size(fd: int, given: str) -> int:
    """The size of an open regular file; a refusal for anything else."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _Refused(
            f"ERROR: path {_show(given)} is not a regular file; pick a text file from "
            "list_files('.')."
        )
    return info.st_size


def _binary_refusal(given: str) -> _Refused:
    """The refusal for a file that is not UTF-8 text."""
    return _Refused(
        f"ERROR: path {_show(given)} is a binary file (NUL bytes or not UTF-8); read_file shows "
        "text files only, so pick a text file or search_files for text."
    )


def _line_text(raw: bytes) -> str:
    """One line's text without its line ending (raises UnicodeDecodeError when not UTF-8)."""
    return raw.decode("utf-8").removesuffix("\n").removesuffix("\r")


def _read_lines(target: _Target, given: str, start: int, limit: int) -> tuple[list[str], int]:
    """Lines start..start+limit-1 of a text file and its total line count, streamed."""
    kept: list[str] = []
    total = 0
    with _opened(target, given) as fd:
        _regular_size(fd, given)
        with open(fd, "rb", closefd=False) as handle:
            if b"\0" in handle.read(BINARY_PROBE_BYTES):
                raise _binary_refusal(given)
            handle.seek(0)
            try:
                for total, raw in enumerate(handle, 1):
                    text = _line_text(raw)
                    if start <= total < start + limit:
                        kept.append(text)
            except UnicodeDecodeError:
                raise _binary_refusal(given) from None
    return kept, total


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
        notice=lambda shown: _cut_notice(
            max_tokens,
            total - (start + shown - 1),
            f"call read_file({name!r}, start_line={start + shown}) to continue",
        ),
    )
