"""Start LangChain's Agent Chat UI for browser tests, and always stop it again.

Usage::

    with agent_chat_ui(api_url=server.url, assistant_id="orchestrator", log_dir=tmp) as ui:
        page.goto(ui.url)

The UI is an unmodified, read-only snapshot of github.com/langchain-ai/agent-chat-ui
(a Next.js app) beside the repository: ``../shared/agent-chat-ui``, or the folder
named by ``AGENT_CHAT_UI_SOURCE``. It is never changed. It needs Node.js 18.18+
and pnpm 10.

Install, once per snapshot: the snapshot is copied to
``~/.cache/specialist-handover/agent-chat-ui-<commit>`` (``XDG_CACHE_HOME`` is
honoured; outside the repository) and set up there: a ``.npmrc`` with
``manage-package-manager-versions=false`` (otherwise pnpm tries to switch to
the pnpm version package.json pins and refuses it, its registry signature
being unverifiable), then ``pnpm install --frozen-lockfile``. A stamp written
after a complete install lets later runs skip all of it; a file lock keeps two
test sessions from installing at once. pnpm comes from ``npm i -g pnpm@10``
when missing: pnpm 12 fails on this app's pinned ``packageManager`` however it
is configured, so a pnpm of another major on PATH is left alone and a private
pnpm 10 is installed into the cache folder instead.

Run: every UI runs from its own folder under ``log_dir`` (the app's sources
plus a symlink to the cached ``node_modules``), so concurrent sessions never
share Next's ``.next`` folder. ``next dev`` is the default ("dev"), measured
faster end to end on a 2-core machine: its page is ready 25-45 s after start
(the first request compiles it), against 65-75 s for ``next build --no-lint``
then ``next start`` ("build"); page loads cost more in dev (about 1 s against
0.3 s, 5 s for the very first), but a whole run of tests/test_agent_chat_ui.py
still took 66-87 s in dev against 88-96 s built. Set
``AGENT_CHAT_UI_MODE=build`` to use the other. The environment gives the UI its
server (``NEXT_PUBLIC_API_URL``, ``NEXT_PUBLIC_ASSISTANT_ID``) and no telemetry.
The layout loads the Inter font from Google Fonts, which cannot be reached
offline (``next build`` fails on it, ``next dev`` retries, then falls back):
``NEXT_FONT_GOOGLE_MOCKED_RESPONSES``, Next's own switch for tests, answers
with a ``local()`` font face instead, so the page uses a system font.

Readiness is ``GET /`` answering 200 with the app's page (in dev mode this
waits for the page's first compile) before a deadline. The UI runs in its own
process group, stopped by the group's id like ``langgraph dev`` in
tests/support/langgraph_server.py, even when a test fails.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# one way to stop a process group for every server the tests start
from .langgraph_server import REPO_ROOT, _die_with_parent, _stop, _tail, free_port

__all__ = [
    "ChatUI",
    "ChatUIStartError",
    "ChatUIUnavailable",
    "agent_chat_ui",
    "missing_tools",
    "prepare_chat_ui",
]

SOURCE_ENV = "AGENT_CHAT_UI_SOURCE"
MODE_ENV = "AGENT_CHAT_UI_MODE"
MODES = ("dev", "build")
DEFAULT_MODE = "dev"
PNPM_MAJOR = 10
NODE_MIN = (18, 18)
"""Next.js 15's minimum Node.js version."""

INSTALL_TIMEOUT = 900.0
"""Seconds a first `pnpm install` (about 20-90 s) or `next build` may take."""

POLL_INTERVAL = 0.25
STAMP = ".specialist-handover-install.json"
NPMRC = "manage-package-manager-versions=false\n"
FONTS_MOCK = (
    "// Every Google Fonts request answers with a local() face: no network, a system font.\n"
    "const css = \"@font-face { font-family: 'Inter'; font-style: normal; "
    "font-weight: 100 900; font-display: swap; src: local('Inter'); }\\n\";\n"
    "module.exports = new Proxy({}, { get: (_t, url) => (typeof url === 'string' ? css : "
    "undefined) });\n"
)
_SKIPPED = {"node_modules", ".next", ".git"}
# Variables that would point the UI elsewhere than the server we give it.
_DROPPED_ENV = ("LANGGRAPH_API_URL", "LANGSMITH_API_KEY", "NODE_ENV", "NEXT_PUBLIC_AUTH_SCHEME")
_ADDRESS_IN_USE = ("eaddrinuse", "address already in use", "is already in use")

