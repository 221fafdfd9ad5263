"""A `handover run` killed at any node boundary and run again never duplicates its turn.

Each kill point is a real SIGKILL of the terminal process: after the k-th step
of the run (every step of the graph and of each agent's loop, as the terminal
streams them), or after the run finished but before the terminal showed its
answer. Running the same command again must leave the thread exactly as one
unkilled run does: one user message, one handover, one briefing entry.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import close_checkpointer, sqlite_checkpointer
from specialist_handover.graph.turns import thread_config

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIRST = "Hello there, we are starting the marketing site."
TURNS = {
    "handover": "Please design the landing page hero with bold typography.",
    "return": "Thanks, go back to the orchestrator please.",
}

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from specialist_handover.graph import handover_graph, runs
    from specialist_handover.graph.cli import main

    root, text, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    steps = 0
    original = handover_graph.HandoverGraph.stream

    def stream(self, *args, **kwargs):
        global steps
        for chunk in original(self, *args, **kwargs):
            yield chunk
            if isinstance(chunk, tuple) and len(chunk) == 3 and chunk[1] == "updates":
                steps += 1
                if steps == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)

    handover_graph.HandoverGraph.stream = stream
    if kill_at == -1:  # the run finished; killed before its answer was shown and noted done
        runs.RunJournal.done = lambda self, thread: os.kill(os.getpid(), signal.SIGKILL)
    code = main(["run", text, "--thread", "k", "--project-root", root, "--model", "offline"])
    print("STEPS", steps)
    sys.exit(code)
    """
)


def run(root: Path, text: str, kill_at: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), text, str(kill_at)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def thread_of(root: Path) -> list[tuple[str, str, str]]:
    saver = sqlite_checkpointer(str(root / ".a0proj" / "checkpoints.sqlite"))
    try:
        messages = build_graph(checkpointer=saver).get_state(thread_config("k")).values["messages"]
    finally:
        close_checkpointer(saver)
    ids = re.compile(r"(call|handover|msg|tool|human|lc_run)[-_][\w-]+")

    def same(text: str) -> str:  # ids, this copy's folder and its length-dependent counts aside
        text = ids.sub("<id>", re.sub(r"\S*/\.a0proj/", "<root>/.a0proj/", text))
        return re.sub(r"\d+ tokens", "<n> tokens", text)

    return [(m.type, m.name or "", same(str(m.content))) for m in messages]


def briefing_entries(root: Path) -> int:
    return sum(
        p.read_text().count("<!-- handover-id:")
        for p in (root / ".a0proj" / "handover").glob("*.md")
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """Unkilled runs: the thread after each turn, and how many steps each turn streams."""
    root = tmp_path_factory.mktemp("reference")
    done = run(root, FIRST)
    assert done.returncode == 0, done.stderr
    base = tmp_path_factory.mktemp("base")
    shutil.copytree(root, base, dirs_exist_ok=True)  # the thread after the first turn
    found: dict = {"base": base, "steps": {}, "after": {}}  # type: ignore[type-arg]
    for name, text in TURNS.items():
        done = run(root, text)
        assert done.returncode == 0, done.stderr
        found["steps"][name] = int(re.search(r"STEPS (\d+)", done.stdout).group(1))  # type: ignore[union-attr]
        found["after"][name] = (thread_of(root), briefing_entries(root))
        found.setdefault("before_return", None)
        if name == "handover":
            found["before_return"] = tmp_path_factory.mktemp("before-return")
            shutil.copytree(root, found["before_return"], dirs_exist_ok=True)
    return found


def kill_points() -> list[tuple[str, int]]:
    # every step of the handover turn and of the return turn (counted by the reference run
    # below: the parametrisation covers more than enough, unreached points are skipped)
    return [(turn, k) for turn in TURNS for k in [*range(1, 11), -1]]


@pytest.mark.parametrize(("turn", "kill_at"), kill_points())
def test_a_run_killed_at_any_step_and_run_again_leaves_the_thread_as_one_run_does(
    reference, tmp_path, turn, kill_at
):
    if kill_at > reference["steps"][turn]:
        pytest.skip(f"the {turn} turn has {reference['steps'][turn]} steps")
    start = reference["base"] if turn == "handover" else reference["before_return"]
    root = tmp_path / "project"
    shutil.copytree(start, root)
    killed = run(root, TURNS[turn], kill_at)
    assert killed.returncode == -signal.SIGKILL, (killed.stdout, killed.stderr)
    again = run(root, TURNS[turn])
    assert again.returncode == 0, again.stderr
    expected_thread, expected_entries = reference["after"][turn]
    assert thread_of(root) == expected_thread
    assert briefing_entries(root) == expected_entries
    if kill_at == -1:
        assert "it is not sent again" in again.stdout


def test_the_kill_points_cover_every_step_of_both_turns(reference):
    assert all(1 < steps <= 10 for steps in reference["steps"].values()), reference["steps"]
