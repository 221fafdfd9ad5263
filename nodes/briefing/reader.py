"""Stage 3 reader: a specialist's own briefing entries, newest first, within a token cap.

Only `<project_root>/.a0proj/handover/<specialist-with-dashes>-<slug>-<YYYY-MM-DD>.md`
files are read, and only when their first line names this specialist and that
slug (so `ui-design-specialist-x-<date>.md` never passes as `ui_design`'s topic
`specialist-x`). Every path is opened relative to a directory descriptor with
O_NOFOLLOW: a symlinked `.a0proj` or `handover` folder is refused, a symlinked or
non-regular briefing file is skipped, and a topic is only ever compared, as a
slug, with names listed inside the handover folder — it never becomes a path.

Reading is bounded whatever the files hold: each file is read under a shared
`flock` waited for at most LOCK_TIMEOUT_SECONDS (a file locked longer is skipped
with a note), only its last MAX_FILE_BYTES (a larger one, even a sparse 6 GB
file, is read from its end with a note), at most MAX_TOTAL_BYTES over all files
(newest files first; older ones left out with a note), each entry kept to
MAX_ENTRY_CHARS and NUL bytes (a sparse file's holes) dropped.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ...state import TokenCounter
from ...state.defaults import READ_BRIEFING_MAX_TOKENS
from ...state.linksafe import LinkRefused, NotAFolder, open_file, open_folder, open_root
from . import writer
from .writer import HANDOVER_DIR, STATE_DIR, flock_within, slugify_topic

MAX_FILE_BYTES = 8 * 1024 * 1024
"""A larger file is read from its end (its newest entries), with a note saying so."""
MAX_TOTAL_BYTES = 32 * 1024 * 1024
"""Most bytes one call reads over all files; the newest files are read first."""
MAX_ENTRY_CHARS = 256 * 1024
"""An entry longer than this is kept cut (it is far over any token cap anyway)."""
_CHUNK_BYTES = 1 << 20
FIRST_TAIL_BYTES = 16 * 1024
"""What `read_outcomes` reads of each file first (a handover and its outcome: a few KB)."""
_SPECIALIST = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
_ENTRY = re.compile(
    r"^## (?P<kind>Handover|Outcome) (?P<when>\S+) (?P<arrow>→|←) (?P<specialist>\S+)\n"
    r"<!-- handover-id: [^\n]*? -->\n",
    re.MULTILINE,
)
"""An entry's first lines: a handover (`→ specialist`) or its outcome (`← specialist`)."""


class _Refused(Exception):
    """Reading stops; str(error) is the text after 'ERROR: '."""


@dataclass(frozen=True)
class _Entry:
    when: datetime
    order: tuple[str, int]  # (file name, position): ties keep file order
    text: str
    kind: str = "Handover"
    body: str = ""


@dataclass
class _Notes:
    """What a read left out, for the NOTE lines of the result."""

    skipped: list[str] = field(default_factory=list)  # symlinks, not regular files
    locked: list[str] = field(default_factory=list)
    cut: list[tuple[str, int, int]] = field(default_factory=list)  # (name, size, bytes read)
    unread: list[str] = field(default_factory=list)  # over MAX_TOTAL_BYTES

    def lines(self) -> list[str]:
        said = []
        if self.skipped:
            said.append(
                f"NOTE: skipped {len(self.skipped)} file(s) that are symlinks or not regular "
                "files: " + ", ".join(sorted(self.skipped)[:10])
            )
        if self.locked:
            said.append(
                f"NOTE: skipped {len(self.locked)} file(s) another process kept locked for over "
                f"{writer.LOCK_TIMEOUT_SECONDS:g} s: " + ", ".join(self.locked[:10])
            )
        for name, size, read in self.cut[:10]:
            said.append(
                f"NOTE: {name} is {size:,} bytes; only its last {read:,} bytes were read (at "
                f"most {_mib(MAX_FILE_BYTES)} a file), so its older entries are left out"
            )
        if self.unread:
            said.append(
                f"NOTE: {len(self.unread)} older file(s) not read: one read takes at most "
                f"{_mib(MAX_TOTAL_BYTES)} of briefings: " + ", ".join(self.unread[:10])
            )
        return said


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def read_briefing(
    *,
    project_root: str,
    specialist: str,
    topic: str | None = None,
    max_tokens: int = READ_BRIEFING_MAX_TOKENS,
    counter: TokenCounter,
) -> str:
    """The specialist's briefing entries (one topic or all), newest first, <= max_tokens.

    Never raises: invalid arguments and refused paths come back as `ERROR: ...`.
    """
    try:
        slug = _validate(project_root, specialist, topic, max_tokens)
        entries, left_out = _collect(project_root, specialist, slug)
        return _fit(entries, specialist, slug, left_out.lines(), max_tokens, counter)
    except _Refused as refused:
        return f"ERROR: {refused}"
    except Exception as exc:  # the reader never raises; name what went wrong
        return f"ERROR: reading the briefing failed: {type(exc).__name__}: {exc}"


