"""Walking a folder for listing and search: sorted, depth first, never following a symlink."""

from __future__ import annotations

import os
from collections.abc import Generator
from dataclasses import dataclass, field

from ....state.linksafe import open_folder
from ...briefing.writer import STATE_DIR
from .limits import MAX_DEPTH, NOISE_DIRS
from .paths import _is_state
from .results import _plural


@dataclass
class _WalkNotes:
    """What a walk left out, so the result can say so."""

    state_dirs: int = 0
    noise: set[str] = field(default_factory=set)
    unreadable: int = 0
    too_deep: int = 0
    stopped: bool = False


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """'link', 'dir', 'file' or 'other', without following symlinks."""
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return "other"


def _walk(
    fd: int, prefix: tuple[str, ...], notes: _WalkNotes, depth: int = 0
) -> Generator[tuple[int, tuple[str, ...], str], None, None]:
    """(parent fd, parts, kind) below an open folder, sorted depth first; links never followed.
    Each subfolder is opened with O_NOFOLLOW relative to its parent, up to MAX_DEPTH."""
    with os.scandir(fd) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        kind = _entry_kind(entry)
        if _is_state(entry.name):
            notes.state_dirs += 1
            continue
        if kind == "dir" and entry.name in NOISE_DIRS:
            notes.noise.add(entry.name)
            continue
        parts = (*prefix, entry.name)
        yield fd, parts, kind
        if kind != "dir":
            continue
        if depth >= MAX_DEPTH:
            notes.too_deep += 1
            continue
        try:
            child, _ = open_folder(entry.name, fd)
        except OSError:
            notes.unreadable += 1
            continue
        try:
            yield from _walk(child, parts, notes, depth + 1)
        except OSError:
            notes.unreadable += 1
        finally:
            os.close(child)


def _walk_notes_line(notes: _WalkNotes, verb: str) -> str | None:
    """One line saying which folders a walk left out, or None when nothing was."""
    said = []
    if notes.state_dirs:
        said.append(f"{STATE_DIR}/ (the run's private state, never {verb})")
    if notes.noise:
        names = ", ".join(f"{name}/" for name in sorted(notes.noise))
        said.append(f"noise folder{'s' if len(notes.noise) > 1 else ''} {names}")
    if notes.unreadable:
        said.append(f"{_plural(notes.unreadable, 'unreadable folder')}")
    if notes.too_deep:
        said.append(f"{_plural(notes.too_deep, 'folder')} nested deeper than {MAX_DEPTH} levels")
    return f"Not {verb}: " + "; ".join(said) + "." if said else None
