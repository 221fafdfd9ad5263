"""A seeded kill-and-resume fault harness: SIGKILL at random moments, then prove nothing was lost.

`run_kill_harness` starts a child Python process again and again on ONE SQLite
checkpoint file and ONE project root. Each child builds the graph, loads the
token vocabulary, prints `READY`, and plays the scripted conversation
(`SCRIPT`) on the offline model through `run_turn`, thread after thread (`t0`,
`t1`, ...). The parent waits a seeded random delay in `[0, max_delay]` after
`READY` and sends SIGKILL. The next child reads the thread's stored state,
resumes a step the kill left unfinished (`has_unfinished_step` ->
`run_turn(graph, None, ...)`), counts the script turns already stored (they
must be a prefix of the script) and sends the rest. After `kills` kills have
hit a live child, one last child runs unkilled to finish the current thread,
and `verify` checks every thread:

- the stored user messages are the script, exactly (no loss, no duplicate, in order);
- every user turn has an assistant reply before the next user turn;
- `check_tool_history` passes (every tool call answered once, right after it);
- every successful handover has exactly one `<!-- handover-id: ... -->` entry in
  the briefing files (in the package's own file), and no entry lacks a handover;
- the trail's `handover` records match the successful handovers one to one;
- `get_state(...).next` and `.tasks` are empty;
- the thread has the same shape (message kinds, agents, tool calls, trail) as
  the script played once without kills (the offline model is deterministic).

Child stdout events (one per line, flushed; a line printed before a kill is
never lost): `READY`, `THREAD t<i>`, `RESUME t<i>` / `RESUMED t<i>`,
`STORED t<i> <n>`, `SEND t<i> <k>` / `DONE t<i> <k>`, `STEP <node>` (a graph
step finished, from `run_turn`'s `on_event`), `COMPLETE t<i>`,
`BADPREFIX t<i> <n>`, `FINISHED`. The parent classifies each kill by the last
event it saw: inside a graph run (`SEND`/`RESUME` open; and after which step),
between runs, or before the child's first run. The report also warns when the
project's source files changed during the run (children then may have run
different code).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import sqlite_checkpointer
from specialist_handover.graph.turns import has_unfinished_step, run_turn, thread_config
from specialist_handover.state.tokens import encoding_name_for_model, get_encoding
from tests.support.models import InvalidHistory, check_tool_history

REPO = Path(__file__).resolve().parents[2]

SCRIPT: tuple[str, ...] = (
    # the orchestrator answers itself
    "Hi! We're starting the marketing site for our app. We decided to use React, and the "
    "first page lives in src/pages/Landing.tsx.",
    # handover orchestrator -> frontend_designer (user_request)
    "Please design the landing page hero: bold typography and a clear layout.",
    # a follow-up specialist turn
    "Make the call-to-action stand out more on mobile.",
    # stage 2: request_full_history
    "Before you go on, please read the full history of this conversation.",
    # return_to_orchestrator
    "Thanks, that's all. Go back to the orchestrator please.",
    # handover -> codebase_explorer, which calls read_file on src/app.py
    "Where is the entry point? Please read src/app.py",
    "What does main() print?",
    "Thanks, go back to the orchestrator.",
    # handover -> solution_architect, then a chain to security_data_engineer, then a return
    "Which architecture should we pick for the billing service: microservices or a monolith?",
    "Please ask the security data engineer to review the auth design for it.",
    "Thanks for the review, that's all. Switch back to the orchestrator.",
    # task_complete: test_debug_engineer reads the test, then the orchestrator reports
    "The unit test in tests/test_landing.py is flaky: please fix it and report back.",
    # after_reply: runtime_devops_engineer answers once
    "Quick question: which deployment setup should we use for the container?",
    "Thanks!",
)
"""One thread's conversation (texts are unique, so a duplicate is unambiguous)."""

PROJECT_FILES: dict[str, str] = {
    "src/app.py": (
        '"""The app\'s entry point."""\n\n\n'
        "def main() -> None:\n"
        '    print("hello from the app")\n\n\n'
        'if __name__ == "__main__":\n'
        "    main()\n"
    ),
    "tests/test_landing.py": (
        "import random\n\n\n"
        "def test_landing_hero_renders():\n"
        "    assert random.random() < 0.9  # flaky on purpose\n"
    ),
}

