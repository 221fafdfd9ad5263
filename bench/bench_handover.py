"""Benchmark: one stage-1 handover (build the package + append its briefing entry).

The caller passes the WHOLE conversation as `recent_turns`; the tool keeps the last
`include_recent_turns` (5), so the cost should not grow with the conversation. This
script times `perform_handover` (the core the tool and the graph's handover node
share) for conversations of 10, 1,000 and 10,000 turns and prints the medians and
the ratio 10,000 / 10 (goal: <= 1.3).

Every timed call uses a fresh topic, so it creates and appends a new briefing file
instead of growing one. Sizes are interleaved round by round so that noise on a
shared machine hits them alike.

    python bench/bench_handover.py            # print the table
    python bench/bench_handover.py --check    # also exit 1 if the ratio is over 1.3

For information it also times the LangChain tool call (`handover_to_specialist.invoke`),
whose own wrapper (`BaseTool.run`) handles the whole input and so is not flat; that
row is not part of the check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from specialist_handover.nodes import handover_to_specialist, perform_handover
from specialist_handover.state import token_counter

SIZES = (10, 1_000, 10_000)
GOAL = 1.3
WORDS = (
    "hero layout colour typography button grid spacing contrast mobile header footer "
    "gradient image copy headline call-to-action brand palette font weight shadow"
).split()


def conversation(turns: int) -> list[str]:
    """`turns` varied turns of ~30 words, alternating user and assistant."""
    out = []
    for i in range(turns):
        speaker = "user" if i % 2 == 0 else "assistant"
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(30)]
        out.append(f"{speaker} (turn {i}): " + " ".join(words))
    return out


def args_for(root: str, topic: str, turns: list[str]) -> dict:
    return {
        "specialist_profile": "frontend_designer",
        "topic": topic,
        "summary": "The user is designing a landing page hero for a coffee subscription. " * 3,
        "recent_turns": turns,
        "decisions": ["Tailwind CSS", "one call to action", "espresso brown and cream"],
        "artifacts": ["src/pages/index.tsx", "design/brand.md"],
        "return_condition": "user_request",
        "handover_reason": "visual design of the hero section",
        "project_root": root,
    }


def core_call(args: dict) -> dict:
    outcome = perform_handover(args)
    if isinstance(outcome, str):
        raise SystemExit(f"handover failed: {outcome}")
    return outcome.result


def tool_call(args: dict) -> dict:
    answer = handover_to_specialist.invoke(args)
    if answer.startswith("ERROR"):
        raise SystemExit(f"handover failed: {answer}")
    return {}


def measure(
    call: Callable[[dict], dict], convs: dict[int, list[str]], rounds: int, root: str, label: str
) -> tuple[dict[int, list[float]], dict[int, dict]]:
    """Seconds per call for each size, plus one result per size (for the table)."""
    times: dict[int, list[float]] = {n: [] for n in convs}
    results: dict[int, dict] = {}
    for i in range(-3, rounds):  # three untimed warm-up rounds
        for n, turns in convs.items():
            args = args_for(root, f"{label}-{n}-round-{i + 3}", turns)
            start = time.perf_counter()
            result = call(args)
            elapsed = time.perf_counter() - start
            if i >= 0:
                times[n].append(elapsed)
                results[n] = result
    return times, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 if the ratio > {GOAL}")
    parser.add_argument("--rounds", type=int, default=60, help="timed calls per size")
    parser.add_argument("--no-tool", action="store_true", help="skip the LangChain tool rows")
    options = parser.parse_args(argv)

    token_counter().count_text("warm up")  # load the vocabulary outside the timings
    convs = {n: conversation(n) for n in SIZES}
    with tempfile.TemporaryDirectory(prefix="bench-handover-") as root:
        times, results = measure(core_call, convs, options.rounds, root, "core")
        tool_times = (
            None
            if options.no_tool
            else measure(tool_call, convs, max(options.rounds // 3, 5), root, "tool")[0]
        )

    print(
        f"perform_handover: build the stage-1 package + append its briefing entry "
        f"({options.rounds} timed calls per size, fresh briefing file each)"
    )
    print()
    header = f"{'turns passed':>12} | {'median ms':>9} | {'min ms':>7} | {'p90 ms':>7} | "
    header += f"{'tokens':>6} | {'tool.invoke median ms':>21}"
    print(header)
    print("-" * len(header))
    medians = {}
    for n in SIZES:
        samples = sorted(times[n])
        medians[n] = statistics.median(samples)
        p90 = samples[int(0.9 * (len(samples) - 1))]
        tool = f"{statistics.median(tool_times[n]) * 1000:21.3f}" if tool_times else " " * 21
        tokens = results[n]["package"]["estimated_tokens"]
        print(
            f"{n:>12,} | {medians[n] * 1000:9.3f} | {samples[0] * 1000:7.3f} | "
            f"{p90 * 1000:7.3f} | {tokens:>6} | {tool}"
        )
    ratio = medians[SIZES[-1]] / medians[SIZES[0]]
    print()
    verdict = "ok" if ratio <= GOAL else "OVER GOAL"
    print(f"ratio {SIZES[-1]:,} / {SIZES[0]} turns: {ratio:.3f} (goal <= {GOAL}) {verdict}")
    if tool_times:
        tool_ratio = statistics.median(tool_times[SIZES[-1]]) / statistics.median(
            tool_times[SIZES[0]]
        )
        print(f"tool.invoke ratio (information only, LangChain wrapper): {tool_ratio:.3f}")
    if options.check and ratio > GOAL:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
