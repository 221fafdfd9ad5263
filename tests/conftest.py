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
"""A pinned handover time (UTC date 2026-06-05), so briefing file names and entries are reproducible."""


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
        import specialist_handover.nodes.handover.handover_to_specialist

        monkeypatch.setattr(
            specialist_handover.nodes.handover.handover_to_specialist, "now_utc", lambda: when
        )

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


# --- whole-suite guard: offline by design (docs/ARCHITECTURE.md, invariant 7) ---
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


# --- PostgreSQL fixtures (tests/test_postgres.py) ---
# A real server, named by HANDOVER_POSTGRES_URL (.ci/run starts a throwaway cluster with
# .ci/postgres.sh). Without it the tests are skipped, unless CI is set: then they fail, since
# CI must test against PostgreSQL. Each test gets a database of its own, dropped afterwards.
import uuid as _pg_uuid  # noqa: E402
from urllib.parse import urlsplit as _pg_urlsplit  # noqa: E402
from urllib.parse import urlunsplit as _pg_urlunsplit  # noqa: E402

POSTGRES_URL_ENV = "HANDOVER_POSTGRES_URL"


def _pg_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _pg_with_database(url: str, dbname: str) -> str:
    """`url` pointing at the database `dbname` (user, password, host, port and query kept)."""
    parts = _pg_urlsplit(url)
    return _pg_urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    """HANDOVER_POSTGRES_URL (skips without it; fails without it when CI is set)."""
    url = os.environ.get(POSTGRES_URL_ENV, "").strip()
    if not url:
        if _pg_in_ci():
            pytest.fail(
                f"CI is set but {POSTGRES_URL_ENV} is not: .ci/run starts a cluster "
                "(source .ci/postgres.sh) and exports it",
                pytrace=False,
            )
        pytest.skip(f"needs a PostgreSQL server: set {POSTGRES_URL_ENV} (see .ci/postgres.sh)")
    try:
        import psycopg
    except ImportError:
        pytest.fail('the PostgreSQL tests need: pip install -e ".[test]"', pytrace=False)
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        pytest.fail(
            f"{POSTGRES_URL_ENV} is set but the server does not answer: {exc}", pytrace=False
        )
    return url


@pytest.fixture
def postgres_url(postgres_server_url: str):
    """A URL to a fresh, empty database `hs_<uuid>` of its own; dropped after the test."""
    import psycopg
    from psycopg import sql

    name = f"hs_{_pg_uuid.uuid4().hex}"
    with psycopg.connect(postgres_server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _pg_with_database(postgres_server_url, name)
    finally:
        with psycopg.connect(postgres_server_url, autocommit=True) as admin:
            # FORCE: a killed child process may leave a connection behind
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


# --- end PostgreSQL fixtures ---
