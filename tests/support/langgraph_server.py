"""Start `langgraph dev` on a free loopback port for tests, and always stop it again.

Usage::

    with langgraph_dev_server(log_dir=tmp) as server:
        client = langgraph_sdk.get_sync_client(url=server.url)

The server is the real `langgraph dev` command (the `langgraph` executable next
to ``sys.executable``), run from the repository root so it serves the project's
own ``langgraph.json``; ``config=`` serves any other ``langgraph.json`` (run from
its folder, so a test app in ``tmp_path`` keeps its ``.langgraph_api/`` there). It runs offline: no ``OPENAI_API_KEY``,
``HANDOVER_MODEL=offline``, no CLI analytics, no LangSmith tracing. Its output
goes to a log file in ``log_dir`` (outside the project folder). Readiness is
polled on ``GET /ok`` with a deadline; the server runs in its own process group
(``start_new_session=True``) and is stopped by that group's id, with SIGKILL
after a grace period, so no server outlives the block, even when a test fails.
On Linux the server also gets SIGTERM if the test process itself dies
(``PR_SET_PDEATHSIG``; the block must run in a thread that outlives the server,
as pytest's main thread does), and an ``atexit`` hook stops any server a
bypassed block left running.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["REPO_ROOT", "LangGraphServer", "ServerStartError", "langgraph_dev_server"]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The project root: where `langgraph.json` lives and `langgraph dev` runs."""

POLL_INTERVAL = 0.2
"""Seconds between readiness polls."""

PORT_TAKEN_GRACE = 10.0
"""Seconds another process may listen on our port before we move to a fresh one."""

STOP_GRACE = 15.0
"""Seconds a stopping server gets after SIGTERM before its group is killed."""

_ADDRESS_IN_USE = ("address already in use", "errno 98", "error while attempting to bind")

# Variables that would make the served graph (or the CLI) talk to the network.
_DROPPED_ENV = ("OPENAI_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
_OFFLINE_ENV = {
    "HANDOVER_MODEL": "offline",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "PYTHONUNBUFFERED": "1",
}

_RUNNING: dict[int, subprocess.Popen] = {}
"""Servers started by this process and not yet stopped (safety net for atexit)."""


class ServerStartError(RuntimeError):
    """`langgraph dev` exited or did not answer GET /ok before the deadline."""


@dataclass
class LangGraphServer:
    """A running `langgraph dev` server."""

    url: str
    port: int
    pid: int
    log_path: Path
    process: subprocess.Popen = field(repr=False)

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log (for assertion messages)."""
        return _tail(self.log_path, chars)

    def is_running(self) -> bool:
        return self.process.poll() is None


def langgraph_executable() -> Path:
    """The `langgraph` console script installed next to the running interpreter."""
    exe = Path(sys.executable).with_name("langgraph")
    if not exe.exists():
        raise ServerStartError(
            f"langgraph CLI not found at {exe}; install the test extras: pip install -e '.[test]'"
        )
    return exe


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(extra: Mapping[str, str] | None = None, *, home: Path) -> dict[str, str]:
    """The environment for an offline server: no API keys, the offline model."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(_OFFLINE_ENV)
    # A run that forgets its project_root must not write into the repository.
    env["HANDOVER_PROJECT_ROOT"] = str(home)
    env.update(extra or {})
    return env


def _tail(path: Path, chars: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"<no log: {exc}>"
    return text[-chars:]


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
            return resp.status == 200 and json.loads(resp.read() or b"{}").get("ok") is True
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _exited(pid: int) -> bool:
    """True once the child has exited; it is NOT reaped, so its group id stays ours."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _wait_exited(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _exited(pid):
            return True
        time.sleep(0.05)
    return _exited(pid)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it after a grace period, then reap it.

    The leader is reaped only after the last signal, so its process-group id
    cannot have been reused by an unrelated process when we signal the group.
    A leader that was already reaped (poll() saw it die) is not signalled at all.
    """
    _RUNNING.pop(proc.pid, None)
    if proc.returncode is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            if _wait_exited(proc.pid, STOP_GRACE):
                break
        # stragglers of the group (none expected: `langgraph dev --no-reload` is one process)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_GRACE)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: SIGTERM the server when the test process dies (even by SIGKILL)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


@atexit.register
def _stop_leftovers() -> None:  # pragma: no cover - only when a with-block was bypassed
    for proc in list(_RUNNING.values()):
        _stop(proc)


def _start(
    *, port: int, cwd: Path, env: dict[str, str], log_path: Path, extra_args: list[str]
) -> subprocess.Popen:
    cmd = [
        str(langgraph_executable()),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *extra_args,
    ]
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


def _port_owner(pid: int, port: int) -> str:
    """Who listens on 127.0.0.1:`port`: "ours" (`pid`), "other", "free" or "unknown".

    Linux only (/proc); elsewhere "unknown", and GET /ok alone decides.
    """
    try:
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table, encoding="ascii") as fh:
                next(fh, None)
                for line in fh:
                    cols = line.split()
                    if len(cols) > 9 and cols[3] == "0A":  # 0A: LISTEN
                        if int(cols[1].rsplit(":", 1)[1], 16) == port:
                            inodes.add(cols[9])
        if not inodes:
            return "free"
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] in inodes:
                    return "ours"
        return "other"
    except (OSError, ValueError, IndexError):
        return "unknown"


