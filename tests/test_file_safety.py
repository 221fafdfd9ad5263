"""File safety of the briefing writer: hard links, modes and text that cannot be encoded.

- a briefing file with more than one link (a hard link planted at the predicted
  path, or made while the writer waits for the lock) is refused, nothing written;
- a briefing file the writer creates is 0600 and the folders it creates 0700,
  whatever the umask; folders that already existed keep their mode; an existing
  briefing file wider than 0600 is tightened;
- a text argument or list item holding a lone surrogate is refused by validation
  with an exact `ERROR: ...` before any file or folder exists, and the writer
  itself leaves nothing behind when an entry cannot be encoded.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import get_origin

import pytest

import specialist_handover.nodes.briefing.writer as writer
from specialist_handover.nodes import handover_to_specialist
from specialist_handover.nodes.briefing.writer import BriefingError, append_briefing
from specialist_handover.nodes.handover.arguments import FIELDS

BRIEFING_NAME = "frontend-designer-landing-page-hero-2026-06-05.md"


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """`umask(value)` sets the process umask for this test; the old one is restored after."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


# --- hard links: refused like symlinks, nothing written anywhere ---


@pytest.mark.parametrize("content", [b"outside data\n", b""], ids=["outside-data", "empty"])
def test_planted_hard_link_to_an_outside_file_is_refused(
    content, handover_args, handover_dir, sandbox, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    outside = sandbox / "outside" / "keep.txt"
    outside.write_bytes(content)
    os.chmod(outside, 0o644)
    handover_dir.mkdir(parents=True)
    link = handover_dir / BRIEFING_NAME
    os.link(outside, link)
    before = snapshot_tree(tmp_path)

    answer = handover_to_specialist.invoke(handover_args)

    assert answer == f"ERROR: refusing to write through a hard link: {link} has 2 links"
    assert outside.read_bytes() == content
    assert mode_of(outside) == 0o644  # not even tightened: it is not ours
    assert os.stat(outside).st_nlink == 2
    assert snapshot_tree(tmp_path) == before


def test_hard_link_with_several_extra_names_reports_the_link_count(
    handover_args, handover_dir, sandbox, tmp_path, snapshot_tree, pin_now
):
    pin_now()
    outside = sandbox / "outside" / "keep.txt"
    os.link(outside, sandbox / "outside" / "second-name.txt")
    handover_dir.mkdir(parents=True)
    link = handover_dir / BRIEFING_NAME
    os.link(outside, link)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert answer == f"ERROR: refusing to write through a hard link: {link} has 3 links"
    assert snapshot_tree(tmp_path) == before


def link_while_waiting_for_the_lock(monkeypatch, target, stolen):
    """The first exclusive flock on `target` first hard-links it to `stolen` (a racing attacker)."""
    real_flock = writer.fcntl.flock
    done = []

    def flock(fd, op):
        if (
            not done
            and op & ~writer.fcntl.LOCK_NB == writer.fcntl.LOCK_EX
            and os.path.samefile(f"/proc/self/fd/{fd}", target)
        ):
            done.append(fd)
            os.link(target, stolen)
        return real_flock(fd, op)

    monkeypatch.setattr(writer.fcntl, "flock", flock)
    return done


def test_hard_link_made_while_waiting_for_the_lock_on_a_new_file_is_refused(
    handover_args, handover_dir, project_root, sandbox, snapshot_tree, pin_now, monkeypatch
):
    pin_now()
    path = handover_dir / BRIEFING_NAME
    stolen = sandbox / "outside" / "stolen.md"
    done = link_while_waiting_for_the_lock(monkeypatch, path, stolen)
    before = snapshot_tree(project_root)

    answer = handover_to_specialist.invoke(handover_args)

    assert done, "the writer never locked the briefing file"
    assert answer == f"ERROR: refusing to write through a hard link: {path} has 2 links"
    assert stolen.read_bytes() == b""  # the attacker's name got nothing
    assert snapshot_tree(project_root) == before  # our new file and folders are gone again


def test_hard_link_made_while_waiting_for_the_lock_on_an_existing_file_is_refused(
    handover_args, handover_dir, sandbox, pin_now, monkeypatch
):
    pin_now()
    handover_dir.mkdir(parents=True)
    path = handover_dir / BRIEFING_NAME
    notes = b"# my notes\n"
    path.write_bytes(notes)
    os.chmod(path, 0o644)
    stolen = sandbox / "outside" / "stolen.md"
    done = link_while_waiting_for_the_lock(monkeypatch, path, stolen)

    answer = handover_to_specialist.invoke(handover_args)

    assert done
    assert answer == f"ERROR: refusing to write through a hard link: {path} has 2 links"
    assert path.read_bytes() == notes
    assert stolen.read_bytes() == notes
    assert mode_of(path) == 0o644  # refused before the mode is touched
    assert sorted(os.listdir(handover_dir)) == [BRIEFING_NAME]


# --- modes: 0600 files, 0700 folders this call made, whatever the umask ---


@pytest.mark.parametrize("mask", [0o000, 0o022, 0o077, 0o277], ids=oct)
def test_new_briefing_file_is_0600_and_new_folders_are_0700(
    mask, umask, handover_args, handover_dir, project_root
):
    umask(mask)
    answer = handover_to_specialist.invoke(handover_args)
    assert not answer.startswith("ERROR"), answer
    [briefing] = list(handover_dir.iterdir())
    assert mode_of(briefing) == 0o600
    assert mode_of(handover_dir) == 0o700
    assert mode_of(project_root / ".a0proj") == 0o700


@pytest.mark.parametrize("existing_mode", [0o755, 0o775, 0o750], ids=oct)
def test_an_existing_a0proj_folder_keeps_its_mode_and_the_new_handover_folder_is_0700(
    existing_mode, umask, handover_args, handover_dir, project_root
):
    umask(0o000)
    state = project_root / ".a0proj"
    state.mkdir()
    os.chmod(state, existing_mode)
    answer = handover_to_specialist.invoke(handover_args)
    assert not answer.startswith("ERROR"), answer
    assert mode_of(state) == existing_mode  # the user's own folder: left as it was
    assert mode_of(handover_dir) == 0o700
    assert [mode_of(p) for p in handover_dir.iterdir()] == [0o600]


def test_an_existing_handover_folder_keeps_its_mode(
    umask, handover_args, handover_dir, project_root
):
    umask(0o000)
    handover_dir.mkdir(parents=True)
    os.chmod(project_root / ".a0proj", 0o755)
    os.chmod(handover_dir, 0o755)
    answer = handover_to_specialist.invoke(handover_args)
    assert not answer.startswith("ERROR"), answer
    assert mode_of(project_root / ".a0proj") == 0o755
    assert mode_of(handover_dir) == 0o755
    assert [mode_of(p) for p in handover_dir.iterdir()] == [0o600]


@pytest.mark.parametrize(
    ("before", "after"),
    [(0o644, 0o600), (0o666, 0o600), (0o777, 0o600), (0o640, 0o600), (0o4755, 0o600)]
    + [(0o600, 0o600), (0o400, 0o400)],
    ids=oct,
)
def test_an_existing_briefing_file_wider_than_0600_is_tightened_on_append(
    before, after, handover_args, handover_dir, pin_now
):
    pin_now()
    handover_dir.mkdir(parents=True)
    path = handover_dir / BRIEFING_NAME
    notes = b"# my notes\n"
    path.write_bytes(notes)
    os.chmod(path, before)
    answer = handover_to_specialist.invoke(handover_args)
    assert not answer.startswith("ERROR"), answer
    assert mode_of(path) == after
    data = path.read_bytes()
    assert data.startswith(notes) and b"<!-- handover-id: " in data


def test_a_second_append_keeps_the_file_0600(umask, handover_args, handover_dir):
    umask(0o000)
    handover_to_specialist.invoke(handover_args)
    handover_to_specialist.invoke({**handover_args, "summary": "a second package"})
    [briefing] = list(handover_dir.iterdir())
    assert mode_of(briefing) == 0o600
    assert briefing.read_text("utf-8").count("<!-- handover-id: ") == 2


# --- text that cannot be encoded: refused by validation, before any file exists ---

TEXT_ARGUMENTS = [
    "specialist_profile",
    "topic",
    "summary",
    "return_condition",
    "handover_reason",
    "project_root",
]
LIST_ARGUMENTS = ["recent_turns", "decisions", "artifacts"]
SURROGATES = ["\ud800", "\udfff", "\udc80"]


def test_the_cases_cover_every_text_and_list_argument():
    not_int = {name for name, field in FIELDS.items() if field.annotation is not int}
    assert set(TEXT_ARGUMENTS) | set(LIST_ARGUMENTS) == not_int
    assert all(get_origin(FIELDS[name].annotation) is list for name in LIST_ARGUMENTS)


@pytest.mark.parametrize("surrogate", SURROGATES, ids=ascii)
@pytest.mark.parametrize("name", TEXT_ARGUMENTS)
def test_text_argument_with_a_lone_surrogate_is_refused_before_anything_is_created(
    name, surrogate, handover_args, project_root, tmp_path, snapshot_tree
):
    value = handover_args[name] + surrogate + "tail"
    position = len(handover_args[name])
    before_project = snapshot_tree(project_root)
    before = snapshot_tree(tmp_path)

    answer = handover_to_specialist.invoke({**handover_args, name: value})

    assert answer == (
        f"ERROR: {name} is not valid text (it holds a lone surrogate at position {position}); "
        "send UTF-8 text"
    )
    assert snapshot_tree(project_root) == before_project
    assert not (project_root / ".a0proj").exists()
    assert snapshot_tree(tmp_path) == before


@pytest.mark.parametrize("surrogate", SURROGATES, ids=ascii)
@pytest.mark.parametrize("name", LIST_ARGUMENTS)
def test_list_item_with_a_lone_surrogate_is_refused_before_anything_is_created(
    name, surrogate, handover_args, project_root, tmp_path, snapshot_tree
):
    items = ["fine", "also fine", f"ab{surrogate}c"]
    before_project = snapshot_tree(project_root)
    before = snapshot_tree(tmp_path)

    answer = handover_to_specialist.invoke({**handover_args, name: items})

    assert answer == (
        f"ERROR: {name}[2] is not valid text (it holds a lone surrogate at position 2); "
        "send UTF-8 text"
    )
    assert snapshot_tree(project_root) == before_project
    assert not (project_root / ".a0proj").exists()
    assert snapshot_tree(tmp_path) == before


def test_the_first_bad_item_is_named(handover_args, project_root):
    answer = handover_to_specialist.invoke(
        {**handover_args, "decisions": ["ok", "\ud800", "\udfff"]}
    )
    assert answer == (
        "ERROR: decisions[1] is not valid text (it holds a lone surrogate at position 0); "
        "send UTF-8 text"
    )
    assert not (project_root / ".a0proj").exists()


def test_a_surrogate_in_a_turn_outside_the_kept_window_is_never_looked_at(
    handover_args, handover_dir
):
    # dropped turns reach no package and no file, so they are not checked (as for types)
    turns = ["old \ud800 turn", *[f"turn {i}" for i in range(5)]]
    answer = handover_to_specialist.invoke({**handover_args, "recent_turns": turns})
    assert not answer.startswith("ERROR"), answer
    [briefing] = list(handover_dir.iterdir())
    text = briefing.read_text("utf-8")
    assert "> turn 4\n" in text and "old " not in text.split("### Recent turns")[1]


# --- the writer itself: an entry it cannot encode leaves nothing behind ---


def write(project_root, **overrides):
    call = {
        "project_root": str(project_root),
        "filename": "hacker-x-2026-06-05.md",
        "header": "# Briefing: hacker — x\n",
        "entry": "\n## Handover\n<!-- handover-id: h1 -->\nbody\n",
        "handover_id": "h1",
    } | overrides
    return append_briefing(**call)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("entry", "\n## Handover\nbody \ud800\n", "the entry is not valid text"),
        ("header", "# Briefing \udfff\n", "the header is not valid text"),
        ("handover_id", "id-\udc80", "the handover id is not valid text"),
    ],
    ids=["entry", "header", "handover_id"],
)
def test_writer_refuses_text_it_cannot_encode_and_creates_nothing(
    field, value, expected, project_root, tmp_path, snapshot_tree
):
    before = snapshot_tree(tmp_path)
    with pytest.raises(BriefingError) as caught:
        write(project_root, **{field: value})
    path = project_root / ".a0proj" / "handover" / "hacker-x-2026-06-05.md"
    assert str(caught.value).startswith(f"failed to append briefing file {path}: {expected} (")
    assert "lone surrogate at position" in str(caught.value)
    assert not (project_root / ".a0proj").exists()
    assert snapshot_tree(tmp_path) == before


