"""Built-in read-only workspace tools for agents: list_files, read_file and search_files.

The pure functions take the project root as an argument; the LangChain tools made
by `make_workspace_tools` take it from the LangGraph run context
(`HandoverContext.project_root`), never from the model. Nothing here writes. The
functions never raise: every failure is one line starting `ERROR: ` that names
the bad value and the fix, and every result is capped at `max_tokens` (a cut
result says so on its last line).

Confinement rules, applied before anything is opened:

* `path` and `query` are non-empty strings without NUL bytes; `path` is relative
  to the project root. Absolute paths are refused (the root's own too), and so
  is a path whose `..` climbs out of the root.
* The path is resolved with `os.path.realpath` (the root too) and must stay
  inside the real root (`os.path.commonpath`): a symlink that leads outside -- a
  file, a folder, one in the middle of a path, a chain -- is refused; a symlink
  that stays inside is followed.
* Nothing named `.a0proj` (the run's private state: briefings, checkpoints) is
  read, listed or searched, whether named directly or reached through a symlink.
* The checked real path is then opened one component at a time from the real
  root's descriptor with `O_NOFOLLOW`, so a symlink swapped in after the check is
  refused instead of followed; only regular files are read (POSIX only).
* Listing and search never follow symlinks (a listing marks them) and do not
  descend into the noise folders .git, .venv, node_modules and __pycache__; an
  explicit path into a noise folder is allowed.
* Binary files (a NUL byte in the first 8 KiB, or not UTF-8) are refused by
  read_file and skipped by search_files, which also skips files over 2 MB.
* `list_files` given a file lists just that file, with a note to use read_file.
"""

from __future__ import annotations

import functools
import os
import posixpath
import stat
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import Field, ValidationError, WithJsonSchema

from ...state import HandoverContext, TokenCounter, coerce_context, token_counter
from ..briefing.writer import STATE_DIR

WORKSPACE_TOOL_NAMES = ("list_files", "read_file", "search_files")
WORKSPACE_MAX_TOKENS = 4000
NOISE_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
MAX_READ_LINES = 2000
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_QUERY_CHARS = 500
MAX_HIT_CHARS = 200
MAX_HITS = 1000
MAX_WALK_ENTRIES = 10000
MAX_DEPTH = 64
BINARY_PROBE_BYTES = 8192

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_ROOT_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | _O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
_CONTROL_ESCAPES = {code: f"\\x{code:02x}" for code in [*range(32), 127]}


class _Refused(Exception):
    """Internal: carries one `ERROR: ...` line out to the public function's return value."""


@dataclass(frozen=True)
class _Target:
    """A checked path: the real root, the real components under it, its kind and display form."""

    root: str
    parts: tuple[str, ...]
    kind: str
    shown: str

    @property
    def rel(self) -> str:
        """The real path relative to the root with `/` separators ('.' for the root)."""
        return "/".join(self.parts) or "."

    @property
    def label(self) -> str:
        """How a result header names this folder or file (folders end with '/')."""
        slash = "/" if self.kind == "dir" else ""
        name = "the project root" if self.shown == "." else _printable(self.shown) + slash
        if self.rel == self.shown:
            return name
        return f"{name} (resolved to {_printable(self.rel)}{slash})"


@dataclass
class _WalkNotes:
    """What a walk left out, so the result can say so."""

    state_dirs: int = 0
    noise: set[str] = field(default_factory=set)
    unreadable: int = 0
    too_deep: int = 0
    stopped: bool = False


@dataclass
class _SearchNotes:
    """What a search skipped, so the result can say so."""

    searched: int = 0
    binary: int = 0
    big: int = 0
    links: int = 0
    unreadable: int = 0


# --- small helpers --------------------------------------------------------------------------


def _show(value: object) -> str:
    """A short repr of a bad value for an error message (one line, at most ~80 chars)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _printable(name: str) -> str:
    """A file name safe to print on one line: bad bytes and control characters escaped."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").translate(_CONTROL_ESCAPES)


def _plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _is_state(name: str) -> bool:
    """True for the run's private state folder name (case-insensitive filesystems too)."""
    return name.casefold() == STATE_DIR


def _failed(tool: str, exc: BaseException) -> str:
    """The error text for an unexpected exception, so a tool never raises."""
    return f"ERROR: {tool} failed: {type(exc).__name__}: {exc}"


