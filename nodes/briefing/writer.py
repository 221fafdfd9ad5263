"""Stage 3: the append-only briefing file under `<project_root>/.a0proj/handover/`.

Every path is opened relative to a directory descriptor with O_NOFOLLOW, so a
topic can never steer a write outside the handover folder and a symlinked
`.a0proj`, `handover` folder or briefing file is refused, not followed. An
entry is written with one `write` under an exclusive `flock`, after checking
that its handover id is not in the file already (a resumed crash must not
append it twice). A failed append removes what this call created and leaves
the file as it was.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

STATE_DIR = ".a0proj"
HANDOVER_DIR = "handover"
MAX_SLUG_LENGTH = 64
_ID_MARKER = "<!-- handover-id: {} -->"


class BriefingError(Exception):
    """An append could not be done; str(error) is the text after 'ERROR: '."""


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


def _escape(text: str) -> str:
    """Keep caller text from forging an entry's id marker or closing a comment."""
    return text.replace("<!--", "&lt;!--").replace("\x00", "")


def _bullets(items: list[str], empty: str = "(none)") -> str:
    if not items:
        return f"- {empty}"
    return "\n".join(f"- {_escape(item).strip()}" for item in items)


def render_entry(
    *,
    handover_id: str,
    when: datetime,
    specialist: str,
    from_agent: str,
    reason: str,
    summary: str,
    recent_turns: list[str],
    decisions: list[str],
    artifacts: list[str],
    return_condition: str,
    estimated_tokens: int,
    max_context_tokens: int,
) -> str:
    """One Markdown entry: the package as handed over, never the chat history."""
    turns = "\n".join(f"> {_escape(turn)}".replace("\n", "\n> ") for turn in recent_turns)
    return (
        f"\n## Handover {when.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ} → {specialist}\n"
        f"{_ID_MARKER.format(handover_id)}\n\n"
        f"- **Handover id:** `{handover_id}`\n"
        f"- **From:** {_escape(from_agent) or '(caller not given)'}\n"
        f"- **Reason:** {_escape(reason).strip() or '(no reason given)'}\n"
        f"- **Return condition:** {return_condition}\n"
        f"- **Package tokens:** {estimated_tokens} / {max_context_tokens}\n\n"
        f"### Summary\n\n{_escape(summary).strip() or '(no summary)'}\n\n"
        f"### Recent turns\n\n{turns or '(none)'}\n\n"
        f"### Decisions\n\n{_bullets(decisions)}\n\n"
        f"### Artifacts\n\n{_bullets(artifacts)}\n"
    )


def _open_dir(name: str, dir_fd: int | None, *, create: bool, created: list[str]) -> int:
    """Open (and maybe create) one folder below dir_fd, refusing symlinks."""
    if create:
        try:
            os.mkdir(name, 0o755, dir_fd=dir_fd)
            created.append(name)
        except FileExistsError:
            pass
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError as exc:
        raise BriefingError(f"folder {name!r} does not exist") from exc
    if stat.S_ISLNK(st.st_mode):
        raise BriefingError(f"refusing to write through a symlink: {name!r} is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise BriefingError(f"failed to append briefing file: {name!r} is not a directory")
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        view = view[written:]


def append_briefing(
    *,
    project_root: str,
    filename: str,
    header: str,
    entry: str,
    handover_id: str,
) -> BriefingResult:
    """Append `entry` to `<project_root>/.a0proj/handover/<filename>` once per handover id.

    Raises BriefingError (text for the caller's `ERROR:`) on any failure, after
    removing the folders and file this call created.
    """
    if "/" in filename or filename in ("", ".", "..") or "\x00" in filename:
        raise BriefingError(f"invalid briefing file name {filename!r}")
    path = os.path.join(briefing_dir(project_root), filename)
    created_dirs: list[str] = []
    fds: list[int] = []
    root_fd = state_fd = hand_fd = -1
    try:
        try:
            root_fd = os.open(project_root, os.O_RDONLY | os.O_DIRECTORY)
            fds.append(root_fd)
            state_fd = _open_dir(STATE_DIR, root_fd, create=True, created=created_dirs)
            fds.append(state_fd)
            hand_fd = _open_dir(HANDOVER_DIR, state_fd, create=True, created=created_dirs)
            fds.append(hand_fd)
            return _append_locked(hand_fd, filename, path, header, entry, handover_id)
        except OSError as exc:
            raise BriefingError(
                f"failed to append briefing file {path}: {exc.strerror or exc}"
            ) from exc
    except BriefingError:
        # leave nothing behind: remove the folders this call made (if still empty)
        if HANDOVER_DIR in created_dirs and state_fd >= 0:
            _quiet(lambda: os.rmdir(HANDOVER_DIR, dir_fd=state_fd))
        if STATE_DIR in created_dirs and root_fd >= 0:
            _quiet(lambda: os.rmdir(STATE_DIR, dir_fd=root_fd))
        raise
    finally:
        for fd in reversed(fds):
            _quiet(lambda fd=fd: os.close(fd))


def _quiet(action) -> None:  # type: ignore[no-untyped-def]
    try:
        action()
    except OSError:
        pass


def _append_locked(
    hand_fd: int, filename: str, path: str, header: str, entry: str, handover_id: str
) -> BriefingResult:
    # a file another process created and then removed on its own failed write is gone
    # once we hold the lock (no links left): open the path again and retry
    for _attempt in range(5):
        result = _append_once(hand_fd, filename, path, header, entry, handover_id)
        if result is not None:
            return result
    raise BriefingError(f"failed to append briefing file {path}: the file kept disappearing")


def _append_once(
    hand_fd: int, filename: str, path: str, header: str, entry: str, handover_id: str
) -> BriefingResult | None:
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    created = False
    try:
        fd = os.open(filename, flags | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=hand_fd)
        created = True
    except FileExistsError:
        try:
            fd = os.open(filename, flags, dir_fd=hand_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise BriefingError(
                    f"refusing to write through a symlink: {path} is a symbolic link"
                ) from exc
            raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        st = os.fstat(fd)
        if st.st_nlink == 0:
            return None  # unlinked while we waited for the lock
        if not stat.S_ISREG(st.st_mode):
            raise BriefingError(f"failed to append briefing file {path}: not a regular file")
        size_before = st.st_size
        marker = _ID_MARKER.format(handover_id).encode()
        if size_before and marker in os.pread(fd, size_before, 0):
            return BriefingResult(path, not created, created, size_before, appended=False)
        data = ((header if size_before == 0 else "") + entry).encode("utf-8")
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            # roll back our own partial bytes; never touch what was there before
            _quiet(lambda: os.ftruncate(fd, size_before))
            if created and size_before == 0:
                _quiet(lambda: os.unlink(filename, dir_fd=hand_fd))
            raise
        return BriefingResult(
            path,
            existed_before=not created,
            newly_created=created,
            size_bytes=os.fstat(fd).st_size,
            appended=True,
        )
    finally:
        os.close(fd)  # closing releases the flock


def briefing_header(specialist: str, topic_slug: str) -> str:
    """The first lines of a new briefing file."""
    return (
        f"# Briefing: {specialist} — {topic_slug}\n\n"
        "Append-only handover log (stage 3). Each entry is one stage-1 package.\n"
    )


def now_utc() -> datetime:
    """The current time in UTC (one place, so tests can pin it)."""
    return datetime.now(UTC)
