"""Benchmark: how fast the graph starts (build, a new thread's first turns, memory).

    .venv/bin/python bench/bench_start.py [--runs 3] [--check]

Each run is a fresh Python process (so "cold" is cold: nothing imported, no
vocabulary loaded) that measures, with the offline model, a SQLite checkpointer
and `durability="sync"`:

- `import`: importing `specialist_handover`;
- `build, first`: the first `build_graph()` of the process (the token vocabulary
  is loaded here); `build, warm`: the median of five more builds;
- `warm_up`: `graph.warm_up()`, which the terminal and the served graph call at
  start (the offline model builds its router's indexes);
- `turn 1` / `turn 2`: a new thread's first and second turns, right after that;
  both are the same kind of turn (a quick question: the orchestrator hands over,
  the specialist answers and hands back); the handover of turn 1 also makes the
  project's folders;
- `new thread`: the first turn of a second thread in the same process;
- `RSS`: resident memory after those turns.

Each run is made twice: as the terminal and the server start (with `warm_up`),
and as a Python caller that does not call it (the first turn then builds the
router's indexes itself).

Goals (issue 18): a warm `build_graph()` under 0.4 s; a new thread's first turn
within 2x its second. Figures are min / median over the runs; `--check` exits 1
when a goal's median misses (the warmed-up start).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARM_BUILDS = 5

# two turns of the same kind: each hands over and comes back (a quick question: after_reply)
FIRST = "Quick question: which css unit for the hero layout?"
SECOND = "Quick question: which index should the billing table use for lookups by invoice id?"


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize() / 2**20


def one_process(warm: bool) -> dict[str, float]:
    """The figures of this process (run as `--child`)."""
    started = time.perf_counter()
    import specialist_handover  # noqa: F401
    from specialist_handover import build_graph
    from specialist_handover.graph.checkpointers import sqlite_checkpointer
    from specialist_handover.graph.turns import run_turn

    figures = {"import_ms": (time.perf_counter() - started) * 1000}
    with tempfile.TemporaryDirectory() as tmp:
        saver = sqlite_checkpointer(str(Path(tmp) / "checkpoints.sqlite"))
        started = time.perf_counter()
        graph = build_graph(checkpointer=saver)
        figures["build_first_ms"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        if warm:
            graph.warm_up()
        figures["warm_up_ms"] = (time.perf_counter() - started) * 1000
        context = {"project_root": tmp, "model": "offline"}
        for key, text, thread in (
            ("turn1_ms", FIRST, "a"),
            ("turn2_ms", SECOND, "a"),
            ("new_thread_ms", FIRST, "b"),
        ):
            started = time.perf_counter()
            run_turn(graph, text, thread_id=thread, context=context)
            figures[key] = (time.perf_counter() - started) * 1000
        builds = []
        for _ in range(WARM_BUILDS):
            started = time.perf_counter()
            build_graph(checkpointer=saver)
            builds.append((time.perf_counter() - started) * 1000)
        figures["build_warm_ms"] = statistics.median(builds)
        figures["rss_mb"] = _rss_mb()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--child", choices=("warm", "cold"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_process(args.child == "warm")))
        return 0
    made: dict[str, list[dict[str, float]]] = {"warm": [], "cold": []}
    for _ in range(max(1, args.runs)):
        for kind, found in made.items():
            out = subprocess.run(
                [sys.executable, __file__, "--child", kind],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            found.append(json.loads(out.stdout.strip().splitlines()[-1]))
    runs = made["warm"]

    def span(key: str, kind: str = "warm") -> str:
        values = [r[key] for r in made[kind]]
        return f"{min(values):,.1f} / {statistics.median(values):,.1f}"

    print(f"{len(runs)} fresh processes each way; min / median")
    labels = {
        "import_ms": "import specialist_handover, ms",
        "build_first_ms": "build_graph(), first in the process, ms",
        "warm_up_ms": "graph.warm_up(), ms",
        "turn1_ms": "a new thread's turn 1, ms",
        "turn2_ms": "its turn 2, ms",
        "new_thread_ms": "a second thread's turn 1, ms",
        "build_warm_ms": f"build_graph(), warm (median of {WARM_BUILDS}), ms",
        "rss_mb": "RSS after those turns, MB",
    }
    print("| figure | with warm_up (terminal, server) | without |\n| --- | ---: | ---: |")
    for key, label in labels.items():
        print(f"| {label} | {span(key)} | {span(key, 'cold')} |")
    ratios = [r["turn1_ms"] / r["turn2_ms"] for r in runs]
    cold = [r["turn1_ms"] / r["turn2_ms"] for r in made["cold"]]
    build = statistics.median(r["build_warm_ms"] for r in runs)
    goals = [
        ("build_graph() warm under 400 ms", build, build < 400, f"{build:,.0f} ms"),
        (
            "a new thread's first turn within 2x its second",
            statistics.median(ratios),
            statistics.median(ratios) <= 2,
            f"{statistics.median(ratios):.2f}x (min {min(ratios):.2f}x; "
            f"without warm_up {statistics.median(cold):.2f}x)",
        ),
    ]
    print("\n| goal | measured | result |\n| --- | ---: | --- |")
    for goal, _, met, shown in goals:
        print(f"| {goal} | {shown} | {'met' if met else 'missed'} |")
    return 1 if args.check and not all(met for _, _, met, _ in goals) else 0


if __name__ == "__main__":
    sys.exit(main())