def _wait_ready(proc: subprocess.Popen, url: str, port: int, deadline: float) -> str:
    """Poll until "ready", "exited", "port-taken" (someone else listens) or "timeout".

    `langgraph dev` does not exit when its port is taken (it keeps running
    without listening), so a port another process grabbed between
    free_port() and the bind is detected by who owns the listening socket.
    """
    other_since: float | None = None
    while True:
        if proc.poll() is not None:
            return "exited"
        owner = _port_owner(proc.pid, port)
        if owner in ("ours", "unknown") and _ready(url):
            return "ready"
        now = time.monotonic()
        if owner == "other":
            other_since = other_since or now
            if now - other_since > PORT_TAKEN_GRACE or _ready(url):
                return "port-taken"
        else:
            other_since = None
        if now >= deadline:
            return "timeout"
        time.sleep(POLL_INTERVAL)


@contextlib.contextmanager
def langgraph_dev_server(
    *,
    log_dir: Path | str | None = None,
    cwd: Path | str | None = None,
    config: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    n_jobs_per_worker: int | None = None,
    startup_timeout: float = 60.0,
    attempts: int = 3,
) -> Iterator[LangGraphServer]:
    """Run `langgraph dev` for the duration of the block and yield its URL and PID.

    `log_dir` holds the log file (default: a new temporary folder); it must be
    outside the project. `config` names the `langgraph.json` to serve (default: the
    one in `cwd`, which defaults to its folder, else the repository root). `env` adds
    variables to the offline environment.
    Raises ServerStartError with the log's tail when the server does not come
    up within `startup_timeout` seconds; retries on a fresh port (at most
    `attempts` times) when the chosen port was taken in the meantime.
    """
    if cwd is None:
        cwd = Path(config).resolve().parent if config is not None else REPO_ROOT
    cwd = Path(cwd).resolve()
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="langgraph-dev-")).resolve()
    if log_dir == cwd or cwd in log_dir.parents:
        raise ValueError(f"log_dir {log_dir} must be outside the project folder {cwd}")
    log_dir.mkdir(parents=True, exist_ok=True)
    home = log_dir / "default-project-root"
    home.mkdir(exist_ok=True)
    full_env = server_env(env, home=home)
    extra = ["--n-jobs-per-worker", str(n_jobs_per_worker)] if n_jobs_per_worker else []
    if config is not None:
        extra += ["--config", str(Path(config).resolve())]

    proc: subprocess.Popen | None = None
    try:
        for attempt in range(1, attempts + 1):
            port = free_port()
            log_path = log_dir / f"langgraph-dev-{port}.log"
            proc = _start(port=port, cwd=cwd, env=full_env, log_path=log_path, extra_args=extra)
            url = f"http://127.0.0.1:{port}"
            outcome = _wait_ready(proc, url, port, time.monotonic() + startup_timeout)
            if outcome == "ready":
                break
            _stop(proc)
            proc = None
            tail = _tail(log_path, 4000)
            if outcome == "exited" and any(s in tail.lower() for s in _ADDRESS_IN_USE):
                outcome = "port-taken"
            if outcome == "port-taken" and attempt < attempts:
                continue
            state = {
                "exited": "exited",
                "port-taken": f"could not get a free port in {attempts} attempts",
                "timeout": f"did not answer GET /ok within {startup_timeout:.0f}s",
            }[outcome]
            raise ServerStartError(f"langgraph dev {state}; log {log_path}:\n{tail}")
        assert proc is not None
        yield LangGraphServer(url=url, port=port, pid=proc.pid, log_path=log_path, process=proc)
    finally:
        if proc is not None:
            _stop(proc)
