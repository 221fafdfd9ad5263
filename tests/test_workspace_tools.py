"""The read-only workspace tools (list_files, read_file, search_files) and their confinement.

Every test builds a sandbox: `sandbox/project` is the project root and
`sandbox/outside/keep.txt` must never be read. Refusals come from one corpus of bad
inputs; after each case nothing under the sandbox changed and nothing from outside
the root (nor from `.a0proj/`) shows up in the answer.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from specialist_handover.nodes.tools.workspace import (
    WORKSPACE_MAX_TOKENS,
    WORKSPACE_TOOL_NAMES,
    list_files,
    make_workspace_tools,
    read_file,
    search_files,
)
from specialist_handover.nodes.tools.workspace import paths as workspace_paths
from specialist_handover.state import HandoverContext, TokenCounter, token_counter

OUTSIDE_TEXT = "outside data"
SECRET_TEXT = "TOP SECRET"
APP_PY = 'import os\n\nGREETING = "Hello workspace"\n\n\ndef hello():\n    return GREETING\n'
BIG_LINES = [f"line {n:04d}: the quick brown fox jumps over the lazy dog" for n in range(1, 3001)]
HIT_LINE = re.compile(r"^\S+:\d+: ")


@dataclass(frozen=True)
class Sandbox:
    """The sandbox folder, the project root inside it and the outside folder next to it."""

    box: Path
    root: Path
    outside: Path


def _write(path: Path, data: str | bytes) -> None:
    """Write text or bytes, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path) -> Sandbox:
    """A project with sources, nested folders, binaries, a big file, state, noise and symlinks."""
    box = tmp_path / "sandbox"
    root, outside = box / "project", box / "outside"
    _write(outside / "keep.txt", OUTSIDE_TEXT + "\n")
    files: dict[str, str | bytes] = {
        "src/app.py": APP_PY,
        "src/pkg/__init__.py": "",
        "src/pkg/util.py": "def add(a, b):\n    return a + b\n",
        "src/pkg/deep/notes.txt": "deep note\n",
        "docs/guide.md": "# Guide\n",
        "empty.txt": "",
        "big.txt": "\n".join(BIG_LINES) + "\n",
        "data.bin": b"\x89PNG\r\n\x1a\n\x00\x00Hello workspace\n",
        "latin1.txt": b"caf\xe9 Hello workspace\n",
        ".a0proj/handover/secret.md": f"{SECRET_TEXT} Hello workspace\n",
        ".a0proj/checkpoints.sqlite": b"SQLite format 3\x00",
        ".git/config": "[core]\n\tHello workspace\n",
        ".venv/notes.txt": "Hello workspace\n",
        "node_modules/pkg/index.js": "// Hello workspace\n",
        "__pycache__/app.cpython-311.pyc": b"\x00\x01Hello workspace",
    }
    for rel, data in files.items():
        _write(root / rel, data)
    links = {
        "link_out_file": "../outside/keep.txt",
        "link_out_dir": str(outside),
        "src/link_mid": "../../outside",
        "chain_a": "chain_b",
        "chain_b": "../outside/keep.txt",
        "link_inside": "src/app.py",
        "link_inside_dir": "src/pkg",
        "link_state": ".a0proj/handover/secret.md",
        "link_state_dir": ".a0proj",
    }
    for rel, target in links.items():
        os.symlink(target, root / rel)
    return Sandbox(box, root, outside)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    """The default o200k counter the tools use."""
    return token_counter()


