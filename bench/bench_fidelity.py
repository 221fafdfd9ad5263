"""Benchmark: do the facts a user stated earlier reach the specialist a conversation is handed to?

    .venv/bin/python bench/bench_fidelity.py                    # all systems, all conversations
    .venv/bin/python bench/bench_fidelity.py --small            # 4 short conversations, < 60 s
    .venv/bin/python bench/bench_fidelity.py [--systems ours-terse,ours-offline,swarm,swarm-trim,supervisor]
        [--conversations c01-invoicing-rewrite,...] [--trim-tokens N] [--plot docs/fidelity.png]
        [--json PATH] [--jobs 2] [--missed-limit N]

The corpus (bench/fidelity/conversations/*.yaml, described in bench/fidelity/README.md) holds
scripted conversations with planted facts at known user turns (decisions, constraints, paths,
URLs, identifiers, versions, quantities, regions, auth providers; some of them changed minds),
hand-labelled real items and scripted handovers and returns. Every system plays every user
turn; at each handover the receiving agent's first model request is recorded and measured:

- recall: the fraction of the planted facts stated before the handover (user turns before it,
  returns before it) whose terms all appear in the request's text (system prompt, messages,
  tool-call arguments; case-insensitive);
- tokens: `token_counter("gpt-4o").count_messages` of the request (messages only, system
  prompt included, as bench_vs_peers counts its receiver tokens);
- ours: whether the package stayed within budget (state["handover"]: `estimated_tokens` <=
  `max_context_tokens`) and the thread ledger's noise (entries, read after every turn, that
  match neither a planted fact nor a labelled real item; matching rules in the README);
- stale: a changed mind whose old value is in the request while the new one is not (and, on
  our ledger, an entry holding the old value still marked current).

Systems (harness.py has the details): ours-terse (scripted: the orchestrator hands over with a
one-line summary, no decisions, no artifacts), ours-offline (the built-in offline model decides
when to hand over; the handover turns name the specialist), swarm (full history), swarm-trim
(trim_messages to our package's tokens at the same handover, or --trim-tokens), supervisor
(full history). Each system and conversation runs on its own thread and in-memory checkpointer;
`--jobs` worker processes share the work (the peers' checkpoints hold the whole history).

Prints a table per system, recall per fact kind, the facts ours-terse missed (and why, when the
ledger tells), the goals (met / missed), and writes a PNG (recall vs tokens) and, with --json,
every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from fidelity.corpus import (  # noqa: E402
    Conversation,
    corpus_figures,
    load_corpus,
    wording_family,
)
from fidelity.harness import (  # noqa: E402
    OURS,
    PEERS,
    RECENT_USER_TURNS,
    SYSTEMS,
    job,
    peers_missing,
)

SMALL = (
    "c01-invoicing-rewrite",
    "c02-offline-notes-app",
    "c03-cli-release-tool",
    "c04-matchmaking-queue",
)
DEFAULT_PLOT = ROOT / "docs" / "fidelity.png"
GOAL_RECALL = 0.90
GOAL_RATIO = 2.0
GOAL_NOISE = 0.20
DISTANCES = ((1, RECENT_USER_TURNS), (RECENT_USER_TURNS + 1, 10), (11, 50), (51, 100), (101, 400))


# --- running ----------------------------------------------------------------------------------------


def run(
    systems: list[str],
    convs: list[Conversation],
    *,
    jobs: int,
    trim_tokens: int | None,
    verbose: bool = True,
) -> dict[str, list[dict[str, Any]]]:
    """Every system on every conversation; swarm-trim after ours-terse (its budgets)."""
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    order = sorted(convs, key=lambda c: -c.n_turns)  # longest first: the pool balances better
    first = [s for s in systems if s != "swarm-trim"]
    started = time.perf_counter()

    def note(result: dict[str, Any]) -> None:
        results[result["system"]].append(result)
        if verbose:
            done = sum(len(v) for v in results.values())
            total = len(systems) * len(convs)
            print(
                f"  [{time.perf_counter() - started:7.1f} s] {done}/{total} "
                f"{result['system']:<12} {result['conversation']:<34} "
                f"{result['turns']:>3} turns {result['seconds']:6.1f} s",
                flush=True,
            )

    def phase(specs: list[tuple[str, list[str], Any, int]]) -> None:
        if jobs <= 1:
            for spec in specs:
                for result in job(spec):
                    note(result)
            return
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(job, spec) for spec in specs]
            for future in as_completed(futures):
                for result in future.result():
                    note(result)

    default_trim = trim_tokens or 3000
    phase([(s, [c.id], None, default_trim) for c in order for s in first])
    if "swarm-trim" in systems:
        budgets: dict[str, dict[int, int]] = {}
        if trim_tokens is None:
            for r in results.get("ours-terse", []):
                budgets[r["conversation"]] = {
                    h["turn"]: h["tokens"] for h in r["handovers"] if h["tokens"]
                }
        phase([("swarm-trim", [c.id], {c.id: budgets.get(c.id, {})}, default_trim) for c in order])
    for s in results:
        results[s].sort(key=lambda r: r["conversation"])
    return results


# --- figures ------------------------------------------------------------------------------------------


def _pct(a: float, b: float) -> float | None:
    return 100.0 * a / b if b else None


def _fmt(value: float | None, spec: str = ".1f", unit: str = "%") -> str:
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def summarise(
    system: str, results: list[dict[str, Any]], convs: dict[str, Conversation]
) -> dict[str, Any]:
    """One system's figures over all its conversations."""
    due = delivered = 0
    scripted_due = scripted_delivered = 0
    recent_due = recent_delivered = 0
    tokens: list[int] = []
    within = with_package = 0
    stale = changed_due = 0
    entries = noisy = 0
    per_handover: list[dict[str, Any]] = []
    for r in results:
        conv = convs[r["conversation"]]
        facts = {f.id: f for f in conv.facts}
        for h in r["handovers"]:
            if h["tokens"] is not None:
                tokens.append(h["tokens"])
            n_due, n_del = len(h["due"]), len(h["delivered"])
            due += n_due
            delivered += n_del
            if h["scripted_index"] is not None:
                scripted_due += n_due
                scripted_delivered += n_del
            for fid in h["due"]:
                f = facts[fid]
                if h["turn"] - f.turn <= RECENT_USER_TURNS:
                    recent_due += 1
                    recent_delivered += fid in h["delivered"]
                if f.changed:
                    changed_due += 1
            stale += len(h["stale"])
            package = h.get("package")
            if package:
                with_package += 1
                within += package["within_budget"]
            per_handover.append(
                {
                    "conversation": r["conversation"],
                    "turn": h["turn"],
                    "tokens": h["tokens"],
                    "recall": _pct(n_del, n_due),
                    "due": n_due,
                }
            )
        if r.get("noise"):
            entries += r["noise"]["entries"]
            noisy += r["noise"]["noise"]
    scripted = sum(r["scripted_handovers"] for r in results)
    happened = sum(r["scripted_happened"] for r in results)
    ledger_stale = sum(1 for r in results for s in r.get("superseded") or [] if s["old_current"])
    ledger_new = sum(1 for r in results for s in r.get("superseded") or [] if s["new_current"])
    changed_total = sum(len(r.get("superseded") or []) for r in results)
    return {
        "system": system,
        "conversations": len(results),
        "turns": sum(r["turns"] for r in results),
        "seconds": sum(r["seconds"] for r in results),
        "handovers_measured": sum(len(r["handovers"]) for r in results),
        "scripted_handovers": scripted,
        "scripted_happened": happened,
        "unscripted_handovers": sum(r["unscripted_handovers"] for r in results),
        "facts_due": due,
        "facts_delivered": delivered,
        "recall": _pct(delivered, due),
        "recall_scripted_handovers": _pct(scripted_delivered, scripted_due),
        "recall_recent": _pct(recent_delivered, recent_due),
        "recent_due": recent_due,
        "tokens_mean": statistics.fmean(tokens) if tokens else None,
        "tokens_median": statistics.median(tokens) if tokens else None,
        "tokens_max": max(tokens) if tokens else None,
        "within_budget": within if with_package else None,
        "packages": with_package,
        "stale_in_request": stale,
        "changed_due": changed_due,
        "ledger_entries": entries if system in OURS else None,
        "ledger_noise": noisy if system in OURS else None,
        "noise_pct": _pct(noisy, entries) if system in OURS else None,
        "ledger_old_value_current": ledger_stale if system in OURS else None,
        "ledger_new_value_current": ledger_new if system in OURS else None,
        "ledger_changed_minds": changed_total if system in OURS else None,
        "problems": [p for r in results for p in r["problems"]],
        "per_handover": per_handover,
    }