HANDOVER_TOOL = "handover_to_specialist"
OK_PREFIX = "Handed over to "
MARKER_PREFIX = "<!-- handover-id: "
MARKER_SUFFIX = " -->"

READY_TIMEOUT = 120.0
FINAL_TIMEOUT = 600.0
MAX_CHILD_FAILURES = 3

DRIVER = (
    "import sys\nfrom tests.support.faults import child_main\nsys.exit(child_main(sys.argv[1:]))\n"
)
"""The child process (`sys.executable -c DRIVER <db> <root> <kill|final> <first thread index>`)."""

HANDED_OVER = re.compile(
    r"^Handed over to (?P<specialist>\S+) .*?\(handover_id=(?P<handover_id>[^;]+); "
    r"(?P<estimated_tokens>\d+) tokens, max (?P<max_context_tokens>\d+); "
    r"return_condition=(?P<return_condition>\w+); briefing=(?P<briefing_file>.*)\)$",
    re.M,
)
"""Reads the one-line answer a successful handover stores back."""


# -- the report ------------------------------------------------------------------------------
@dataclass
class HarnessReport:
    """What a harness run did and what the verification found (all zero problems = pass)."""

    seed: int | None = None
    max_delay: float = 0.0
    kills: int = 0
    restarts: int = 0
    children: int = 0
    turns_sent: int = 0
    turns_stored: int = 0
    threads: int = 0
    handovers: int = 0
    briefing_entries: int = 0
    losses: int = 0
    duplicates: int = 0
    misordered: int = 0
    invalid_histories: int = 0
    briefing_mismatches: int = 0
    trail_mismatches: int = 0
    unanswered: int = 0
    unfinished: int = 0
    shape_mismatches: int = 0
    source_changed: list[str] = field(default_factory=list)
    kills_mid_run: int = 0
    kills_between_runs: int = 0
    kills_after_step: dict[str, int] = field(default_factory=dict)
    kills_before_first_run: int = 0
    kills_without_new_turn: int = 0
    resumed_steps: int = 0
    turn_ms_median: float = 0.0
    elapsed_s: float = 0.0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def __str__(self) -> str:
        rows = [
            ("seed", self.seed, ""),
            ("max_delay_s", f"{self.max_delay:.3f}", "kill delay after READY: uniform [0, max]"),
            ("kills", self.kills, "SIGKILLs that hit a live child"),
            (
                "  mid-run",
                self.kills_mid_run,
                "a graph run (turn or resume) was in flight",
            ),
            (
                "  mid-run, after step",
                " ".join(f"{k}={v}" for k, v in sorted(self.kills_after_step.items())) or "-",
                "((first): the run's first step was in flight)",
            ),
            ("  between runs", self.kills_between_runs, "between two runs of one child"),
            (
                "  before first run",
                self.kills_before_first_run,
                "after READY, while reading the stored state",
            ),
            (
                "  no new turn stored",
                self.kills_without_new_turn,
                "the child stored no new user turn before dying",
            ),
            ("  new turn stored", self.kills - self.kills_without_new_turn, ""),
            ("resumed_steps", self.resumed_steps, "children that found an unfinished step"),
            ("children", self.children, "child processes started (killed + final + failed)"),
            ("restarts", self.restarts, "children started after the first"),
            ("turns_sent", self.turns_sent, "user turns handed to run_turn"),
            ("turns_stored", self.turns_stored, "user turns stored (re-sent = sent - stored)"),
            ("threads", self.threads, ""),
            ("handovers", self.handovers, "successful handovers"),
            ("briefing_entries", self.briefing_entries, "handover-id markers in briefing files"),
            ("turn_ms_median", f"{self.turn_ms_median:.0f}", "SEND -> DONE as the parent saw it"),
            ("elapsed_s", f"{self.elapsed_s:.1f}", ""),
            ("losses", self.losses, ""),
            ("duplicates", self.duplicates, ""),
            ("misordered", self.misordered, ""),
            ("invalid_histories", self.invalid_histories, ""),
            ("briefing_mismatches", self.briefing_mismatches, ""),
            ("trail_mismatches", self.trail_mismatches, ""),
            ("unanswered", self.unanswered, ""),
            ("unfinished", self.unfinished, "threads with .next or .tasks at the end"),
            ("shape_mismatches", self.shape_mismatches, "threads unlike the unkilled reference"),
        ]
        lines = ["kill-and-resume fault harness"]
        for name, value, note in rows:
            lines.append(f"  {name:<22} {value!s:>8}  {note}".rstrip())
        lines.append(f"  {'problems':<22} {len(self.problems):>8}")
        lines += [f"    - {p}" for p in self.problems[:50]]
        if len(self.problems) > 50:
            lines.append(f"    ... and {len(self.problems) - 50} more")
        lines += [f"  warning: {w}" for w in self.warnings]
        verdict = "OK" if self.ok else f"PROBLEMS FOUND (rerun with seed {self.seed})"
        lines.append(f"  RESULT: {verdict}")
        return "\n".join(lines)