def _validate(
    project_root: object, specialist: object, topic: object, max_tokens: object
) -> str | None:
    if not isinstance(project_root, str) or "\x00" in project_root:
        raise _Refused(f"project_root must be an absolute path string (got {project_root!r:.80})")
    if not os.path.isabs(project_root):
        raise _Refused(f"project_root must be absolute (got {project_root!r:.80})")
    if not isinstance(specialist, str) or not _SPECIALIST.fullmatch(specialist):
        raise _Refused(
            f"invalid specialist {specialist!r:.80}; use a profile name such as 'frontend_designer'"
        )
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _Refused(f"max_tokens must be a positive integer (got {max_tokens!r:.40})")
    if topic is None:
        return None
    if not isinstance(topic, str) or "\x00" in topic:
        raise _Refused(f"topic must be text without NUL bytes (got {topic!r:.80})")
    slug = slugify_topic(topic)
    if not slug:
        raise _Refused(
            f"topic {topic[:60]!r} has no letters or digits; use the topic's slug, "
            "such as 'landing-page-hero', or leave it out for all topics"
        )
    return slug


def read_outcomes(
    *, project_root: str, specialist: str, limit: int, tail_bytes: int, max_files: int
) -> list[tuple[datetime, str, str]]:
    """The specialist's newest outcome entries over all topics, newest first, as (when, topic
    slug, entry body): the newest files' last `tail_bytes` each, at most `max_files` of them,
    until `limit` are found, so a handover reads little however long the briefings grow.
    A first pass reads each file's last `FIRST_TAIL_BYTES` only (the newest outcomes are
    near the end), and the whole tail only when that found too few. Never raises: a folder
    that cannot be read gives none."""
    try:
        _validate(project_root, specialist, None, 1)
        for probe in sorted({min(FIRST_TAIL_BYTES, tail_bytes), tail_bytes}):
            found = _collect(project_root, specialist, None, tail=(probe, max_files, limit))[0]
            outcomes = [e for e in found if e.kind == "Outcome"]
            if len(outcomes) >= limit:
                break
    except Exception:  # noqa: BLE001 - memory is a bonus: no outcome is better than no handover
        return []
    outcomes.sort(key=lambda e: (e.when, e.order), reverse=True)
    return [(e.when, _slug_of(e.order[0], specialist), e.body) for e in outcomes[:limit]]


def _slug_of(filename: str, specialist: str) -> str:
    stem = filename.removeprefix(specialist.replace("_", "-") + "-").removesuffix(".md")
    return stem[:-11] if len(stem) > 11 else stem  # drop -YYYY-MM-DD


# --- reading, confined to the handover folder ---------------------------------------------


def _collect(
    project_root: str, specialist: str, slug: str | None, tail: tuple[int, int, int] | None = None
) -> tuple[list[_Entry], _Notes]:
    """Entries of the specialist's own files (of one slug, if given) and what was left out.
    With `tail` (bytes, files, outcomes): each file's last bytes only, newest files first,
    until that many outcome entries are found or that many files are read."""
    pattern = re.compile(
        re.escape(specialist.replace("_", "-"))
        + r"-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)-(?P<date>\d{4}-\d{2}-\d{2})\.md"
    )
    fds: list[int] = []
    notes = _Notes()
    try:
        try:
            fds.append(open_root(project_root))
        except OSError as exc:
            raise _Refused(f"project_root {project_root!r} is not a readable folder") from exc
        for name in (STATE_DIR, HANDOVER_DIR):
            fd = _open_dir(name, fds[-1])
            if fd is None:
                return [], notes
            fds.append(fd)
        found = [
            (match, name)
            for name in os.listdir(fds[-1])
            if (match := pattern.fullmatch(name)) and (slug is None or match["slug"] == slug)
        ]
        newest_first = sorted(found, key=lambda item: (item[0]["date"], item[1]), reverse=True)
        entries: list[_Entry] = []
        budget = MAX_TOTAL_BYTES
        for match, name in newest_first[: tail[1] if tail is not None else None]:
            if budget <= 0:
                notes.unread.append(name)
                continue
            header = f"# Briefing: {specialist} — {match['slug']}"
            limit = min(budget, MAX_FILE_BYTES if tail is None else tail[0])
            read = _read_file(fds[-1], name, header, limit, notes)
            if read is not None:
                text, size = read
                budget -= size
                entries += _entries(text, name, specialist, match["date"])
            if tail is not None and sum(e.kind == "Outcome" for e in entries) >= tail[2]:
                break
        return entries, notes
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _open_dir(name: str, parent_fd: int) -> int | None:
    """Open a folder below parent_fd, refusing a symlink; None when it does not exist."""
    try:
        return open_folder(name, parent_fd)[0]
    except FileNotFoundError:
        return None
    except LinkRefused:
        raise _Refused(f"refusing to read through a symlink: {name!r} is a symbolic link") from None
    except NotAFolder:
        raise _Refused(f"{name!r} is not a folder") from None
    except OSError as exc:
        raise _Refused(f"refusing to open {name!r}: {exc.strerror}") from exc