def by_kind(
    results: dict[str, list[dict[str, Any]]], convs: dict[str, Conversation]
) -> dict[str, dict[str, tuple[int, int]]]:
    """(delivered, due) per fact kind and per group (changed minds, returns, distance)."""
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for system, rs in results.items():
        for r in rs:
            conv = convs[r["conversation"]]
            facts = {f.id: f for f in conv.facts}
            for h in r["handovers"]:
                for fid in h["due"]:
                    f = facts[fid]
                    hit = fid in h["delivered"]
                    distance = h["turn"] - f.turn
                    groups = [f"kind: {f.kind}", f"wording: {wording_family(conv, f)}"]
                    if f.changed:
                        groups.append("changed mind")
                    for lo, hi in DISTANCES:
                        if lo <= distance <= hi:
                            groups.append(f"stated {lo}-{hi} turns before")
                    for g in groups:
                        cell = table[g][system]
                        cell[0] += hit
                        cell[1] += 1
    return {g: {s: (c[0], c[1]) for s, c in row.items()} for g, row in table.items()}


def missed_by(
    system: str, results: dict[str, list[dict[str, Any]]], convs: dict[str, Conversation]
) -> list[dict[str, Any]]:
    """Each planted fact the system missed at some handover: where, and why if known."""
    out = []
    for r in results.get(system, []):
        conv = convs[r["conversation"]]
        facts = {f.id: f for f in conv.facts}
        for h in r["handovers"]:
            for fid in h["missed"]:
                f = facts[fid]
                text = conv.return_text(f.turn) if f.source == "return" else conv.turns[f.turn - 1]
                out.append(
                    {
                        "conversation": conv.id,
                        "fact": fid,
                        "kind": f.kind,
                        "wording": f.wording,
                        "stated_at": f.turn,
                        "source": f.source,
                        "handover_turn": h["turn"],
                        "to": h["target"],
                        "terms": list(f.terms),
                        "text": text,
                        "why": h.get("why", {}).get(fid, ""),
                    }
                )
    return out


