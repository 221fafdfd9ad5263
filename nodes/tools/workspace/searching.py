"""search_files: lines containing a plain text, any case, in the project's text files."""

from __future__ import annotations

import os
import stat
from contextlib import closing
from dataclasses import dataclass

from ....state import TokenCounter
from ....state.linksafe import open_file
from .arguments import _check_budget, _check_query
from .errors import _guarded
from .limits import (
    BINARY_PROBE_BYTES,
    MAX_HIT_CHARS,
    MAX_HITS,
    MAX_SEARCH_FILE_BYTES,
    WORKSPACE_MAX_TOKENS,
)
from .paths import _opened, _resolve
from .results import _plural, _printable, _render, _visible
from .walk import _walk, _walk_notes_line, _WalkNotes


@dataclass
class _SearchNotes:
    """What a search skipped, so the result can say so."""

    searched: int = 0
    binary: int = 0
    big: int = 0
    links: int = 0
    unreadable: int = 0


def _text_of(fd: int, notes: _SearchNotes) -> str | None:
    """The UTF-8 text of an open file for search, or None (counted in notes) when skipped."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_size > MAX_SEARCH_FILE_BYTES:
        notes.big += 1
        return None
    data = b""
    while chunk := os.read(fd, MAX_SEARCH_FILE_BYTES + 1 - len(data)):
        data += chunk
        if len(data) > MAX_SEARCH_FILE_BYTES:
            notes.big += 1
            return None
    try:
        if b"\0" in data[:BINARY_PROBE_BYTES]:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        notes.binary += 1
        return None
    notes.searched += 1
    return text


def _text_at(parent: int, name: str, notes: _SearchNotes) -> str | None:
    """The text of a file in an open folder, opened with O_NOFOLLOW; None when skipped."""
    try:
        fd, _ = open_file(name, parent, os.O_RDONLY)
        try:
            return _text_of(fd, notes)
        finally:
            os.close(fd)
    except OSError:
        notes.unreadable += 1
        return None


def _clip(line: str, query: str) -> str:
    """A hit's line, stripped and clipped to about MAX_HIT_CHARS around the match."""
    text = line.strip()
    if len(text) <= MAX_HIT_CHARS:
        return text
    at = text.lower().find(query.lower())
    if at < 0 or at + len(query) <= MAX_HIT_CHARS:
        return text[:MAX_HIT_CHARS] + " …"
    begin = max(0, at - MAX_HIT_CHARS // 3)
    return "… " + text[begin : begin + MAX_HIT_CHARS] + " …"


def _hits_in(rel: str, text: str, query: str, hits: list[str]) -> int:
    """Append `rel:line: text` for each line containing query (case-insensitive); count them."""
    needle = query.casefold()
    if needle not in text.casefold():
        return 0
    found = 0
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line.casefold() and len(hits) < MAX_HITS:
            hits.append(f"{rel}:{number}: {_visible(_clip(line, query))}")
            found += 1
    return found


def _search_notes_line(notes: _SearchNotes, walked: _WalkNotes) -> str | None:
    """One line saying what a search skipped, or None when it skipped nothing."""
    megabytes = MAX_SEARCH_FILE_BYTES // (1024 * 1024)
    said = [
        f"{count} {word if count == 1 else words}"
        for count, word, words in (
            (notes.binary, "binary file", "binary files"),
            (notes.big, f"file over {megabytes} MB", f"files over {megabytes} MB"),
            (notes.links, "symlink (never followed)", "symlinks (never followed)"),
            (notes.unreadable, "unreadable file", "unreadable files"),
        )
        if count
    ]
    folders = _walk_notes_line(walked, "searched")
    line = "Skipped: " + ", ".join(said) + "." if said else ""
    return " ".join(part for part in (line, folders) if part) or None


@_guarded("search_files")
def search_files(
    project_root: str,
    query: str,
    path: str = ".",
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """Lines containing `query` (plain text, any case) in the text files under `path`."""
    _check_budget(counter, max_tokens)
    text = _check_query(query)
    target = _resolve(project_root, path)
    notes, walked, files = _SearchNotes(), _WalkNotes(), 0
    hits: list[str] = []
    if target.kind == "file":
        with _opened(target, path) as fd:
            content = _text_of(fd, notes)
        files += bool(content and _hits_in(_printable(target.rel), content, text, hits))
    else:
        with _opened(target, path) as fd, closing(_walk(fd, target.parts, walked)) as walk:
            for parent, parts, kind in walk:
                if len(hits) >= MAX_HITS:
                    break
                notes.links += kind == "link"
                if kind == "file" and (content := _text_at(parent, parts[-1], notes)):
                    files += bool(_hits_in(_printable("/".join(parts)), content, text, hits))
    head = [
        f"{'At least ' if len(hits) >= MAX_HITS else ''}{_plural(len(hits), 'hit')} in "
        f"{_plural(files, 'file')} for {text!r} under {target.label}:"
    ]
    if not hits:
        head = [
            f"No matches for {text!r} under {target.label} "
            f"({_plural(notes.searched, 'text file')} searched)."
        ]
    skipped = _search_notes_line(notes, walked)
    head += [skipped] if skipped else []
    return _render(
        head, hits, counter=counter, max_tokens=max_tokens, hint="narrow the path or the query"
    )
