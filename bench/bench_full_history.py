"""Benchmark: stage 2, `build_full_history` over long conversations (goal: <= 200 ms).

Times `build_full_history` (50,000-token cap, 10 recent messages verbatim) on
realistic histories of 1,000 and 10,000 messages: questions, named agents,
tool-call pairs and tool outputs of up to ~6,000 tokens (the 10,000-message one
holds about 3 million tokens). Each history is built once; the timed calls share
one TokenCounter, as the tool does. Sizes are interleaved round by round so that
noise on a shared machine hits them alike.

    python bench/bench_full_history.py            # print the medians
    python bench/bench_full_history.py --check    # also exit 1 if 10,000 is over 200 ms
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support, from anywhere

from specialist_handover.nodes.history.full_history import build_full_history  # noqa: E402
from specialist_handover.state import TokenCounter  # noqa: E402
from tests.support.histories import make_history  # noqa: E402

SIZES = (1_000, 10_000)
GOAL_MS = 200.0
PACKAGE = (
    "🖌️ HANDOVER PACKAGE (stage 1)\nTopic: landing-page-hero\n\n## Summary\n"
    + "The user wants a bold landing page for a coffee subscription. " * 20
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed calls per size (default 7)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if over {GOAL_MS:.0f} ms")
    options = parser.parse_args(argv)

    counter = TokenCounter()
    histories = {n: make_history(n, seed=n) for n in SIZES}
    for history in histories.values():  # warm up: encoding tables, imports, caches
        build_full_history(history, package_text=PACKAGE, counter=counter)
    times: dict[int, list[float]] = {n: [] for n in SIZES}
    results = {}
    for _ in range(options.rounds):
        for n, history in histories.items():
            start = time.perf_counter()
            results[n] = build_full_history(history, package_text=PACKAGE, counter=counter)
            times[n].append((time.perf_counter() - start) * 1000)

    print(f"build_full_history, cap 50,000 tokens, {options.rounds} rounds (median / min / max)")
    for n in SIZES:
        r = results[n]
        print(
            f"{n:>7,} messages: {statistics.median(times[n]):7.1f} ms "
            f"({min(times[n]):.1f} / {max(times[n]):.1f})  -> {r.tokens:,} tokens, "
            f"{r.turns_verbatim:,} verbatim, {r.turns_compacted:,} compacted"
        )
    median = statistics.median(times[SIZES[-1]])
    verdict = "ok" if median <= GOAL_MS else "MISSED"
    print(f"goal: 10,000 messages <= {GOAL_MS:.0f} ms median: {verdict}")
    return 1 if options.check and median > GOAL_MS else 0


if __name__ == "__main__":
    sys.exit(main())