def _guarded(name: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Turn a refusal into its ERROR text and any other exception into `ERROR: <name> failed`."""

    def decorate(func: Callable[..., str]) -> Callable[..., str]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> str:
            try:
                return func(*args, **kwargs)
            except _Refused as refusal:
                return str(refusal)
            except Exception as exc:
                return _failed(name, exc)

        return run

    return decorate


# --- argument checks ------------------------------------------------------------------------


def _check_text(value: object, arg: str, example: str) -> str:
    """A non-empty string without NUL bytes, or a refusal naming `arg`."""
    if not isinstance(value, str) or not value.strip():
        raise _Refused(
            f"ERROR: {arg} must be a non-empty string, got {_show(value)}; pass e.g. {arg}={example!r}."
        )
    if "\0" in value:
        raise _Refused(
            f"ERROR: {arg} {_show(value)} contains a NUL byte; pass plain text, e.g. {arg}={example!r}."
        )
    return value


def _check_int(value: object, arg: str, example: int) -> int:
    """An int >= 1 (a bool is not an int here), or a refusal naming `arg`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(
            f"ERROR: {arg} must be an integer >= 1, got {_show(value)}; pass e.g. {arg}={example}."
        )
    return value


def _check_budget(counter: object, max_tokens: object) -> None:
    """Refuse a counter without count_text/truncate, or a max_tokens that is not an int >= 1."""
    if not all(callable(getattr(counter, name, None)) for name in ("count_text", "truncate")):
        raise _Refused(
            f"ERROR: counter must be a TokenCounter, got {_show(counter)}; pass counter=token_counter()."
        )
    _check_int(max_tokens, "max_tokens", WORKSPACE_MAX_TOKENS)


def _check_query(query: object) -> str:
    """A one-line search text of at most MAX_QUERY_CHARS characters."""
    text = _check_text(query, "query", "def main")
    if "\n" in text or "\r" in text:
        raise _Refused(
            f"ERROR: query {_show(text)} spans lines; search_files matches within one line, "
            "so pass a single line of text."
        )
    if len(text) > MAX_QUERY_CHARS:
        raise _Refused(
            f"ERROR: query is {len(text)} characters long; pass at most {MAX_QUERY_CHARS}, "
            "e.g. the most distinctive part of the line."
        )
    return text


# --- confinement ----------------------------------------------------------------------------


def _real_root(project_root: object) -> str:
    """The real path of an existing, absolute project root."""
    if not isinstance(project_root, str) or "\0" in project_root or not os.path.isabs(project_root):
        raise _Refused(
            f"ERROR: project_root must be an absolute folder path, got {_show(project_root)}; "
            "set project_root in the run context."
        )
    real = os.path.realpath(project_root)
    if not os.path.isdir(real):
        raise _Refused(
            f"ERROR: project_root {_show(project_root)} is not an existing folder; "
            "set project_root in the run context to the project's folder."
        )
    return real


def _inside(root: str, real: str) -> bool:
    """True when the real path `real` is the real root or below it."""
    return os.path.commonpath([root, real]) == root


def _state_refusal(path: str, *, via: str = "") -> _Refused:
    """The refusal for anything inside `.a0proj/`."""
    return _Refused(
        f"ERROR: path {_show(path)}{via} is inside {STATE_DIR}/, the run's private state, which "
        "these tools never read; pass a project file instead (see list_files('.'))."
    )


def _resolve(project_root: object, path: object) -> _Target:
    """Check `path` against every confinement rule and return where it really is."""
    given = _check_text(path, "path", "src")
    root = _real_root(project_root)
    if os.path.isabs(given):
        raise _Refused(
            f"ERROR: path {_show(given)} is absolute; pass a path relative to the project root, "
            "e.g. 'src/app.py' (or '.' for the root)."
        )
    shown = os.path.normpath(given).replace(os.sep, "/")
    lexical = shown.split("/")
    if lexical[0] == "..":
        raise _Refused(
            f"ERROR: path {_show(given)} climbs out of the project root with '..'; pass a path "
            "inside the project, e.g. '.' or 'src'."
        )
    if any(_is_state(part) for part in lexical):
        raise _state_refusal(given)
    real = os.path.realpath(os.path.join(root, given))
    if not _inside(root, real):
        raise _Refused(
            f"ERROR: path {_show(given)} leads outside the project root through a symlink; these "
            "tools only read inside the project, so pick a path from list_files('.')."
        )
    rel = os.path.relpath(real, root)
    parts = () if rel == "." else tuple(rel.split(os.sep))
    if any(_is_state(part) for part in parts):
        raise _state_refusal(given, via=" (through a symlink)")
    return _Target(root, parts, _kind_of(root, real, given, shown), shown)


def _nearest_folder(root: str, shown: str) -> str:
    """The closest existing folder above a missing path, inside the root, to suggest listing."""
    parent = posixpath.dirname(shown)
    while parent:
        real = os.path.realpath(os.path.join(root, parent))
        inside = _inside(root, real) and not any(
            _is_state(part) for part in os.path.relpath(real, root).split(os.sep)
        )
        if inside and os.path.isdir(real):
            return parent
        parent = posixpath.dirname(parent)
    return "."


def _kind_of(root: str, real: str, given: str, shown: str) -> str:
    """'dir' or 'file' for an existing real path; a refusal for anything else."""
    try:
        mode = os.lstat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        parent = _nearest_folder(root, shown)
        raise _Refused(
            f"ERROR: path {_show(given)} does not exist in the project; call "
            f"list_files({parent!r}) to see what is there."
        ) from None
    except OSError as exc:
        raise _Refused(
            f"ERROR: path {_show(given)} cannot be read ({exc.strerror}); pick another path "
            "from list_files('.')."
        ) from None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        raise _Refused(
            f"ERROR: path {_show(given)} is a symlink that does not resolve (a loop?); pick "
            "another path from list_files('.')."
        )
    raise _Refused(
        f"ERROR: path {_show(given)} is not a regular file (a device, FIFO or socket); pick a "
        "text file from list_files('.')."
    )


def _open_under(target: _Target) -> int:
    """Open the target from the real root one component at a time, never following a symlink."""
    fd = os.open(target.root, _ROOT_FLAGS)
    try:
        for index, name in enumerate(target.parts):
            last = index == len(target.parts) - 1
            flags = _FILE_FLAGS if last and target.kind == "file" else _DIR_FLAGS
            child = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def _opened(target: _Target, given: str) -> Iterator[int]:
    """A descriptor for the checked target, closed afterwards; a refusal if it changed meanwhile."""
    try:
        fd = _open_under(target)
    except OSError as exc:
        raise _Refused(
            f"ERROR: path {_show(given)} could not be opened safely ({exc.strerror or exc}); it "
            "may have changed since it was checked, so call list_files to look again."
        ) from None
    try:
        yield fd
    finally:
        os.close(fd)


# --- walking and reading --------------------------------------------------------------------


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """'link', 'dir', 'file' or 'other', without following symlinks."""
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return "other"


def _walk(
    fd: int, prefix: tuple[str, ...], notes: _WalkNotes, depth: int = 0
) -> Iterator[tuple[int, tuple[str, ...], str]]:
    """(parent fd, parts, kind) below an open folder, sorted depth first; links never followed."""
    with os.scandir(fd) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        kind = _entry_kind(entry)
        if _is_state(entry.name):
            notes.state_dirs += 1
            continue
        if kind == "dir" and entry.name in NOISE_DIRS:
            notes.noise.add(entry.name)
            continue
        parts = (*prefix, entry.name)
        yield fd, parts, kind
        if kind == "dir":
            yield from _walk_into(fd, parts, notes, depth + 1)


def _walk_into(
    parent: int, parts: tuple[str, ...], notes: _WalkNotes, depth: int
) -> Iterator[tuple[int, tuple[str, ...], str]]:
    """Walk a subfolder opened with O_NOFOLLOW relative to its parent, up to MAX_DEPTH."""
    if depth > MAX_DEPTH:
        notes.too_deep += 1
        return
    try:
        child = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
    except OSError:
        notes.unreadable += 1
        return
    try:
        yield from _walk(child, parts, notes, depth)
    except OSError:
        notes.unreadable += 1
    finally:
        os.close(child)


def _walk_notes_line(notes: _WalkNotes, verb: str) -> str | None:
    """One line saying which folders a walk left out, or None when nothing was."""
    said = []
    if notes.state_dirs:
        said.append(f"{STATE_DIR}/ (the run's private state, never {verb})")
    if notes.noise:
        names = ", ".join(f"{name}/" for name in sorted(notes.noise))
        said.append(f"noise folder{'s' if len(notes.noise) > 1 else ''} {names}")
    if notes.unreadable:
        said.append(f"{_plural(notes.unreadable, 'unreadable folder')}")
    if notes.too_deep:
        said.append(f"{_plural(notes.too_deep, 'folder')} nested deeper than {MAX_DEPTH} levels")
    return f"Not {verb}: " + "; ".join(said) + "." if said else None


def _regular_size(fd: int, given: str) -> int:
    """The size of an open regular file; a refusal for anything else."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _Refused(
            f"ERROR: path {_show(given)} is not a regular file; pick a text file from "
            "list_files('.')."
        )
    return info.st_size


def _binary_refusal(given: str) -> _Refused:
    """The refusal for a file that is not UTF-8 text."""
    return _Refused(
        f"ERROR: path {_show(given)} is a binary file (NUL bytes or not UTF-8); read_file shows "
        "text files only, so pick a text file or search_files for text."
    )


def _line_text(raw: bytes) -> str:
    """One line's text without its line ending (raises UnicodeDecodeError when not UTF-8)."""
    return raw.decode("utf-8").removesuffix("\n").removesuffix("\r")


def _read_lines(target: _Target, given: str, start: int, limit: int) -> tuple[list[str], int]:
    """Lines start..start+limit-1 of a text file and its total line count, streamed."""
    kept: list[str] = []
    total = 0
    with _opened(target, given) as fd:
        _regular_size(fd, given)
        with open(fd, "rb", closefd=False) as handle:
            if b"\0" in handle.read(BINARY_PROBE_BYTES):
                raise _binary_refusal(given)
            handle.seek(0)
            try:
                for total, raw in enumerate(handle, 1):
                    text = _line_text(raw)
                    if start <= total < start + limit:
                        kept.append(text)
            except UnicodeDecodeError:
                raise _binary_refusal(given) from None
    return kept, total


def _text_of(fd: int, notes: _SearchNotes) -> str | None:
    """The UTF-8 text of an open file for search, or None (counted in notes) when skipped."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_size > MAX_SEARCH_FILE_BYTES:
        notes.big += 1
        return None
    data = b""
    while chunk := os.read(fd, MAX_SEARCH_FILE_BYTES + 1 - len(data)):
        data += chunk
        if len(data) > MAX_SEARCH_FILE_BYTES:
            notes.big += 1
            return None
    try:
        if b"\0" in data[:BINARY_PROBE_BYTES]:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        notes.binary += 1
        return None
    notes.searched += 1
    return text


def _text_at(parent: int, name: str, notes: _SearchNotes) -> str | None:
    """The text of a file in an open folder, opened with O_NOFOLLOW; None when skipped."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError:
        notes.unreadable += 1
        return None
    try:
        return _text_of(fd, notes)
    except OSError:
        notes.unreadable += 1
        return None
    finally:
        os.close(fd)


# --- the token cap --------------------------------------------------------------------------


def _fitting(lines: list[str], counter: TokenCounter, room: int) -> int:
    """How many leading lines fit in `room` tokens when joined with newlines."""
    used = -1
    count = 0
    for line in lines:
        used += counter.count_text(line) + 1
        if used > room:
            break
        count += 1
    while count and counter.count_text("\n".join(lines[:count])) > room:
        count -= 1
    return count


def _cut_notice(max_tokens: int, remaining: int, hint: str) -> str:
    """The last line of a cut result: that it was cut, how much is missing and what to do."""
    return (
        f"[cut: the result was over {max_tokens} tokens; {_plural(remaining, 'more line')} "
        f"not shown — {hint}]"
    )


def _render(
    head: Callable[[int], list[str]],
    body: list[str],
    tail: list[str],
    *,
    counter: TokenCounter,
    max_tokens: int,
    notice: Callable[[int], str],
) -> str:
    """The whole result if it fits in max_tokens, else head + the body lines that fit + notice."""
    room = max_tokens - counter.count_text("\n".join([*head(len(body)), *tail])) - 1
    if _fitting(body, counter, room) == len(body):
        text = "\n".join([*head(len(body)), *body, *tail])
        if counter.count_text(text) <= max_tokens:
            return text
    reserve = counter.count_text("\n".join([*head(len(body)), notice(0)])) + 2
    room = max_tokens - reserve
    shown = body[: _fitting(body, counter, room)]
    if not shown and body and room > 8:
        shown = [counter.truncate(body[0], room - 6) + " …[line cut]"]
    text = "\n".join([*head(len(shown)), *shown, notice(len(shown))])
    while shown and counter.count_text(text) > max_tokens:
        shown.pop()
        text = "\n".join([*head(len(shown)), *shown, notice(len(shown))])
    return text


# --- the three functions --------------------------------------------------------------------


def _listed(parts: tuple[str, ...], kind: str) -> str:
    """One listing line: folders end with '/', symlinks and special files are marked."""
    rel = _printable("/".join(parts))
    return {"dir": f"{rel}/", "link": f"{rel} -> (symlink)", "other": f"{rel} (special file)"}.get(
        kind, rel
    )


@_guarded("list_files")
def list_files(
    project_root: str,
    path: str = ".",
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """The files and folders under `path`, recursively and sorted, for an agent to find its way."""
    _check_budget(counter, max_tokens)
    target = _resolve(project_root, path)
    if target.kind == "file":
        return (
            f"{target.shown} is a file, not a folder (1 entry); call read_file({target.shown!r}) "
            f"to read it.\n{_printable(target.rel)}"
        )
    notes = _WalkNotes()
    body: list[str] = []
    with _opened(target, path) as fd, closing(_walk(fd, target.parts, notes)) as walk:
        for _parent, parts, kind in walk:
            if len(body) >= MAX_WALK_ENTRIES:
                notes.stopped = True
                break
            body.append(_listed(parts, kind))
    count = (
        f"first {len(body)} entries; there are more" if notes.stopped else f"{len(body)} entries"
    )
    head = [f"Files under {target.label} ({count}):"]
    if not body:
        head = [f"Files under {target.label} (0 entries): the folder is empty."]
    skipped = _walk_notes_line(notes, "listed")
    head += [skipped] if skipped else []
    return _render(
        lambda _shown: head,
        body,
        [],
        counter=counter,
        max_tokens=max_tokens,
        notice=lambda shown: _cut_notice(
            max_tokens, len(body) - shown, "list a subfolder, e.g. list_files('src'), to see more"
        ),
    )


@_guarded("read_file")
def read_file(
    project_root: str,
    path: str,
    start_line: int = 1,
    max_lines: int = 400,
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """Numbered lines of a text file (like `cat -n`), a window at a time, for an agent to read."""
    _check_budget(counter, max_tokens)
    _check_text(path, "path", "src/app.py")
    start = _check_int(start_line, "start_line", 1)
    limit = min(_check_int(max_lines, "max_lines", 400), MAX_READ_LINES)
    target = _resolve(project_root, path)
    if target.kind == "dir":
        raise _Refused(
            f"ERROR: path {_show(path)} is a folder, not a file; call "
            f"list_files({target.shown!r}) to see its files, then read_file one of them."
        )
    lines, total = _read_lines(target, path, start, limit)
    name = _printable(target.shown)
    if total == 0:
        return f"{name} (empty file, 0 lines)"
    if start > total:
        raise _Refused(
            f"ERROR: start_line {start} is past the end of {name!r} ({_plural(total, 'line')}); "
            f"pass start_line between 1 and {total}."
        )
    end = start + len(lines) - 1
    tail = []
    if end < total:
        tail = [
            f"... {_plural(total - end, 'more line')}; call read_file({name!r}, "
            f"start_line={end + 1}) to continue"
        ]
    return _render(
        lambda shown: [
            f"{name} (lines {start}-{start + shown - 1} of {total})"
            if shown
            else f"{name} ({_plural(total, 'line')})"
        ],
        [f"{number:>6}\t{text}" for number, text in enumerate(lines, start)],
        tail,
        counter=counter,
        max_tokens=max_tokens,
        notice=lambda shown: _cut_notice(
            max_tokens,
            total - (start + shown - 1),
            f"call read_file({name!r}, start_line={start + shown}) to continue",
        ),
    )


def _clip(line: str, query: str) -> str:
    """A hit's line, stripped and clipped to about MAX_HIT_CHARS around the match."""
    text = line.strip()
    if len(text) <= MAX_HIT_CHARS:
        return text
    at = text.lower().find(query.lower())
    if at < 0 or at + len(query) <= MAX_HIT_CHARS:
        return text[:MAX_HIT_CHARS] + " …"
    begin = max(0, at - MAX_HIT_CHARS // 3)
    return "… " + text[begin : begin + MAX_HIT_CHARS] + " …"


def _hits_in(rel: str, text: str, query: str, hits: list[str]) -> int:
    """Append `rel:line: text` for each line containing query (case-insensitive); count them."""
    needle = query.casefold()
    if needle not in text.casefold():
        return 0
    found = 0
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line.casefold() and len(hits) < MAX_HITS:
            hits.append(f"{rel}:{number}: {_clip(line, query)}")
            found += 1
    return found


def _search_notes_line(notes: _SearchNotes, walked: _WalkNotes) -> str | None:
    """One line saying what a search skipped, or None when it skipped nothing."""
    megabytes = MAX_SEARCH_FILE_BYTES // (1024 * 1024)
    said = [
        f"{count} {word if count == 1 else words}"
        for count, word, words in (
            (notes.binary, "binary file", "binary files"),
            (notes.big, f"file over {megabytes} MB", f"files over {megabytes} MB"),
            (notes.links, "symlink (never followed)", "symlinks (never followed)"),
            (notes.unreadable, "unreadable file", "unreadable files"),
        )
        if count
    ]
    folders = _walk_notes_line(walked, "searched")
    line = "Skipped: " + ", ".join(said) + "." if said else ""
    return " ".join(part for part in (line, folders) if part) or None


@_guarded("search_files")
def search_files(
    project_root: str,
    query: str,
    path: str = ".",
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """Lines containing `query` (plain text, any case) in the text files under `path`."""
    _check_budget(counter, max_tokens)
    text = _check_query(query)
    target = _resolve(project_root, path)
    notes, walked, hits, files = _SearchNotes(), _WalkNotes(), [], 0
    if target.kind == "file":
        with _opened(target, path) as fd:
            content = _text_of(fd, notes)
        files += bool(content and _hits_in(_printable(target.rel), content, text, hits))
    else:
        with _opened(target, path) as fd, closing(_walk(fd, target.parts, walked)) as walk:
            for parent, parts, kind in walk:
                if len(hits) >= MAX_HITS:
                    break
                notes.links += kind == "link"
                if kind == "file" and (content := _text_at(parent, parts[-1], notes)):
                    files += bool(_hits_in(_printable("/".join(parts)), content, text, hits))
    where = target.label
    head = [
        f"{'At least ' if len(hits) >= MAX_HITS else ''}{_plural(len(hits), 'hit')} in "
        f"{_plural(files, 'file')} for {text!r} under {where}:"
    ]
    if not hits:
        head = [
            f"No matches for {text!r} under {where} "
            f"({_plural(notes.searched, 'text file')} searched)."
        ]
    skipped = _search_notes_line(notes, walked)
    head += [skipped] if skipped else []
    return _render(
        lambda _shown: head,
        hits,
        [],
        counter=counter,
        max_tokens=max_tokens,
        notice=lambda shown: _cut_notice(
            max_tokens, len(hits) - shown, "narrow the path or the query"
        ),
    )


# --- LangChain tools ------------------------------------------------------------------------

_ListPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Folder to list, relative to the project root, e.g. 'src'. "
        "Default '.' (the whole project)."
    ),
]
_ReadPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(description="File to read, relative to the project root, e.g. 'src/app.py'."),
]
_StartLine = Annotated[
    Any,
    WithJsonSchema({"type": "integer", "minimum": 1}),
    Field(description="First line to show, 1-based. Default 1."),
]
_MaxLines = Annotated[
    Any,
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_READ_LINES}),
    Field(description=f"Most lines to show, at most {MAX_READ_LINES}. Default 400."),
]
_Query = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Text to find: a plain substring matched case-insensitively within one "
        "line (not a regular expression), e.g. 'def handover'."
    ),
]
_SearchPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Folder (or file) to search, relative to the project root, e.g. 'src'. "
        "Default '.' (the whole project)."
    ),
]

