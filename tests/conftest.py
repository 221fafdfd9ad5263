"""Shared pytest fixtures. Each issue keeps its own self-contained section below."""

from __future__ import annotations

# --- issue-2 fixtures ---
# Fixtures for the handover tool, briefing file, profiles and token tests
# (tests/test_tokens.py, test_profiles.py, test_handover_tool.py, test_bad_inputs.py,
# test_briefing.py, test_briefing_concurrency.py).
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

ISSUE2_FIXED_WHEN = datetime(2026, 6, 5, 21, 30, 0, tzinfo=UTC)
"""A pinned handover time (UTC date 2026-06-05), as in the seed's example."""


def _issue2_snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below `root` (itself excluded): kind plus content / link target / mode."""
    found: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("symlink", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    found[rel] = ("file", fh.read())
            else:
                found[rel] = ("other", stat.S_IFMT(st.st_mode))
    return found


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A parent folder holding the project root and an `outside` folder next to it."""
    box = tmp_path / "sandbox"
    (box / "project").mkdir(parents=True)
    (box / "outside").mkdir()
    (box / "outside" / "keep.txt").write_text("outside data\n", encoding="utf-8")
    return box


@pytest.fixture
def project_root(sandbox: Path) -> Path:
    """The (absolute) project root inside the sandbox."""
    return sandbox / "project"


@pytest.fixture
def handover_dir(project_root: Path) -> Path:
    """Where briefing files must land (not created by this fixture)."""
    return project_root / ".a0proj" / "handover"


@pytest.fixture
def snapshot_tree() -> Callable[[Path], dict[str, tuple]]:
    """`snapshot_tree(path)` -> {relative path: (kind, content)} of everything below path."""
    return _issue2_snapshot


@pytest.fixture
def fixed_when() -> datetime:
    """The pinned handover time (2026-06-05T21:30:00Z)."""
    return ISSUE2_FIXED_WHEN


@pytest.fixture
def pin_now(monkeypatch: pytest.MonkeyPatch) -> Callable[[datetime], None]:
    """`pin_now(dt)` makes the tool's clock return `dt` (default: fixed_when)."""

    def pin(when: datetime = ISSUE2_FIXED_WHEN) -> None:
        import specialist_handover.nodes.handover.tool

        monkeypatch.setattr(specialist_handover.nodes.handover.tool, "now_utc", lambda: when)

    return pin


@pytest.fixture
def handover_args(project_root: Path) -> dict:
    """A valid, complete argument set for handover_to_specialist (all 11 arguments)."""
    return {
        "specialist_profile": "frontend_designer",
        "topic": "landing-page-hero",
        "summary": "The user wants a bold landing page for a coffee subscription.",
        "recent_turns": [
            "user: make the hero section pop",
            "orchestrator: any brand colours?",
            "user: espresso brown and cream",
        ],
        "decisions": ["Use Tailwind", "Hero has one call-to-action"],
        "artifacts": ["src/pages/index.tsx", "design/brand.md"],
        "return_condition": "user_request",
        "handover_reason": "visual design request",
        "project_root": str(project_root),
        "max_context_tokens": 3000,
        "include_recent_turns": 5,
    }


# --- end issue-2 fixtures ---


# --- whole-suite guard: offline by design (invariant 7) ---
import ipaddress  # noqa: E402
import socket  # noqa: E402

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback_only(address) -> None:  # type: ignore[no-untyped-def]
    """Refuse any connection that leaves this machine; loopback and Unix sockets pass."""
    if isinstance(address, tuple) and address:
        host = str(address[0])
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise ConnectionRefusedError(f"test suite is offline: connection to {host!r} refused")


@pytest.fixture(autouse=True)
def offline_network(monkeypatch):
    """Every test runs with the network cut off except 127.0.0.0/8 and ::1."""

    def connect(self, address):  # type: ignore[no-untyped-def]
        _loopback_only(address)
        return _real_connect(self, address)

    def connect_ex(self, address):  # type: ignore[no-untyped-def]
        _loopback_only(address)
        return _real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


# --- graph fixtures ---
@pytest.fixture
def ctx(tmp_path):
    """A run context with a fresh project root and the offline model (files may override)."""
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "offline"}
