"""Reads that hostile files cannot turn into a hang or a memory blow-up.

Profile folders (YAML alias bombs, FIFOs, /dev/zero, oversized files), read_file (one huge
line, terminal control characters), the briefing reader (a sparse multi-gigabyte file) and
the briefing writer (a lock another process never releases). A call that would hang or
allocate without end if its guard were missing runs in a child process with a timeout and
an address-space limit, or in a daemon thread with a bounded join, so a regression fails
its test instead of stalling or exhausting the suite.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import specialist_handover.nodes.briefing.writer as writer
from specialist_handover.nodes import handover_to_specialist
from specialist_handover.nodes.briefing.reader import read_briefing
from specialist_handover.nodes.briefing.writer import (
    BriefingError,
    append_briefing,
    briefing_filename,
    briefing_header,
    render_entry,
)
from specialist_handover.nodes.tools.workspace import (
    READ_FILE_DESCRIPTION,
    WORKSPACE_MAX_TOKENS,
    read_file,
    search_files,
)
from specialist_handover.nodes.tools.workspace.limits import MAX_LINE_CHARS
from specialist_handover.specialists import ProfileFileError, load_profile_dir, parse_profile
from specialist_handover.specialists.profile import MAX_EXAMPLES_BYTES, MAX_PROFILE_BYTES
from specialist_handover.state import HandoverPackage, TokenCounter

COUNTER = TokenCounter()
CHILD_TIMEOUT = 20.0
"""Seconds a child process may take; with the guards in place each takes well under 2 s."""
DAY = datetime(2026, 6, 5, 9, 0, tzinfo=UTC)
GIB = 1024**3


def run_child(code: str, *args: str, memory_mib: int = 1024) -> dict:
    """Run `code` in a fresh Python limited to `memory_mib` of address space; the JSON object
    it prints last. A child still running after CHILD_TIMEOUT is killed and fails the test."""
    limit = memory_mib * 1024 * 1024
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code), *args],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {CHILD_TIMEOUT:g} s: the call hangs or reads on and on")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- profiles: YAML bombs ------------------------------------------------------------------


def profile_text(front: str = "", name: str = "librarian") -> str:
    return f"---\nname: {name}\nemoji: x\ndescription: Finds books.\n{front}---\nYou are it.\n"


@pytest.mark.parametrize(
    ("front", "shown"),
    [
        ("keywords: &k [books]\nexamples: *k\n", "&k"),
        ("keywords: [&one books]\n", "&one"),
        ("tools: [workspace]\nexamples:\n  - &e shelve it\n  - *e\n", "&e"),
    ],
)
def test_front_matter_with_yaml_anchors_or_aliases_is_refused_naming_the_file_and_line(
    front, shown
):
    with pytest.raises(ProfileFileError) as raised:
        parse_profile(profile_text(front), source="librarian.md")
    message = str(raised.value)
    assert message.startswith("librarian.md: line ")
    assert f"YAML anchor or alias ({shown})" in message
    assert "write each value out in full" in message


def test_front_matter_nested_too_deep_is_refused():
    nested = profile_text("examples: " + "[" * 9 + "x" + "]" * 9 + "\n")
    with pytest.raises(ProfileFileError) as raised:
        parse_profile(nested, source="librarian.md")
    assert str(raised.value) == (
        "librarian.md: line 5: front matter nests more than 8 levels deep; a profile's fields "
        "are strings and lists of strings, so flatten it"
    )


BILLION_LAUGHS = (
    "---\nname: bomb\nemoji: x\nkeywords:\n"
    '  - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"  - &{name} [{', '.join([f'*{before}'] * 9)}]\n"
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "description: *i\n---\nYou are a bomb.\n"
)
"""Nine levels of nine aliases: 9**9 strings (gigabytes) once expanded."""


def test_a_billion_laughs_profile_is_refused_at_once_without_expanding_it(tmp_path):
    (tmp_path / "bomb.md").write_text(BILLION_LAUGHS, encoding="utf-8")
    outcome = run_child(
        """
        import json, sys
        from specialist_handover.specialists import ProfileFileError, load_profile_dir
        try:
            load_profile_dir(sys.argv[1])
            print(json.dumps({"error": None}))
        except ProfileFileError as exc:
            print(json.dumps({"error": str(exc)}))
        """,
        str(tmp_path),
        memory_mib=512,
    )
    assert outcome["error"] == (
        f"{tmp_path / 'bomb.md'}: line 5: front matter uses a YAML anchor or alias (&a); "
        "anchors, aliases and '<<:' merges are not allowed in profile files (nested aliases "
        "can expand to gigabytes), so write each value out in full"
    )


# --- profiles: files that are not plain files, or too big ---------------------------------


def _make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
@pytest.mark.parametrize("which", ["librarian.md", "librarian.examples.txt"])
def test_a_fifo_or_device_profile_or_examples_file_is_refused_at_once(tmp_path, kind, which):
    folder = tmp_path / "profiles"
    folder.mkdir()
    if which != "librarian.md":
        (folder / "librarian.md").write_text(profile_text(), encoding="utf-8")
    _make_special(folder / which, kind)
    outcome = run_child(
        """
        import json, sys
        from specialist_handover.specialists import ProfileFileError, load_profile_dir
        try:
            print(json.dumps({"loaded": [p.name for p in load_profile_dir(sys.argv[1])]}))
        except ProfileFileError as exc:
            print(json.dumps({"error": str(exc)}))
        """,
        str(folder),
        memory_mib=512,
    )
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert "error" in outcome, outcome
    assert outcome["error"].endswith(
        f"{which}: is {what}, not a regular file; profile and examples files must be plain "
        "text files, so replace it with one (or remove it)"
    )


def test_a_symlink_to_a_regular_profile_file_is_followed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "librarian.md").write_text(profile_text(), encoding="utf-8")
    (shared / "librarian.examples.txt").write_text("find me a book\n", encoding="utf-8")
    folder = tmp_path / "profiles"
    folder.mkdir()
    for name in ("librarian.md", "librarian.examples.txt"):
        os.symlink(shared / name, folder / name)
    [profile] = load_profile_dir(folder)
    assert profile.name == "librarian" and profile.examples == ("find me a book",)


def test_a_profile_file_over_its_size_limit_is_refused_naming_the_limit(tmp_path):
    path = tmp_path / "librarian.md"
    path.write_text(profile_text() + "x" * MAX_PROFILE_BYTES, encoding="utf-8")
    size = path.stat().st_size
    with pytest.raises(ProfileFileError) as raised:
        load_profile_dir(tmp_path)
    assert str(raised.value) == (
        f"{path}: is {size:,} bytes, over the 1 MiB (1,048,576-byte) limit for a profile "
        "file; trim it below the limit"
    )


def test_an_examples_file_over_its_size_limit_is_refused_naming_the_limit(tmp_path):
    (tmp_path / "librarian.md").write_text(profile_text(), encoding="utf-8")
    examples = tmp_path / "librarian.examples.txt"
    examples.write_bytes(b"find me a book\n" * (MAX_EXAMPLES_BYTES // 15 + 1))
    size = examples.stat().st_size
    with pytest.raises(ProfileFileError) as raised:
        load_profile_dir(tmp_path)
    assert str(raised.value) == (
        f"librarian.examples.txt: is {size:,} bytes, over the 4 MiB (4,194,304-byte) limit "
        "for an examples file; trim it below the limit"
    )


def test_profiles_within_the_limits_still_load(tmp_path):
    (tmp_path / "librarian.md").write_text(profile_text("keywords: [books]\n"), "utf-8")
    (tmp_path / "librarian.examples.txt").write_text("# mine\nfind me a book\n", "utf-8")
    [profile] = load_profile_dir(tmp_path)
    assert profile.keywords == ("books",) and profile.examples == ("find me a book",)


# --- read_file: one huge line -------------------------------------------------------------

HUGE_LINE_CHARS = 32_000_000
"""A 32 MB file of one line (plus its newline)."""


def test_read_file_of_a_32_mb_single_line_stays_bounded_in_size_and_memory(project_root):
    with open(project_root / "one-line.txt", "wb") as out:
        for _ in range(HUGE_LINE_CHARS // 1_000_000):
            out.write(b"abcdefghij" * 100_000)
        out.write(b"\n")
    outcome = run_child(
        """
        import json, resource, sys
        from specialist_handover.nodes.tools.workspace import read_file
        from specialist_handover.state import TokenCounter
        counter = TokenCounter()
        counter.count_text("warm up")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        text = read_file(sys.argv[1], "one-line.txt", counter=counter)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps({"text": text, "tokens": counter.count_text(text), "grown_kib": grown}))
        """,
        str(project_root),
        memory_mib=4096,
    )
    lines = outcome["text"].splitlines()
    assert lines[0] == "one-line.txt (lines 1-1 of 1)"
    cut = HUGE_LINE_CHARS - MAX_LINE_CHARS
    assert lines[1] == (
        "     1\t" + ("abcdefghij" * MAX_LINE_CHARS)[:MAX_LINE_CHARS] + f" …[line cut: {cut:,} "
        f"more characters; read_file shows at most {MAX_LINE_CHARS:,} characters of a line]"
    )
    assert len(lines) == 2
    assert outcome["tokens"] <= WORKSPACE_MAX_TOKENS
    assert outcome["grown_kib"] < 64 * 1024  # under 64 MiB more for a 32 MB file


def test_read_file_cuts_each_long_line_and_keeps_the_lines_after_it(project_root):
    (project_root / "wide.txt").write_text("y" * 10_000 + "\r\nsecond\n", encoding="utf-8")
    lines = read_file(str(project_root), "wide.txt", counter=COUNTER).splitlines()
    assert lines[0] == "wide.txt (lines 1-2 of 2)"
    assert lines[1] == "     1\t" + "y" * MAX_LINE_CHARS + (
        " …[line cut: 6,000 more characters; read_file shows at most 4,000 characters of a line]"
    )
    assert lines[2] == "     2\tsecond"


def test_read_file_counts_lines_past_its_window(project_root):
    (project_root / "many.txt").write_bytes(b"z\n" * 1_000_000 + b"last")
    result = read_file(str(project_root), "many.txt", start_line=1_000_000, counter=COUNTER)
    assert result.splitlines() == [
        "many.txt (lines 1000000-1000001 of 1000001)",
        "1000000\tz",
        "1000001\tlast",
    ]


# --- read_file and search_files: terminal control characters ------------------------------

CONTROL_TEXT = "red \x1b[31mALERT\x1b[0m\tbell\x07 back\x08 del\x7f csi\x9b2J cr\rend\n"
SHOWN_TEXT = "red ␛[31mALERT␛[0m\tbell␇ back␈ del␡ csi\\x9b2J cr␍end"


def _controls(text: str) -> set[str]:
    return {c for c in text if (ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0}


def test_read_file_shows_control_characters_as_visible_symbols(project_root):
    (project_root / "ansi.log").write_text(CONTROL_TEXT, encoding="utf-8")
    result = read_file(str(project_root), "ansi.log", counter=COUNTER)
    assert result.splitlines() == ["ansi.log (lines 1-1 of 1)", f"     1\t{SHOWN_TEXT}"]
    assert _controls(result) == set()


def test_search_files_shows_control_characters_in_hits_as_visible_symbols(project_root):
    (project_root / "ansi.log").write_text(CONTROL_TEXT, encoding="utf-8")
    result = search_files(str(project_root), "alert", counter=COUNTER)
    assert result.splitlines()[1] == f"ansi.log:1: {SHOWN_TEXT}"
    assert _controls(result) == set()


def test_read_file_description_says_how_control_characters_and_long_lines_are_shown():
    assert "ESC as ␛" in READ_FILE_DESCRIPTION
    assert f"A line over {MAX_LINE_CHARS} characters is cut" in READ_FILE_DESCRIPTION


# --- the briefing reader and writer: a sparse multi-gigabyte file --------------------------


def entry(reason: str, when: datetime) -> str:
    package = HandoverPackage(
        handover_id=f"h-{reason}",
        specialist="frontend_designer",
        topic="hero",
        from_agent="orchestrator",
        reason=reason,
        summary=f"Summary for {reason}.",
        recent_turns=["user: make the hero pop"],
        decisions=[],
        artifacts=[],
        return_condition="user_request",
        briefing_file="",
        estimated_tokens=100,
        max_context_tokens=3000,
        oversize_warning=False,
        rendered="",
    )
    return render_entry(package, when=when)


def sparse_briefing(root: Path, size: int) -> Path:
    """A briefing file of `size` bytes (a hole in the middle; no disk space) whose oldest
    entry is at its start and newest at its end."""
    folder = root / ".a0proj" / "handover"
    folder.mkdir(parents=True)
    path = folder / briefing_filename("frontend_designer", "hero", DAY)
    path.write_text(briefing_header("frontend_designer", "hero") + entry("oldest", DAY), "utf-8")
    newest = entry("newest", DAY + timedelta(hours=1)).encode()
    with open(path, "r+b") as fh:
        fh.truncate(size - len(newest))
        fh.seek(0, os.SEEK_END)
        fh.write(newest)
    return path


def test_read_briefing_of_a_sparse_6_gb_file_reads_only_its_end_and_says_so(project_root):
    path = sparse_briefing(project_root, 6 * GIB)
    text = read_briefing(
        project_root=str(project_root), specialist="frontend_designer", counter=COUNTER
    )
    lines = text.splitlines()
    assert lines[0] == (
        "BRIEFING (stage 3) for frontend_designer, all topics: 1 of 1 entries, newest first."
    )
    assert lines[1] == (
        f"NOTE: {path.name} is {6 * GIB:,} bytes; only its last 8,388,608 bytes were read (at "
        "most 8 MiB a file), so its older entries are left out"
    )
    assert "**Reason:** newest" in text and "oldest" not in text
    assert "\x00" not in text  # the hole's NUL bytes are not shown
    assert len(text) < 2_000 and COUNTER.count_text(text) <= 4000


def test_appending_to_a_sparse_6_gb_briefing_file_checks_ids_without_reading_it_whole(
    project_root,
):
    path = sparse_briefing(project_root, 6 * GIB)
    outcome = run_child(
        """
        import json, sys
        from specialist_handover.nodes.briefing.writer import append_briefing
        def append(hid):
            return append_briefing(project_root=sys.argv[1], filename=sys.argv[2], header="",
                entry=f"\\n<!-- handover-id: {hid} -->\\n", handover_id=hid).appended
        print(json.dumps({"again": append("h-newest"), "fresh": append("h-fresh")}))
        """,
        str(project_root),
        path.name,
        memory_mib=1024,
    )
    assert outcome == {"again": False, "fresh": True}  # the id at the end was found
    assert path.stat().st_size > 6 * GIB


# --- a briefing lock held by another process ----------------------------------------------


@pytest.fixture
def held_briefing(project_root, monkeypatch):
    """(path, its bytes) of a briefing file whose exclusive flock another open file
    description holds (as another process would); LOCK_TIMEOUT_SECONDS patched to 0.2."""
    folder = project_root / ".a0proj" / "handover"
    folder.mkdir(parents=True)
    path = folder / briefing_filename("frontend_designer", "landing-page-hero", DAY)
    content = (
        briefing_header("frontend_designer", "landing-page-hero") + entry("one", DAY)
    ).encode()
    path.write_bytes(content)
    monkeypatch.setattr(writer, "LOCK_TIMEOUT_SECONDS", 0.2)
    holder = os.open(path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        yield path, content
    finally:
        os.close(holder)  # also lets a call that wrongly blocked finish


def in_thread(call):
    """call() in a daemon thread; its result or exception, or a failure if it blocks."""
    box: dict = {}

    def run():
        try:
            box["result"] = call()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        pytest.fail("still waiting for the lock after 10 s: the wait is not bounded")
    return box


def test_append_fails_with_a_clear_error_when_another_process_keeps_the_lock(held_briefing):
    path, content = held_briefing
    box = in_thread(
        lambda: append_briefing(
            project_root=str(path.parents[2]),
            filename=path.name,
            header="",
            entry=entry("two", DAY),
            handover_id="h-two",
        )
    )
    assert isinstance(box.get("error"), BriefingError), box
    assert str(box["error"]) == (
        f"failed to append briefing file {path}: another process holds its lock and did not "
        "release it within 0.2 s; nothing was written. Try the handover again when that "
        "process has finished (or stop it)"
    )
    assert path.read_bytes() == content


def test_the_handover_tool_answers_error_when_the_briefing_stays_locked(
    held_briefing, handover_args, pin_now
):
    path, content = held_briefing
    pin_now(DAY)
    box = in_thread(lambda: handover_to_specialist.invoke(handover_args))
    assert box.get("result") == (
        f"ERROR: failed to append briefing file {path}: another process holds its lock and did "
        "not release it within 0.2 s; nothing was written. Try the handover again when that "
        "process has finished (or stop it)"
    )
    assert path.read_bytes() == content


def test_read_briefing_skips_a_file_another_process_keeps_locked_and_says_so(
    held_briefing, project_root
):
    path, _ = held_briefing
    box = in_thread(
        lambda: read_briefing(
            project_root=str(project_root), specialist="frontend_designer", counter=COUNTER
        )
    )
    assert box.get("result") == (
        "No briefing entries for frontend_designer yet.\n"
        f"NOTE: skipped 1 file(s) another process kept locked for over 0.2 s: {path.name}"
    )