LIST_FILES_DESCRIPTION = (
    "List the files and folders under a folder of the project, recursively and sorted, one "
    "path per line relative to the project root; folders end with '/', symlinks are marked "
    "'-> (symlink)' and never followed. Read-only. The run's private .a0proj/ folder and the "
    "noise folders .git, .venv, node_modules and __pycache__ are left out. Use it first to "
    f"find what to read. Results over {WORKSPACE_MAX_TOKENS} tokens are cut; then list a "
    "subfolder."
)
READ_FILE_DESCRIPTION = (
    "Read a UTF-8 text file of the project with numbered lines (like `cat -n`), starting at "
    f"start_line and showing at most max_lines lines (up to {MAX_READ_LINES}). Read-only; the "
    "path is relative to the project root and must stay inside it. Folders, binary files and "
    ".a0proj/ are refused. When more lines remain, the last line tells you the start_line to "
    f"continue from. Results over {WORKSPACE_MAX_TOKENS} tokens are cut."
)
SEARCH_FILES_DESCRIPTION = (
    "Search the project's text files for a plain substring (case-insensitive, not a regular "
    "expression) and get each matching line as 'path:line: text'. Read-only; searches under "
    "path (default: the whole project), skipping binary files, files over 2 MB, symlinks, "
    ".a0proj/ and noise folders. Use it to find where something is defined or used, then "
    f"read_file the hit. Results over {WORKSPACE_MAX_TOKENS} tokens are cut; then narrow the "
    "path or the query."
)
_USAGE = {
    "list_files": "list_files(path='src')",
    "read_file": "read_file(path='src/app.py', start_line=1, max_lines=400)",
    "search_files": "search_files(query='def main', path='.')",
}


