"""Where a path really is: root resolution, confinement checks and opening without symlinks."""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ....state.linksafe import open_below
from ...briefing.writer import STATE_DIR
from .arguments import _check_text
from .errors import _Refused, _show
from .results import _printable


def _is_state(name: str) -> bool:
    """True for the run's private state folder name (case-insensitive filesystems too)."""
    return name.casefold() == STATE_DIR


@dataclass(frozen=True)
class _Target:
    """A checked path: the real root, the real components under it, its kind and display form."""

    root: str
    parts: tuple[str, ...]
    kind: str
    shown: str

    @property
    def rel(self) -> str:
        """The real path relative to the root with `/` separators ('.' for the root)."""
        return "/".join(self.parts) or "."

    @property
    def label(self) -> str:
        """How a result header names this folder or file (folders end with '/')."""
        slash = "/" if self.kind == "dir" else ""
        name = "the project root" if self.shown == "." else _printable(self.shown) + slash
        if self.rel == self.shown:
            return name
        return f"{name} (resolved to {_printable(self.rel)}{slash})"


def _real_root(project_root: object) -> str:
    """The real path of an existing, absolute project root."""
    if not isinstance(project_root, str) or "\0" in project_root or not os.path.isabs(project_root):
        raise _Refused(
            f"ERROR: project_root must be an absolute folder path, got {_show(project_root)}; "
            "set project_root in the run context."
        )
    real = os.path.realpath(project_root)
    if not os.path.isdir(real):
        raise _Refused(
            f"ERROR: project_root {_show(project_root)} is not an existing folder; "
            "set project_root in the run context to the project's folder."
        )
    return real


def _inside(root: str, real: str) -> bool:
    """True when the real path `real` is the real root or below it."""
    return os.path.commonpath([root, real]) == root


def _state_refusal(path: str, *, via: str = "") -> _Refused:
    """The refusal for anything inside `.a0proj/`."""
    return _Refused(
        f"ERROR: path {_show(path)}{via} is inside {STATE_DIR}/, the run's private state, which "
        "these tools never read; pass a project file instead (see list_files('.'))."
    )


def _resolve(project_root: object, path: object) -> _Target:
    """Check `path` against every confinement rule and return where it really is."""
    given = _check_text(path, "path", "src")
    root = _real_root(project_root)
    if os.path.isabs(given):
        raise _Refused(
            f"ERROR: path {_show(given)} is absolute; pass a path relative to the project root, "
            "e.g. 'src/app.py' (or '.' for the root)."
        )
    shown = os.path.normpath(given).replace(os.sep, "/")
    lexical = shown.split("/")
    if lexical[0] == "..":
        raise _Refused(
            f"ERROR: path {_show(given)} climbs out of the project root with '..'; pass a path "
            "inside the project, e.g. '.' or 'src'."
        )
    if any(_is_state(part) for part in lexical):
        raise _state_refusal(given)
    real = os.path.realpath(os.path.join(root, given))
    if not _inside(root, real):
        raise _Refused(
            f"ERROR: path {_show(given)} leads outside the project root through a symlink; these "
            "tools only read inside the project, so pick a path from list_files('.')."
        )
    rel = os.path.relpath(real, root)
    parts = () if rel == "." else tuple(rel.split(os.sep))
    if any(_is_state(part) for part in parts):
        raise _state_refusal(given, via=" (through a symlink)")
    return _Target(root, parts, _kind_of(root, real, given, shown), shown)


def _nearest_folder(root: str, shown: str) -> str:
    """The closest existing folder above a missing path, inside the root, to suggest listing."""
    parent = posixpath.dirname(shown)
    while parent:
        real = os.path.realpath(os.path.join(root, parent))
        inside = _inside(root, real) and not any(
            _is_state(part) for part in os.path.relpath(real, root).split(os.sep)
        )
        if inside and os.path.isdir(real):
            return parent
        parent = posixpath.dirname(parent)
    return "."


def _kind_of(root: str, real: str, given: str, shown: str) -> str:
    """'dir' or 'file' for an existing real path; a refusal for anything else."""
    try:
        mode = os.lstat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        parent = _nearest_folder(root, shown)
        raise _Refused(
            f"ERROR: path {_show(given)} does not exist in the project; call "
            f"list_files({parent!r}) to see what is there."
        ) from None
    except OSError as exc:
        raise _Refused(
            f"ERROR: path {_show(given)} cannot be read ({exc.strerror}); pick another path "
            "from list_files('.')."
        ) from None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        raise _Refused(
            f"ERROR: path {_show(given)} is a symlink that does not resolve (a loop?); pick "
            "another path from list_files('.')."
        )
    raise _Refused(
        f"ERROR: path {_show(given)} is not a regular file (a device, FIFO or socket); pick a "
        "text file from list_files('.')."
    )


@contextmanager
def _opened(target: _Target, given: str) -> Iterator[int]:
    """A descriptor for the checked target (opened from the real root one component at a time,
    never following a symlink), closed afterwards; a refusal if it changed meanwhile."""
    try:
        flags = os.O_RDONLY if target.kind == "file" else None
        fd = open_below(target.root, target.parts, file_flags=flags)
    except OSError as exc:
        raise _Refused(
            f"ERROR: path {_show(given)} could not be opened safely ({exc.strerror or exc}); it "
            "may have changed since it was checked, so call list_files to look again."
        ) from None
    try:
        yield fd
    finally:
        os.close(fd)
