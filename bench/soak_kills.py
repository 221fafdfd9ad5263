"""Soak: SIGKILL a conversation at seeded random moments, many times, and verify nothing was lost.

    .venv/bin/python bench/soak_kills.py --kills 500 --seed 1 [--workdir DIR] [--max-delay 0.5]

Runs `tests.support.faults.run_kill_harness`: child processes play a scripted
conversation (handovers, a chain, a return, stage 2, a workspace read,
task_complete and after_reply) on the offline model with one SQLite
checkpoint file; each is killed a seeded random delay after it is ready, the
next resumes. Afterwards every thread is checked (user turns exactly the
script, every turn answered, valid tool history, one briefing entry per
handover, trail in step, nothing pending). Prints the figures and exits 1 on
any problem, 2 when the work folder holds an earlier run. A child start costs
about 1-2 s (imports), so 500 kills take roughly 10-20 minutes.

With no --workdir the run uses a temporary folder, removed when all is well
and kept (its path printed) when a problem was found.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.faults import run_kill_harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=500, help="kills that must hit a live child")
    parser.add_argument("--seed", type=int, default=1, help="seed of the kill delays")
    parser.add_argument("--workdir", type=Path, default=None, help="a fresh folder for the run")
    parser.add_argument(
        "--max-delay", type=float, default=0.5, help="kill delay after READY: uniform [0, max] s"
    )
    args = parser.parse_args(argv)
    temporary = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="soak-kills-")) if temporary else args.workdir
    print(f"soak: {args.kills} kills, seed {args.seed}, max delay {args.max_delay}s in {workdir}")
    try:
        report = run_kill_harness(
            workdir=workdir, kills=args.kills, seed=args.seed, max_delay=args.max_delay
        )
    except ValueError as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 2
    print(report)
    if report.ok:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
        return 0
    print(f"soak: {len(report.problems)} problem(s); seed {args.seed}; files kept in {workdir}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
