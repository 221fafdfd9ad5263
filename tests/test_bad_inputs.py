"""Bad input gets an exact `ERROR: ...` and writes nothing, anywhere; hostile paths stay put.

The corpus below drives the public tool (`handover_to_specialist.invoke`) with one bad
argument at a time on top of a valid call, and checks the exact answer and that the
whole tmp tree (the project root and the sandbox around it) is unchanged.
"""

from __future__ import annotations

import errno
import json
import os
import re

import pytest

from specialist_handover.nodes import handover_to_specialist

KNOWN = (
    "a0_software_orchestrator, codebase_explorer, frontend_designer, hacker, "
    "implementation_engineer, quality_reviewer, release_auditor, requirements_analyst, "
    "runtime_devops_engineer, security_data_engineer, solution_architect, "
    "test_debug_engineer, ui_design_specialist"
)
ARGS = (
    "specialist_profile, topic, summary, recent_turns, decisions, artifacts, return_condition, "
    "handover_reason, project_root, max_context_tokens, include_recent_turns"
)
NO_SLUG = (
    "has no usable characters; use a short slug of letters, digits and dashes "
    "such as 'landing-page-hero'"
)
CONDITIONS = "valid conditions: user_request, task_complete, after_reply"
DELETE = object()  # as a value: leave the argument out
MERGE = object()  # as the argument: add every key of the value
BRIEFING_NAME = "frontend-designer-landing-page-hero-2026-06-05.md"


def unknown(name: str, *hints: str) -> str:
    hint = f" Did you mean {', '.join(repr(h) for h in hints)}?" if hints else ""
    return f"ERROR: unknown specialist profile '{name}'.{hint} Known profiles: {KNOWN}"


