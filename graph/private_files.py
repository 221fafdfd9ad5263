"""Private files (checkpoints, chat history, lock files) opened so no planted link reaches outside.

A path under `<project_root>/.a0proj/` is opened one part at a time, relative to
directory descriptors and with O_NOFOLLOW, from `.a0proj` down: a symlinked
`.a0proj`, subfolder or file is refused, never followed. A path elsewhere (a
checkpoint file the user names) is opened the same way from its own folder down.
The file must then be a regular file with one name (a hard link planted at the
path would make a write land in a file elsewhere too) and, when it existed
before, belong to this user; it is checked with fstat on the descriptor just
opened, never by path. A file this call creates is 0600 and a folder it creates
0700 (set with fchmod, so neither the umask nor a default ACL decides them); an
existing file of ours that others may read is made 0600 the same way, through
the checked descriptor (so a link elsewhere is never chmodded).

Each refusal is an `UnsafePathError` (an OSError) whose text names the path and
the fix.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ..nodes.briefing.writer import STATE_DIR
from ..state.linksafe import (
    DIR_MODE,
    FILE_MODE,
    LinkRefused,
    NotAFolder,
    open_file,
    open_folder,
    open_root,
)


class UnsafePathError(OSError):
    """A private file's path is a link, a hard link or not the user's; str names path and fix."""


SYMLINK = "it is a symbolic link; remove the link"


@dataclass(frozen=True)
class PrivateFile:
    """An open private file: its descriptor (the caller closes it) and which file it is."""

    fd: int
    identity: tuple[int, int]
    """(st_dev, st_ino) of the file."""


def split_private_path(path: str) -> tuple[str, list[str]]:
    """The folder taken as given, and the parts below it opened without following links.

    `/p/.a0proj/x.locks/a.lock` -> (`/p`, [`.a0proj`, `x.locks`, `a.lock`]): everything
    from the last `.a0proj` down; elsewhere the file's own folder and the file,
    `/srv/db/cp.sqlite` -> (`/srv`, [`db`, `cp.sqlite`]).
    """
    parts = os.path.abspath(path).split(os.sep)[1:]
    folders, name = parts[:-1], parts[-1]
    start = len(folders) - 1  # no folder (`/x`): -1, so the anchor is `/`
    if STATE_DIR in folders:
        start = len(folders) - 1 - folders[::-1].index(STATE_DIR)
    return os.sep + os.sep.join(folders[:start]), [*folders[start:], name]


def open_private_file(
    path: str, flags: int = os.O_RDWR, *, create: bool = True, what: str = "file"
) -> PrivateFile:
    """Open `path` (made, with its missing folders, when `create`) as described above.

    `what` names the file in errors ("checkpoint file"). Raises UnsafePathError for a
    link, a hard link, something that is not a regular file or folder, or a file not
    the user's own; FileNotFoundError when it is missing and `create` is False.
    """
    path = os.path.abspath(path)
    anchor, parts = split_private_path(path)
    if create:
        os.makedirs(anchor, mode=DIR_MODE, exist_ok=True)
    fds = [open_root(anchor)]
    try:
        for depth, name in enumerate(parts[:-1], 1):
            shown = os.path.join(anchor, *parts[:depth])
            try:
                fds.append(open_folder(name, fds[-1], create=create)[0])
            except LinkRefused:
                raise UnsafePathError(
                    f"refusing a symlinked folder: {shown} is a symbolic link; remove the link "
                    "(or use a path without it) and try again"
                ) from None
            except NotAFolder:
                raise UnsafePathError(
                    f"refusing {shown}: it is not a folder; remove it and try again"
                ) from None
        return _open_file(parts[-1], fds[-1], path, flags, create=create, what=what)
    finally:
        for fd in fds:
            os.close(fd)


def refuse_unsafe(st: os.stat_result, path: str, *, what: str = "file", private: bool) -> None:
    """UnsafePathError unless `st` is a regular file with one name and, when `private`,
    the user's own (asked of a file that existed before)."""
    if stat.S_ISLNK(st.st_mode):
        problem = SYMLINK
    elif not stat.S_ISREG(st.st_mode):
        problem = "it is not a regular file; remove it"
    elif st.st_nlink > 1:
        problem = (
            f"it has {st.st_nlink} hard links, so writing it would change a file elsewhere too; "
            "remove the link"
        )
    elif private and st.st_uid != os.geteuid():
        problem = f"it belongs to user id {st.st_uid}, not to you; remove it"
    else:
        return
    raise UnsafePathError(f"refusing the {what} {path}: {problem} and try again")


def refuse_linked(path: str, *, what: str = "file") -> None:
    """UnsafePathError when `path` exists as a symlink, a hard link or not a regular file
    (for files another library opens by name, such as SQLite's `-wal` file)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    refuse_unsafe(st, path, what=what, private=False)


def _open_file(
    name: str, dir_fd: int, path: str, flags: int, *, create: bool, what: str
) -> PrivateFile:
    try:
        fd, created = open_file(name, dir_fd, flags, create=create)
    except LinkRefused:
        raise UnsafePathError(f"refusing the {what} {path}: {SYMLINK} and try again") from None
    try:
        st = os.fstat(fd)
        refuse_unsafe(st, path, what=what, private=not created)
        if created or stat.S_IMODE(st.st_mode) & 0o077:
            # a file of ours with one name, opened without following links: making it
            # owner-only changes nothing elsewhere (whatever the umask or an older version made)
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return PrivateFile(fd, (st.st_dev, st.st_ino))
