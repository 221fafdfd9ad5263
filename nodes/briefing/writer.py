"""Stage 3: the append-only briefing file under `<project_root>/.a0proj/handover/`.

Every path is opened relative to a directory descriptor with O_NOFOLLOW, so a
topic can never steer a write outside the handover folder and a symlinked
`.a0proj`, `handover` folder or briefing file is refused, not followed. A
briefing file with more than one hard link (a link planted at the predicted
path to a file elsewhere) is refused too: its link count is checked right after
opening and again under the lock, before anything is written or its mode changed.

Modes: a briefing file this call creates is 0600, and an `.a0proj` or `handover`
folder this call creates is 0700 (set again with fchmod after creation, so
neither the umask nor a default ACL decides them). A folder that already existed
keeps its mode: it may be the user's own `.a0proj` holding other state. An
existing briefing file wider than 0600 is tightened (its group, other, execute
and special bits are cleared) once it is locked, before the id check and any
write; the tightening stays even if the append then fails.

An entry is written with one `write` under an exclusive `flock`, after checking
that its handover id is not in the file already (a resumed crash must not
append it twice; the file is scanned in bounded chunks, skipping a sparse
file's holes, never read whole). The lock is waited for at most
LOCK_TIMEOUT_SECONDS (non-blocking attempts until a deadline), so a process that
holds it and never lets go fails the append with a BriefingError naming the
file instead of blocking the handover forever. All text is encoded to UTF-8
before anything is touched, so text that cannot be encoded (a lone surrogate)
fails with nothing created. A failed append removes what this call created and
leaves the file's bytes as they were.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import time
import unicodedata
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime

from ...state import HandoverPackage
from ...state.linksafe import (
    FILE_MODE,
    LinkRefused,
    NotAFolder,
    open_file,
    open_folder,
    open_root,
    write_all,
)

STATE_DIR = ".a0proj"
HANDOVER_DIR = "handover"
MAX_SLUG_LENGTH = 64
_ID_MARKER = "<!-- handover-id: {} -->"
LOCK_TIMEOUT_SECONDS = 10.0
"""Longest wait for another process's flock on a briefing file (writer and reader)."""
_LOCK_FIRST_PAUSE = 0.002
_LOCK_MAX_PAUSE = 0.05
SCAN_CHUNK_BYTES = 1024 * 1024
"""The id check reads the file this much at a time."""


class BriefingError(Exception):
    """An append could not be done; str(error) is the text after 'ERROR: '."""


class _LockTimeout(BriefingError):
    """The append gave up waiting for another process's lock."""


@dataclass(frozen=True)
class BriefingResult:
    """What an append did (the tool's `briefing` block plus whether it wrote)."""

    path: str
    existed_before: bool
    newly_created: bool
    size_bytes: int
    appended: bool


def slugify_topic(topic: str) -> str:
    """A filename-safe slug: `Landing Page / Hero!` -> `landing-page-hero` ('' if nothing is left)."""
    ascii_text = unicodedata.normalize("NFKD", topic).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:MAX_SLUG_LENGTH].rstrip("-")


def briefing_filename(specialist: str, topic_slug: str, when: datetime) -> str:
    """`frontend_designer`, `landing-page-hero` -> `frontend-designer-landing-page-hero-<date>.md`."""
    return f"{specialist.replace('_', '-')}-{topic_slug}-{when.astimezone(UTC):%Y-%m-%d}.md"


def briefing_dir(project_root: str) -> str:
    """The folder briefing files live in."""
    return os.path.join(project_root, STATE_DIR, HANDOVER_DIR)


def briefing_path(project_root: str, specialist: str, topic_slug: str, when: datetime) -> str:
    """The absolute path of a briefing file."""
    return os.path.join(briefing_dir(project_root), briefing_filename(specialist, topic_slug, when))


_HEADING = re.compile(r"^(\s*)(#)", re.MULTILINE)


def _escape(text: str) -> str:
    """Keep caller text from forging the file's structure: an entry's id marker, the end of a
    comment, or a heading (`## Outcome ...`, `### Decisions`) at the start of a line."""
    text = text.replace("<!--", "&lt;!--").replace("-->", "--&gt;").replace("\x00", "")
    return _HEADING.sub(r"\1\\\2", text)


