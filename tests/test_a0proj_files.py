"""Files under `.a0proj/` besides briefings: the checkpoint database, the lock files and the
chat history.

- The SQLite database has one connection per process: opening it again returns the same
  saver and never opens or closes another descriptor of the file (closing one would drop
  the process's locks on it, and another process could then pull the WAL from under our
  reads: "database disk image is malformed").
- A link planted in `.a0proj` (a symlink or a hard link at the database, its `-wal`,
  `-shm` or `-journal` file, the lock folder or a lock file, the chat history) is refused
  with an error naming the path and the fix; nothing outside is written or chmodded.
- The chat history is written by us, 0600 in a 0700 folder, with secrets redacted.
"""

from __future__ import annotations

import gc
import io
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from specialist_handover.graph.checkpointers import (
    close_checkpointer,
    open_checkpointer,
    sqlite_checkpointer,
)
from specialist_handover.graph.cli import main
from specialist_handover.graph.locking import lock_file_path, one_writer
from specialist_handover.graph.private_files import UnsafePathError
from specialist_handover.graph.terminal.printer import Printer
from specialist_handover.graph.terminal.prompts import ChatHistory
from specialist_handover.graph.turns import thread_config

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")

OUTSIDE_TEXT = b"outside data\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with its `.a0proj` folder (0700), and an `outside` folder beside it."""
    root = tmp_path / "project"
    (root / ".a0proj").mkdir(parents=True, mode=0o700)
    (tmp_path / "outside").mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the project, readable by others (0644): what a planted link points at."""
    target = tmp_path / "outside" / "victim"
    target.write_bytes(OUTSIDE_TEXT)
    target.chmod(0o644)
    return target


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def plant(link: Path, target: Path, kind: str) -> None:
    if kind == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)


def assert_untouched(target: Path, content: bytes = OUTSIDE_TEXT) -> None:
    assert target.read_bytes() == content
    assert mode_of(target) == 0o644


def fds_on(path: Path) -> list[int]:
    """This process's descriptors open on the file at `path` (by device and inode)."""
    want = os.stat(path)
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            st = os.stat(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino):
            found.append(int(name))
    return found


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.fixture
def offline(monkeypatch, project: Path) -> Path:
    for name in ("OPENAI_API_KEY", "HANDOVER_MODEL", "HANDOVER_CHECKPOINTER", "HANDOVER_PROFILES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HANDOVER_PROJECT_ROOT", str(project))
    return project


# --- one connection per database file per process --------------------------------------------

WRITER = textwrap.dedent(
    """
    import os, sqlite3, sys
    path = sys.argv[1]
    i = 0
    while True:
        conn = sqlite3.connect(path, timeout=30)
        with conn:
            conn.execute(
                "INSERT INTO writes (thread_id, checkpoint_id, task_id, idx, channel, value) "
                "VALUES ('other', ?, 't', 0, 'c', ?)",
                (str(i), os.urandom(2000)),
            )
        conn.close()  # the last connection to close checkpoints the WAL and removes it
        i += 1
        if i == 5:
            print("ready", flush=True)
    """
)
ROUNDS = 12
OPENS = 12


def read_checkpoints(saver) -> None:  # type: ignore[no-untyped-def]
    with saver.cursor(transaction=False) as cur:
        cur.execute("SELECT count(*), sum(length(value)) FROM writes").fetchone()
    list(saver.list(None, limit=5))


def test_opening_the_checkpointer_again_while_another_process_writes_keeps_reads_intact(
    tmp_path,
):
    """Before one connection per file, 10 to 12 of these 12 rounds read "database disk image
    is malformed": each open closed a descriptor of the file, dropping the process's locks."""
    failures = []
    for round_ in range(ROUNDS):
        db = tmp_path / f"p{round_}" / ".a0proj" / "checkpoints.sqlite"
        first = sqlite_checkpointer(str(db))
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True
        )
        savers = [first]
        try:
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
            for _ in range(OPENS):
                savers.append(sqlite_checkpointer(str(db)))  # opened again, in this process
                for _ in range(30):
                    read_checkpoints(first)
                    read_checkpoints(savers[-1])
        except sqlite3.DatabaseError as exc:
            failures.append(f"round {round_}: {exc}")
        finally:
            writer.kill()
            writer.wait()
            for saver in savers:
                close_checkpointer(saver)
    assert failures == [], f"{len(failures)} of {ROUNDS} rounds read a damaged database"