def _snapshot(top: Path) -> dict[str, tuple]:
    """Every entry below `top`: kind plus content, link target or mode (symlinks not followed)."""
    found: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in [*dirnames, *filenames]:
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                found[full] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                found[full] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                found[full] = ("file", Path(full).read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def _entries(listing: str) -> list[str]:
    """The entry lines of a list_files result (header and skip note dropped)."""
    return [
        line for line in listing.splitlines()[1:] if not line.startswith(("Not listed:", "[cut:"))
    ]


def _hits(result: str) -> list[str]:
    """The `path:line: text` lines of a search_files result."""
    return [line for line in result.splitlines()[1:] if HIT_LINE.match(line)]


# --- the refusal corpus ---------------------------------------------------------------------

ROOT = "<root>"
"""Placeholder replaced by the absolute project root in a corpus case."""

BAD_INPUTS = [
    # list_files
    ("list_files", {"path": 42}, "path must be a non-empty string, got 42", "list-path-int"),
    ("list_files", {"path": ""}, "path must be a non-empty string, got ''", "list-path-empty"),
    ("list_files", {"path": None}, "path must be a non-empty string, got None", "list-path-none"),
    ("list_files", {"path": "src\x00"}, "'src\\x00' contains a NUL byte", "list-path-nul"),
    ("list_files", {"path": "/etc"}, "path '/etc' is absolute", "list-absolute-etc"),
    ("list_files", {"path": ROOT}, "is absolute; pass a path relative", "list-absolute-root"),
    ("list_files", {"path": ".."}, "path '..' climbs out of the project root", "list-dotdot"),
    (
        "list_files",
        {"path": "a/../../outside"},
        "path 'a/../../outside' climbs out of the project root",
        "list-dotdot-in-middle",
    ),
    (
        "list_files",
        {"path": "link_out_dir"},
        "path 'link_out_dir' leads outside the project root through a symlink",
        "list-symlinked-folder-outside",
    ),
    (
        "list_files",
        {"path": "src/link_mid"},
        "path 'src/link_mid' leads outside the project root through a symlink",
        "list-nested-symlink-outside",
    ),
    ("list_files", {"path": ".a0proj"}, "path '.a0proj' is inside .a0proj/", "list-state-dir"),
    (
        "list_files",
        {"path": ".a0proj/handover"},
        "path '.a0proj/handover' is inside .a0proj/",
        "list-state-subdir",
    ),
    (
        "list_files",
        {"path": "link_state_dir"},
        "path 'link_state_dir' (through a symlink) is inside .a0proj/",
        "list-symlink-into-state",
    ),
    (
        "list_files",
        {"path": "nope"},
        "path 'nope' does not exist in the project; call list_files('.')",
        "list-missing",
    ),
    # read_file
    (
        "read_file",
        {"path": ["src/app.py"]},
        "path must be a non-empty string, got ['src/app.py']",
        "read-path-list",
    ),
    ("read_file", {"path": "   "}, "path must be a non-empty string", "read-path-blank"),
    ("read_file", {"path": "/etc/passwd"}, "path '/etc/passwd' is absolute", "read-etc-passwd"),
    ("read_file", {"path": ROOT + "/src/app.py"}, "is absolute", "read-absolute-root-file"),
    (
        "read_file",
        {"path": "../outside/keep.txt"},
        "path '../outside/keep.txt' climbs out of the project root",
        "read-dotdot-outside",
    ),
    ("read_file", {"path": "./../x"}, "path './../x' climbs out", "read-dot-dotdot"),
    (
        "read_file",
        {"path": "link_out_file"},
        "path 'link_out_file' leads outside the project root through a symlink",
        "read-symlinked-file-outside",
    ),
    (
        "read_file",
        {"path": "link_out_dir/keep.txt"},
        "path 'link_out_dir/keep.txt' leads outside the project root through a symlink",
        "read-through-symlinked-folder",
    ),
    (
        "read_file",
        {"path": "src/link_mid/keep.txt"},
        "path 'src/link_mid/keep.txt' leads outside the project root through a symlink",
        "read-symlink-in-middle",
    ),
    (
        "read_file",
        {"path": "chain_a"},
        "path 'chain_a' leads outside the project root through a symlink",
        "read-symlink-chain",
    ),
    (
        "read_file",
        {"path": "src/link_mid/../outside/keep.txt"},
        "leads outside the project root through a symlink",
        "read-dotdot-after-symlink",
    ),
    (
        "read_file",
        {"path": ".a0proj/handover/secret.md"},
        "path '.a0proj/handover/secret.md' is inside .a0proj/",
        "read-state-file",
    ),
    (
        "read_file",
        {"path": "sub/../.a0proj/checkpoints.sqlite"},
        "path 'sub/../.a0proj/checkpoints.sqlite' is inside .a0proj/",
        "read-state-via-dotdot",
    ),
    (
        "read_file",
        {"path": ".A0PROJ/handover/secret.md"},
        "is inside .a0proj/",
        "read-state-other-case",
    ),
    (
        "read_file",
        {"path": "link_state"},
        "path 'link_state' (through a symlink) is inside .a0proj/",
        "read-symlink-into-state",
    ),
    (
        "read_file",
        {"path": "link_state_dir/handover/secret.md"},
        "(through a symlink) is inside .a0proj/",
        "read-through-symlinked-state-dir",
    ),
    ("read_file", {"path": "data.bin"}, "path 'data.bin' is a binary file", "read-binary-nul"),
    (
        "read_file",
        {"path": "latin1.txt"},
        "path 'latin1.txt' is a binary file",
        "read-binary-not-utf8",
    ),
    (
        "read_file",
        {"path": "src/missing.py"},
        "path 'src/missing.py' does not exist in the project; call list_files('src')",
        "read-missing",
    ),
    (
        "read_file",
        {"path": "src/pkg/gone/x.py"},
        "call list_files('src/pkg')",
        "read-missing-folder-suggests-nearest",
    ),
    (
        "read_file",
        {"path": "src"},
        "path 'src' is a folder, not a file; call list_files('src')",
        "read-folder",
    ),
    (
        "read_file",
        {"path": "src/app.py", "start_line": 0},
        "start_line must be an integer >= 1, got 0",
        "read-start-line-zero",
    ),
    (
        "read_file",
        {"path": "src/app.py", "start_line": True},
        "start_line must be an integer >= 1, got True",
        "read-start-line-bool",
    ),
    (
        "read_file",
        {"path": "src/app.py", "max_lines": "ten"},
        "max_lines must be an integer >= 1, got 'ten'",
        "read-max-lines-str",
    ),
    (
        "read_file",
        {"path": "src/app.py", "max_lines": -5},
        "max_lines must be an integer >= 1, got -5",
        "read-max-lines-negative",
    ),
    (
        "read_file",
        {"path": "src/app.py", "start_line": 99},
        "start_line 99 is past the end of 'src/app.py' (7 lines); pass start_line between 1 and 7",
        "read-start-line-past-end",
    ),
    # search_files
    ("search_files", {"query": ""}, "query must be a non-empty string", "search-query-empty"),
    ("search_files", {"query": None}, "query must be a non-empty string", "search-query-none"),
    ("search_files", {"query": "a\x00b"}, "contains a NUL byte", "search-query-nul"),
    ("search_files", {"query": "a\nb"}, "spans lines", "search-query-newline"),
    ("search_files", {"query": "x" * 501}, "pass at most 500", "search-query-too-long"),
    (
        "search_files",
        {"query": "outside", "path": "../outside"},
        "path '../outside' climbs out of the project root",
        "search-dotdot-outside",
    ),
    (
        "search_files",
        {"query": "outside", "path": ROOT + "/../outside"},
        "is absolute",
        "search-absolute",
    ),
    (
        "search_files",
        {"query": "outside", "path": "link_out_dir"},
        "path 'link_out_dir' leads outside the project root through a symlink",
        "search-symlinked-folder-outside",
    ),
    (
        "search_files",
        {"query": "outside", "path": "chain_a"},
        "leads outside the project root through a symlink",
        "search-symlink-chain",
    ),
    (
        "search_files",
        {"query": "SECRET", "path": ".a0proj"},
        "path '.a0proj' is inside .a0proj/",
        "search-state-dir",
    ),
    (
        "search_files",
        {"query": "SECRET", "path": "link_state_dir"},
        "path 'link_state_dir' (through a symlink) is inside .a0proj/",
        "search-symlink-into-state",
    ),
    (
        "search_files",
        {"query": "x", "path": 7},
        "path must be a non-empty string, got 7",
        "search-path-int",
    ),
]
FUNCTIONS: dict[str, Callable[..., str]] = {
    "list_files": list_files,
    "read_file": read_file,
    "search_files": search_files,
}


def _with_root(kwargs: dict, root: Path) -> dict:
    """The corpus arguments with the root placeholder replaced."""
    return {
        key: value.replace(ROOT, str(root)) if isinstance(value, str) else value
        for key, value in kwargs.items()
    }


@pytest.mark.parametrize(
    ("tool", "kwargs", "expected"),
    [pytest.param(tool, kwargs, expected, id=case) for tool, kwargs, expected, case in BAD_INPUTS],
)
def test_every_bad_input_is_refused_with_an_error_that_names_it_and_changes_nothing(
    ws: Sandbox, counter: TokenCounter, tool: str, kwargs: dict, expected: str
) -> None:
    before = _snapshot(ws.box)
    result = FUNCTIONS[tool](str(ws.root), **_with_root(kwargs, ws.root), counter=counter)
    assert result.startswith("ERROR: "), result
    assert expected in result
    assert "\n" not in result
    assert OUTSIDE_TEXT not in result
    assert str(ws.outside) not in result
    assert SECRET_TEXT not in result
    assert _snapshot(ws.box) == before


def test_the_refusal_corpus_covers_all_three_tools_with_at_least_20_cases() -> None:
    tools = [tool for tool, *_ in BAD_INPUTS]
    assert len(BAD_INPUTS) >= 20
    assert {tool: tools.count(tool) >= 5 for tool in FUNCTIONS} == dict.fromkeys(FUNCTIONS, True)


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_symlink_swapped_in_after_the_check_is_not_followed(
    ws: Sandbox, counter: TokenCounter, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    checked = workspace_paths._kind_of

    def check_then_swap(*args: str) -> str:
        kind = checked(*args)
        if swap == "file":
            (ws.root / "src" / "app.py").unlink()
            os.symlink(ws.outside / "keep.txt", ws.root / "src" / "app.py")
        else:
            (ws.root / "src").rename(ws.root / "src_moved")
            os.symlink(ws.outside, ws.root / "src")
            (ws.outside / "app.py").write_text(OUTSIDE_TEXT, encoding="utf-8")
        return kind

    monkeypatch.setattr(workspace_paths, "_kind_of", check_then_swap)
    result = read_file(str(ws.root), "src/app.py", counter=counter)
    assert result.startswith("ERROR: path 'src/app.py' could not be opened safely"), result
    assert OUTSIDE_TEXT not in result


def test_pure_functions_refuse_a_bad_counter_max_tokens_or_project_root(
    ws: Sandbox, counter: TokenCounter
) -> None:
    root = str(ws.root)
    assert list_files(root, counter=object()).startswith("ERROR: counter must be a TokenCounter")
    assert read_file(root, "src/app.py", counter=counter, max_tokens=0).startswith(
        "ERROR: max_tokens must be an integer >= 1, got 0"
    )
    assert search_files("relative/root", "x", counter=counter).startswith(
        "ERROR: project_root must be an absolute folder path, got 'relative/root'"
    )
    assert list_files(str(ws.box / "missing"), counter=counter).startswith("ERROR: project_root")


# --- list_files -----------------------------------------------------------------------------


def test_list_files_lists_the_whole_project_sorted_relative_and_with_folders_marked(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = list_files(str(ws.root), counter=counter)
    assert _entries(result) == [
        "big.txt",
        "chain_a -> (symlink)",
        "chain_b -> (symlink)",
        "data.bin",
        "docs/",
        "docs/guide.md",
        "empty.txt",
        "latin1.txt",
        "link_inside -> (symlink)",
        "link_inside_dir -> (symlink)",
        "link_out_dir -> (symlink)",
        "link_out_file -> (symlink)",
        "link_state -> (symlink)",
        "link_state_dir -> (symlink)",
        "src/",
        "src/app.py",
        "src/link_mid -> (symlink)",
        "src/pkg/",
        "src/pkg/__init__.py",
        "src/pkg/deep/",
        "src/pkg/deep/notes.txt",
        "src/pkg/util.py",
    ]
    assert result.splitlines()[0] == "Files under the project root (22 entries):"


def test_list_files_never_shows_a0proj_or_noise_folders_and_says_what_it_skipped(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = list_files(str(ws.root), counter=counter)
    hidden = (".a0proj", ".git", ".venv", "node_modules", "__pycache__")
    assert not [line for line in _entries(result) if line.startswith(hidden)]
    assert SECRET_TEXT not in result and "secret.md" not in result
    note = result.splitlines()[1]
    assert note.startswith("Not listed: .a0proj/")
    for name in hidden[1:]:
        assert f"{name}/" in note


def test_list_files_marks_symlinks_and_never_follows_them(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = list_files(str(ws.root), counter=counter)
    assert "link_out_dir -> (symlink)" in _entries(result)
    assert "keep.txt" not in result
    assert str(ws.outside) not in result
    assert "link_inside_dir/" not in result


def test_list_files_of_a_subfolder_shows_paths_relative_to_the_root(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = list_files(str(ws.root), "src/pkg", counter=counter)
    assert result.splitlines() == [
        "Files under src/pkg/ (4 entries):",
        "src/pkg/__init__.py",
        "src/pkg/deep/",
        "src/pkg/deep/notes.txt",
        "src/pkg/util.py",
    ]


def test_list_files_through_a_symlinked_folder_inside_the_root_lists_the_real_folder(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = list_files(str(ws.root), "link_inside_dir", counter=counter)
    assert result.splitlines()[0] == (
        "Files under link_inside_dir/ (resolved to src/pkg/) (4 entries):"
    )
    assert "src/pkg/util.py" in _entries(result)


def test_list_files_given_a_file_lists_just_that_file(ws: Sandbox, counter: TokenCounter) -> None:
    result = list_files(str(ws.root), "src/app.py", counter=counter)
    assert result.splitlines() == [
        "src/app.py is a file, not a folder (1 entry); call read_file('src/app.py') to read it.",
        "src/app.py",
    ]


def test_list_files_of_an_empty_folder_says_so(ws: Sandbox, counter: TokenCounter) -> None:
    (ws.root / "blank").mkdir()
    result = list_files(str(ws.root), "blank", counter=counter)
    assert result == "Files under blank/ (0 entries): the folder is empty."


# --- read_file ------------------------------------------------------------------------------


def test_read_file_shows_numbered_lines_like_cat_n(ws: Sandbox, counter: TokenCounter) -> None:
    result = read_file(str(ws.root), "src/app.py", counter=counter)
    numbered = [f"{n:>6}\t{line}" for n, line in enumerate(APP_PY.splitlines(), 1)]
    assert result.splitlines() == ["src/app.py (lines 1-7 of 7)", *numbered]


def test_read_file_window_says_how_to_continue(ws: Sandbox, counter: TokenCounter) -> None:
    result = read_file(str(ws.root), "big.txt", start_line=10, max_lines=5, counter=counter)
    lines = result.splitlines()
    assert lines[0] == "big.txt (lines 10-14 of 3000)"
    assert lines[1:6] == [f"{n:>6}\t{BIG_LINES[n - 1]}" for n in range(10, 15)]
    assert lines[6] == "... 2986 more lines; call read_file('big.txt', start_line=15) to continue"
    assert len(lines) == 7


def test_read_file_last_window_has_no_continuation_line(ws: Sandbox, counter: TokenCounter) -> None:
    result = read_file(str(ws.root), "big.txt", start_line=2999, counter=counter)
    assert result.splitlines() == [
        "big.txt (lines 2999-3000 of 3000)",
        f"  2999\t{BIG_LINES[2998]}",
        f"  3000\t{BIG_LINES[2999]}",
    ]


def test_read_file_caps_max_lines_at_2000(ws: Sandbox, counter: TokenCounter) -> None:
    result = read_file(str(ws.root), "big.txt", max_lines=5000, counter=counter, max_tokens=10**6)
    lines = result.splitlines()
    assert lines[0] == "big.txt (lines 1-2000 of 3000)"
    assert lines[-1] == (
        "... 1000 more lines; call read_file('big.txt', start_line=2001) to continue"
    )


def test_read_file_reads_a_symlink_that_stays_inside_the_root(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = read_file(str(ws.root), "link_inside", counter=counter)
    assert result.splitlines()[0] == "link_inside (lines 1-7 of 7)"
    assert '     3\tGREETING = "Hello workspace"' in result.splitlines()


def test_read_file_reads_a_hardlink_inside_the_root(ws: Sandbox, counter: TokenCounter) -> None:
    os.link(ws.root / "src" / "app.py", ws.root / "app_hardlink.py")
    result = read_file(str(ws.root), "app_hardlink.py", counter=counter)
    assert result.startswith("app_hardlink.py (lines 1-7 of 7)")


def test_read_file_of_an_empty_file_says_it_is_empty(ws: Sandbox, counter: TokenCounter) -> None:
    assert (
        read_file(str(ws.root), "empty.txt", counter=counter) == "empty.txt (empty file, 0 lines)"
    )


def test_read_file_drops_crlf_line_endings(ws: Sandbox, counter: TokenCounter) -> None:
    _write(ws.root / "dos.txt", b"first\r\nsecond\r\n")
    result = read_file(str(ws.root), "dos.txt", counter=counter)
    assert result.splitlines() == ["dos.txt (lines 1-2 of 2)", "     1\tfirst", "     2\tsecond"]


# --- search_files ---------------------------------------------------------------------------


def test_search_files_reports_each_hit_as_path_line_text(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = search_files(str(ws.root), "hello WORKSPACE", counter=counter)
    assert result.splitlines()[0] == (
        "1 hit in 1 file for 'hello WORKSPACE' under the project root:"
    )
    assert _hits(result) == ['src/app.py:3: GREETING = "Hello workspace"']


def test_search_files_skips_binaries_state_noise_symlinks_and_files_over_2_mb(
    ws: Sandbox, counter: TokenCounter
) -> None:
    _write(ws.root / "huge.txt", "Hello workspace\n" + "x" * (2 * 1024 * 1024))
    result = search_files(str(ws.root), "Hello workspace", counter=counter)
    assert _hits(result) == ['src/app.py:3: GREETING = "Hello workspace"']
    assert "2 binary files" in result
    assert "1 file over 2 MB" in result
    assert "9 symlinks (never followed)" in result
    assert "Not searched: .a0proj/" in result
    assert SECRET_TEXT not in result and OUTSIDE_TEXT not in result


def test_search_files_is_a_plain_substring_search_not_a_regex(
    ws: Sandbox, counter: TokenCounter
) -> None:
    _write(ws.root / "src" / "regex.txt", "x = a.b(1)\nx = axb(1)\n[y]\n")
    assert _hits(search_files(str(ws.root), "A.B(", "src", counter=counter)) == [
        "src/regex.txt:1: x = a.b(1)"
    ]
    assert _hits(search_files(str(ws.root), "[y]", counter=counter)) == ["src/regex.txt:3: [y]"]


def test_search_files_without_hits_says_so(ws: Sandbox, counter: TokenCounter) -> None:
    result = search_files(str(ws.root), "zzz-not-there", counter=counter)
    assert result.startswith("No matches for 'zzz-not-there' under the project root (")
    assert "text files searched)." in result.splitlines()[0]


def test_search_files_clips_long_lines_around_the_hit(ws: Sandbox, counter: TokenCounter) -> None:
    _write(ws.root / "long.txt", "a" * 500 + "NEEDLE" + "b" * 500 + "\n")
    [hit] = _hits(search_files(str(ws.root), "needle", counter=counter))
    assert hit.startswith("long.txt:1: ")
    assert "NEEDLE" in hit
    assert len(hit) < 230


def test_search_files_under_a_subfolder_or_in_one_file(ws: Sandbox, counter: TokenCounter) -> None:
    assert _hits(search_files(str(ws.root), "return", "src/pkg", counter=counter)) == [
        "src/pkg/util.py:2: return a + b"
    ]
    assert _hits(search_files(str(ws.root), "greeting", "src/app.py", counter=counter)) == [
        'src/app.py:3: GREETING = "Hello workspace"',
        "src/app.py:7: return GREETING",
    ]


# --- the token cap --------------------------------------------------------------------------


def _assert_cut(result: str, counter: TokenCounter, max_tokens: int) -> str:
    """The result fits the cap and its last line says it was cut; returns that line."""
    assert counter.count_text(result) <= max_tokens
    last = result.splitlines()[-1]
    assert last.startswith(f"[cut: the result was over {max_tokens} tokens; ")
    assert "more lines not shown — " in last
    return last


def test_list_files_cuts_an_oversized_listing_and_says_so(
    ws: Sandbox, counter: TokenCounter
) -> None:
    names = [f"many/file_{n:03d}_with_a_rather_long_name.txt" for n in range(300)]
    for name in names:
        _write(ws.root / name, "")
    result = list_files(str(ws.root), "many", counter=counter, max_tokens=300)
    last = _assert_cut(result, counter, 300)
    shown = _entries(result)
    assert shown and shown == names[: len(shown)]
    assert f"{300 - len(shown)} more lines not shown — list a subfolder" in last


def test_read_file_cuts_at_max_tokens_on_a_line_boundary_and_says_so(
    ws: Sandbox, counter: TokenCounter
) -> None:
    result = read_file(str(ws.root), "big.txt", max_lines=2000, counter=counter)
    last = _assert_cut(result, counter, WORKSPACE_MAX_TOKENS)
    body = result.splitlines()[1:-1]
    assert body == [f"{n:>6}\t{BIG_LINES[n - 1]}" for n in range(1, len(body) + 1)]
    assert result.splitlines()[0] == f"big.txt (lines 1-{len(body)} of 3000)"
    assert f"call read_file('big.txt', start_line={len(body) + 1}) to continue" in last


def test_read_file_cuts_a_single_overlong_line(ws: Sandbox, counter: TokenCounter) -> None:
    _write(ws.root / "minified.js", "var x = 1; " * 5000 + "\n")
    result = read_file(str(ws.root), "minified.js", counter=counter, max_tokens=300)
    _assert_cut(result, counter, 300)
    assert result.splitlines()[1].startswith("     1\tvar x = 1; ")
    assert result.splitlines()[1].endswith("…[line cut]")


def test_search_files_cuts_many_hits_and_says_so(ws: Sandbox, counter: TokenCounter) -> None:
    result = search_files(str(ws.root), "quick brown", counter=counter, max_tokens=500)
    last = _assert_cut(result, counter, 500)
    assert result.startswith("At least 1000 hits in 1 file for 'quick brown'")
    assert _hits(result)[0] == f"big.txt:1: {BIG_LINES[0]}"
    assert "narrow the path or the query" in last


def test_results_within_the_cap_are_not_cut(ws: Sandbox, counter: TokenCounter) -> None:
    root = str(ws.root)
    for result in (
        list_files(root, counter=counter),
        read_file(root, "src/app.py", counter=counter),
        search_files(root, "hello", counter=counter),
    ):
        assert "[cut:" not in result
        assert counter.count_text(result) <= WORKSPACE_MAX_TOKENS


# --- the LangChain tools --------------------------------------------------------------------


def _call_tools(
    root: Path | str, calls: list[tuple[str, dict]], tools: list[BaseTool] | None = None
) -> list[ToolMessage]:
    """Run tool calls through a real ToolNode in a one-node graph with a HandoverContext."""
    graph = StateGraph(MessagesState, context_schema=HandoverContext)
    graph.add_node("tools", ToolNode(tools or make_workspace_tools()))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    message = AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call_{n}"} for n, (name, args) in enumerate(calls)
        ],
    )
    out = graph.compile().invoke(
        {"messages": [message]}, context={"project_root": str(root), "model": "offline"}
    )
    replies = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    return [replies[f"call_{n}"] for n in range(len(calls))]


def test_make_workspace_tools_returns_the_three_named_tools_with_descriptions() -> None:
    tools = make_workspace_tools()
    assert tuple(tool.name for tool in tools) == WORKSPACE_TOOL_NAMES
    assert all(isinstance(tool, BaseTool) for tool in tools)
    assert all(len(tool.description) > 200 and "Read-only" in tool.description for tool in tools)


def test_tools_show_the_model_only_the_documented_arguments() -> None:
    expected = {
        "list_files": ({"path"}, set()),
        "read_file": ({"path", "start_line", "max_lines"}, {"path"}),
        "search_files": ({"query", "path"}, {"query"}),
    }
    for tool in make_workspace_tools():
        schema = tool.tool_call_schema.model_json_schema()
        arguments, required = expected[tool.name]
        assert set(schema["properties"]) == arguments
        assert set(schema.get("required", [])) == required
        assert all(prop["description"] for prop in schema["properties"].values())
        openai = convert_to_openai_tool(tool)["function"]
        assert set(openai["parameters"]["properties"]) == arguments
        assert "runtime" not in json.dumps(openai)


def test_tools_run_end_to_end_through_a_tool_node(ws: Sandbox) -> None:
    replies = _call_tools(
        ws.root,
        [
            ("list_files", {"path": "src/pkg"}),
            ("read_file", {"path": "src/app.py", "start_line": "3", "max_lines": 1}),
            ("search_files", {"query": "hello workspace"}),
            ("read_file", {"path": "../outside/keep.txt"}),
            ("search_files", {"query": "SECRET", "path": "link_state_dir"}),
        ],
    )
    listing, window, search, outside, state = (reply.content for reply in replies)
    assert listing.splitlines()[0] == "Files under src/pkg/ (4 entries):"
    assert window.splitlines() == [
        "src/app.py (lines 3-3 of 7)",
        '     3\tGREETING = "Hello workspace"',
        "... 4 more lines; call read_file('src/app.py', start_line=4) to continue",
    ]
    assert _hits(search) == ['src/app.py:3: GREETING = "Hello workspace"']
    assert outside.startswith("ERROR: path '../outside/keep.txt' climbs out")
    assert state.startswith("ERROR: path 'link_state_dir' (through a symlink) is inside .a0proj/")
    assert [reply.name for reply in replies] == [
        "list_files",
        "read_file",
        "search_files",
        "read_file",
        "search_files",
    ]


def test_tools_take_the_root_from_the_run_context_not_the_model(ws: Sandbox) -> None:
    [reply] = _call_tools(ws.root, [("list_files", {"project_root": "/", "path": "."})])
    assert reply.content.startswith("Files under the project root (22 entries):")
    [bad] = _call_tools("relative/root", [("list_files", {})])
    assert bad.content.startswith("ERROR: list_files failed: ValueError: project_root must be")


def test_tools_use_counter_for_with_the_run_context(ws: Sandbox, counter: TokenCounter) -> None:
    seen: list[HandoverContext] = []

    def counter_for(ctx: HandoverContext) -> TokenCounter:
        seen.append(ctx)
        return counter

    _call_tools(
        ws.root,
        [("read_file", {"path": "src/app.py"})],
        make_workspace_tools(counter_for=counter_for),
    )
    assert [ctx.project_root for ctx in seen] == [str(ws.root)]


def test_tools_never_raise_and_wrap_unexpected_exceptions(ws: Sandbox) -> None:
    def broken(ctx: HandoverContext) -> TokenCounter:
        raise RuntimeError("boom")

    [reply] = _call_tools(ws.root, [("list_files", {})], make_workspace_tools(counter_for=broken))
    assert reply.content == "ERROR: list_files failed: RuntimeError: boom"
    [missing] = _call_tools(ws.root, [("read_file", {})])
    assert missing.content.startswith("ERROR: read_file is missing required argument(s) path;")
    direct = make_workspace_tools()[2].invoke({"query": "x"})
    assert direct.startswith("ERROR: search_files needs the LangGraph run context")
