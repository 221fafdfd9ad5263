"""One link-safe file module (`state/linksafe.py`): every folder and file the project opens
below a folder it holds is opened there, a part at a time, never following a link."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from specialist_handover.state.linksafe import (
    LinkRefused,
    NotAFolder,
    open_below,
    open_file,
    open_folder,
    open_root,
)

REPO = Path(__file__).resolve().parents[1]


def test_only_the_module_opens_without_following_links():
    users = []
    for folder in ("graph", "nodes", "specialists", "state"):
        for path in (REPO / folder).rglob("*.py"):
            code = "\n".join(
                line
                for line in path.read_text(encoding="utf-8").splitlines()
                if not line.lstrip().startswith(("#", '"', "'", "`")) and "`" not in line
            )
            if re.search(r"os\.O_NOFOLLOW|O_NOFOLLOW\b.*\|", code) or "os.mkdir(" in code:
                users.append(str(path.relative_to(REPO)))
    assert users == ["state/linksafe.py"]


def test_a_symlinked_or_odd_folder_is_refused_and_a_missing_one_made_owner_only(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    root = open_root(str(tmp_path))
    try:
        with pytest.raises(LinkRefused):
            open_folder("link", root)
        with pytest.raises(NotAFolder):
            open_folder("file", root)
        with pytest.raises(FileNotFoundError):
            open_folder("missing", root)
        old = os.umask(0)
        try:
            fd, made = open_folder("made", root, create=True)
        finally:
            os.umask(old)
        os.close(fd)
        assert made and stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o700
        fd, made = open_folder("made", root, create=True)
        os.close(fd)
        assert not made
    finally:
        os.close(root)


def test_a_symlinked_file_is_refused_a_fifo_does_not_block_and_a_new_file_is_0600(tmp_path):
    (tmp_path / "target").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    os.mkfifo(tmp_path / "fifo")
    root = open_root(str(tmp_path))
    try:
        with pytest.raises(LinkRefused):
            open_file("link", root, os.O_RDONLY)
        fd, _ = open_file("fifo", root, os.O_RDONLY)  # returns at once
        assert stat.S_ISFIFO(os.fstat(fd).st_mode)
        os.close(fd)
        old = os.umask(0)
        try:
            fd, made = open_file("new", root, os.O_RDWR, create=True)
        finally:
            os.umask(old)
        os.close(fd)
        assert made and stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o600
    finally:
        os.close(root)


def test_open_below_refuses_a_link_at_any_part(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("ok")
    (tmp_path / "a" / "jump").symlink_to(tmp_path / "a" / "b")
    fd = open_below(str(tmp_path), ["a", "b", "f.txt"], file_flags=os.O_RDONLY)
    assert os.read(fd, 10) == b"ok"
    os.close(fd)
    with pytest.raises(LinkRefused):
        open_below(str(tmp_path), ["a", "jump", "f.txt"], file_flags=os.O_RDONLY)
