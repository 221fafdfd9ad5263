"""One writer per thread: a second run on the same thread waits its turn, or fails clearly.

LangGraph resolves concurrent runs on one thread optimistically: each starts
from the latest checkpoint and the last to finish wins, so a turn can vanish
without an error. Runs of this graph hold a per-thread lock instead: a
`threading.Lock` within the process and, across processes, an `flock` on
`<file>.locks/<hash of the thread id>.lock` when the checkpointer is a SQLite
file, or a PostgreSQL advisory lock on the thread when it is Postgres. A run that cannot get the lock within `WAIT_SECONDS` fails with
`ThreadBusyError`, and nothing of it is stored. A lock file is opened like every
private file (`files.py`): a symlinked lock folder or lock file, or a hard-linked
lock file, is refused with `UnsafePathError` before the run starts.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from .files import open_private_file

WAIT_SECONDS = 120.0
POLL_SECONDS = 0.02

_registry_lock = threading.Lock()
_locks: dict[tuple[str, str], threading.Lock] = {}
_held = threading.local()


class ThreadBusyError(RuntimeError):
    """Another run holds this conversation thread; nothing of this run was stored."""


def sqlite_file(checkpointer: Any) -> str | None:
    """The database file of a sync SQLite checkpointer (None for memory or other savers)."""
    conn = getattr(checkpointer, "conn", None)
    execute = getattr(conn, "execute", None)
    if execute is None or type(checkpointer).__name__ != "SqliteSaver":
        return None
    try:
        rows = execute("PRAGMA database_list").fetchall()
    except Exception:  # noqa: BLE001 - a closed or odd connection just gets the in-process lock
        return None
    path = next((row[2] for row in rows if row[1] == "main"), "")
    return os.path.abspath(path) if path else None


def _thread_key(checkpointer: Any, config: Any) -> tuple[str, str] | None:
    thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
    if checkpointer is None or thread_id is None:
        return None
    return (sqlite_file(checkpointer) or f"memory:{id(checkpointer)}", str(thread_id))


def _advisory_key(thread_id: str) -> int:
    """A signed 64-bit key for `pg_try_advisory_lock`, from the thread id."""
    digest = hashlib.sha256(f"specialist-handover:{thread_id}".encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:8], "big", signed=True)


def _is_postgres(checkpointer: Any, *, asynchronous: bool) -> bool:
    kind = type(checkpointer)
    return kind.__module__.startswith("langgraph.checkpoint.postgres") and (
        kind.__name__.startswith("Async") == asynchronous
    )


class _PostgresLock:
    """A session-level advisory lock on one connection of a sync Postgres saver."""

    def __init__(self, checkpointer: Any, thread_id: str) -> None:
        self.saver = checkpointer
        self.key = _advisory_key(thread_id)
        pool = checkpointer.conn if hasattr(checkpointer.conn, "getconn") else None
        self.pool = pool
        self.conn = pool.getconn() if pool is not None else checkpointer.conn

    def _query(self, sql: str) -> Any:
        if self.pool is not None:
            return self.conn.execute(sql, (self.key,)).fetchone()
        with self.saver.lock:  # the saver's own connection: one statement at a time
            return self.conn.execute(sql, (self.key,)).fetchone()

    def try_acquire(self) -> bool:
        row = self._query("SELECT pg_try_advisory_lock(%s) AS locked")
        return bool(row["locked"] if isinstance(row, dict) else row[0])

    def release(self) -> None:
        try:
            self._query("SELECT pg_advisory_unlock(%s)")
        finally:
            if self.pool is not None:
                self.pool.putconn(self.conn)


def _lock_for(key: tuple[str, str]) -> threading.Lock:
    with _registry_lock:
        return _locks.setdefault(key, threading.Lock())


def _busy(key: tuple[str, str], waited: float) -> ThreadBusyError:
    return ThreadBusyError(
        f"thread {key[1]!r} is busy: another run on it did not finish within {waited:.0f} s; "
        "nothing of this run was stored. Try again when it is done."
    )


def lock_file_path(store: str, thread_id: str) -> str:
    """`<store>.locks/<hash of the thread id>.lock`: the file whose flock is the thread's lock."""
    name = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return os.path.join(f"{store}.locks", f"{name}.lock")