# -- the project and one thread --------------------------------------------------------------
def prepare_project(root: Path) -> None:
    """The project root with the files the script's specialists read."""
    for rel, text in PROJECT_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def user_texts(messages: Sequence[BaseMessage]) -> list[str]:
    """The texts of the user messages, in order."""
    return [_text(m) for m in messages if isinstance(m, HumanMessage)]


def _text(m: BaseMessage) -> str:
    return m.content if isinstance(m.content, str) else json.dumps(m.content)


def _silent(_: str) -> None:
    return None


def play_thread(
    graph: Any,
    thread_id: str,
    context: dict[str, Any],
    script: Sequence[str] = SCRIPT,
    emit: Callable[[str], None] = _silent,
) -> bool:
    """Finish a thread's script: resume an unfinished step, then send the turns not yet stored.

    False (and nothing sent) when the stored user turns are not a prefix of the script.
    """
    config = thread_config(thread_id)

    def step(node: str, _update: dict[str, Any]) -> None:
        if node != "resume":  # run_turn's notice that it resumes, not a graph step
            emit(f"STEP {node}")

    if has_unfinished_step(graph, config):
        emit(f"RESUME {thread_id}")
        run_turn(graph, None, thread_id=thread_id, context=context, on_event=step)  # type: ignore[arg-type]
        emit(f"RESUMED {thread_id}")
    stored = user_texts(graph.get_state(config).values.get("messages", []))
    if stored != list(script[: len(stored)]):
        emit(f"BADPREFIX {thread_id} {len(stored)}")
        return False
    emit(f"STORED {thread_id} {len(stored)}")
    for k in range(len(stored), len(script)):
        emit(f"SEND {thread_id} {k}")
        run_turn(graph, script[k], thread_id=thread_id, context=context, on_event=step)  # type: ignore[arg-type]
        emit(f"DONE {thread_id} {k}")
    emit(f"COMPLETE {thread_id}")
    return True


def warm_up() -> None:
    """Load the offline model's token vocabulary (cached per process) before READY.

    A process's first turn otherwise spends ~0.4 s (more under load) loading it,
    and most kills would land in that one spot instead of all over the script.
    """
    get_encoding(encoding_name_for_model("offline")).encode("warm up")