# (id, argument or MERGE, bad value or DELETE, exact answer); `{sandbox}` is the sandbox folder
BAD_INPUTS = [
    # specialist_profile
    ("profile-missing", "specialist_profile", DELETE, "ERROR: specialist_profile is required"),
    ("profile-none", "specialist_profile", None, "ERROR: specialist_profile is required"),
    ("profile-empty", "specialist_profile", "", "ERROR: specialist_profile is required"),
    ("profile-blank", "specialist_profile", " \t\n", "ERROR: specialist_profile is required"),
    (
        "profile-int",
        "specialist_profile",
        7,
        "ERROR: specialist_profile must be a string, got int 7",
    ),
    (
        "profile-list",
        "specialist_profile",
        ["hacker"],
        "ERROR: specialist_profile must be a string, got list ['hacker']",
    ),
    (
        "profile-bool",
        "specialist_profile",
        True,
        "ERROR: specialist_profile must be a string, got bool True",
    ),
    (
        "profile-typo",
        "specialist_profile",
        "frontend_desginer",
        unknown(
            "frontend_desginer",
            "frontend_designer",
            "runtime_devops_engineer",
            "test_debug_engineer",
        ),
    ),
    ("profile-traversal", "specialist_profile", "../hacker", unknown("../hacker", "hacker")),
    (
        "profile-short-name",
        "specialist_profile",
        "orchestrator",
        unknown("orchestrator", "a0_software_orchestrator"),
    ),
    ("profile-nul", "specialist_profile", "hacker\x00", unknown("hacker\\x00", "hacker")),
    ("profile-gibberish", "specialist_profile", "qa", unknown("qa")),
    # topic
    ("topic-missing", "topic", DELETE, "ERROR: topic is required"),
    ("topic-empty", "topic", "", "ERROR: topic is required"),
    ("topic-blank", "topic", " \n\t ", "ERROR: topic is required"),
    ("topic-int", "topic", 42, "ERROR: topic must be a string, got int 42"),
    ("topic-dict", "topic", {"a": 1}, "ERROR: topic must be a string, got dict {'a': 1}"),
    ("topic-dotdot", "topic", "../", f"ERROR: topic '../' {NO_SLUG}"),
    ("topic-slash", "topic", "/", f"ERROR: topic '/' {NO_SLUG}"),
    ("topic-nul", "topic", "\x00", f"ERROR: topic '\\x00' {NO_SLUG}"),
    ("topic-controls", "topic", "\x01\x1b\x7f", f"ERROR: topic '\\x01\\x1b\\x7f' {NO_SLUG}"),
    ("topic-punctuation", "topic", "!!! ??? ...", f"ERROR: topic '!!! ??? ...' {NO_SLUG}"),
    ("topic-non-latin", "topic", "日本語", f"ERROR: topic '日本語' {NO_SLUG}"),
    ("topic-emoji", "topic", "🚀🚀", f"ERROR: topic '🚀🚀' {NO_SLUG}"),
    ("topic-10000-dashes", "topic", "-" * 10_000, f"ERROR: topic '{'-' * 60}' {NO_SLUG}"),
    # project_root
    ("root-missing", "project_root", DELETE, "ERROR: project_root is required"),
    ("root-empty", "project_root", "", "ERROR: project_root is required"),
    ("root-int", "project_root", 1, "ERROR: project_root must be a string, got int 1"),
    (
        "root-relative",
        "project_root",
        "project",
        "ERROR: project_root must be absolute (got 'project')",
    ),
    (
        "root-dot-relative",
        "project_root",
        "./project",
        "ERROR: project_root must be absolute (got './project')",
    ),
    (
        "root-tilde",
        "project_root",
        "~/project",
        "ERROR: project_root must be absolute (got '~/project')",
    ),
    ("root-nul", "project_root", "/tmp/a\x00b", "ERROR: project_root must not contain a NUL byte"),
    (
        "root-does-not-exist",
        "project_root",
        "{sandbox}/missing",
        "ERROR: project_root '{sandbox}/missing' does not exist or is not a directory",
    ),
    (
        "root-traversal-to-missing",
        "project_root",
        "{sandbox}/project/../missing",
        "ERROR: project_root '{sandbox}/missing' does not exist or is not a directory",
    ),
    (
        "root-is-a-file",
        "project_root",
        "{sandbox}/outside/keep.txt",
        "ERROR: project_root '{sandbox}/outside/keep.txt' does not exist or is not a directory",
    ),
    # max_context_tokens
    (
        "max-zero",
        "max_context_tokens",
        0,
        "ERROR: max_context_tokens must be positive (got 0)",
    ),
    (
        "max-negative",
        "max_context_tokens",
        -5,
        "ERROR: max_context_tokens must be positive (got -5)",
    ),
    (
        "max-bool",
        "max_context_tokens",
        True,
        "ERROR: max_context_tokens must be an integer, got bool True",
    ),
    (
        "max-string",
        "max_context_tokens",
        "3000",
        "ERROR: max_context_tokens must be an integer, got str '3000'",
    ),
    (
        "max-float",
        "max_context_tokens",
        3000.0,
        "ERROR: max_context_tokens must be an integer, got float 3000.0",
    ),
    # include_recent_turns
    (
        "include-negative",
        "include_recent_turns",
        -1,
        "ERROR: include_recent_turns must be >= 0 (got -1)",
    ),
    (
        "include-bool",
        "include_recent_turns",
        False,
        "ERROR: include_recent_turns must be an integer, got bool False",
    ),
    (
        "include-string",
        "include_recent_turns",
        "5",
        "ERROR: include_recent_turns must be an integer, got str '5'",
    ),
    (
        "include-float",
        "include_recent_turns",
        2.5,
        "ERROR: include_recent_turns must be an integer, got float 2.5",
    ),
    # return_condition
    (
        "condition-unknown",
        "return_condition",
        "whenever",
        f"ERROR: invalid return_condition 'whenever'; {CONDITIONS}",
    ),
    (
        "condition-blank",
        "return_condition",
        "   x ",
        f"ERROR: invalid return_condition 'x'; {CONDITIONS}",
    ),
    (
        "condition-upper-case",
        "return_condition",
        "USER_REQUEST",
        f"ERROR: invalid return_condition 'USER_REQUEST'; {CONDITIONS}",
    ),
    (
        "condition-int",
        "return_condition",
        1,
        "ERROR: return_condition must be a string, got int 1",
    ),
    # lists of strings
    (
        "turns-string",
        "recent_turns",
        "user: hi",
        "ERROR: recent_turns must be a list of strings, got str",
    ),
    (
        "turns-dict",
        "recent_turns",
        {"user": "hi"},
        "ERROR: recent_turns must be a list of strings, got dict",
    ),
    (
        "turns-int-item",
        "recent_turns",
        ["ok", 3],
        "ERROR: recent_turns[1] must be a string, got int",
    ),
    (
        "turns-none-item",
        "recent_turns",
        [None],
        "ERROR: recent_turns[0] must be a string, got NoneType",
    ),
    (
        "turns-bad-item-in-kept-window",
        "recent_turns",
        ["a"] * 10 + [{"role": "user"}],
        "ERROR: recent_turns[10] must be a string, got dict",
    ),
    (
        "decisions-dict",
        "decisions",
        {"stack": "tailwind"},
        "ERROR: decisions must be a list of strings, got dict",
    ),
    (
        "decisions-string",
        "decisions",
        "use tailwind",
        "ERROR: decisions must be a list of strings, got str",
    ),
    (
        "decisions-nested-list",
        "decisions",
        [["a"]],
        "ERROR: decisions[0] must be a string, got list",
    ),
    ("artifacts-int", "artifacts", 5, "ERROR: artifacts must be a list of strings, got int"),
    (
        "artifacts-dict-item",
        "artifacts",
        [{"path": "x"}],
        "ERROR: artifacts[0] must be a string, got dict",
    ),
    (
        "artifacts-bool-item",
        "artifacts",
        ["a.py", False],
        "ERROR: artifacts[1] must be a string, got bool",
    ),
    # free text
    ("summary-int", "summary", 300, "ERROR: summary must be a string, got int 300"),
    ("summary-list", "summary", ["a"], "ERROR: summary must be a string, got list ['a']"),
    (
        "reason-bool",
        "handover_reason",
        False,
        "ERROR: handover_reason must be a string, got bool False",
    ),
    # arguments the tool does not take
    (
        "unknown-argument",
        "specialist",
        "hacker",
        f"ERROR: unknown argument(s) specialist; handover_to_specialist takes: {ARGS}",
    ),
    (
        "unknown-arguments",
        MERGE,
        {"profile": "hacker", "max_tokens": 10},
        f"ERROR: unknown argument(s) max_tokens, profile; handover_to_specialist takes: {ARGS}",
    ),
]