@needs_proc
def test_a_second_open_returns_the_same_saver_and_closes_no_descriptor_of_the_file(
    project, monkeypatch
):
    db = project / ".a0proj" / "checkpoints.sqlite"
    first = sqlite_checkpointer(str(db))
    before = fds_on(db)
    identity = (db.stat().st_dev, db.stat().st_ino)
    closed: list[int] = []
    real_close = os.close

    def spy(fd: int) -> None:
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == identity:
                closed.append(fd)
        except OSError:
            pass
        real_close(fd)

    monkeypatch.setattr(os, "close", spy)
    second = sqlite_checkpointer(str(db))
    via_other_name = open_checkpointer(
        str(project / ".a0proj" / ".." / ".a0proj" / db.name), project_root=str(project)
    )
    monkeypatch.setattr(os, "close", real_close)
    assert second is first and via_other_name is first and second.conn is first.conn
    assert closed == []
    assert fds_on(db) == before
    for saver in (first, second, via_other_name):
        close_checkpointer(saver)


def test_threads_opening_one_file_at_once_get_one_saver(project):
    db = str(project / ".a0proj" / "checkpoints.sqlite")
    with ThreadPoolExecutor(8) as pool:
        savers = list(pool.map(lambda _: sqlite_checkpointer(db), range(8)))
    assert all(saver is savers[0] for saver in savers)
    for saver in savers:
        close_checkpointer(saver)


@needs_proc
def test_the_shared_connection_closes_after_its_last_opener(project):
    db = project / ".a0proj" / "checkpoints.sqlite"
    first = sqlite_checkpointer(str(db))
    second = sqlite_checkpointer(str(db))
    close_checkpointer(first)
    assert list(second.list(thread_config("t"))) == []  # still open for the other opener
    close_checkpointer(second)
    with pytest.raises(sqlite3.ProgrammingError):
        second.conn.execute("SELECT 1")
    assert fds_on(db) == []
    third = sqlite_checkpointer(str(db))  # a new connection once the old one is gone
    assert third is not first and list(third.list(thread_config("t"))) == []
    close_checkpointer(third)


@needs_proc
def test_a_checkpointer_nobody_holds_any_more_is_closed(project):
    db = project / ".a0proj" / "checkpoints.sqlite"
    saver = sqlite_checkpointer(str(db))
    assert fds_on(db)
    del saver
    gc.collect()
    assert fds_on(db) == []


# --- the checkpoint file: no links, no chmod of a file we did not make -----------------------


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
def test_a_planted_link_at_the_checkpoint_file_is_refused_and_the_outside_file_untouched(
    project, tmp_path, kind
):
    target = tmp_path / "outside" / "victim"
    target.write_bytes(b"")  # an empty file: SQLite would happily make it a database
    target.chmod(0o644)
    db = project / ".a0proj" / "checkpoints.sqlite"
    plant(db, target, kind)
    with pytest.raises(UnsafePathError) as raised:
        open_checkpointer(None, project_root=str(project))
    assert str(db) in str(raised.value) and "remove the link" in str(raised.value)
    assert_untouched(target, b"")


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_planted_link_at_a_sqlite_side_file_is_refused(project, outside, suffix, kind):
    db = project / ".a0proj" / "checkpoints.sqlite"
    plant(Path(f"{db}{suffix}"), outside, kind)
    with pytest.raises(UnsafePathError) as raised:
        sqlite_checkpointer(str(db))
    assert f"{db}{suffix}" in str(raised.value) and "remove the link" in str(raised.value)
    assert_untouched(outside)


def test_a_symlinked_a0proj_folder_is_refused_for_checkpoints(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / ".a0proj").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafePathError, match="symlinked folder.*remove the link"):
        open_checkpointer(None, project_root=str(root))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_an_existing_checkpoint_file_of_ours_open_to_others_is_made_owner_only(project):
    db = project / ".a0proj" / "checkpoints.sqlite"
    sqlite3.connect(db).close()
    db.chmod(0o640)
    close_checkpointer(sqlite_checkpointer(str(db)))
    assert mode_of(db) == 0o600  # one name, ours, opened without following links: safe to fix


def test_a_new_checkpoint_file_is_0600_and_an_existing_private_one_opens(tmp_path):
    db = tmp_path / "project" / ".a0proj" / "checkpoints.sqlite"
    saver = sqlite_checkpointer(str(db))
    saver.put(
        thread_config("t") | {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        empty_checkpoint(),
        {},
        {},
    )
    close_checkpointer(saver)
    assert mode_of(db) == 0o600 and mode_of(db.parent) == 0o700
    saver = sqlite_checkpointer(str(db))
    assert len(list(saver.list(thread_config("t")))) == 1
    close_checkpointer(saver)


def test_the_terminal_reports_a_hard_linked_checkpoint_file_without_a_traceback(
    offline, outside, capsys
):
    db = offline / ".a0proj" / "checkpoints.sqlite"
    os.link(outside, db)
    code, _ = run_cli("run", "hello", "--thread", "t")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"handover: error: cannot open checkpoint file {db}: ")
    assert "has 2 hard links" in err and "remove the link" in err
    assert "Traceback" not in err
    assert_untouched(outside)