_RUNNING: dict[int, subprocess.Popen] = {}
"""UIs started by this process and not yet stopped (safety net for atexit)."""


class ChatUIUnavailable(RuntimeError):
    """A tool the UI needs (Node.js, pnpm or npm, the snapshot) is missing."""


class ChatUIStartError(RuntimeError):
    """Installing, building or starting the UI failed or missed its deadline."""


@dataclass
class ChatUI:
    """A running Agent Chat UI."""

    url: str
    port: int
    pid: int
    mode: str
    log_path: Path
    process: subprocess.Popen = field(repr=False)

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the UI's log (for assertion messages)."""
        return _tail(self.log_path, chars)

    def is_running(self) -> bool:
        return self.process.poll() is None


# --- what is needed ------------------------------------------------------------------------


def snapshot_dir() -> Path:
    """Where the Agent Chat UI snapshot is: $AGENT_CHAT_UI_SOURCE or ../shared/agent-chat-ui."""
    return Path(os.environ.get(SOURCE_ENV) or REPO_ROOT.parent / "shared" / "agent-chat-ui")


def cache_root() -> Path:
    """~/.cache/specialist-handover (or $XDG_CACHE_HOME/specialist-handover)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "specialist-handover"


def _node_version() -> tuple[int, ...] | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.match(r"v(\d+)\.(\d+)", out.stdout.strip())
    return (int(found[1]), int(found[2])) if found else None


def missing_tools() -> list[str]:
    """What keeps the UI from running here, one reason each (empty when all is there)."""
    missing = []
    source = snapshot_dir()
    if not (source / "package.json").is_file() or not (source / "pnpm-lock.yaml").is_file():
        missing.append(f"the Agent Chat UI snapshot ({source}; or set {SOURCE_ENV})")
    version = _node_version()
    if version is None:
        missing.append("Node.js (`node` on PATH; Debian: apt-get install nodejs npm)")
    elif version < NODE_MIN:
        missing.append(f"Node.js {NODE_MIN[0]}.{NODE_MIN[1]}+ (found {version[0]}.{version[1]})")
    if shutil.which("pnpm") is None and shutil.which("npm") is None:
        missing.append(f"pnpm, or npm to install it (npm i -g pnpm@{PNPM_MAJOR})")
    return missing


# --- install (once per snapshot) -----------------------------------------------------------


def _snapshot_files(source: Path) -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED)
        files += [Path(dirpath, name) for name in sorted(filenames)]
    return files


def snapshot_digest(source: Path) -> str:
    """sha256 over the snapshot's file names and contents: a changed snapshot installs anew."""
    digest = hashlib.sha256()
    for path in _snapshot_files(source):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def snapshot_id(source: Path, digest: str) -> str:
    """The upstream commit named in the snapshot's notes beside it, else the digest (12 hex)."""
    notes = source.with_name(f"{source.name}.SOURCE.md")
    with contextlib.suppress(OSError):
        found = re.search(r"\bcommit ([0-9a-f]{40})\b", notes.read_text(encoding="utf-8"))
        if found:
            return found[1][:12]
    return digest[:12]


def _copy_sources(source: Path, dest: Path) -> None:
    """Copy the snapshot's files (not node_modules or .next) into `dest`, writable."""
    for path in _snapshot_files(source):
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            target.chmod(stat.S_IRUSR | stat.S_IWUSR)
        shutil.copyfile(path, target)  # contents only: the snapshot's read-only bits stay behind
    (dest / ".npmrc").write_text(NPMRC, encoding="utf-8")


