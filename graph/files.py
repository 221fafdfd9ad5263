"""Private files (checkpoints, chat history, lock files) opened so no planted link reaches outside,
and the SQLite checkpoint file opened once per process.

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

A SQLite database file has one connection per process (`open_sqlite_saver`):
POSIX locks belong to the process, so no other descriptor of an open database
file may be closed.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import weakref
from dataclasses import dataclass

from langgraph.checkpoint.sqlite import SqliteSaver

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


@dataclass(frozen=True)
class PrivateFile:
    """An open private file: its descriptor (the caller closes it) and what it is."""

    fd: int
    path: str
    created: bool
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
    if not folders:
        return os.sep, [name]
    start = len(folders) - 1
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
        shown = anchor
        for name in parts[:-1]:
            shown = os.path.join(shown, name)
            fds.append(_open_folder(name, fds[-1], shown, create=create))
        return _open_file(parts[-1], fds[-1], path, flags, create=create, what=what)
    finally:
        for fd in fds:
            os.close(fd)


def refuse_unsafe(st: os.stat_result, path: str, *, what: str = "file", private: bool) -> None:
    """UnsafePathError unless `st` is a regular file with one name and, when `private`,
    the user's own (asked of a file that existed before)."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(
            f"refusing the {what} {path}: it is a symbolic link; remove the link and try again"
        )
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(
            f"refusing the {what} {path}: it is not a regular file; remove it and try again"
        )
    if st.st_nlink > 1:
        raise UnsafePathError(
            f"refusing the {what} {path}: it has {st.st_nlink} hard links, so writing it would "
            "change a file elsewhere too; remove the link and try again"
        )
    if not private:
        return
    if st.st_uid != os.geteuid():
        raise UnsafePathError(
            f"refusing the {what} {path}: it belongs to user id {st.st_uid}, not to you; "
            "remove it and try again"
        )


def refuse_linked(path: str, *, what: str = "file") -> None:
    """UnsafePathError when `path` exists as a symlink, a hard link or not a regular file
    (for files another library opens by name, such as SQLite's `-wal` file)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    refuse_unsafe(st, path, what=what, private=False)


def _open_folder(name: str, dir_fd: int, shown: str, *, create: bool) -> int:
    """Open (and maybe create, 0700) the folder `name` below `dir_fd`, refusing a symlink."""
    try:
        return open_folder(name, dir_fd, create=create)[0]
    except LinkRefused:
        raise UnsafePathError(
            f"refusing a symlinked folder: {shown} is a symbolic link; remove the link "
            "(or use a path without it) and try again"
        ) from None
    except NotAFolder:
        raise UnsafePathError(
            f"refusing {shown}: it is not a folder; remove it and try again"
        ) from None


def _open_file(
    name: str, dir_fd: int, path: str, flags: int, *, create: bool, what: str
) -> PrivateFile:
    try:
        fd, created = open_file(name, dir_fd, flags, create=create)
    except LinkRefused:
        raise UnsafePathError(
            f"refusing the {what} {path}: it is a symbolic link; remove the link and try again"
        ) from None
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
    return PrivateFile(fd, path, created, (st.st_dev, st.st_ino))


# --- the SQLite checkpoint file: one connection per file per process ---------------------


@dataclass
class _OpenDatabase:
    """The one connection of this process to a database file, and our descriptor of it."""

    saver: weakref.ref[SqliteSaver]
    conn: sqlite3.Connection
    fd: int
    users: int = 1
    closed: bool = False


_databases_lock = threading.RLock()  # re-entrant: a finalizer may run while it is held
_databases: dict[tuple[int, int, int], _OpenDatabase] = {}
"""(pid, st_dev, st_ino) -> the open database."""

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def open_sqlite_saver(path: str) -> SqliteSaver:
    """A `SqliteSaver` (tables set up) on the file `path`, the same one while this
    process has the file open.

    POSIX record locks belong to the process: closing any descriptor of the database
    file drops every lock SQLite holds on it, and another process may then checkpoint
    and remove the WAL under our reads ("database disk image is malformed"). So a
    file already open here is found by (st_dev, st_ino) with `lstat`, no descriptor
    opened or closed, and its saver returned. A new one is opened with
    `open_private_file` (refusing links, hard links, a file not the user's own), and
    that descriptor stays open with the connection and is closed after it. SQLite
    opens its `-wal`, `-shm` and `-journal` files by name, following links, so a
    planted link there is refused too. The connection closes when the last opener
    calls `release_sqlite_saver` or when nobody holds the saver any more.
    """
    path = os.path.abspath(path)
    with _databases_lock:
        shared = _shared_saver(path)
        if shared is not None:
            return shared
        opened = open_private_file(path, os.O_RDWR, what="checkpoint file")
        conn: sqlite3.Connection | None = None
        try:
            _refuse_linked_side_files(path)
            conn = sqlite3.connect(path, check_same_thread=False)
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) != opened.identity:  # swapped while we connected
                raise UnsafePathError(
                    f"refusing the checkpoint file {path}: it was replaced while it was "
                    "opened; check who else writes to this folder and try again"
                )
            saver = SqliteSaver(conn)
            saver.setup()
        except BaseException:
            if conn is not None:
                conn.close()
            os.close(opened.fd)  # after the connection: no lock of ours is left to drop
            raise
        key = (os.getpid(), *opened.identity)
        database = _OpenDatabase(weakref.ref(saver), conn, opened.fd)
        _databases[key] = database
        weakref.finalize(saver, _close_database, key, database)  # when nobody holds it
        return saver


def release_sqlite_saver(saver: object) -> bool:
    """One opener is done with a saver `open_sqlite_saver` made; the last one closes it.
    False when `saver` is not one of those (the caller closes it its own way)."""
    with _databases_lock:
        for key, database in list(_databases.items()):
            if database.saver() is saver:
                database.users -= 1
                if database.users <= 0:
                    _close_database(key, database)
                return True
    return False


def _refuse_linked_side_files(path: str) -> None:
    for suffix in SQLITE_SIDE_FILES:
        refuse_linked(path + suffix, what="checkpoint side file")


def _shared_saver(path: str) -> SqliteSaver | None:
    """The saver this process has open on the file at `path`, if any (one more opener)."""
    try:
        st = os.lstat(path)  # by name: no descriptor of the open file is opened or closed
    except FileNotFoundError:
        return None
    key = (os.getpid(), st.st_dev, st.st_ino)
    database = _databases.get(key)
    if database is None:
        return None
    saver = database.saver()
    if saver is None or not _is_open(database.conn):  # closed by whoever held it
        _close_database(key, database)
        return None
    refuse_unsafe(st, path, what="checkpoint file", private=True)  # a link made since
    _refuse_linked_side_files(path)
    database.users += 1
    return saver


def _is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 - raises on a closed connection
    except sqlite3.ProgrammingError:
        return False
    return True


def _close_database(key: tuple[int, int, int], database: _OpenDatabase) -> None:
    """Close the connection, then our descriptor: once, and never in a forked child."""
    with _databases_lock:
        if database.closed or key[0] != os.getpid():
            return
        database.closed = True
        if _databases.get(key) is database:
            del _databases[key]
        try:
            database.conn.close()
        except sqlite3.Error:
            pass
        os.close(database.fd)  # no connection of ours is left on the file: no lock to drop