def test_writer_refusing_an_entry_keeps_an_existing_file_byte_for_byte(
    project_root, tmp_path, snapshot_tree
):
    write(project_root)
    before = snapshot_tree(tmp_path)
    with pytest.raises(BriefingError):
        write(project_root, entry="\n## Handover\nbody \ud800\n", handover_id="h2")
    assert snapshot_tree(tmp_path) == before


def test_writer_rejects_a_project_root_it_cannot_encode(tmp_path, snapshot_tree):
    before = snapshot_tree(tmp_path)
    with pytest.raises(BriefingError, match="invalid project root .*lone surrogate at position"):
        write(f"{tmp_path}/pro\ud800ject")
    assert snapshot_tree(tmp_path) == before


def encode_fails_inside_the_write(monkeypatch, *, first_bytes: int = 0):
    """The writer's own write fails with an encoding error (not an OSError), maybe after some bytes."""
    real_write_all = writer.write_all

    def write_all(fd, data):
        if first_bytes:
            real_write_all(fd, data[:first_bytes])
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(writer, "write_all", write_all)


def test_an_encoding_error_inside_the_writer_leaves_no_file_or_folder(
    project_root, tmp_path, snapshot_tree, monkeypatch
):
    encode_fails_inside_the_write(monkeypatch, first_bytes=10)
    before = snapshot_tree(tmp_path)
    with pytest.raises(UnicodeEncodeError):
        write(project_root)
    assert not (project_root / ".a0proj").exists()
    assert snapshot_tree(tmp_path) == before


