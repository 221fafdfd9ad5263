"""Benchmark: how long the secret scanner takes, on realistic text and on inputs built to backtrack.

Prints, for each input, the median of several runs and the ratio between the whole input and a
quarter of it (about 4 means the time grows linearly with the text; a pattern that backtracks
shows 16 or more). `tests/test_redaction.py` checks the ratios; the times are here, not in the
tests, because a shared machine makes any fixed time limit flaky.

    python bench/bench_redaction.py            # every input
    python bench/bench_redaction.py --worst 8  # and list the 8 slowest inputs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specialist_handover.nodes.redaction.redact import redact  # noqa: E402
from tests.test_redaction import PATHOLOGICAL, quarter_of, realistic_text  # noqa: E402


def median_seconds(text: str, runs: int) -> float:
    """The median time of `runs` redactions of `text` (the scanner's cache is bypassed: each run
    gets a text it has not seen)."""
    times = []
    for run in range(runs):
        fresh = f"{run} {text}"
        started = time.perf_counter()
        redact(fresh)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--worst", type=int, default=5, help="how many of the slowest to list")
    args = parser.parse_args()
    realistic = realistic_text(100_000)
    print(f"realistic 100 KB text: {median_seconds(realistic, args.runs) * 1000:.1f} ms (median)")
    rows = []
    for name, text in PATHOLOGICAL.items():
        whole = median_seconds(text, args.runs)
        part = median_seconds(quarter_of(text), args.runs)
        rows.append((whole, name, len(text), whole / max(part, 1e-6)))
    rows.sort(reverse=True)
    print(f"{len(rows)} inputs built to backtrack; the slowest {args.worst}:")
    for whole, name, size, ratio in rows[: args.worst]:
        print(f"  {name:<28} {size:>9,} chars  {whole * 1000:8.1f} ms  whole/quarter {ratio:5.1f}")
    print(f"highest whole/quarter ratio: {max(row[3] for row in rows):.1f} (linear: about 4)")


if __name__ == "__main__":
    main()
