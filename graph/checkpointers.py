"""Where a thread's checkpoints live, from one string: nothing for the default SQLite file
(`<project_root>/.a0proj/checkpoints.sqlite`), a path for another SQLite file, or a
`postgresql://` URL for PostgreSQL (`PostgresSaver`, from the optional `postgres` extra).

A SQLite database file has one connection per process (`open_sqlite_saver`): POSIX locks
belong to the process, so no other descriptor of an open database file may be closed.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langgraph.checkpoint.sqlite import SqliteSaver

from ..nodes.briefing.writer import STATE_DIR
from .private_files import UnsafePathError, open_private_file, refuse_linked, refuse_unsafe

CHECKPOINT_FILE = "checkpoints.sqlite"


def default_checkpoint_path(project_root: str) -> str:
    """`<project_root>/.a0proj/checkpoints.sqlite`."""
    return os.path.join(project_root, STATE_DIR, CHECKPOINT_FILE)


POSTGRES_SCHEMES = ("postgresql", "postgres")
POSTGRES_EXTRA_HINT = 'pip install "specialist-handover[postgres]"'
ACCEPTED_CHECKPOINTERS = (
    "nothing (the SQLite file <project_root>/.a0proj/checkpoints.sqlite), "
    "a SQLite file path, or a postgresql://user:password@host:port/dbname URL"
)
POSTGRES_CONNECT_TIMEOUT = 10  # seconds, unless the URL sets connect_timeout
# pg_advisory_lock(classid, objid): one process at a time creates the tables of a fresh database
_SETUP_LOCK = (0x68616E64, 1)  # "hand", 1


class CheckpointerError(RuntimeError):
    """The checkpointer cannot be opened: a missing optional extra or an unreachable server."""


class CheckpointerSpecError(ValueError):
    """The value names no checkpointer we can open (an unknown scheme, a malformed URL)."""


def is_postgres_url(spec: str | None) -> bool:
    """True for `postgresql://...` and `postgres://...`."""
    spec = spec or ""
    return "://" in spec and spec.strip().split("://", 1)[0].lower() in POSTGRES_SCHEMES


def redact_url(url: str) -> str:
    """The URL with its password (and any `password=` query value) replaced by `***`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hostport}"
        query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # unparsable: show only the scheme, never what might be a secret
        return url.split("://", 1)[0] + "://***"


def _check_spec(spec: str) -> None:
    """ValueError unless `spec` is a Postgres URL or something that can only be a file path."""
    if "://" in spec and not is_postgres_url(spec):
        scheme = spec.split("://", 1)[0]
        raise CheckpointerSpecError(
            f"unsupported checkpointer {redact_url(spec)!r} (scheme {scheme!r}); "
            f"accepted: {ACCEPTED_CHECKPOINTERS}"
        )
    looks_like = re.match(r"(?i)^(postgres(ql)?:|\w+\s*=)", spec)
    if "://" not in spec and looks_like:  # `postgresql:x` or a libpq `host=... dbname=...` string
        raise CheckpointerSpecError(
            f"unsupported checkpointer {spec.split('=', 1)[0]!r}...: a PostgreSQL server is "
            f"given as a URL; accepted: {ACCEPTED_CHECKPOINTERS}"
        )


def describe_checkpointer(spec: str | None, *, project_root: str) -> str:
    """What `open_checkpointer(spec, ...)` uses, safe to print (no password)."""
    spec = (spec or "").strip()
    if not spec:
        return default_checkpoint_path(project_root)
    if is_postgres_url(spec):
        return f"PostgreSQL {redact_url(spec)}"
    return spec