def test_an_encoding_error_inside_the_writer_rolls_an_existing_file_back(
    project_root, tmp_path, snapshot_tree, monkeypatch
):
    write(project_root)
    encode_fails_inside_the_write(monkeypatch, first_bytes=10)
    before = snapshot_tree(tmp_path)
    with pytest.raises(UnicodeEncodeError):
        write(project_root, entry="\n## Handover\n<!-- handover-id: h2 -->\n", handover_id="h2")
    assert snapshot_tree(tmp_path) == before


def test_the_tool_turns_an_unexpected_writer_failure_into_an_error_and_leaves_nothing(
    handover_args, project_root, tmp_path, snapshot_tree, monkeypatch
):
    encode_fails_inside_the_write(monkeypatch)
    before = snapshot_tree(tmp_path)
    answer = handover_to_specialist.invoke(handover_args)
    assert answer.startswith("ERROR: handover failed unexpectedly: UnicodeEncodeError")
    assert snapshot_tree(tmp_path) == before


def test_an_oserror_in_the_writer_is_still_reported_as_before(project_root, monkeypatch):
    # the broader rollback does not change how an OSError is reported
    def broken_fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", broken_fsync)
    path = project_root / ".a0proj" / "handover" / "hacker-x-2026-06-05.md"
    with pytest.raises(BriefingError) as caught:
        write(project_root)
    assert str(caught.value) == f"failed to append briefing file {path}: Input/output error"
    assert not (project_root / ".a0proj").exists()