def quoted_line(text: str) -> str:
    """What another agent (or the user) wrote, as one line of quoted data for an agent's
    request: whitespace collapsed, angle brackets shown as ‹ › (no text can open or close a
    tag such as `</package>` or `<system>`), no comment markers."""
    return quoted_text(" ".join(str(text).split()))


def quoted_text(text: str) -> str:
    """Several lines of quoted data, their lines kept: angle brackets shown as ‹ › (no text
    can open or close a tag such as `</package>` or `<system>`)."""
    return str(text).replace("\x00", "").replace("<", "‹").replace(">", "›")


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {' '.join(_escape(item).split())}" for item in items) or "- (none)"


def render_entry(
    package: HandoverPackage,
    *,
    when: datetime,
    redacted: dict[str, int] | None = None,
    kind: str = "handover",
) -> str:
    """One Markdown entry: the package as handed over, never the chat history.

    `redacted` (kind -> count) says how many secrets were replaced before the write;
    `kind` "consult" marks a consult's entry (one question; the caller keeps the
    conversation, and the question is the entry's reason).
    """
    handover_id = package["handover_id"]
    turns = "\n".join(
        f"> {_escape(turn)}".replace("\n", "\n> ") for turn in package["recent_turns"]
    )
    counts = redacted or {}
    kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(counts.items()))
    secrets = f"{sum(counts.values())} ({kinds})" if sum(counts.values()) else "none"
    consult = (
        "- **Kind:** consult (one question, answered once; the conversation stays with "
        f"{_escape(package['from_agent']) or 'the caller'})\n"
        if kind == "consult"
        else ""
    )
    return (
        f"\n## Handover {when.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ} → {package['specialist']}\n"
        f"{_ID_MARKER.format(handover_id)}\n\n"
        f"- **Handover id:** `{handover_id}`\n"
        f"{consult}"
        f"- **From:** {_escape(package['from_agent']) or '(caller not given)'}\n"
        f"- **Reason:** {_escape(package['reason']).strip() or '(no reason given)'}\n"
        f"- **Return condition:** {package['return_condition']}\n"
        f"- **Package tokens:** {package['estimated_tokens']} / {package['max_context_tokens']}\n"
        f"- **Secrets redacted:** {secrets}\n\n"
        f"### Summary\n\n{_escape(package['summary']).strip() or '(no summary)'}\n\n"
        f"### Recent turns\n\n{turns or '(none)'}\n\n"
        f"### Decisions\n\n{_bullets(package['decisions'])}\n\n"
        f"### Artifacts\n\n{_bullets(package['artifacts'])}\n"
        f"{_memory_sections(package)}"
    )


def _memory_sections(package: HandoverPackage) -> str:
    """The thread ledger's lines and the earlier turns the package carried, if any."""
    out = ""
    ledger = [line.removeprefix("- ") for line in package.get("ledger") or []]
    omitted = package.get("ledger_omitted") or 0
    if ledger or omitted:
        more = f"\n- ({omitted} more did not fit the package)" if omitted else ""
        out += f"\n### Thread ledger\n\n{_bullets(ledger)}{more}\n"
    earlier = package.get("earlier_turns") or []
    if earlier:
        quoted = "\n".join(f"> {' '.join(_escape(turn).split())}" for turn in earlier)
        out += f"\n### Earlier turns\n\n{quoted}\n"
    return out


def _open_dir(name: str, dir_fd: int, created: list[tuple[str, int]]) -> int:
    """Open (or create, 0700) one folder below dir_fd, refusing symlinks; one this call made
    joins `created`, with its parent's fd."""
    try:
        fd, made = open_folder(name, dir_fd, create=True)
    except FileNotFoundError as exc:
        raise BriefingError(f"folder {name!r} does not exist") from exc
    except LinkRefused:
        raise BriefingError(
            f"refusing to write through a symlink: {name!r} is a symbolic link"
        ) from None
    except NotAFolder:
        raise BriefingError(
            f"failed to append briefing file: {name!r} is not a directory"
        ) from None
    if made:
        created.append((name, dir_fd))
    return fd