@contextlib.contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """An exclusive lock on `path` (a lock file), waited for at most `timeout` seconds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ChatUIStartError(
                        f"another test session holds {path} for over {timeout:.0f}s"
                    ) from None
                time.sleep(POLL_INTERVAL)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _spawn(cmd: list[str], *, cwd: Path, env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """Start `cmd` in its own process group (stopped with the tests), its output logged."""
    with open(log_path, "ab") as log:
        log.write(f"$ {' '.join(cmd)}  (cwd={cwd})\n".encode())
        log.flush()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
    _RUNNING[proc.pid] = proc
    return proc


def _run_step(cmd: list[str], *, cwd: Path, env: dict[str, str], log_path: Path, timeout: float):
    """Run one setup command (install, build) in its own process group, logging its output."""
    proc = _spawn(cmd, cwd=cwd, env=env, log_path=log_path)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ChatUIStartError(
            f"`{' '.join(cmd)}` took over {timeout:.0f}s; log {log_path}:\n{_tail(log_path, 3000)}"
        ) from None
    finally:
        _stop(proc)
        _RUNNING.pop(proc.pid, None)
    if proc.returncode != 0:
        raise ChatUIStartError(
            f"`{' '.join(cmd)}` exited with {proc.returncode}; log {log_path}:\n"
            f"{_tail(log_path, 3000)}"
        )


def _pnpm_major(exe: str | Path) -> int | None:
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.match(r"(\d+)\.", out.stdout.strip())
    return int(found[1]) if found else None


def pnpm_executable(*, log_path: Path) -> str:
    """pnpm 10: the one on PATH, else `npm i -g pnpm@10`, else a private one in the cache."""
    found = shutil.which("pnpm")
    if found and _pnpm_major(found) == PNPM_MAJOR:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise ChatUIUnavailable(f"pnpm {PNPM_MAJOR} not found, and no npm to install it")
    env = dict(os.environ)
    if found is None:
        _run_step(
            [npm, "install", "-g", f"pnpm@{PNPM_MAJOR}"],
            cwd=cache_root(),
            env=env,
            log_path=log_path,
            timeout=INSTALL_TIMEOUT,
        )
        found = shutil.which("pnpm")
        if found and _pnpm_major(found) == PNPM_MAJOR:
            return found
    # a pnpm of another major is on PATH: leave it, use a pnpm 10 of our own
    prefix = cache_root() / f"pnpm-{PNPM_MAJOR}"
    private = prefix / "node_modules" / ".bin" / "pnpm"
    if _pnpm_major(private) != PNPM_MAJOR:
        prefix.mkdir(parents=True, exist_ok=True)
        _run_step(
            [npm, "install", "--prefix", str(prefix), f"pnpm@{PNPM_MAJOR}"],
            cwd=prefix,
            env=env,
            log_path=log_path,
            timeout=INSTALL_TIMEOUT,
        )
    return str(private)


def _install_complete(app: Path, digest: str) -> bool:
    try:
        stamp = json.loads((app / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    modules = app / "node_modules"
    return (
        stamp.get("snapshot") == digest
        and (modules / ".modules.yaml").is_file()
        and (modules / ".bin" / "next").exists()
    )


@dataclass(frozen=True)
class PreparedUI:
    """An installed copy of the UI in the cache, and the pnpm that runs it."""

    app: Path
    pnpm: str
    seconds: float
    """How long preparing took (0.0 and a bit when the cache was complete)."""


def prepare_chat_ui(*, source: Path | None = None, timeout: float = INSTALL_TIMEOUT) -> PreparedUI:
    """Copy the snapshot into the cache and `pnpm install` it, unless that is already done."""
    started = time.monotonic()
    missing = missing_tools() if source is None else []
    if missing:
        raise ChatUIUnavailable("missing: " + "; ".join(missing))
    source = (source or snapshot_dir()).resolve()
    digest = snapshot_digest(source)
    root = cache_root()
    app = root / f"agent-chat-ui-{snapshot_id(source, digest)}"
    if app == REPO_ROOT or REPO_ROOT in app.parents:
        raise ValueError(f"the cache {app} must be outside the repository {REPO_ROOT}")
    log_path = root / f"{app.name}.install.log"
    with _locked(root / f"{app.name}.lock", timeout):
        pnpm = pnpm_executable(log_path=log_path)
        if not _install_complete(app, digest):
            (app / STAMP).unlink(missing_ok=True)
            app.mkdir(parents=True, exist_ok=True)
            _copy_sources(source, app)
            env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1", "CI": "true"}
            _run_step(
                [pnpm, "install", "--frozen-lockfile"],
                cwd=app,
                env=env,
                log_path=log_path,
                timeout=timeout,
            )
            (app / STAMP).write_text(json.dumps({"snapshot": digest}), encoding="utf-8")
    return PreparedUI(app=app, pnpm=pnpm, seconds=time.monotonic() - started)


# --- run -----------------------------------------------------------------------------------


def _run_dir(prepared: PreparedUI, log_dir: Path) -> Path:
    """A folder of this run's own: the app's sources and a link to the cached node_modules."""
    run = log_dir / "agent-chat-ui"
    _copy_sources(prepared.app, run)
    modules = run / "node_modules"
    if not modules.is_symlink():
        modules.symlink_to(prepared.app / "node_modules", target_is_directory=True)
    (run / "fonts-offline.cjs").write_text(FONTS_MOCK, encoding="utf-8")
    return run


def ui_env(*, api_url: str, assistant_id: str, run_dir: Path) -> dict[str, str]:
    """The UI's environment: its server and assistant, no telemetry, fonts offline."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(
        {
            "NEXT_PUBLIC_API_URL": api_url,
            "NEXT_PUBLIC_ASSISTANT_ID": assistant_id,
            "NEXT_TELEMETRY_DISABLED": "1",
            "NEXT_FONT_GOOGLE_MOCKED_RESPONSES": str(run_dir / "fonts-offline.cjs"),
        }
    )
    return env


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status == 200 and b"Agent Chat" in resp.read()
    except (OSError, urllib.error.URLError):
        return False


