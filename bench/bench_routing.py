"""Benchmark: the offline router, on the routing corpora and leaving each examples writer out.

The built-in profiles' example requests (`specialists/profiles/<name>.examples.txt`) are filed
by writer (`# -- writer: ... --`). Leaving each writer out in turn, the router is rebuilt on the
others' examples and asked to route the left-out writer's lines: a specialist's line counts when
it goes to that very specialist (stricter than the corpora's "plausible" sets), an
orchestrator's line when it stays. Then the routing corpora (`tests/data/routing_*.json`) are
routed with every example, and the index build and one routing decision are timed.

    python bench/bench_routing.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specialist_handover.nodes.models.offline.cues import choose_specialist  # noqa: E402
from specialist_handover.nodes.models.offline.examples import build_example_index  # noqa: E402
from specialist_handover.specialists import (  # noqa: E402
    ORCHESTRATOR_PROFILE,
    Profile,
    builtin_profiles,
)

PROFILES = ROOT / "specialists" / "profiles"
WRITER = "# -- writer: "


def examples_by_writer() -> dict[str, dict[str, list[str]]]:
    """Writer -> profile -> that writer's example lines."""
    found: dict[str, dict[str, list[str]]] = {}
    for path in sorted(PROFILES.glob("*.examples.txt")):
        name = path.name.removesuffix(".examples.txt")
        writer = "?"
        for line in path.read_text("utf-8").splitlines():
            if line.startswith(WRITER):
                writer = line.removeprefix(WRITER).removesuffix(" --")
            elif line.strip() and not line.startswith("#"):
                found.setdefault(writer, {}).setdefault(name, []).append(line.strip())
    return found


def leave_one_writer_out() -> None:
    by_writer = examples_by_writer()
    base = builtin_profiles()
    total = good = kept = chat = 0
    confusions: Counter[tuple[str, str]] = Counter()
    print("leave one writer out (a specialist's line must reach that specialist):")
    for held, lines in by_writer.items():
        profiles: dict[str, Profile] = {
            name: replace(
                profile,
                examples=tuple(
                    line
                    for writer, own in by_writer.items()
                    if writer != held
                    for line in own.get(name, [])
                ),
            )
            for name, profile in base.items()
        }
        g = t = k = c = 0
        for name, texts in lines.items():
            for text in texts:
                choice = choose_specialist(text, profiles=profiles)
                chosen = choice[0] if choice else ORCHESTRATOR_PROFILE
                if name == ORCHESTRATOR_PROFILE:
                    c, k = c + 1, k + (chosen == name)
                else:
                    t, g = t + 1, g + (chosen == name)
                    if chosen != name:
                        confusions[(name, chosen)] += 1
        share = f"{100 * g / t:.1f}%" if t else "-"
        print(f"  writer {held:>15}: {g:>4}/{t:<4} {share:>6}   stayed {k}/{c}")
        total, good, kept, chat = total + t, good + g, kept + k, chat + c
    print(f"  all: {good}/{total} ({100 * good / total:.1f}%), small talk kept {kept}/{chat}")
    print("  most common confusions:")
    for (wanted, chosen), n in confusions.most_common(6):
        print(f"    {n:>3} {wanted} -> {chosen}")


def corpora() -> None:
    print("routing corpora (plausible sets):")
    for path in sorted((ROOT / "tests" / "data").glob("routing_*.json")):
        corpus = json.loads(path.read_text("utf-8"))
        good = sum(
            ((choose_specialist(t) or (ORCHESTRATOR_PROFILE,))[0] in plausible)
            for t, plausible in corpus["requests"]
        )
        handed = sum(choose_specialist(t) is not None for t in corpus["chit_chat"])
        n, m = len(corpus["requests"]), len(corpus["chit_chat"])
        print(
            f"  {path.stem:>16}: {good}/{n} ({100 * good / n:.1f}%), chit-chat handed {handed}/{m}"
        )


def timing() -> None:
    profiles = list(builtin_profiles().values())
    builds = []
    for _ in range(3):
        start = time.perf_counter()
        build_example_index(profiles)
        builds.append(time.perf_counter() - start)
    texts = [
        t for t, _ in json.loads((ROOT / "tests/data/routing_blind3.json").read_text())["requests"]
    ]
    choose_specialist(texts[0])  # build the cached indexes
    calls = []
    for text in texts:
        start = time.perf_counter()
        choose_specialist(text)
        calls.append(time.perf_counter() - start)
    documents = sum(len(p.examples) + 1 for p in profiles)
    print(
        f"example index of {documents} documents: built in {1000 * statistics.median(builds):.0f} ms"
        f" (once per profile set); one routing decision: median "
        f"{1000 * statistics.median(calls):.2f} ms"
    )


def main() -> int:
    leave_one_writer_out()
    corpora()
    timing()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