def _utf8(what: str, text: str, path: str) -> bytes:
    """`text` as UTF-8, or a BriefingError naming the lone surrogate (before any file is touched)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BriefingError(
            f"failed to append briefing file {path}: the {what} is not valid text "
            f"(it holds a lone surrogate at position {exc.start})"
        ) from exc


def _check_path_text(what: str, text: str) -> None:
    """A path part the OS can take: no NUL, and encodable (surrogate-escaped bytes allowed)."""
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        raise BriefingError(
            f"invalid {what} {text!r}: it holds a lone surrogate at position {exc.start}"
        ) from exc
    if "\x00" in text:
        raise BriefingError(f"invalid {what} {text!r}: it holds a NUL byte")


def append_briefing(
    *, project_root: str, filename: str, header: str, entry: str, handover_id: str
) -> BriefingResult:
    """Append `entry` to `<project_root>/.a0proj/handover/<filename>` once per handover id.

    Raises BriefingError (text for the caller's `ERROR:`) on any failure, after
    removing the folders and file this call created.
    """
    if "/" in filename or filename in ("", ".", "..") or "\x00" in filename:
        raise BriefingError(f"invalid briefing file name {filename!r}")
    _check_path_text("briefing file name", filename)
    _check_path_text("project root", project_root)
    path = os.path.join(briefing_dir(project_root), filename)
    # encode everything first: a text that cannot be written must not create anything
    data = (
        _utf8("header", header, path),
        _utf8("entry", entry, path),
        _utf8("handover id", _ID_MARKER.format(handover_id), path),
    )
    created: list[tuple[str, int]] = []  # the folders this call made, with their parents' fds
    fds: list[int] = []
    try:
        fds.append(open_root(project_root))
        for name in (STATE_DIR, HANDOVER_DIR):
            fds.append(_open_dir(name, fds[-1], created))
        # a file another process created and then removed on its own failed write is
        # gone once we hold the lock (no links left): open the path again and retry
        for _attempt in range(5):
            result = _append_once(fds[-1], filename, path, data)
            if result is not None:
                return result
        raise BriefingError(f"failed to append briefing file {path}: the file kept disappearing")
    except BaseException as exc:
        # leave nothing behind, whatever failed: remove the folders this call made (if empty)
        for name, parent in reversed(created):
            with suppress(OSError):
                os.rmdir(name, dir_fd=parent)
        if isinstance(exc, OSError):
            raise BriefingError(
                f"failed to append briefing file {path}: {exc.strerror or exc}"
            ) from exc
        raise
    finally:
        for fd in reversed(fds):
            with suppress(OSError):
                os.close(fd)


def flock_within(fd: int, operation: int, timeout: float | None = None) -> bool:
    """Take `operation` (LOCK_EX or LOCK_SH) on fd, waiting at most `timeout` seconds
    (LOCK_TIMEOUT_SECONDS when None); False when another process still holds a lock then.

    Non-blocking attempts with a short, growing pause between them: a blocking flock
    cannot be given up on from a worker thread, and the graph runs tools in threads.
    """
    deadline = time.monotonic() + (LOCK_TIMEOUT_SECONDS if timeout is None else timeout)
    pause = _LOCK_FIRST_PAUSE
    while True:
        with suppress(BlockingIOError):
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, _LOCK_MAX_PAUSE)


def _holds(fd: int, needle: bytes, size: int) -> bool:
    """True when the first `size` bytes of fd contain `needle` (which holds no NUL byte).

    Read in SCAN_CHUNK_BYTES chunks, never whole, and a sparse file's holes are skipped
    (SEEK_DATA): they read as NUL bytes, so the needle cannot be in them.
    """
    offset = 0
    while offset < size:
        start, end = _data_run(fd, offset, size)
        if start >= end:
            return False
        tail = b""
        while start < end:
            chunk = os.pread(fd, min(SCAN_CHUNK_BYTES, end - start), start)
            if not chunk:
                return False
            if needle in chunk or needle in tail + chunk[: len(needle)]:
                return True
            tail = chunk[-len(needle) :]
            start += len(chunk)
        offset = end
    return False


def _data_run(fd: int, offset: int, size: int) -> tuple[int, int]:
    """The next run of data at or after offset, below size: (start, end); start >= end at the
    end. Without SEEK_DATA support, all of it is one run."""
    if not hasattr(os, "SEEK_DATA"):
        return offset, size
    try:
        start = os.lseek(fd, offset, os.SEEK_DATA)
        return start, min(os.lseek(fd, start, os.SEEK_HOLE), size)
    except OSError as exc:  # ENXIO: nothing but a hole after offset
        return (size, size) if exc.errno == errno.ENXIO else (offset, size)


def _refuse_hard_link(st: os.stat_result, path: str) -> None:
    """A regular file with another name somewhere (maybe outside .a0proj/) is not written."""
    if st.st_nlink > 1:
        raise BriefingError(
            f"refusing to write through a hard link: {path} has {st.st_nlink} links"
        )


def _append_once(
    hand_fd: int, filename: str, path: str, data: tuple[bytes, bytes, bytes]
) -> BriefingResult | None:
    """Append to the file once: None when it was unlinked while we waited for its lock."""
    header, entry, marker = data
    try:
        fd, created = open_file(filename, hand_fd, os.O_RDWR | os.O_APPEND, create=True)
    except LinkRefused as exc:
        raise BriefingError(
            f"refusing to write through a symlink: {path} is a symbolic link"
        ) from exc
    try:
        _refuse_hard_link(os.fstat(fd), path)  # before waiting on someone else's lock
        if not flock_within(fd, fcntl.LOCK_EX):
            raise _LockTimeout(
                f"failed to append briefing file {path}: another process holds its lock and did "
                f"not release it within {LOCK_TIMEOUT_SECONDS:g} s; nothing was written. Try the "
                "handover again when that process has finished (or stop it)"
            )
        st = os.fstat(fd)
        if st.st_nlink == 0:
            return None  # unlinked while we waited for the lock
        if not stat.S_ISREG(st.st_mode):
            raise BriefingError(f"failed to append briefing file {path}: not a regular file")
        _refuse_hard_link(st, path)  # a link made while we waited for the lock
        mode = stat.S_IMODE(st.st_mode)
        if mode & ~FILE_MODE:
            os.fchmod(fd, mode & FILE_MODE)
        size_before = st.st_size
        if size_before and _holds(fd, marker, size_before):
            return BriefingResult(path, not created, created, size_before, appended=False)
        try:
            write_all(fd, (header if size_before == 0 else b"") + entry)
            os.fsync(fd)
        except BaseException:
            # roll back our own partial bytes; never touch what was there before
            with suppress(OSError):
                os.ftruncate(fd, size_before)
            raise
        return BriefingResult(path, not created, created, os.fstat(fd).st_size, appended=True)
    except BaseException as exc:
        if created:  # after a lock timeout someone holds it: do not wait a second time
            _remove_if_still_empty(hand_fd, filename, fd, wait=not isinstance(exc, _LockTimeout))
        raise
    finally:
        os.close(fd)  # closing releases the flock


def _remove_if_still_empty(hand_fd: int, filename: str, fd: int, *, wait: bool = True) -> None:
    """Unlink the file this call created if nobody wrote to it and the name is still it."""
    with suppress(OSError):
        # no other writer is mid-append (we may hold the lock already)
        if not flock_within(fd, fcntl.LOCK_EX, None if wait else 0):
            return  # its holder will write to it, or leave it empty
        st = os.fstat(fd)
        if st.st_size != 0 or st.st_nlink == 0:
            return  # another writer's entry is in it, or it is gone already
        named = os.stat(filename, dir_fd=hand_fd, follow_symlinks=False)
        if (named.st_dev, named.st_ino) == (st.st_dev, st.st_ino):
            os.unlink(filename, dir_fd=hand_fd)


def briefing_header(specialist: str, topic_slug: str) -> str:
    """The first lines of a new briefing file."""
    return (
        f"# Briefing: {specialist} — {topic_slug}\n\n"
        "Append-only handover log (stage 3). Each entry is one stage-1 package.\n"
    )


def now_utc() -> datetime:
    """The current time in UTC (one place, so tests can pin it)."""
    return datetime.now(UTC)