# --- goals ----------------------------------------------------------------------------------------------


def goals(summaries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    ours = summaries.get("ours-terse")
    trim = summaries.get("swarm-trim")
    rows: list[dict[str, Any]] = []

    def add(goal: str, measured: str, met: bool | None, by: str = "") -> None:
        verdict = "not measured" if met is None else "met" if met else f"missed{by}"
        rows.append({"goal": goal, "measured": measured, "verdict": verdict, "met": met})

    recall = ours["recall"] if ours else None
    add(
        f"ours-terse recall >= {GOAL_RECALL:.0%}",
        _fmt(recall),
        None if recall is None else recall >= GOAL_RECALL * 100,
        f" by {GOAL_RECALL * 100 - recall:.1f} points" if recall is not None else "",
    )
    trim_recall = trim["recall"] if trim else None
    if recall is None or trim_recall is None:
        add(f"ours-terse recall >= {GOAL_RATIO:g}x swarm-trim's", "n/a", None)
    else:
        ratio = recall / trim_recall if trim_recall else float("inf")
        add(
            f"ours-terse recall >= {GOAL_RATIO:g}x swarm-trim's (equal tokens)",
            f"{recall:.1f}% vs {trim_recall:.1f}% = {ratio:.2f}x",
            ratio >= GOAL_RATIO,
            f" by {GOAL_RATIO - ratio:.2f}x",
        )
    if ours and ours["packages"]:
        add(
            "our package within budget (estimated_tokens <= max_context_tokens)",
            f"{ours['within_budget']} of {ours['packages']} handovers",
            ours["within_budget"] == ours["packages"],
            f" at {ours['packages'] - ours['within_budget']} handovers",
        )
    else:
        add("our package within budget", "n/a", None)
    if ours and ours["ledger_entries"]:
        pct = ours["noise_pct"]
        add(
            f"ledger noise <= {GOAL_NOISE:.0%} of entries (ours-terse)",
            f"{ours['ledger_noise']} of {ours['ledger_entries']} = {pct:.1f}%",
            pct <= GOAL_NOISE * 100,
            f" by {pct - GOAL_NOISE * 100:.1f} points",
        )
    else:
        add(f"ledger noise <= {GOAL_NOISE:.0%} of entries", "no ledger entries", None)
    return rows


# --- printing -------------------------------------------------------------------------------------------


def print_report(
    summaries: dict[str, dict[str, Any]],
    kinds: dict[str, dict[str, tuple[int, int]]],
    missed: list[dict[str, Any]],
    goal_rows: list[dict[str, Any]],
    missed_limit: int | None,
) -> None:
    systems = list(summaries)
    print("\n## Per system\n")
    print(
        "| system | handovers (scripted happened / scripted, unscripted) | recall | recall, "
        f"facts of the last {RECENT_USER_TURNS} turns | tokens mean / median / max | "
        "within budget | ledger entries, noise | stale in request | time |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in systems:
        m = summaries[s]
        handovers = (
            f"{m['handovers_measured']} ({m['scripted_happened']}/{m['scripted_handovers']}, "
            f"{m['unscripted_handovers']})"
        )
        recall = f"{_fmt(m['recall'])} ({m['facts_delivered']}/{m['facts_due']})"
        tokens = (
            f"{_fmt(m['tokens_mean'], ',.0f', '')} / {_fmt(m['tokens_median'], ',.0f', '')} / "
            f"{_fmt(m['tokens_max'], ',.0f', '')}"
        )
        budget = f"{m['within_budget']}/{m['packages']}" if m["packages"] else "-"
        ledger = (
            f"{m['ledger_entries']}, {_fmt(m['noise_pct'])}"
            if m["ledger_entries"]
            else "-"
            if s in OURS
            else "-"
        )
        print(
            f"| {s} | {handovers} | {recall} | {_fmt(m['recall_recent'])} | {tokens} | {budget} | "
            f"{ledger} | {m['stale_in_request']}/{m['changed_due']} | {m['seconds']:.0f} s |"
        )
    for s in systems:
        m = summaries[s]
        if m["ledger_changed_minds"]:
            print(
                f"\n{s} ledger, changed minds: {m['ledger_old_value_current']} of "
                f"{m['ledger_changed_minds']} still hold the old value as current; the new value is "
                f"current in {m['ledger_new_value_current']}."
            )
        if m["problems"]:
            print(f"\n{s}: {len(m['problems'])} turns did not go as scripted, e.g.:")
            for p in m["problems"][:5]:
                print(f"  - {p}")
    print("\n## Recall per fact kind and group (delivered / due)\n")
    print("| group | " + " | ".join(systems) + " |")
    print("| --- |" + " ---: |" * len(systems))
    rank = {"kind": 0, "wording": 1, "changed mind": 2, "stated": 3}
    order = sorted(kinds, key=lambda g: (rank.get(g.split(":")[0].split(" ")[0], 2), g))
    for g in order:
        cells = []
        for s in systems:
            hit, n = kinds[g].get(s, (0, 0))
            cells.append(f"{_fmt(_pct(hit, n), '.0f')} ({hit}/{n})" if n else "-")
        print(f"| {g} | " + " | ".join(cells) + " |")
    print(f"\n## Facts ours-terse missed ({len(missed)} fact x handover)\n")
    shown = missed if missed_limit is None else missed[:missed_limit]
    for m in shown:
        text = m["text"] if len(m["text"]) <= 110 else m["text"][:107] + "..."
        print(
            f"- {m['conversation']} {m['fact']} ({m['kind']}, {m['source']} turn {m['stated_at']} "
            f"-> {m['to']} at {m['handover_turn']}): {text!r} — {m['why']}"
        )
    if len(shown) < len(missed):
        print(f"- ... {len(missed) - len(shown)} more (--missed-limit, or --json for all)")
    print("\n## Goals\n")
    print("| goal | measured | verdict |")
    print("| --- | --- | --- |")
    for row in goal_rows:
        print(f"| {row['goal']} | {row['measured']} | {row['verdict']} |")


def write_plot(summaries: dict[str, dict[str, Any]], path: Path) -> str:
    """Recall vs receiving-request tokens: one point per system, per-handover scatter behind."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return f"no plot: matplotlib is missing ({exc})"
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colours = {
        "ours-terse": "tab:green",
        "ours-offline": "tab:olive",
        "swarm": "tab:blue",
        "swarm-trim": "tab:cyan",
        "supervisor": "tab:red",
    }
    for s, m in summaries.items():
        points = [p for p in m["per_handover"] if p["tokens"] and p["recall"] is not None]
        colour = colours.get(s, "tab:gray")
        ax.scatter(
            [p["tokens"] for p in points],
            [p["recall"] for p in points],
            s=8,
            alpha=0.18,
            color=colour,
        )
        if m["tokens_mean"] and m["recall"] is not None:
            ax.scatter(
                [m["tokens_mean"]],
                [m["recall"]],
                s=110,
                color=colour,
                edgecolor="black",
                label=f"{s}: {m['recall']:.1f}% at {m['tokens_mean']:,.0f} tokens",
                zorder=3,
            )
    ax.set_xscale("log")
    ax.set_xlabel("receiving request tokens (per handover; large dot: mean)")
    ax.set_ylabel("recall of planted facts stated earlier (%)")
    ax.set_ylim(-3, 103)
    ax.axhline(GOAL_RECALL * 100, color="gray", linestyle=":", linewidth=1)
    ax.set_title("Fact fidelity at handover: recall vs tokens")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, which="both", alpha=0.25)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"plot: {path}"


# --- main -------------------------------------------------------------------------------------------------


def parse_systems(text: str) -> list[str]:
    systems = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    return [s for s in SYSTEMS if s in systems]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="4 short conversations")
    parser.add_argument("--systems", default="", help=f"comma-separated: {', '.join(SYSTEMS)}")
    parser.add_argument("--conversations", default="", help="comma-separated conversation ids")
    parser.add_argument("--trim-tokens", type=int, default=None, help="swarm-trim's budget")
    parser.add_argument(
        "--plot", default=None, help=f"PNG path ('' for none; default {DEFAULT_PLOT})"
    )
    parser.add_argument("--json", default="", help="write every figure here")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (1: in-process)")
    parser.add_argument("--missed-limit", type=int, default=None, help="missed facts printed")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    options = parser.parse_args(argv)
    started = time.perf_counter()
    missing = peers_missing()
    if options.systems:
        systems = parse_systems(options.systems)
    elif options.small:
        systems = list(OURS) + ([] if missing else list(PEERS))
    else:
        systems = list(SYSTEMS)
    if missing and any(s in PEERS for s in systems):
        raise SystemExit(f'the peers need the bench extra: pip install -e ".[bench]" ({missing})')
    if "swarm-trim" in systems and "ours-terse" not in systems and options.trim_tokens is None:
        systems = ["ours-terse", *systems]  # its tokens are swarm-trim's budgets
    ids = [c for c in options.conversations.split(",") if c] or (
        list(SMALL) if options.small else None
    )
    convs = load_corpus(ids)
    by_id = {c.id: c for c in convs}
    figures = corpus_figures(convs)
    print(
        f"fidelity: {figures['conversations']} conversations, {figures['turns_total']:,} user "
        f"turns, {figures['facts']} planted facts ({figures['changed_minds']} changed minds), "
        f"{figures['handovers']} scripted handovers; systems: {', '.join(systems)}",
        flush=True,
    )
    results = run(
        systems,
        convs,
        jobs=options.jobs,
        trim_tokens=options.trim_tokens,
        verbose=not options.quiet,
    )
    summaries = {s: summarise(s, results[s], by_id) for s in systems}
    kinds = by_kind(results, by_id)
    missed = missed_by("ours-terse", results, by_id)
    goal_rows = goals(summaries)
    elapsed = time.perf_counter() - started
    print_report(summaries, kinds, missed, goal_rows, options.missed_limit)
    plot = (
        options.plot if options.plot is not None else ("" if options.small else str(DEFAULT_PLOT))
    )
    if plot:
        print("\n" + write_plot(summaries, Path(plot)))
    print(f"\nelapsed: {elapsed:,.1f} s ({options.jobs} job{'s' if options.jobs != 1 else ''})")
    report = {
        "corpus": figures,
        "systems": systems,
        "elapsed_seconds": elapsed,
        "summaries": {
            s: {k: v for k, v in m.items() if k != "per_handover"} for s, m in summaries.items()
        },
        "per_handover": {s: m["per_handover"] for s, m in summaries.items()},
        "by_kind": {g: {s: list(v) for s, v in row.items()} for g, row in kinds.items()},
        "missed_ours_terse": missed,
        "goals": goal_rows,
        "results": results,
    }
    if options.json:
        Path(options.json).write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
        print(f"json: {options.json}")
    return report


if __name__ == "__main__":
    main()
