"""One writer per thread: a second run on the same thread waits its turn, or fails clearly.

LangGraph resolves concurrent runs on one thread optimistically: each starts
from the latest checkpoint and the last to finish wins, so a turn can vanish
without an error. Runs of this graph hold a per-thread lock instead: a
`threading.Lock` within the process and, across processes, an `flock` on
`<file>.locks/<hash of the thread id>.lock` when the checkpointer is a SQLite
file, or a PostgreSQL advisory lock on the thread when it is Postgres. A run that cannot get the lock within `WAIT_SECONDS` fails with
`ThreadBusyError`, and nothing of it is stored. A lock file is opened like every
private file (`private_files.py`): a symlinked lock folder or lock file, or a hard-linked
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
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager, nullcontext
from typing import Any

from .private_files import open_private_file

WAIT_SECONDS = 120.0
POLL_SECONDS = 0.02

_locks: dict[tuple[str, str], threading.Lock] = {}
_held = threading.local()


class ThreadBusyError(RuntimeError):
    """Another run holds this conversation thread; nothing of this run was stored."""


def sqlite_file(checkpointer: Any) -> str | None:
    """The database file of a sync SQLite checkpointer (None for memory or other savers)."""
    if type(checkpointer).__name__ != "SqliteSaver":
        return None
    try:
        rows = checkpointer.conn.execute("PRAGMA database_list").fetchall()
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


def _lock_for(key: tuple[str, str]) -> threading.Lock:
    return _locks.setdefault(key, threading.Lock())  # atomic: every caller gets the same lock


def _busy(key: tuple[str, str], waited: float) -> ThreadBusyError:
    return ThreadBusyError(
        f"thread {key[1]!r} is busy: another run on it did not finish within {waited:.0f} s; "
        "nothing of this run was stored. Try again when it is done."
    )


def _waited_too_long(key: tuple[str, str], start: float, wait: float) -> None:
    """ThreadBusyError once `wait` seconds have passed since `start`."""
    if time.monotonic() - start > wait:
        raise _busy(key, wait)


def lock_file_path(store: str, thread_id: str) -> str:
    """`<store>.locks/<hash of the thread id>.lock`: the file whose flock is the thread's lock."""
    name = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return os.path.join(f"{store}.locks", f"{name}.lock")


def _open_lock_file(key: tuple[str, str]) -> int | None:
    """The lock file's descriptor (None for a saver without a file): opened without
    following links, a hard link refused, 0600 in a 0700 folder (`open_private_file`)."""
    if key[0].startswith("memory:"):
        return None
    return open_private_file(lock_file_path(*key), what="lock file").fd


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _locked(row: Any) -> bool:
    return bool(row["locked"] if isinstance(row, dict) else row[0])


TRY_LOCK = "SELECT pg_try_advisory_lock(%s) AS locked"
UNLOCK = "SELECT pg_advisory_unlock(%s)"


@contextmanager
def _postgres_lock(saver: Any, key: tuple[str, str], start: float, wait: float) -> Iterator[None]:
    """A session-level advisory lock on the thread, on one connection of a sync Postgres saver
    (its pool's, or its own one statement at a time)."""
    pool = saver.conn if hasattr(saver.conn, "getconn") else None
    conn = pool.getconn() if pool is not None else saver.conn
    advisory = (_advisory_key(key[1]),)

    def query(sql: str) -> Any:
        with nullcontext() if pool is not None else saver.lock:
            return conn.execute(sql, advisory).fetchone()

    try:
        while not _locked(query(TRY_LOCK)):
            _waited_too_long(key, start, wait)
            time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            query(UNLOCK)
    finally:
        if pool is not None:
            pool.putconn(conn)


@asynccontextmanager
async def _postgres_lock_async(
    saver: Any, key: tuple[str, str], start: float, wait: float
) -> AsyncIterator[None]:
    """`_postgres_lock` for an async Postgres saver."""
    pool = saver.conn if hasattr(saver.conn, "getconn") else None
    conn = await pool.getconn() if pool is not None else saver.conn
    advisory = (_advisory_key(key[1]),)

    async def query(sql: str) -> Any:
        async with nullcontext() if pool is not None else saver.lock:
            return await (await conn.execute(sql, advisory)).fetchone()

    try:
        while not _locked(await query(TRY_LOCK)):
            _waited_too_long(key, start, wait)
            await asyncio.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            await query(UNLOCK)
    finally:
        if pool is not None:
            await pool.putconn(conn)


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
    with ExitStack() as releases:  # on the way out: Postgres, the flock, the lock
        releases.callback(lock.release)
        fd = _open_lock_file(key)
        if fd is not None:
            releases.callback(os.close, fd)  # closing releases the flock
            while not _try_flock(fd):
                _waited_too_long(key, start, wait)
                time.sleep(POLL_SECONDS)
        if _is_postgres(checkpointer, asynchronous=False):
            releases.enter_context(_postgres_lock(checkpointer, key, start, wait))
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


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
        _waited_too_long(key, start, wait)
        await asyncio.sleep(POLL_SECONDS)
    async with AsyncExitStack() as releases:
        releases.callback(lock.release)
        fd = _open_lock_file(key)
        if fd is not None:
            releases.callback(os.close, fd)
            while not _try_flock(fd):
                _waited_too_long(key, start, wait)
                await asyncio.sleep(POLL_SECONDS)
        if _is_postgres(checkpointer, asynchronous=True):
            await releases.enter_async_context(_postgres_lock_async(checkpointer, key, start, wait))
        yield