def open_checkpointer(spec: str | None, *, project_root: str) -> Any:
    """The checkpointer `spec` names, ready to use (its tables created).

    - None or "": the SQLite file `<project_root>/.a0proj/checkpoints.sqlite`;
    - a path: a SQLite file there (see `sqlite_checkpointer`);
    - `postgresql://...` or `postgres://...`: a `PostgresSaver` on one psycopg
      connection (`autocommit=True, prepare_threshold=0, row_factory=dict_row`);
      needs the `postgres` extra.

    Raises CheckpointerSpecError (a ValueError) for anything else or a malformed URL,
    ValueError or OSError when the SQLite file cannot be used, and CheckpointerError
    when the extra is missing or the server cannot be reached.
    """
    spec = (spec or "").strip()
    if not spec:
        return sqlite_checkpointer(default_checkpoint_path(project_root))
    _check_spec(spec)
    return postgres_checkpointer(spec) if is_postgres_url(spec) else sqlite_checkpointer(spec)


def postgres_checkpointer(url: str) -> Any:
    """A `PostgresSaver` on a fresh connection to `url`, with `.setup()` done."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as exc:
        raise CheckpointerError(
            f"PostgreSQL checkpoints need the optional `postgres` extra ({exc.name or exc} is "
            f"missing): {POSTGRES_EXTRA_HINT}"
        ) from None
    shown = redact_url(url)

    def malformed(exc: Exception) -> CheckpointerSpecError:
        return CheckpointerSpecError(f"malformed PostgreSQL URL {shown!r}: {_first_line(exc, url)}")

    try:
        options = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise malformed(exc) from None
    try:  # libpq only finds a bad port when it connects; say it is the URL
        if "," not in urlsplit(url).netloc:
            urlsplit(url).port  # noqa: B018 - raises ValueError when it is not a port number
    except ValueError as exc:
        raise malformed(exc) from None
    extra: dict[str, Any] = (
        {} if "connect_timeout" in options else {"connect_timeout": POSTGRES_CONNECT_TIMEOUT}
    )
    try:
        conn = psycopg.Connection.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row, **extra
        )
    except psycopg.ProgrammingError as exc:  # libpq refused the URL's options
        raise malformed(exc) from None
    except psycopg.Error as exc:
        raise CheckpointerError(
            f"cannot connect to PostgreSQL at {shown}: {_first_line(exc, url)}"
        ) from None
    try:
        saver = PostgresSaver(conn)
        # concurrent first runs on a fresh database must not race creating the tables
        conn.execute("SELECT pg_advisory_lock(%s, %s)", _SETUP_LOCK)
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", _SETUP_LOCK)
    except psycopg.Error as exc:
        conn.close()
        raise CheckpointerError(
            f"cannot set up checkpoints in PostgreSQL at {shown}: {_first_line(exc, url)}"
        ) from None
    return saver


def close_checkpointer(checkpointer: Any) -> None:
    """Close the connection of a checkpointer `open_checkpointer` made (quietly); a SQLite
    one that was opened more than once stays open until its last opener closes it."""
    if not release_sqlite_saver(checkpointer):
        with contextlib.suppress(Exception):  # closing must not fail a finished run
            checkpointer.conn.close()


def _first_line(exc: BaseException, url: str) -> str:
    """The error's first line, with the URL and its password blanked out."""
    text = str(exc).strip()
    line = (text.splitlines()[0] if text else type(exc).__name__).replace(url, redact_url(url))
    for secret in _password_candidates(url):
        line = line.replace(secret, "***")
    return line


def _password_candidates(url: str) -> set[str]:
    """What a URL's password could be (parsers split `user:pa@ss@host` differently)."""
    found: set[str] = set()
    rest = url.split("://", 1)[-1].split("/", 1)[0]
    for userinfo in (rest.partition("@")[0], rest.rpartition("@")[0]):
        if ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    found.update(re.findall(r"(?i)(?:^|[?&])password=([^&]*)", url))
    return {secret for secret in found if len(secret) >= 4}  # shorter ones would mangle the text


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


# The durable SQLite checkpointer of the file `path` (made 0600, its folder 0700). One per file
# per process: opening the same file again returns the same saver, on the same connection (see
# `open_sqlite_saver`: why, and what is refused). `close_checkpointer` closes it once every
# opener has.
sqlite_checkpointer = open_sqlite_saver


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
        with contextlib.suppress(sqlite3.Error):
            database.conn.close()
        os.close(database.fd)  # no connection of ours is left on the file: no lock to drop