def _open_lock_file(key: tuple[str, str]) -> int | None:
    """The lock file's descriptor (None for a saver without a file): opened without
    following links, a hard link refused, 0600 in a 0700 folder (`open_private_file`)."""
    store = key[0]
    if store.startswith("memory:"):
        return None
    return open_private_file(lock_file_path(store, key[1]), what="lock file").fd


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


@contextmanager
def one_writer(checkpointer: Any, config: Any, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the thread's lock for a run (re-entrant within one OS thread)."""
    key = _thread_key(checkpointer, config)
    held: set = _held.__dict__.setdefault("keys", set())
    if key is None or key in held:
        yield
        return
    start = time.monotonic()
    lock = _lock_for(key)
    if not lock.acquire(timeout=wait):
        raise _busy(key, wait)
    fd = None
    pg: _PostgresLock | None = None
    try:
        fd = _open_lock_file(key)
        while fd is not None and not _try_flock(fd):
            if time.monotonic() - start > wait:
                raise _busy(key, wait)
            time.sleep(POLL_SECONDS)
        if _is_postgres(checkpointer, asynchronous=False):
            candidate = _PostgresLock(checkpointer, key[1])
            try:
                while not candidate.try_acquire():
                    if time.monotonic() - start > wait:
                        raise _busy(key, wait)
                    time.sleep(POLL_SECONDS)
            except BaseException:
                if candidate.pool is not None:
                    candidate.pool.putconn(candidate.conn)
                raise
            pg = candidate
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        if pg is not None:
            pg.release()
        if fd is not None:
            os.close(fd)  # closing releases the flock
        lock.release()


@asynccontextmanager
async def one_writer_async(
    checkpointer: Any, config: Any, wait: float = WAIT_SECONDS
) -> AsyncIterator[None]:
    """Hold the thread's lock for an async run, waiting without blocking the event loop."""
    key = _thread_key(checkpointer, config)
    if key is None:
        yield
        return
    start = time.monotonic()
    lock = _lock_for(key)
    while not lock.acquire(blocking=False):
        if time.monotonic() - start > wait:
            raise _busy(key, wait)
        await asyncio.sleep(POLL_SECONDS)
    fd = None
    pg: _AsyncPostgresLock | None = None
    try:
        fd = _open_lock_file(key)
        while fd is not None and not _try_flock(fd):
            if time.monotonic() - start > wait:
                raise _busy(key, wait)
            await asyncio.sleep(POLL_SECONDS)
        if _is_postgres(checkpointer, asynchronous=True):
            candidate = await _AsyncPostgresLock.open(checkpointer, key[1])
            try:
                while not await candidate.try_acquire():
                    if time.monotonic() - start > wait:
                        raise _busy(key, wait)
                    await asyncio.sleep(POLL_SECONDS)
            except BaseException:
                await candidate.give_back()
                raise
            pg = candidate
        yield
    finally:
        if pg is not None:
            await pg.release()
        if fd is not None:
            os.close(fd)
        lock.release()


class _AsyncPostgresLock:
    """A session-level advisory lock on one connection of an async Postgres saver."""

    def __init__(self, checkpointer: Any, key: int, conn: Any, pool: Any) -> None:
        self.saver, self.key, self.conn, self.pool = checkpointer, key, conn, pool

    @classmethod
    async def open(cls, checkpointer: Any, thread_id: str) -> _AsyncPostgresLock:
        pool = checkpointer.conn if hasattr(checkpointer.conn, "getconn") else None
        conn = await pool.getconn() if pool is not None else checkpointer.conn
        return cls(checkpointer, _advisory_key(thread_id), conn, pool)

    async def _query(self, sql: str) -> Any:
        if self.pool is not None:
            return await (await self.conn.execute(sql, (self.key,))).fetchone()
        async with self.saver.lock:  # the saver's own connection: one statement at a time
            return await (await self.conn.execute(sql, (self.key,))).fetchone()

    async def try_acquire(self) -> bool:
        row = await self._query("SELECT pg_try_advisory_lock(%s) AS locked")
        return bool(row["locked"] if isinstance(row, dict) else row[0])

    async def give_back(self) -> None:
        if self.pool is not None:
            await self.pool.putconn(self.conn)

    async def release(self) -> None:
        try:
            await self._query("SELECT pg_advisory_unlock(%s)")
        finally:
            await self.give_back()