def child_main(argv: Sequence[str]) -> int:
    """The child: build the graph, print READY, play threads from `t<first>` on.

    `kill` mode plays thread after thread until it is killed; `final` mode
    finishes the first thread and exits.
    """
    db, root, mode, first = argv[0], argv[1], argv[2], int(argv[3])

    def emit(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    graph = build_graph(checkpointer=sqlite_checkpointer(db))
    context = {"project_root": root, "model": "offline"}
    warm_up()
    graph.warm_up(context)  # the router's indexes and tool schemas, as the terminal does
    emit("READY")
    index = first
    while True:
        thread_id = f"t{index}"
        emit(f"THREAD {thread_id}")
        played = play_thread(graph, thread_id, context, SCRIPT, emit)
        if mode == "final":
            emit("FINISHED")
            return 0 if played else 3
        index += 1


# -- reading back what is stored ------------------------------------------------------------
@dataclass
class ThreadRecord:
    """A thread as stored: its messages, trail and pending work."""

    thread_id: str
    messages: list[BaseMessage]
    handovers: list[dict[str, Any]]
    next: tuple[str, ...] = ()
    tasks: tuple[Any, ...] = ()


def stored_thread_ids(db: Path) -> list[str]:
    """Every thread id in the checkpoint file, `t<i>` ones in numeric order."""
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    finally:
        conn.close()
    ids = [str(r[0]) for r in rows]
    return sorted(ids, key=lambda t: (0, int(t[1:])) if t[1:].isdigit() else (1, t))


def read_thread(graph: Any, thread_id: str) -> ThreadRecord:
    snapshot = graph.get_state(thread_config(thread_id))
    values = snapshot.values or {}
    return ThreadRecord(
        thread_id=thread_id,
        messages=list(values.get("messages", [])),
        handovers=list(values.get("handovers", [])),
        next=tuple(snapshot.next or ()),
        tasks=tuple(snapshot.tasks or ()),
    )


OUTCOME = "-outcome"
"""The suffix of an outcome entry's id (its handover's id + this)."""


def handover_entries(root: Path) -> list[tuple[str, str]]:
    """`briefing_markers` of handover entries only (not the outcomes written at returns)."""
    return [m for m in briefing_markers(root) if not m[0].endswith(OUTCOME)]


def briefing_markers(root: Path) -> list[tuple[str, str]]:
    """(handover id, briefing file) for every handover-id marker under `.a0proj/handover/`."""
    found = []
    for path in sorted((root / ".a0proj" / "handover").glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(MARKER_PREFIX) and line.endswith(MARKER_SUFFIX):
                found.append((line[len(MARKER_PREFIX) : -len(MARKER_SUFFIX)], _shown(str(path))))
    return found


# -- verification ------------------------------------------------------------------------------
Shape = tuple[tuple[Any, ...], tuple[Any, ...]]


def thread_shape(record: ThreadRecord) -> Shape:
    """What must not vary between runs of the script: message kinds, agents, tools, the trail."""
    messages = []
    for m in record.messages:
        if isinstance(m, ToolMessage):
            messages.append(("tool", m.name, _text(m).startswith("ERROR")))
        elif isinstance(m, AIMessage):
            messages.append(("ai", m.name, tuple(c["name"] for c in m.tool_calls)))
        else:
            messages.append((type(m).__name__, _text(m)))
    trail = tuple(
        (r.get("kind"), r.get("from_agent"), r.get("to_agent"), r.get("return_condition"))
        for r in record.handovers
    )
    return tuple(messages), trail


def reference_shape(workdir: Path, script: Sequence[str] = SCRIPT) -> Shape:
    """The script played once, unkilled, in this process (its own root and checkpoint file)."""
    root = workdir / "reference-project"
    root.mkdir(parents=True, exist_ok=False)
    prepare_project(root)
    graph = build_graph(checkpointer=sqlite_checkpointer(str(workdir / "reference.sqlite")))
    play_thread(graph, "reference", {"project_root": str(root), "model": "offline"}, script)
    return thread_shape(read_thread(graph, "reference"))


def _shown(path: str | None) -> str | None:
    """A briefing path from `.a0proj/` on, as the graph's answers show it."""
    return path[path.rindex("/.a0proj/") + 1 :] if path and "/.a0proj/" in path else path


def _package(m: ToolMessage) -> dict[str, Any]:
    match = HANDED_OVER.search(_text(m))
    return match.groupdict() if match else {}


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"at {i}: {x!r} != reference {y!r}"
    return f"length {len(a)} != reference {len(b)}"


def verify(
    threads: Sequence[ThreadRecord],
    markers: Sequence[tuple[str, str]],
    *,
    script: Sequence[str] = SCRIPT,
    reference: Shape | None = None,
    report: HarnessReport | None = None,
) -> HarnessReport:
    """Check stored threads and briefing markers; add counters and problems to the report.
    An outcome entry (written when a specialist hands back) must be there at most once, in
    its handover's file."""
    report = report if report is not None else HarnessReport()
    report.threads += len(threads)
    outcomes = [(h.removesuffix(OUTCOME), p) for h, p in markers if h.endswith(OUTCOME)]
    markers = [(h, p) for h, p in markers if not h.endswith(OUTCOME)]
    by_marker = Counter(hid for hid, _ in markers)
    files_of: dict[str, set[str]] = {}
    for hid, path in markers:
        files_of.setdefault(hid, set()).add(path)
    successful: set[str] = set()
    for record in threads:
        _verify_thread(record, script, reference, by_marker, files_of, successful, report)
    for hid, count in sorted(by_marker.items()):
        if hid not in successful:
            report.briefing_mismatches += count
            report.problem(f"briefing entry {hid} ({count}x) has no successful handover")
    for hid, count in sorted(Counter(h for h, _ in outcomes).items()):
        if count > 1 or hid not in successful:
            report.briefing_mismatches += count
            report.problem(f"outcome entry of {hid} ({count}x) for a handover seen once")
    for hid, path in outcomes:
        if path not in files_of.get(hid, set()):
            report.problem(f"outcome entry of {hid} is in {path}, not its handover's file")
    report.handovers += len(successful)
    report.briefing_entries += len(markers)
    if len(markers) != len(successful):
        report.problem(
            f"{len(markers)} briefing entries for {len(successful)} successful handovers"
        )
    return report


def _verify_thread(
    record: ThreadRecord,
    script: Sequence[str],
    reference: Shape | None,
    by_marker: Counter[str],
    files_of: dict[str, set[str]],
    successful: set[str],
    report: HarnessReport,
) -> None:
    tid, messages = record.thread_id, record.messages
    users = user_texts(messages)
    report.turns_stored += len(users)
    if users != list(script):
        counts = Counter(users)
        lost = [k for k, text in enumerate(script) if counts[text] == 0]
        doubled = {t: c - 1 for t, c in counts.items() if t in script and c > 1}
        foreign = [t for t in users if t not in script]
        report.losses += len(lost)
        report.duplicates += sum(doubled.values()) + len(foreign)
        for k in lost:
            report.problem(f"{tid}: script turn {k} lost: {script[k]!r}")
        for text, extra in doubled.items():
            report.problem(f"{tid}: user turn stored {extra + 1}x: {text!r}")
        for text in foreign:
            report.problem(f"{tid}: user turn not in the script: {text!r}")
        if not lost and not doubled and not foreign:
            report.misordered += 1
            report.problem(f"{tid}: user turns out of order: {users!r}")

    human_at = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    for n, start in enumerate(human_at):
        end = human_at[n + 1] if n + 1 < len(human_at) else len(messages)
        if not any(
            isinstance(m, AIMessage) and not m.tool_calls and _text(m).strip()
            for m in messages[start + 1 : end]
        ):
            report.unanswered += 1
            report.problem(f"{tid}: user turn {n} has no assistant reply: {users[n]!r}")

    try:
        check_tool_history(messages)
    except InvalidHistory as exc:
        report.invalid_histories += 1
        report.problem(f"{tid}: invalid tool history: {exc}")

    done = [
        m
        for m in messages
        if isinstance(m, ToolMessage) and m.name == HANDOVER_TOOL and _text(m).startswith(OK_PREFIX)
    ]
    for m in done:
        hid = m.tool_call_id
        if hid in successful:
            report.briefing_mismatches += 1
            report.problem(f"{tid}: handover {hid} answered ok twice")
            continue
        successful.add(hid)
        count = by_marker.get(hid, 0)
        if count != 1:
            report.briefing_mismatches += 1
            report.problem(f"{tid}: handover {hid} has {count} briefing entries (want 1)")
        elif files_of[hid] != {_package(m).get("briefing_file")}:
            report.briefing_mismatches += 1
            report.problem(
                f"{tid}: handover {hid} entry is in {sorted(files_of[hid])}, "
                f"the package says {_package(m).get('briefing_file')!r}"
            )

    trail = [r for r in record.handovers if r.get("kind") == "handover"]
    packages = [_package(m) for m in done]
    pairs = [
        (
            (r.get("to_agent"), _shown(r.get("briefing_path"))),
            (p.get("specialist"), p.get("briefing_file")),
        )
        for r, p in zip(trail, packages, strict=False)
    ]
    if len(trail) != len(done) or any(a != b for a, b in pairs):
        report.trail_mismatches += 1
        report.problem(
            f"{tid}: trail has {len(trail)} handover records for {len(done)} successful "
            f"handovers; first difference: "
            f"{_first_difference([a for a, _ in pairs], [b for _, b in pairs])}"
        )

    if record.next or record.tasks:
        report.unfinished += 1
        report.problem(f"{tid}: unfinished at the end: next={record.next} tasks={record.tasks}")

    if reference is not None:
        shape = thread_shape(record)
        if shape != reference:
            report.shape_mismatches += 1
            which = 0 if shape[0] != reference[0] else 1
            report.problem(
                f"{tid}: {'messages' if which == 0 else 'trail'} differ from the unkilled run "
                f"{_first_difference(shape[which], reference[which])}"
            )


def verify_store(
    db: Path,
    root: Path,
    *,
    expected_threads: int | None = None,
    script: Sequence[str] = SCRIPT,
    reference: Shape | None = None,
    report: HarnessReport | None = None,
    graph: Any = None,
) -> HarnessReport:
    """Read every thread of a checkpoint file and the root's briefings, and `verify` them."""
    report = report if report is not None else HarnessReport()
    graph = graph if graph is not None else build_graph(checkpointer=sqlite_checkpointer(str(db)))
    ids = stored_thread_ids(db)
    if expected_threads is not None:
        wanted = [f"t{i}" for i in range(expected_threads)]
        missing = [t for t in wanted if t not in ids]
        for t in missing:
            report.losses += len(script)
            report.problem(f"{t}: thread missing from the checkpoint file")
        for t in ids:
            if t not in wanted:
                report.problem(f"{t}: unexpected thread in the checkpoint file")
    threads = [read_thread(graph, t) for t in ids]
    return verify(
        threads, briefing_markers(root), script=script, reference=reference, report=report
    )


# -- the harness -------------------------------------------------------------------------------
SOURCE_DIRS = ("graph", "nodes", "specialists", "state")


def source_fingerprint() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every source file the children import, to notice edits during a run."""
    found = {}
    for folder in SOURCE_DIRS:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in (".py", ".md") and "__pycache__" not in path.parts:
                st = path.stat()
                found[str(path.relative_to(REPO))] = (st.st_mtime_ns, st.st_size)
    return found


class _Child:
    """One child process and the events it printed (with the parent's receive times)."""

    def __init__(self, db: Path, root: Path, mode: str, first: int, stderr_path: Path) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL", "HANDOVER_PROFILES")
        }
        env["PYTHONPATH"] = str(REPO)
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "w", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(db), str(root), mode, str(first)],
            env=env,
            cwd=str(root.parent),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self.events: list[tuple[float, str]] = []
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.append((time.monotonic(), line.strip()))
            if line.strip() == "READY":
                self.ready.set()
        self.ready.set()

    def kill(self) -> bool:
        """SIGKILL the child if it still runs; True when the kill hit a live child."""
        if self.proc.poll() is not None:
            return False
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        return self.proc.returncode == -signal.SIGKILL

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self._reader.join(timeout=30)
        self._stderr.close()

    def lines(self) -> list[str]:
        return [line for _, line in self.events]

    def stderr_tail(self, chars: int = 1500) -> str:
        try:
            return self.stderr_path.read_text(encoding="utf-8")[-chars:]
        except OSError:
            return ""


def _threads_of(lines: Sequence[str]) -> list[int]:
    return [int(line.split()[1][1:]) for line in lines if line.startswith("THREAD ")]


def _last_step(lines: Sequence[str]) -> str:
    """The graph step the run in flight finished last (`(first)`: its first step was running)."""
    for line in reversed(lines):
        if line.startswith("STEP "):
            return line.split()[1]
        if line.startswith(("SEND ", "RESUME ")):
            return "(first)"
    return "(first)"


def _classify(lines: Sequence[str]) -> str:
    """Where a kill landed, from the last event before it."""
    after = lines[lines.index("READY") + 1 :] if "READY" in lines else []
    if not any(line.startswith(("SEND ", "RESUME ")) for line in after):
        return "before_first_run"
    last = [line for line in after if not line.startswith("STEP ")][-1]
    return "mid_run" if last.startswith(("SEND ", "RESUME ")) else "between_runs"


def _stored_users(graph: Any, thread_ids: Sequence[str]) -> dict[str, int]:
    return {
        t: len(user_texts(graph.get_state(thread_config(t)).values.get("messages", [])))
        for t in thread_ids
    }


def _account(child: _Child, report: HarnessReport, durations: list[float]) -> None:
    """Count a finished child's sends, resumes, bad prefixes and turn durations."""
    sent_at: dict[str, float] = {}
    for at, line in child.events:
        kind, _, rest = line.partition(" ")
        if kind == "SEND":
            report.turns_sent += 1
            sent_at[rest] = at
        elif kind == "DONE" and rest in sent_at:
            durations.append(at - sent_at.pop(rest))
        elif kind == "RESUME":
            report.resumed_steps += 1
        elif kind == "BADPREFIX":
            report.problem(f"a child found stored user turns that are not a prefix: {line}")


def run_kill_harness(
    *,
    workdir: Path,
    kills: int,
    seed: int,
    max_delay: float = 0.5,
) -> HarnessReport:
    """SIGKILL `kills` children at seeded random moments, finish the thread, verify everything.

    `workdir` must not hold an earlier run (`project/` and `checkpoints.sqlite` are created).
    """
    workdir = Path(workdir).resolve()
    root, db = workdir / "project", workdir / "checkpoints.sqlite"
    if root.exists() or db.exists():
        raise ValueError(f"{workdir} holds an earlier harness run; use a fresh folder")
    root.mkdir(parents=True)
    prepare_project(root)
    started = time.monotonic()
    source_before = source_fingerprint()
    rng = random.Random(seed)
    report = HarnessReport(seed=seed, max_delay=max_delay)
    graph = build_graph(checkpointer=sqlite_checkpointer(str(db)))
    stored: dict[str, int] = {}
    durations: list[float] = []
    current = 0  # the highest thread index a child announced
    failures = 0
    max_children = 2 * kills + 10
    while report.kills < kills:
        if report.children >= max_children or failures >= MAX_CHILD_FAILURES:
            report.problem(
                f"gave up after {report.children} children ({failures} failed): "
                f"{report.kills} of {kills} kills landed"
            )
            break
        child = _Child(db, root, "kill", current, workdir / "child.stderr")
        report.children += 1
        try:
            child.ready.wait(READY_TIMEOUT)
            if "READY" not in child.lines():
                failures += 1
                child.close()
                report.problem(
                    f"child {report.children} never became READY "
                    f"(rc={child.proc.returncode}): {child.stderr_tail()}"
                )
                continue
            time.sleep(rng.uniform(0.0, max_delay))
            landed = child.kill()
        finally:
            child.close()
        lines = child.lines()
        _account(child, report, durations)
        announced = _threads_of(lines)
        if landed:
            report.kills += 1
            where = _classify(lines)
            setattr(report, f"kills_{where}", getattr(report, f"kills_{where}") + 1)
            if where == "mid_run":
                after = _last_step(lines)
                report.kills_after_step[after] = report.kills_after_step.get(after, 0) + 1
            touched = [f"t{i}" for i in sorted(set(announced))]
            now = _stored_users(graph, touched)
            if all(now[t] <= stored.get(t, 0) for t in touched):
                report.kills_without_new_turn += 1
            stored.update(now)
        else:
            failures += 1
            report.problem(
                f"child {report.children} exited by itself with rc={child.proc.returncode} "
                f"(last events {lines[-3:]}): {child.stderr_tail()}"
            )
        if announced:
            current = max(current, max(announced))

    final = _Child(db, root, "final", current, workdir / "child.stderr")
    report.children += 1
    try:
        final.proc.wait(timeout=FINAL_TIMEOUT)
    except subprocess.TimeoutExpired:
        report.problem(f"the final child did not finish within {FINAL_TIMEOUT:.0f}s")
    finally:
        final.close()
    _account(final, report, durations)
    if final.proc.returncode != 0 or "FINISHED" not in final.lines():
        report.problem(
            f"the final child failed (rc={final.proc.returncode}, last events "
            f"{final.lines()[-3:]}): {final.stderr_tail()}"
        )
    announced = _threads_of(final.lines())
    if announced:
        current = max(current, max(announced))
    report.restarts = report.children - 1
    report.turn_ms_median = 1000 * statistics.median(durations) if durations else 0.0

    verify_store(
        db,
        root,
        expected_threads=current + 1,
        reference=reference_shape(workdir),
        report=report,
        graph=graph,
    )
    source_after = source_fingerprint()
    report.source_changed = sorted(
        f for f in {*source_before, *source_after} if source_before.get(f) != source_after.get(f)
    )
    if report.source_changed:
        report.warnings.append(
            "the project's source changed during the run, so children may have run different "
            f"code (rerun before blaming the project): {', '.join(report.source_changed)}"
        )
    report.elapsed_s = time.monotonic() - started
    return report