def test_the_corpus_has_at_least_40_distinct_cases():
    assert len(BAD_INPUTS) >= 40
    assert len({case[0] for case in BAD_INPUTS}) == len(BAD_INPUTS)


def fill(value, sandbox):
    return value.replace("{sandbox}", str(sandbox)) if isinstance(value, str) else value


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [pytest.param(arg, value, expected, id=case) for case, arg, value, expected in BAD_INPUTS],
)
def test_bad_input_gets_the_exact_error_and_writes_nothing(
    name, value, expected, handover_args, sandbox, tmp_path, snapshot_tree
):
    args = dict(handover_args)
    if name is MERGE:
        args.update(value)
    elif value is DELETE:
        del args[name]
    else:
        args[name] = fill(value, sandbox)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(args)
    assert answer == fill(expected, sandbox)
    assert snapshot_tree(tmp_path) == before


HOSTILE_TOPICS = [
    ("../x", "x"),
    ("../../etc/passwd", "etc-passwd"),
    ("a/b", "a-b"),
    ("/abs/path", "abs-path"),
    ("C:\\Windows\\evil", "c-windows-evil"),
    ("..hidden", "hidden"),
    ("%2e%2e%2fetc", "2e-2e-2fetc"),
    ("a\x00b", "a-b"),
    ("tab\tnew\nline\x1b[31m", "tab-new-line-31m"),
    ("\u202eevil", "evil"),
    ("Ünïcödé Café", "unicode-cafe"),
    ("x" * 10_000, "x" * 64),
    ("abc-" * 30, "abc-" * 15 + "abc"),
    ("Landing Page / Hero!", "landing-page-hero"),
]