def _read_file(
    dir_fd: int, name: str, header: str, limit: int, notes: _Notes
) -> tuple[str, int] | None:
    """(text, bytes read) of a regular file whose first line is `header`, under a shared lock.

    At most its last `limit` bytes are read, in bounded chunks (a cut file is noted). None
    for a file that is not ours (another first line) or skipped (noted).
    """
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            notes.skipped.append(name)
            return None
    except OSError:  # removed since the listing
        return None
    try:  # a FIFO swapped in after the check must not block the open
        fd, _ = open_file(name, dir_fd, os.O_RDONLY)
    except OSError:
        notes.skipped.append(name)
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            notes.skipped.append(name)
            return None
        if not flock_within(fd, fcntl.LOCK_SH):  # the writer appends under LOCK_EX
            notes.locked.append(name)
            return None
        first_line = os.pread(fd, 4096, 0).split(b"\n", 1)[0]
        if first_line.decode("utf-8", errors="replace") != header:
            return None
        size = os.fstat(fd).st_size
        offset = start = max(0, size - limit)
        if start:
            notes.cut.append((name, size, size - start))
        chunks = []
        while offset < size:
            chunk = os.pread(fd, min(size - offset, _CHUNK_BYTES), offset)
            if not chunk:
                break
            chunks.append(chunk.replace(b"\0", b""))  # a sparse file's holes
            offset += len(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace"), offset - start
    finally:
        os.close(fd)  # closing releases the lock


def _entries(text: str, filename: str, specialist: str, date: str) -> list[_Entry]:
    """Split a file's text into this specialist's entries (each cut to MAX_ENTRY_CHARS)."""
    matches = list(_ENTRY.finditer(text))
    out = []
    for pos, match in enumerate(matches):
        if match["specialist"] != specialist:
            continue
        end = matches[pos + 1].start() if pos + 1 < len(matches) else len(text)
        body = text[match.end() : min(end, match.end() + MAX_ENTRY_CHARS)].strip()
        if end - match.end() > MAX_ENTRY_CHARS:
            body += f"\n… [entry cut: {end - match.end() - MAX_ENTRY_CHARS:,} more characters]"
        heading = f"## {match['kind']} {match['when']} {match['arrow']} {specialist} ({filename})"
        when = _parse_when(match["when"], date)
        out.append(_Entry(when, (filename, pos), f"{heading}\n\n{body}", match["kind"], body))
    return out


_WHEN = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:T(\d{1,2}):(\d{1,2}):(\d{1,2})Z)?")


def _parse_when(value: str, date: str) -> datetime:
    """An entry's time (`2026-12-01T21:31:19Z`), else its file's date, else the earliest time.
    A regular expression, not `strptime`: a handover reads dozens of entries."""
    for text, timed in ((value, True), (date, False)):
        match = _WHEN.fullmatch(text)
        if match is None or (match[4] is not None) != timed:
            continue
        try:
            year, month, day, hour, minute, second = (int(p or 0) for p in match.groups())
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        except ValueError:  # no such day or hour
            continue
    return datetime.min.replace(tzinfo=UTC)


# --- the token cap -------------------------------------------------------------------------


def _fit(
    entries: list[_Entry],
    specialist: str,
    slug: str | None,
    notes: list[str],
    max_tokens: int,
    counter: TokenCounter,
) -> str:
    """The entries, newest first, while they fit (the oldest are dropped and counted); or the
    line that says there are none."""
    if not entries:
        where = f" on topic '{slug}'" if slug is not None else ""
        return "\n".join([f"No briefing entries for {specialist}{where} yet.", *notes])
    entries = sorted(entries, key=lambda e: (e.when, e.order), reverse=True)
    total = len(entries)
    scope = f"topic '{slug}'" if slug is not None else "all topics"

    def render(shown: list[str]) -> str:
        lines = [
            f"BRIEFING (stage 3) for {specialist}, {scope}: {len(shown)} of {total} "
            "entries, newest first."
        ]
        if len(shown) < total:
            left_out = total - len(shown)
            lines.append(
                f"[{left_out} older {'entry' if left_out == 1 else 'entries'} left out to stay "
                f"within the {max_tokens:,}-token cap]"
            )
        return "\n".join([*lines, *notes, "", "\n\n".join(shown)]).rstrip() + "\n"

    shown: list[str] = []
    used = counter.count_text(render([]))
    for entry in entries:
        cost = counter.count_text(entry.text) + 1
        if used + cost > max_tokens:
            break
        shown.append(entry.text)
        used += cost
    while counter.count_text(text := render(shown)) > max_tokens:
        if not shown:
            return counter.truncate(text, max_tokens)
        shown.pop()
    if not shown:  # the newest entry alone is over the cap: show its beginning
        marker = "\n… [entry cut to fit the cap]"
        room = max_tokens - counter.count_text(render(["x"])) - counter.count_text(marker) - 4
        if room > 16:
            cut = counter.truncate(entries[0].text, room) + marker
            text = render([cut])
            if counter.count_text(text) <= max_tokens:
                return text
        return counter.truncate(render([]), max_tokens)
    return text