# --- lock files ------------------------------------------------------------------------------


def test_a_symlinked_lock_folder_is_refused_and_nothing_is_made_outside(project, tmp_path):
    db = project / ".a0proj" / "checkpoints.sqlite"
    saver = sqlite_checkpointer(str(db))
    away = tmp_path / "outside"
    Path(f"{db}.locks").symlink_to(away)
    with pytest.raises(UnsafePathError, match=f"symlinked folder: {db}.locks .*remove the link"):
        with one_writer(saver, thread_config("t")):
            pass
    assert list(away.iterdir()) == []
    Path(f"{db}.locks").unlink()  # the fix the error names: then the thread runs again
    with one_writer(saver, thread_config("t"), wait=0):
        pass
    assert mode_of(Path(f"{db}.locks")) == 0o700


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
def test_a_planted_link_at_a_lock_file_is_refused(project, outside, kind):
    db = project / ".a0proj" / "checkpoints.sqlite"
    saver = sqlite_checkpointer(str(db))
    lock = Path(lock_file_path(str(db), "t"))
    lock.parent.mkdir(mode=0o700)
    plant(lock, outside, kind)
    with pytest.raises(UnsafePathError) as raised:
        with one_writer(saver, thread_config("t")):
            pass
    assert str(lock) in str(raised.value) and "remove the link" in str(raised.value)
    assert_untouched(outside)


def test_lock_files_are_0600_in_a_0700_folder(project):
    db = project / ".a0proj" / "checkpoints.sqlite"
    saver = sqlite_checkpointer(str(db))
    with one_writer(saver, thread_config("t")):
        pass
    lock = Path(lock_file_path(str(db), "t"))
    assert mode_of(lock) == 0o600 and mode_of(lock.parent) == 0o700


def test_the_terminal_reports_a_symlinked_lock_folder_without_a_traceback(offline, capsys):
    db = offline / ".a0proj" / "checkpoints.sqlite"
    away = offline.parent / "outside"
    Path(f"{db}.locks").symlink_to(away)
    code, _ = run_cli("run", "hello", "--thread", "t")
    err = capsys.readouterr().err
    assert code == 1
    assert f"symlinked folder: {db}.locks is a symbolic link; remove the link" in err
    assert "Nothing of this turn was stored" in err and "Traceback" not in err
    assert list(away.iterdir()) == []


# --- the chat history ------------------------------------------------------------------------


def history_of(root: Path) -> tuple[ChatHistory, io.StringIO]:
    out = io.StringIO()
    return ChatHistory(str(root), Printer(out, spinner=False)), out


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
def test_a_planted_link_at_the_chat_history_is_refused_and_the_outside_file_untouched(
    project, outside, kind
):
    path = project / ".a0proj" / "chat_history"
    plant(path, outside, kind)
    history, out = history_of(project)
    assert history.load() == []
    history.add("my typed line")
    assert_untouched(outside)
    said = out.getvalue()
    assert said.count("(chat history: ") == 1  # said once; the chat goes on without it
    assert str(path) in said and "remove the link" in said


def test_a_symlinked_a0proj_folder_is_refused_for_the_chat_history(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / ".a0proj").symlink_to(tmp_path / "elsewhere")
    history, out = history_of(root)
    history.add("my typed line")
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert f"symlinked folder: {root / '.a0proj'} is a symbolic link; remove the link" in (
        out.getvalue()
    )


def test_the_chat_history_is_0600_in_a_0700_folder_and_read_back(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    history, _ = history_of(root)
    history.add("first line")
    history.add("second\nline")
    assert mode_of(root / ".a0proj" / "chat_history") == 0o600
    assert mode_of(root / ".a0proj") == 0o700
    again, _ = history_of(root)
    assert again.load() == ["first line", "second line"]


def test_secrets_are_redacted_before_a_chat_line_is_written(project):
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    history, _ = history_of(project)
    history.add(f"use the key {key} and password=hunter2hunter2 please")
    text = (project / ".a0proj" / "chat_history").read_text(encoding="utf-8")
    assert key not in text and "hunter2hunter2" not in text
    assert "[REDACTED:" in text


def test_a_long_chat_history_is_trimmed_through_its_own_descriptor(project):
    path = project / ".a0proj" / "chat_history"
    path.write_text("".join(f"line {i}\n" for i in range(25)), encoding="utf-8")
    path.chmod(0o600)
    inode = path.stat().st_ino
    out = io.StringIO()
    history = ChatHistory(str(project), Printer(out, spinner=False), limit=10)
    assert history.load() == [f"line {i}" for i in range(15, 25)]
    assert path.read_text(encoding="utf-8").splitlines() == [f"line {i}" for i in range(15, 25)]
    assert path.stat().st_ino == inode and out.getvalue() == ""