def _int_like(value: Any) -> Any:
    """A JSON number sent as '12' or 12.0 becomes 12; anything else is left for the check."""
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _argument_refusal(name: str) -> Callable[[ValidationError], str]:
    """The tool's answer when its arguments do not validate (a required one is missing)."""

    def refuse(error: ValidationError) -> str:
        fields = sorted({str(item["loc"][0]) for item in error.errors() if item["loc"]})
        if "runtime" in fields:
            return (
                f"ERROR: {name} needs the LangGraph run context; call it through a ToolNode, "
                "which injects the runtime, not directly."
            )
        return (
            f"ERROR: {name} is missing required argument(s) {', '.join(fields) or '?'}; call "
            f"it as {_USAGE[name]}."
        )

    return refuse


def _run_tool(
    name: str,
    runtime: Any,
    counter_for: Callable[[HandoverContext], TokenCounter] | None,
    call: Callable[[str, TokenCounter], str],
) -> str:
    """Resolve the run's context and counter, then call a pure function; never raise."""
    try:
        ctx = coerce_context(getattr(runtime, "context", None))
        counter = counter_for(ctx) if counter_for else token_counter()
        return call(ctx.project_root, counter)
    except Exception as exc:
        return _failed(name, exc)


def make_workspace_tools(
    *, counter_for: Callable[[HandoverContext], TokenCounter] | None = None
) -> list[BaseTool]:
    """The three read-only tools; the project root comes from the run context, not the model."""

    def list_files_tool(runtime: ToolRuntime[Any, Any], path: _ListPath = ".") -> str:
        """list_files with the run's project root and counter."""
        return _run_tool(
            "list_files", runtime, counter_for, lambda root, c: list_files(root, path, counter=c)
        )

    def read_file_tool(
        runtime: ToolRuntime[Any, Any],
        path: _ReadPath,
        start_line: _StartLine = 1,
        max_lines: _MaxLines = 400,
    ) -> str:
        """read_file with the run's project root and counter."""
        return _run_tool(
            "read_file",
            runtime,
            counter_for,
            lambda root, c: read_file(
                root, path, _int_like(start_line), _int_like(max_lines), counter=c
            ),
        )

    def search_files_tool(
        runtime: ToolRuntime[Any, Any], query: _Query, path: _SearchPath = "."
    ) -> str:
        """search_files with the run's project root and counter."""
        return _run_tool(
            "search_files",
            runtime,
            counter_for,
            lambda root, c: search_files(root, query, path, counter=c),
        )

    made = (
        (list_files_tool, "list_files", LIST_FILES_DESCRIPTION),
        (read_file_tool, "read_file", READ_FILE_DESCRIPTION),
        (search_files_tool, "search_files", SEARCH_FILES_DESCRIPTION),
    )
    return [
        StructuredTool.from_function(
            func,
            name=name,
            description=description,
            handle_validation_error=_argument_refusal(name),
        )
        for func, name, description in made
    ]
