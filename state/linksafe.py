"""Folders and files opened without following links: the one place the project opens a path
below a folder it holds.

A path is opened one part at a time, each relative to its folder's descriptor and with
`O_NOFOLLOW`, so a symbolic link planted at any part is refused, never followed (a check
by path and then an open by path would leave a window for a swap). A file is opened with
`O_NONBLOCK` too: a FIFO planted there cannot block the open (it has no effect on a
regular file). A folder or file made here is owner-only (0700, 0600), set with `fchmod` on
its descriptor, so neither the umask nor a default ACL decides it.

Each caller says in its own words what a refusal means to its user: the briefing writer and
reader (`nodes/briefing/`), the workspace tools (`nodes/tools/workspace/`), and the
checkpoint, lock and history files (`graph/private_files.py`, `graph/checkpointers.py`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence

DIR_MODE = 0o700
"""Mode of a folder made here."""
FILE_MODE = 0o600
"""Mode of a file made here."""

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
FOLDER_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
"""How a folder below another is opened."""
FILE_FLAGS = _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
"""Added to a file's own flags (read, write, append)."""


class LinkRefused(OSError):
    """A part of the path is a symbolic link."""


class NotAFolder(OSError):
    """A part that must be a folder is something else."""


def open_root(path: str) -> int:
    """A descriptor of the folder `path` (followed as given: the caller names it)."""
    return os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)


def open_folder(name: str, dir_fd: int, *, create: bool = False) -> tuple[int, bool]:
    """The folder `name` below `dir_fd`, opened without following a link, and whether this
    call made it (0700; only when `create`). Raises `LinkRefused`, `NotAFolder`, or
    `FileNotFoundError` when it is missing and not made."""
    made = False
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, DIR_MODE, dir_fd=dir_fd)
            made = True
    try:
        fd = os.open(name, FOLDER_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise LinkRefused(errno.ELOOP, f"{name!r} is a symbolic link") from None
        raise NotAFolder(errno.ENOTDIR, f"{name!r} is not a folder") from None
    if made:
        _owner_only(fd, DIR_MODE)
    return fd, made


def open_file(name: str, dir_fd: int, flags: int, *, create: bool = False) -> tuple[int, bool]:
    """The file `name` below `dir_fd`, opened with `flags` without following a link (nor
    blocking on a FIFO), and whether this call made it (0600; only when `create`). The
    caller checks what it opened (`os.fstat`). Raises `LinkRefused`, or the open's
    `OSError` (`FileNotFoundError` when it is missing and not made)."""
    flags |= FILE_FLAGS
    if create:
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, FILE_MODE, dir_fd=dir_fd)
        except FileExistsError:
            pass
        else:
            _owner_only(fd, FILE_MODE)
            return fd, True
    try:
        return os.open(name, flags, dir_fd=dir_fd), False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(errno.ELOOP, f"{name!r} is a symbolic link") from None
        raise


def open_below(root: str, parts: Sequence[str], *, file_flags: int | None = None) -> int:
    """The last of `parts` below the folder `root`, every part opened without following a
    link: a folder, or a file opened with `file_flags` when given."""
    fd = open_root(root)
    try:
        for index, name in enumerate(parts):
            if index == len(parts) - 1 and file_flags is not None:
                child, _ = open_file(name, fd, file_flags)
            else:
                child, _ = open_folder(name, fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (`os.write` may write only part of it)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        view = view[written:]


def _owner_only(fd: int, mode: int) -> None:
    try:
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