@pytest.mark.parametrize(("topic", "slug"), HOSTILE_TOPICS, ids=[s[:20] for _, s in HOSTILE_TOPICS])
def test_hostile_topics_are_slugged_and_stay_inside_the_handover_dir(
    topic, slug, handover_args, handover_dir, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    handover_args["topic"] = topic
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert not answer.startswith("ERROR"), answer
    topic_used = json.loads(answer.split("\n")[0])["package"]["topic"]
    assert topic_used == slug
    assert re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?", topic_used)
    name = f"frontend-designer-{slug}-2026-06-05.md"
    after = snapshot_tree(tmp_path)
    added = sorted(set(after) - set(before))
    prefix = os.path.join("sandbox", "project", ".a0proj")
    assert added == [
        prefix,
        os.path.join(prefix, "handover"),
        os.path.join(prefix, "handover", name),
    ]
    assert all(after[key] == value for key, value in before.items())
    assert (handover_dir / name).is_file()


# --- symlinks and things in the way: refused, nothing written through them ---


def test_symlinked_a0proj_dir_is_refused(handover_args, sandbox, tmp_path, snapshot_tree):
    os.symlink(sandbox / "outside", sandbox / "project" / ".a0proj")
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert answer == "ERROR: refusing to write through a symlink: '.a0proj' is a symbolic link"
    assert snapshot_tree(tmp_path) == before
    assert not (sandbox / "outside" / "handover").exists()


def test_symlinked_handover_dir_is_refused(handover_args, sandbox, tmp_path, snapshot_tree):
    (sandbox / "project" / ".a0proj").mkdir()
    os.symlink(sandbox / "outside", sandbox / "project" / ".a0proj" / "handover")
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert answer == "ERROR: refusing to write through a symlink: 'handover' is a symbolic link"
    assert snapshot_tree(tmp_path) == before
    assert sorted(os.listdir(sandbox / "outside")) == ["keep.txt"]


@pytest.mark.parametrize("target", ["outside/keep.txt", "outside/not-yet-there.md"])
def test_symlinked_briefing_file_is_refused(
    target, handover_args, handover_dir, sandbox, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    handover_dir.mkdir(parents=True)
    link = handover_dir / BRIEFING_NAME
    os.symlink(sandbox / target, link)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert answer == f"ERROR: refusing to write through a symlink: {link} is a symbolic link"
    assert snapshot_tree(tmp_path) == before
    assert not (sandbox / "outside" / "not-yet-there.md").exists()


@pytest.mark.parametrize(
    ("blocker", "expected"),
    [
        (".a0proj", "ERROR: failed to append briefing file: '.a0proj' is not a directory"),
        ("handover", "ERROR: failed to append briefing file: 'handover' is not a directory"),
    ],
)
def test_a_regular_file_in_the_way_fails_cleanly(
    blocker, expected, handover_args, project_root, tmp_path, snapshot_tree
):
    if blocker == ".a0proj":
        (project_root / ".a0proj").write_text("not a folder")
    else:
        (project_root / ".a0proj").mkdir()
        (project_root / ".a0proj" / "handover").write_text("not a folder")
    before = snapshot_tree(tmp_path)
    assert handover_to_specialist.invoke(handover_args) == expected
    assert snapshot_tree(tmp_path) == before


def test_a_folder_named_like_the_briefing_file_fails_cleanly(
    handover_args, handover_dir, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    (handover_dir / BRIEFING_NAME).mkdir(parents=True)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: Is a directory"
    assert snapshot_tree(tmp_path) == before


def test_a_fifo_named_like_the_briefing_file_is_not_written(
    handover_args, handover_dir, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    handover_dir.mkdir(parents=True)
    os.mkfifo(handover_dir / BRIEFING_NAME)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: not a regular file"
    assert snapshot_tree(tmp_path) == before


# --- failed appends (disk full, permissions, read-only): an ERROR, nothing left behind ---


def fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def fail_briefing_writes(monkeypatch, code: int, *, first_bytes: int = 0) -> dict:
    """os.write on a briefing (.md) file writes `first_bytes` once, then fails with `code`.

    Returns a record of the bytes really written, so a test can prove the partial write.
    """
    real_write = os.write
    record = {"written": 0}

    def write(fd, data):
        if not fd_path(fd).endswith(".md"):
            return real_write(fd, data)
        if record["written"] < first_bytes:
            done = real_write(fd, bytes(data[: first_bytes - record["written"]]))
            record["written"] += done
            return done
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", write)
    return record


FAILURES = [errno.ENOSPC, errno.EACCES, errno.EROFS, errno.EDQUOT, errno.EIO]


@pytest.mark.parametrize("code", FAILURES, ids=[errno.errorcode[c] for c in FAILURES])
def test_failed_write_is_an_error_and_leaves_no_file_or_folder(
    code, handover_args, handover_dir, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()
    fail_briefing_writes(monkeypatch, code)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: {os.strerror(code)}"
    assert snapshot_tree(tmp_path) == before


def test_failed_write_keeps_an_existing_a0proj_folder_as_it_was(
    handover_args, project_root, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()
    (project_root / ".a0proj").mkdir()
    (project_root / ".a0proj" / "checkpoints.sqlite").write_bytes(b"\x00db")
    fail_briefing_writes(monkeypatch, errno.ENOSPC)
    before = snapshot_tree(tmp_path)
    assert handover_to_specialist.invoke(handover_args).startswith(
        "ERROR: failed to append briefing file "
    )
    assert snapshot_tree(tmp_path) == before


def test_partial_write_is_rolled_back_and_the_existing_file_kept_byte_for_byte(
    handover_args, handover_dir, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()
    first = handover_to_specialist.invoke(handover_args)
    assert not first.startswith("ERROR"), first
    record = fail_briefing_writes(monkeypatch, errno.ENOSPC, first_bytes=40)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke({**handover_args, "summary": "a second package"})
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: No space left on device"
    assert record["written"] == 40  # part of the entry did reach the file, then was removed
    assert snapshot_tree(tmp_path) == before


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS], ids=["EACCES", "EROFS"])
def test_failed_open_of_the_briefing_file_leaves_nothing_behind(
    code, handover_args, handover_dir, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()
    real_open = os.open

    def refuse_md(path, flags, *args, **kwargs):
        if str(path).endswith(".md"):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_md)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: {os.strerror(code)}"
    assert snapshot_tree(tmp_path) == before


def test_read_only_project_folder_is_an_error(
    handover_args, handover_dir, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "mkdir", read_only)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: Read-only file system"
    assert snapshot_tree(tmp_path) == before


def test_failed_fsync_rolls_back_the_entry(
    handover_args, handover_dir, tmp_path, snapshot_tree, pin_now, monkeypatch
):
    pin_now()

    def broken_fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", broken_fsync)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    path = handover_dir / BRIEFING_NAME
    assert answer == f"ERROR: failed to append briefing file {path}: Input/output error"
    assert snapshot_tree(tmp_path) == before