def _wait_ready(proc: subprocess.Popen, url: str, deadline: float) -> str:
    """Poll until "ready", "exited" or "timeout"."""
    while True:
        if proc.poll() is not None:
            return "exited"
        if _ready(url):
            return "ready"
        if time.monotonic() >= deadline:
            return "timeout"
        time.sleep(POLL_INTERVAL)


@atexit.register
def _stop_leftovers() -> None:  # pragma: no cover - only when a with-block was bypassed
    for proc in list(_RUNNING.values()):
        _stop(proc)


@contextlib.contextmanager
def agent_chat_ui(
    *,
    api_url: str,
    assistant_id: str,
    log_dir: Path | str | None = None,
    mode: str | None = None,
    startup_timeout: float = 300.0,
    attempts: int = 3,
) -> Iterator[ChatUI]:
    """Run the Agent Chat UI against `api_url` for the duration of the block.

    `assistant_id` is the default assistant or graph id (``?assistantId=`` in
    the page's URL picks another). `log_dir` holds this run's folder and logs
    (default: a new temporary folder); it must be outside the repository.
    `mode` is "dev" (`pnpm dev`) or "build" (`pnpm build`, then `pnpm start`);
    default: $AGENT_CHAT_UI_MODE or "dev". Raises ChatUIUnavailable when Node.js
    or pnpm/npm are missing, ChatUIStartError (with the log's tail) when the
    install, the build or the start fails or the page does not answer within
    `startup_timeout` seconds; retries on a fresh port (at most `attempts` times)
    when the chosen port was taken in the meantime.
    """
    mode = mode or os.environ.get(MODE_ENV) or DEFAULT_MODE
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r} (${MODE_ENV})")
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="agent-chat-ui-")).resolve()
    if log_dir == REPO_ROOT or REPO_ROOT in log_dir.parents:
        raise ValueError(f"log_dir {log_dir} must be outside the repository {REPO_ROOT}")
    log_dir.mkdir(parents=True, exist_ok=True)
    prepared = prepare_chat_ui()
    run_dir = _run_dir(prepared, log_dir)
    env = ui_env(api_url=api_url, assistant_id=assistant_id, run_dir=run_dir)
    if mode == "build":
        _run_step(
            [prepared.pnpm, "build", "--no-lint"],  # linting the snapshot tells us nothing
            cwd=run_dir,
            env=env,
            log_path=log_dir / "agent-chat-ui-build.log",
            timeout=INSTALL_TIMEOUT,
        )

    proc: subprocess.Popen | None = None
    try:
        for attempt in range(1, attempts + 1):
            port = free_port()
            log_path = log_dir / f"agent-chat-ui-{port}.log"
            cmd = [prepared.pnpm, mode if mode == "dev" else "start"]
            cmd += ["--hostname", "127.0.0.1", "--port", str(port)]
            proc = _spawn(cmd, cwd=run_dir, env=env, log_path=log_path)
            url = f"http://127.0.0.1:{port}"
            outcome = _wait_ready(proc, f"{url}/", time.monotonic() + startup_timeout)
            if outcome == "ready":
                break
            _RUNNING.pop(proc.pid, None)
            _stop(proc)
            proc = None
            tail = _tail(log_path, 4000)
            if any(s in tail.lower() for s in _ADDRESS_IN_USE) and attempt < attempts:
                continue
            state = {
                "exited": "exited",
                "timeout": f"did not serve its page within {startup_timeout:.0f}s",
            }[outcome]
            raise ChatUIStartError(f"Agent Chat UI ({mode}) {state}; log {log_path}:\n{tail}")
        assert proc is not None
        yield ChatUI(url=url, port=port, pid=proc.pid, mode=mode, log_path=log_path, process=proc)
    finally:
        if proc is not None:
            _RUNNING.pop(proc.pid, None)
            _stop(proc)
