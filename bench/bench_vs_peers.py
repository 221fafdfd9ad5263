"""Benchmark: this project against langgraph-swarm and langgraph-supervisor, side by side.

    .venv/bin/pip install -q -e ".[bench]"       # the peers and matplotlib (bench extra only)
    .venv/bin/python bench/bench_vs_peers.py [--turns 200] [--runs 1] [--workload handovers]
        [--systems ours,swarm,supervisor,swarm-trim,supervisor-trim] [--trim-tokens 3000]
        [--checkpointer sqlite|postgres] [--plot bench/vs_peers.png] [--workdir DIR] [--json PATH]
        [--replot JSON] [--skip-disk-check]
        [--latency-base 0.3] [--latency-per-token 0.00005] [--price-per-mtok 2.50]

    # the headline: what a user feels, 300 turns of the mixed workload (a few minutes)
    .venv/bin/python bench/bench_vs_peers.py --workload mixed --turns 300 --runs 3 \
        --systems ours,swarm,swarm-trim,supervisor \
        --latency-base 0.3 --latency-per-token 0.00005 --price-per-mtok 2.50

Systems (`--systems`, default all five):

- ours: `build_graph(checkpointer=..., model={profile: <scripted>})`, context
  `{"project_root": <tmp>, "model": "offline"}` (its own defaults otherwise:
  max_context_tokens 3,000, max_input_tokens 32,000, 13 profiles).
- swarm: `create_swarm` of `langchain.agents.create_agent` agents: the
  orchestrator holds `create_handoff_tool`s to the three specialists; each
  specialist holds handoff tools to the two other specialists and back to the
  orchestrator (what a swarm needs for chains and returns).
- supervisor: `create_supervisor` (defaults: `output_mode="last_message"`,
  handoff messages on) over three `create_agent` workers without tools.
- swarm-trim, supervisor-trim: the same, configured the way their users save
  context: every agent's model call gets `langchain_core.messages.trim_messages`
  (strategy "last", `start_on="human"`, `end_on=("human", "tool")`, as in
  LangGraph's docs) to `--trim-tokens` tokens (default 3,000: our specialist's
  stage-1 package budget, `max_context_tokens`; ours bounds a whole request by
  `max_input_tokens`, 32,000, which is `--trim-tokens 32000`), counted with the
  same TokenCounter (per-message counts memoised, which only helps the peers).
  The `create_agent` agents get it as a middleware whose `wrap_model_call`
  passes the trimmed messages (the state keeps all of them); the supervisor,
  built by `create_react_agent`, as `pre_model_hook` returning
  `llm_input_messages`. Trimming drops the older turns outright; ours keeps a
  summary of them in its notes and can fetch them (stage 2). Answer quality is
  not measured here.

Every agent gets the same system prompt on every system: its profile's prompt
from this project (ours adds its own lines: the trail, the summary, the
return condition). Each agent has its own instance of one deterministic,
zero-latency scripted chat model, which acts on the turn's script (below) and
records every request it receives: its messages and the tool schemas bound to
it (`kwargs["tools"]`, as `bind_tools` converts them for a provider).

Workloads (`--workload`): the user texts and the replies are the same on every
system (requests 200-400 characters, specialists' replies 300-350; chit-chat,
chain and return lines 100-260; the turn number in every text; `script:` in the
output is a digest of them).

- handovers (default): every turn a one-off specialist request, from a fixed
  list of nine (three per specialist, by rotation). ours: the orchestrator calls
  `handover_to_specialist` (`return_condition="after_reply"`, with topic,
  summary, two decisions, two artifacts, a reason); the specialist answers; the
  graph hands back without a model call. swarm: the input is
  `{"messages": [user], "active_agent": "orchestrator"}` (routed back through the
  swarm's own state, not by a model call); the orchestrator transfers, the
  specialist answers. supervisor: the supervisor transfers, the worker answers,
  the supervisor closes with a short fixed line ("Done: ... answered above.").
  Model calls a turn: ours 2, swarm 2, supervisor 3.
- mixed: a block of 23 turns, repeated, its specialists rotating (block b:
  S = specialist b mod 3, T = specialist b+1 mod 3):
  chat, chat, open (S), session x5, full_history, session x3, chain (S -> T),
  session x4, full_history, session x4, return. So a specialist session lasts
  20 turns (open to the last session turn). How each kind is played:

  | kind | ours | swarm | supervisor |
  | --- | --- | --- | --- |
  | chat | the orchestrator answers itself (1 call) | the orchestrator (active) answers (1) | the supervisor answers without a transfer (1) |
  | open | orchestrator: `handover_to_specialist(S, return_condition="user_request")`; S answers (2) | orchestrator: `transfer_to_S`; S answers; S stays `active_agent` (2) | supervisor: `transfer_to_S`; S answers; supervisor closes (3) |
  | session | S holds the conversation and answers (1) | S is `active_agent` and answers, no handback (1) | supervisor transfers to S again, S answers, supervisor closes (3) |
  | full_history | S calls `request_full_history` (stage 2, 50,000-token cap; older turns condensed by the same scripted model, counted as `summarizer` calls), then answers from it (2) | S answers: it already has the whole history, there is no stage 2 (1) | as session (3) |
  | chain | S: `handover_to_specialist(T, "user_request")`; T answers and holds (2) | S: `transfer_to_T`; T answers and stays active (2) | the supervisor routes to T itself, T answers, supervisor closes (3) |
  | return | T: `return_to_orchestrator(summary)`; the orchestrator answers (2) | T: `transfer_to_orchestrator`; the orchestrator answers (2) | the supervisor answers itself (1) |

  Our stage-2 result is a tool message in the specialist's own turns, so its
  next turns' requests carry it too (within `max_input_tokens`).

  Every turn is checked; a turn that did anything else stops the run
  (SystemExit naming it): the model calls per agent, that exactly one call
  wrote the turn's reply and by the right agent, that the reply ends the turn
  (supervisor: is among its last messages), who holds the conversation after
  it (ours and swarm: `active_agent`), no `ERROR` tool result seen, and, for our
  stage 2, that the answer was made with a `FULL HISTORY` tool result. After the
  run our trail (`handovers`, as far as the state keeps it: the newest records)
  must be exactly the newest handovers and returns of the script, with their
  return conditions. The handovers workload is checked the same way.

Measured per turn and system (after `invoke` returns, outside the timing):

- receiver tokens: the request of the model call that wrote the turn's reply
  (the specialist's; the orchestrator's for chat and return turns), counted with
  `TokenCounter("o200k_base").count_messages` (system prompt included), and
  "with schemas": plus the tool schemas bound to that call,
  `count_text(json.dumps(tools, sort_keys=True))`. The goal uses with-schemas.
- input tokens: every model call of the turn (routers, closings, our stage 2
  and its summarizer), messages plus schemas: what the turn costs in tokens.
- ms: the wall time of `invoke` (durability="sync"), with zero-latency models: the
  framework's own time (each system's graph, checkpoints, our own work).
- modelled s (what a user feels): the latency model prices every model call of the turn at
  `--latency-base` + `--latency-per-token` x its input tokens (default 0.3 s + 0.05 ms a
  token; counted as input tokens are, messages with the system prompt plus tool schemas),
  and a turn's modelled time is its measured framework time plus its calls' time. Calls
  run one after another, except calls in parallel LangGraph tasks: each call records the
  root graph's checkpoint its step started from and the root task it runs in
  (`langgraph.config.get_config()`: `checkpoint_map[""]`, the first part of
  `checkpoint_ns`), so the calls of one root step in different root tasks (our consults'
  `Send` tasks) overlap and cost the slowest task's calls. Neither workload has a consult:
  every turn's calls are summed (the output counts the overlapping calls: 0). It is
  computed, not slept: a model, not a provider (no queueing, output tokens, streaming or
  caching; real latencies vary from call to call). `--latency-base 0 --latency-per-token 0`
  gives the zero-latency figures.
- cost: input tokens of every call of the turn x `--price-per-mtok` (default 2.50 USD per
  million input tokens), per turn and summed over the run (output tokens aside).
- checkpoint bytes: SQLite: the file plus `-wal`/`-journal`; PostgreSQL:
  `pg_total_relation_size` (heap, TOAST, indexes) of the checkpoint tables in
  the system's own database. Also the stored blob bytes (checkpoint + metadata +
  writes values, WAL aside), per turn on SQLite, at the end only on PostgreSQL.
- memory: each system's run is its own process (multiprocessing, spawn) that
  imports the same modules (all five systems' code) and only plays its own
  system; it reports its RSS before turn 1, after every turn (/proc statm) and
  its peak (`resource.getrusage(...).ru_maxrss`); the requests the scripted
  model recorded are dropped before RSS is read. The table shows the RSS growth
  since before turn 1; a summary line the RSS before turn 1, at turn 200, at the
  last turn and the peak (which includes the imports, ~165 MB).

Runs (`--runs`): run r of every system, then run r+1 (fresh processes, files
and threads). Within a run the turns alternate (turn 1 on every system, then
turn 2 ...), the parent telling one child at a time to play, so noise on a
shared machine hits them alike and idle children take no CPU. Every figure is
reported as min / median over the runs (one number where they agree). A figure
"at turn N" is, for ms, the median of the 10 turns ending at N; tokens, bytes
and memory are the values at turn N.

Goals (each per run; the verdict on the median over runs, met or missed by
how much; the same ratio against the other systems for information). The headline,
what a user feels (the mean of each block of 10 turns: 1-10, 51-60, 291-300, 991-1,000
as far as the run goes, and the last 10):

1. our modelled turn time <= 1.0x swarm's at turns 1-10;
2. our modelled turn time <= 0.5x swarm's from turn 51 on (turns 51-60, 291-300, ...);
3. input tokens of every model call over the run <= swarm-trim's.

The framework cost at zero latency: one guard, our overhead per turn at the last turn
(1,000 in the full run) <= 1.3x that at turn 10 (medians of 10 turns); and, for
information, the former goals: receiver tokens with schemas <= 1/9 of swarm's at the
last turn; turn time <= 0.5x swarm's, median of the last 20 turns; checkpoint bytes
<= 1/10 of swarm's at the last turn; our time growth, median of the last 20 turns /
first 20, <= 2; our overhead at the last turn <= 20 ms; ours <= 0.8x swarm's time per
turn at turn 10 (turns 1-10) and at every later report turn.

`--checkpointer postgres` needs HANDOVER_POSTGRES_URL (`.ci/postgres.sh` starts a
throwaway cluster, with fsync and synchronous_commit off); each system and run
gets its own database. A run's files and databases are removed when it ends,
unless --workdir is given. The peers' checkpoints grow with the square of the
turns (the whole history in every checkpoint): at 1,000 turns about 12 GB per
run for swarm or swarm-trim, 31 GB for supervisor, 37 GB for supervisor-trim
(SQLite); the script estimates the need (`BYTES_PER_TURN_SQUARED`) and refuses
to start above 80% of the free disk unless --skip-disk-check.

Prints the tables at turns 10, 50, 100, 200, 500, 1000 and the last, the totals over
all turns (tokens, input cost, modelled time), a per-kind table (mixed), a storage
breakdown of the last run, the framework-cost goals, then the headline: the block
table (modelled s, input tokens and USD a turn: means; framework ms: median) and its
goals; writes a PNG (receiver tokens, time per turn on a log axis, modelled turn time,
checkpoint MB, RSS growth, cumulative input cost) and, with --json, every per-turn
figure of every run (each call's tokens too: `--replot` redraws it with this
invocation's latency model and price). Compare ratios from one invocation only:
absolute times move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import peers_workloads as pw  # noqa: E402

from specialist_handover.state.defaults import MAX_CONTEXT_TOKENS  # noqa: E402

REPORT_TURNS = (10, 50, 100, 200, 500, 1000)
WINDOW = 10  # turns per median at a report turn (and the plot's rolling median)
EDGE = 20  # turns of the growth ratio's first / last medians
POSTGRES_URL_ENV = "HANDOVER_POSTGRES_URL"

# the latency model: a model call costs LATENCY_BASE + LATENCY_PER_TOKEN x its input tokens, s
LATENCY_BASE = 0.3
LATENCY_PER_TOKEN = 0.00005  # 0.05 ms per input token
PRICE_PER_MTOK = 2.50  # USD per million input tokens (a typical model's list price)
# blocks of turns whose means the user figures report (those within --turns, and the last 10)
LATENCY_BLOCKS = ((1, 10), (51, 60), (291, 300), (991, 1000))
EARLY_LIMIT = 1.0  # ours / swarm, modelled turn time, turns 1-10
LATE_FROM = 51  # blocks starting here or later: ...
LATE_LIMIT = 0.5  # ... ours / swarm <= this
TOKENS_LIMIT = 1.0  # ours / swarm-trim, input tokens of every call over the run

Series = dict[str, list[Any]]  # one system's run: key -> per-turn values


# --- running: one process per system and run, turns alternating ---------------------------------


class Child:
    """One system's run in its own process; the parent sends it one turn at a time."""

    def __init__(self, ctx: Any, spec: dict[str, Any]) -> None:
        self.name = spec["system"]
        self.conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(
            target=pw.serve, args=(child_conn, spec), name=f"bench-{self.name}", daemon=True
        )
        self.process.start()
        child_conn.close()
        self.rows: list[dict[str, Any]] = []

    def receive(self) -> Any:
        try:
            kind, payload = self.conn.recv()
        except EOFError:
            raise SystemExit(
                f"{self.name}: its process ended (exit code {self.process.exitcode})"
            ) from None
        if kind == "error":
            raise SystemExit(payload)
        return payload

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()  # only this run's own child, by its handle
        self.process.join(timeout=10)


def series_of(rows: list[dict[str, Any]]) -> Series:
    out: Series = defaultdict(list)
    for row in rows:
        for key, value in row.items():
            out[key].append(value)
    return dict(out)


def pg_admin(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def pg_dsn(url: str, database: str) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, dbname=database)


# Checkpoint bytes grow with the square of the turns for the peers (each checkpoint holds the
# whole history): about this many bytes x turns^2 per system and run (measured at 60 turns,
# handovers workload, SQLite; ours less once its state window is full).
BYTES_PER_TURN_SQUARED = {
    "ours": 1_500,
    "swarm": 12_500,
    "supervisor": 31_000,
    "swarm-trim": 12_500,
    "supervisor-trim": 37_000,
}


def disk_estimate(options: argparse.Namespace) -> int:
    """Bytes the run needs at once: one run's files (earlier runs' are removed, unless kept)."""
    per_run = sum(BYTES_PER_TURN_SQUARED[s] for s in options.systems) * options.turns**2
    return per_run * (options.runs if options.workdir is not None else 1)


def run_all(options: argparse.Namespace, workdir: Path) -> list[dict[str, dict[str, Any]]]:
    """Every run of every system; returns per run: system -> {series, finish}."""
    ctx = multiprocessing.get_context("spawn")
    url = os.environ.get(POSTGRES_URL_ENV, "")
    runs: list[dict[str, dict[str, Any]]] = []
    started = time.perf_counter()
    for run in range(1, options.runs + 1):
        databases: list[str] = []
        children: list[Child] = []
        project = project_label()  # the code this run's processes import
        if run > 1 and project != runs[-1][options.systems[0]]["finish"]["project"]:
            print(f"  run {run}: the project changed: {project}", flush=True)
        try:
            for name in options.systems:
                slug = f"{name}-run{run}"
                spec: dict[str, Any] = {
                    "system": name,
                    "workload": options.workload,
                    "run": run,
                    "checkpointer": options.checkpointer,
                    "trim_tokens": options.trim_tokens,
                    "path": str(workdir / f"{slug}.sqlite"),
                    "project_root": str(workdir / f"project-{slug}"),
                }
                Path(spec["project_root"]).mkdir()
                if options.checkpointer == "postgres":
                    database = f"bench_vs_peers_{os.getpid()}_{slug.replace('-', '_')}"
                    pg_admin(url, f'CREATE DATABASE "{database}"')
                    databases.append(database)
                    spec["dsn"] = pg_dsn(url, database)
                children.append(Child(ctx, spec))
            for child in children:
                child.receive()  # ready: built, vocabulary loaded
            for n in range(1, options.turns + 1):
                for child in children:
                    child.conn.send(("turn", n))
                    child.rows.append(child.receive())
                if n % 50 == 0 or n == options.turns:
                    print(
                        f"  run {run}, turn {n}: {time.perf_counter() - started:,.1f} s",
                        flush=True,
                    )
            result: dict[str, dict[str, Any]] = {}
            for child in children:
                child.conn.send(("finish",))
                finish = {**child.receive(), "project": project}
                result[child.name] = {"series": series_of(child.rows), "finish": finish}
            runs.append(result)
        finally:
            for child in children:
                child.stop()
            if options.workdir is None:  # the next run must not need this run's disk space too
                for child in children:
                    for path in workdir.glob(f"*{child.name}-run{run}*"):
                        if path.is_dir():
                            shutil.rmtree(path, ignore_errors=True)
                        else:
                            path.unlink(missing_ok=True)
            if databases and options.workdir is None:
                for database in databases:
                    pg_admin(url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            elif databases:
                print(f"  PostgreSQL databases kept: {', '.join(databases)}")
    return runs


# --- figures -------------------------------------------------------------------------------------


def median_ending(values: list[float], turn: int, width: int = WINDOW) -> float:
    return statistics.median(values[max(0, turn - width) : turn])


def rolling_median(values: list[float], width: int = WINDOW) -> list[float]:
    return [median_ending(values, i + 1, width) for i in range(len(values))]


def rolling_mean(values: list[float], width: int = WINDOW) -> list[float]:
    return [statistics.fmean(values[max(0, i + 1 - width) : i + 1]) for i in range(len(values))]


def cumulative(values: list[float]) -> list[float]:
    out, total = [], 0.0
    for v in values:
        total += v
        out.append(total)
    return out


def at_turn(series: Series, key: str, turn: int, baseline: float = 0.0) -> float:
    """A figure at turn N: ms the median of the 10 turns ending there, modelled_s their mean,
    else the value at N."""
    if key == "ms":
        return median_ending(series["ms"], turn)
    if key == "modelled_s":
        return block_mean(series["modelled_s"], max(1, turn - WINDOW + 1), turn)
    value = series[key][turn - 1]
    return float("nan") if value is None else float(value) - baseline


def ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(b) else float("nan")


def min_med(values: list[float]) -> tuple[float, float]:
    clean = [v for v in values if not math.isnan(v)]
    if not clean:
        return float("nan"), float("nan")
    return min(clean), statistics.median(clean)


def cell(values: list[float], fmt: str) -> str:
    low, mid = min_med(values)
    if math.isnan(mid):
        return "n/a"
    a, b = fmt.format(low), fmt.format(mid)
    return a if a == b else f"{a} / {b}"


# --- what a user feels: the latency model, the cost, block means (pure functions) -----------------


def call_seconds(tokens: float, base: float, per_token: float) -> float:
    """One model call under the latency model: base + per_token x its input tokens."""
    return base + per_token * tokens


def model_seconds(calls: list[list[int]], base: float, per_token: float) -> float:
    """A turn's model time from its calls' [input tokens, stage, lane] rows (peers_workloads'
    `call_rows`): stages (root steps) run one after another; within a stage the lanes (root
    tasks, e.g. our consults' Send tasks) run in parallel, so a stage costs its slowest lane,
    and a lane its calls summed."""
    stages: dict[int, dict[int, float]] = {}
    for tokens, stage, lane in calls:
        lanes = stages.setdefault(stage, {})
        lanes[lane] = lanes.get(lane, 0.0) + call_seconds(tokens, base, per_token)
    return sum(max(lanes.values()) for lanes in stages.values())


def modelled_seconds(
    framework_ms: float, calls: list[list[int]], base: float, per_token: float
) -> float:
    """A turn's modelled time: the measured framework time of the turn (its `invoke` with
    zero-latency models) plus its model calls' time under the latency model."""
    return framework_ms / 1000 + model_seconds(calls, base, per_token)


def input_cost(tokens: float, price_per_mtok: float) -> float:
    """USD for this many input tokens at price_per_mtok USD per million."""
    return tokens * price_per_mtok / 1e6


def block_mean(values: list[float], first: int, last: int) -> float:
    """The mean of turns first..last (1-based, inclusive)."""
    chunk = values[first - 1 : last]
    if not chunk or first < 1:
        return float("nan")
    return statistics.fmean(chunk)


def latency_blocks(turns: int) -> list[tuple[int, int]]:
    """The blocks of 10 turns the user figures report: LATENCY_BLOCKS within the run, and
    the last 10 turns when they are not one of them."""
    blocks = [b for b in LATENCY_BLOCKS if b[1] <= turns]
    last = (max(1, turns - WINDOW + 1), turns)
    if turns >= 1 and last not in blocks:
        blocks.append(last)
    return blocks


def block_limit(first: int) -> float | None:
    """The goal on ours / swarm's modelled turn time for the block starting at turn `first`:
    EARLY_LIMIT for turns 1-10, LATE_LIMIT from LATE_FROM on, none between."""
    if first == 1:
        return EARLY_LIMIT
    if first >= LATE_FROM:
        return LATE_LIMIT
    return None


def block_span(first: int, last: int) -> str:
    return f"turns {first:,}-{last:,}"


def add_user_figures(
    runs: list[dict[str, dict[str, Any]]], base: float, per_token: float, price: float
) -> None:
    """Per turn: `modelled_s` (framework time + the latency model) and `cost_usd` (input tokens
    of every call at `price` per million), added to every run's series."""
    for run in runs:
        for entry in run.values():
            series = entry["series"]
            series["modelled_s"] = [
                modelled_seconds(ms, calls, base, per_token)
                for ms, calls in zip(series["ms"], series["calls"], strict=True)
            ]
            series["cost_usd"] = [input_cost(t, price) for t in series["input_tokens"]]


def parallel_calls(series: Series) -> int:
    """Model calls that ran beside another call of their stage (0 on a workload without
    consults: every call its own stage, or one lane)."""
    count = 0
    for calls in series["calls"]:
        lanes: dict[int, set[int]] = defaultdict(set)
        for _, stage, lane in calls:
            lanes[stage].add(lane)
        count += sum(1 for _, stage, _ in calls if len(lanes[stage]) > 1)
    return count


METRICS = (
    (
        "receiver tokens with tool schemas (the answering call's request)",
        "receiver_tokens_with_schemas",
        "{:,.0f}",
    ),
    ("receiver tokens, messages only", "receiver_tokens", "{:,.0f}"),
    (
        "input tokens of every model call of the turn (messages + schemas)",
        "input_tokens",
        "{:,.0f}",
    ),
    (
        f"turn time, median ms of the {WINDOW} turns ending there "
        "(framework only: zero-latency models)",
        "ms",
        "{:,.1f}",
    ),
    (
        f"modelled turn time, s: framework + latency model, mean of the {WINDOW} turns ending there",
        "modelled_s",
        "{:,.3f}",
    ),
    ("checkpoint bytes", "checkpoint_bytes", "{:,.0f}"),
    (
        "for information: stored blob bytes (checkpoints + writes, WAL aside)",
        "blob_bytes",
        "{:,.0f}",
    ),
    ("RSS growth since before turn 1, MB (own process)", "rss_mb", "{:,.1f}"),
)


def figure_runs(
    runs: list[dict[str, dict[str, Any]]], system: str, key: str, turn: int
) -> list[float]:
    out = []
    for run in runs:
        entry = run[system]
        baseline = entry["finish"]["baseline_rss_mb"] if key == "rss_mb" else 0.0
        out.append(at_turn(entry["series"], key, turn, baseline))
    return out


def print_tables(
    runs: list[dict[str, dict[str, Any]]],
    systems: list[str],
    report_turns: list[int],
    postgres: bool,
) -> None:
    others = [s for s in systems if s != "ours"]
    for title, key, fmt in METRICS:
        if key == "blob_bytes" and postgres:
            continue  # per turn on SQLite only; PostgreSQL's is in the storage breakdown
        if key == "checkpoint_bytes":
            title += (
                " (pg_total_relation_size of the checkpoint tables)"
                if postgres
                else " (SQLite file + -wal/-journal)"
            )
        print(f"\n{title}")
        head = " | ".join(systems)
        ratios = " | ".join(f"ours/{s}" for s in others) if "ours" in systems else ""
        print(f"| turn | {head} |" + (f" {ratios} |" if ratios else ""))
        print("| ---: |" + " ---: |" * (len(systems) + (len(others) if ratios else 0)))
        for t in report_turns:
            values = {s: figure_runs(runs, s, key, t) for s in systems}
            row = f"| {t} | " + " | ".join(cell(values[s], fmt) for s in systems) + " |"
            if ratios:
                ours_mid = min_med(values["ours"])[1]
                row += "".join(f" {ratio(ours_mid, min_med(values[s])[1]):.3f} |" for s in others)
            print(row)


def print_kinds(runs: list[dict[str, dict[str, Any]]], systems: list[str]) -> None:
    """Mixed workload: per kind of turn, median ms and receiver tokens (with schemas), all runs."""
    print(
        "\nby kind of turn (all turns and runs): median framework ms; median modelled s; "
        "median receiver tokens with schemas; median input tokens of every call; model calls"
    )
    print("| kind | turns | " + " | ".join(systems) + " |")
    print("| --- | ---: |" + " --- |" * len(systems))
    first = runs[0][systems[0]]["series"]
    for kind in pw.KINDS:
        count = first["kind"].count(kind)
        if not count:
            continue
        cells = []
        for s in systems:
            ms, modelled, tokens, inputs, calls = [], [], [], [], set()
            for run in runs:
                series = run[s]["series"]
                for i, k in enumerate(series["kind"]):
                    if k == kind:
                        ms.append(series["ms"][i])
                        modelled.append(series["modelled_s"][i])
                        tokens.append(series["receiver_tokens_with_schemas"][i])
                        inputs.append(series["input_tokens"][i])
                        calls.add(series["model_calls"][i])
            cells.append(
                f"{statistics.median(ms):,.1f} ms; {statistics.median(modelled):,.2f} s; "
                f"{statistics.median(tokens):,.0f} tok; {statistics.median(inputs):,.0f} in; "
                f"{'/'.join(str(c) for c in sorted(calls))} calls"
            )
        print(f"| {kind} | {count} | " + " | ".join(cells) + " |")


def latency_line(options: argparse.Namespace) -> str:
    return (
        f"latency model: each model call {options.latency_base:g} s + "
        f"{options.latency_per_token * 1000:g} ms x its input tokens (messages + tool schemas), "
        "the calls of a turn one after another (calls in parallel LangGraph tasks, such as our "
        "consults' Send tasks: the slowest of them), plus the turn's measured framework time; "
        f"input tokens at {options.price_per_mtok:g} USD per million"
    )


USER_FIGURES = (
    ("modelled s a turn", "modelled_s", "{:,.3f}"),
    ("input tokens a turn", "input_tokens", "{:,.0f}"),
    ("input USD a turn", "cost_usd", "{:,.4f}"),
    ("framework ms a turn (median)", "ms", "{:,.1f}"),
)


def user_figure(series: Series, key: str, first: int, last: int) -> float:
    """A block's figure: the mean of its turns (framework ms: their median)."""
    if key == "ms":
        return statistics.median(series["ms"][first - 1 : last])
    return block_mean(series[key], first, last)


def print_user_figures(
    runs: list[dict[str, dict[str, Any]]],
    systems: list[str],
    blocks: list[tuple[int, int]],
    options: argparse.Namespace,
) -> None:
    """The headline table: per block of turns, the mean modelled turn time, input tokens and
    their cost (and the framework ms, median), min / median over runs."""
    others = [s for s in systems if s != "ours"]
    print(f"\nwhat a user feels ({latency_line(options)})")
    print(
        "per block of turns: the mean over its turns (framework ms: the median), "
        "cells min / median over runs"
    )
    ratios = " | ".join(f"ours/{s}" for s in others) if "ours" in systems else ""
    print(f"| turns | figure | {' | '.join(systems)} |" + (f" {ratios} |" if ratios else ""))
    print("| --- | --- |" + " ---: |" * (len(systems) + (len(others) if ratios else 0)))
    for first, last in blocks:
        for label, key, fmt in USER_FIGURES:
            values = {
                s: [user_figure(r[s]["series"], key, first, last) for r in runs] for s in systems
            }
            row = f"| {first:,}-{last:,} | {label} | " + " | ".join(
                cell(values[s], fmt) for s in systems
            )
            row += " |"
            if ratios:
                ours_mid = min_med(values["ours"])[1]
                row += "".join(f" {ratio(ours_mid, min_med(values[s])[1]):.3f} |" for s in others)
            print(row)


# --- goals ---------------------------------------------------------------------------------------


def goal_rows(
    runs: list[dict[str, dict[str, Any]]], systems: list[str], report_turns: list[int]
) -> list[dict[str, Any]]:
    """The framework cost at zero latency, each figure per run, verdict on the median over
    runs: one guard (our overhead at the last turn within 1.3x that at turn 10; role "guard")
    and the former goals, kept for information (role "former goal")."""
    if "ours" not in systems:
        return []
    last = len(runs[0]["ours"]["series"]["turn"])
    edge = min(EDGE, last)
    peers = [s for s in systems if s != "ours"]

    def tail(series: Series) -> float:
        return statistics.median(series["ms"][-edge:])

    def last_of(key: str):  # type: ignore[no-untyped-def]
        return lambda series: float(series[key][-1])

    def compare(pick, peer: str) -> list[float]:  # type: ignore[no-untyped-def]
        return [ratio(pick(r["ours"]["series"]), pick(r[peer]["series"])) for r in runs]

    def ms_at(t: int):  # type: ignore[no-untyped-def]
        return lambda series: median_ending(series["ms"], t)

    rows: list[dict[str, Any]] = []

    def against(goal: str, limit: float, pick) -> None:  # type: ignore[no-untyped-def]
        if "swarm" not in systems:
            return
        rows.append(
            {
                "goal": goal,
                "limit": limit,
                "unit": "ratio",
                "per_run": compare(pick, "swarm"),
                "others": {p: min_med(compare(pick, p))[1] for p in peers if p != "swarm"},
            }
        )

    against(
        f"receiver tokens with schemas <= 1/9 of swarm's (at turn {last})",
        1 / 9,
        last_of("receiver_tokens_with_schemas"),
    )
    if rows:
        rows[-1]["note"] = "messages only: " + ", ".join(
            f"vs {p} {min_med(compare(last_of('receiver_tokens'), p))[1]:.3f}" for p in peers
        )
    against(f"turn time <= 0.5x swarm's (median of the last {edge} turns)", 0.5, tail)
    against(
        f"checkpoint bytes <= 1/10 of swarm's (at turn {last})",
        0.1,
        last_of("checkpoint_bytes"),
    )
    ours_runs = [r["ours"]["series"] for r in runs]
    rows.append(
        {
            "goal": f"our time growth, last {edge} turns / first {edge}, <= 2",
            "limit": 2.0,
            "unit": "ratio",
            "per_run": [ratio(tail(s), statistics.median(s["ms"][:edge])) for s in ours_runs],
            "others": {},
        }
    )
    rows.append(
        {
            "goal": f"our overhead per turn at turn {last} <= 1.3x that at turn {min(10, last)}",
            "limit": 1.3,
            "unit": "ratio",
            "per_run": [
                ratio(median_ending(s["ms"], last), median_ending(s["ms"], 10)) for s in ours_runs
            ],
            "others": {},
            "role": "guard",
        }
    )
    rows.append(
        {
            "goal": f"our overhead per turn at turn {last} <= 20 ms",
            "limit": 20.0,
            "unit": "ms",
            "per_run": [median_ending(s["ms"], last) for s in ours_runs],
            "others": {},
        }
    )
    for t in report_turns:
        span = "turns 1-10" if t == 10 else f"turns {max(1, t - WINDOW + 1)}-{t}"
        against(f"time per turn <= 0.8x swarm's at turn {t} ({span})", 0.8, ms_at(t))
    for row in rows:
        row["min"], row["median"] = min_med(row["per_run"])
        row.setdefault("role", "former goal")
    return rows


def user_goal_rows(
    runs: list[dict[str, dict[str, Any]]], systems: list[str], blocks: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """The headline goals, on what a user feels (the series need `add_user_figures`): our
    modelled turn time, mean of a block, <= EARLY_LIMIT x swarm's at turns 1-10 and
    <= LATE_LIMIT x from LATE_FROM on; input tokens of every call over the run <= swarm-trim's.
    Each per run; verdict on the median over runs."""
    if "ours" not in systems:
        return []
    peers = [s for s in systems if s != "ours"]
    turns = len(runs[0]["ours"]["series"]["turn"])

    def compare(pick, peer: str) -> list[float]:  # type: ignore[no-untyped-def]
        return [ratio(pick(r["ours"]["series"]), pick(r[peer]["series"])) for r in runs]

    def row(goal: str, limit: float, pick, peer: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        present = peer in systems
        return {
            "goal": goal,
            "limit": limit,
            "unit": "ratio",
            "per_run": compare(pick, peer) if present else [float("nan")],
            "others": {p: min_med(compare(pick, p))[1] for p in peers if p != peer},
            "note": "" if present else f"needs {peer} in --systems",
            "role": "goal",
        }

    rows = []
    for first, last in blocks:
        limit = block_limit(first)
        if limit is None:
            continue

        def block(series: Series, first: int = first, last: int = last) -> float:
            return block_mean(series["modelled_s"], first, last)

        rows.append(
            row(
                f"modelled turn time <= {limit:.1f}x swarm's ({block_span(first, last)}, mean)",
                limit,
                block,
                "swarm",
            )
        )

    def total(series: Series) -> float:
        return float(sum(series["input_tokens"]))

    rows.append(
        row(
            f"input tokens of every call over the {turns:,} turns <= swarm-trim's",
            TOKENS_LIMIT,
            total,
            "swarm-trim",
        )
    )
    for r in rows:
        r["min"], r["median"] = min_med(r["per_run"])
    return rows


def verdict(row: dict[str, Any]) -> str:
    """Met or missed, and by how much: the row's median over runs against its limit."""
    measured, limit = row["median"], row["limit"]
    if math.isnan(measured):
        return "n/a"
    if row["unit"] == "ms":
        if measured <= limit:
            return f"met ({limit - measured:,.1f} ms to spare)"
        return f"MISSED by {measured - limit:,.1f} ms"
    if measured <= limit:
        return f"met ({1 - measured / limit:.0%} under the limit)"
    return f"MISSED by {measured / limit:.2f}x the limit"


def show(fmt: str, value: float) -> str:
    return "n/a" if math.isnan(value) else fmt.format(value)


def print_goals(
    rows: list[dict[str, Any]], runs: list[dict[str, dict[str, Any]]], title: str, blobs: bool
) -> None:
    print(f"\n{title}")
    if not rows:
        print("(no goals: they compare ours with the peers)")
        return
    print("| goal | role | median over runs | min | result | same figure vs others (median) |")
    print("| --- | --- | ---: | ---: | --- | --- |")
    for g in rows:
        fmt = "{:,.1f}" if g["unit"] == "ms" else "{:.3f}"
        others = ", ".join(f"{p} {v:.3f}" for p, v in g["others"].items())
        if g.get("note"):
            others = f"{others}; {g['note']}" if others else g["note"]
        print(
            f"| {g['goal']} | {g['role']} | {show(fmt, g['median'])} | {show(fmt, g['min'])} | "
            f"{verdict(g)} | {others} |"
        )
    if blobs and all("swarm" in r and "ours" in r for r in runs):
        blobs = [
            ratio(r["ours"]["finish"]["final_blob_bytes"], r["swarm"]["finish"]["final_blob_bytes"])
            for r in runs
        ]
        print(f"(the bytes goal on stored blob bytes instead, WAL aside: {min_med(blobs)[1]:.3f})")


# --- output --------------------------------------------------------------------------------------


def project_label() -> str:
    """Where specialist_handover was imported from, and its git state (read-only commands)."""
    import subprocess

    import specialist_handover

    where = Path(specialist_handover.__file__).resolve().parent
    try:
        git = ["git", "--no-optional-locks", "-C", str(where)]
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        state = f"HEAD {head}" + (f" + {len(changed)} modified file(s)" if changed else ", clean")
    except (OSError, subprocess.CalledProcessError):
        state = "not a git checkout"
    return f"{where} ({state})"


def per_turn_median(
    runs: list[dict[str, dict[str, Any]]], system: str, key: str, baseline: bool = False
) -> list[float]:
    """Per turn, the median over runs (RSS as growth since before turn 1)."""
    columns = []
    for run in runs:
        values = run[system]["series"][key]
        base = run[system]["finish"]["baseline_rss_mb"] if baseline else 0.0
        columns.append([float("nan") if v is None else v - base for v in values])
    return [statistics.median(col) for col in zip(*columns, strict=True)]


def write_plot(
    runs: list[dict[str, dict[str, Any]]], systems: list[str], path: Path, title: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, axes = plt.subplots(2, 3, figsize=(21, 9.5))
    (tok_ax, ms_ax, user_ax), (bytes_ax, rss_ax, cost_ax) = axes
    user = all("modelled_s" in r[s]["series"] for r in runs for s in systems)
    for name in systems:
        turns = runs[0][name]["series"]["turn"]
        series = runs[0][name]["series"]
        (line,) = tok_ax.plot(
            turns, series["receiver_tokens_with_schemas"], label=name, linewidth=1.4
        )
        tok_ax.plot(
            turns, series["receiver_tokens"], color=line.get_color(), linestyle=":", linewidth=1
        )
        ms_ax.plot(
            turns, rolling_median(per_turn_median(runs, name, "ms")), label=name, linewidth=1.4
        )
        bytes_ax.plot(
            turns,
            [b / 1e6 for b in per_turn_median(runs, name, "checkpoint_bytes")],
            label=name,
            linewidth=1.4,
        )
        rss_ax.plot(
            turns, per_turn_median(runs, name, "rss_mb", baseline=True), label=name, linewidth=1.4
        )
        if user:
            user_ax.plot(
                turns,
                rolling_mean(per_turn_median(runs, name, "modelled_s")),
                label=name,
                linewidth=1.4,
            )
            cost_ax.plot(turns, cumulative(series["cost_usd"]), label=name, linewidth=1.4)
    if "ours" in systems and "swarm" in systems:  # each goal, drawn where it applies
        turns = runs[0]["swarm"]["series"]["turn"]
        swarm_ms = rolling_median(per_turn_median(runs, "swarm", "ms"))
        ours_10 = statistics.median(
            median_ending(r["ours"]["series"]["ms"], min(10, len(turns))) for r in runs
        )
        goal = {"color": "grey", "linewidth": 1, "linestyle": "--"}
        ms_ax.plot(
            turns,
            [0.8 * v for v in swarm_ms],
            label="goal: <= 0.8x swarm (every report turn)",
            **goal,
        )
        ms_ax.axhline(
            20, color="red", linewidth=1, linestyle="--", label="goal at the last turn: <= 20 ms"
        )
        ms_ax.axhline(
            1.3 * ours_10, color="green", linewidth=1, linestyle="--",
            label=f"goal at the last turn: <= 1.3x ours at turn 10 ({1.3 * ours_10:.1f} ms)",
        )  # fmt: skip
        swarm_tokens = runs[0]["swarm"]["series"]["receiver_tokens_with_schemas"]
        tok_ax.plot(
            turns,
            [v / 9 for v in swarm_tokens],
            label="goal at the last turn: <= 1/9 of swarm",
            **goal,
        )
        if user:
            swarm_user = rolling_mean(per_turn_median(runs, "swarm", "modelled_s"))
            nan = float("nan")
            user_ax.plot(
                turns,
                [
                    v * limit if (limit := block_limit(max(1, t - WINDOW + 1))) else nan
                    for t, v in zip(turns, swarm_user, strict=True)
                ],
                label=f"goal: <= {EARLY_LIMIT:g}x swarm (turns 1-10), "
                f"<= {LATE_LIMIT:g}x from turn {LATE_FROM}",
                **goal,
            )
        swarm_bytes = per_turn_median(runs, "swarm", "checkpoint_bytes")
        bytes_ax.plot(
            turns,
            [b / 1e7 for b in swarm_bytes],
            label="goal at the last turn: <= 1/10 of swarm",
            **goal,
        )
    tok_ax.set_title("receiver tokens (solid: with tool schemas; dotted: messages only)")
    ms_ax.set_title(f"time per turn, ms (rolling median of {WINDOW}; median over runs)")
    ms_ax.set_yscale("log")
    ms_ax.yaxis.set_major_formatter(ScalarFormatter())
    ms_ax.yaxis.set_minor_formatter(ScalarFormatter())
    bytes_ax.set_title("checkpoint MB")
    if user:
        user_ax.set_title(
            f"modelled turn time, s (framework + latency model; rolling mean of {WINDOW})"
        )
        cost_ax.set_title("input cost over the run, USD (cumulative)")
    else:
        for ax in (user_ax, cost_ax):
            ax.set_title("(no per-call tokens in this JSON: no modelled figures)")
    rss_ax.set_title("RSS growth since before turn 1, MB (own process)")
    for ax in axes.flat:
        ax.set_xlabel("turn")
        ax.grid(alpha=0.3, which="both")
    for ax in axes.flat:
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- main ----------------------------------------------------------------------------------------


def parse_systems(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in pw.SYSTEMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown system(s) {unknown}; choose from {', '.join(pw.SYSTEMS)}"
        )
    return [s for s in pw.SYSTEMS if s in names]  # a fixed order: ours first


def start(options: argparse.Namespace, workdir: Path) -> tuple[list[Any], str, float] | None:
    """Say what runs, check the disk, run; (runs, versions, seconds), or None when refused."""
    print(
        f"bench_vs_peers: workload {options.workload}, {options.turns} turns x {options.runs} "
        f"run(s), systems {', '.join(options.systems)}, {options.checkpointer}, trim budget "
        f"{options.trim_tokens:,} tokens; files in {workdir}"
    )
    need, free = disk_estimate(options), shutil.disk_usage(workdir).free
    if need > 1e9:
        print(
            f"disk: about {need / 1e9:,.0f} GB of checkpoints needed at once, {free / 1e9:,.0f} GB "
            f"free at {workdir}" + ("" if options.checkpointer == "sqlite" else " (SQLite figures)")
        )
    if need > 0.8 * free and not options.skip_disk_check:
        print(
            "bench_vs_peers: not enough free disk for this run; run fewer systems at once "
            "(e.g. --systems ours,swarm,swarm-trim, then ours,supervisor, then "
            "ours,supervisor-trim), fewer turns, or pass --skip-disk-check",
            file=sys.stderr,
        )
        return None
    print(latency_line(options))
    print(f"project: {project_label()}")
    versions = ", ".join(
        f"{p} {version(p)}"
        for p in ("langgraph", "langgraph-swarm", "langgraph-supervisor", "langchain")
    )
    print(f"versions: {versions}; python {platform.python_version()}")
    print(f"script: {pw.fingerprint(options.workload, options.turns)} (digest of the turns' texts)")
    started = time.perf_counter()
    runs = run_all(options, workdir)
    return runs, versions, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200, help="user turns (default 200)")
    parser.add_argument(
        "--runs", type=int, default=1, help="runs of every system, interleaved (default 1)"
    )
    parser.add_argument(
        "--systems",
        type=parse_systems,
        default=list(pw.SYSTEMS),
        help=f"comma-separated, from {','.join(pw.SYSTEMS)} (default all)",
    )
    parser.add_argument(
        "--workload", choices=pw.WORKLOADS, default="handovers", help="default handovers"
    )
    parser.add_argument(
        "--trim-tokens",
        type=int,
        default=MAX_CONTEXT_TOKENS,
        help=f"the -trim systems' message budget (default {MAX_CONTEXT_TOKENS:,}, our max_context_tokens)",
    )
    parser.add_argument("--checkpointer", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--plot",
        type=Path,
        default=HERE / "vs_peers.png",
        help="PNG to write (default bench/vs_peers.png)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="an empty folder for the files")
    parser.add_argument("--json", type=Path, default=None, help="write every per-turn figure here")
    parser.add_argument(
        "--replot",
        type=Path,
        default=None,
        help="only draw --plot again, from the --json file of an earlier invocation",
    )
    parser.add_argument(
        "--skip-disk-check",
        action="store_true",
        help="run even when the estimated checkpoint bytes exceed 80%% of the free disk",
    )
    parser.add_argument(
        "--latency-base",
        type=float,
        default=LATENCY_BASE,
        help=f"the latency model: seconds of every model call (default {LATENCY_BASE:g}; "
        "0 with --latency-per-token 0: the zero-latency figures)",
    )
    parser.add_argument(
        "--latency-per-token",
        type=float,
        default=LATENCY_PER_TOKEN,
        help=f"the latency model: seconds per input token of a call (default {LATENCY_PER_TOKEN:g})",
    )
    parser.add_argument(
        "--price-per-mtok",
        type=float,
        default=PRICE_PER_MTOK,
        help=f"USD per million input tokens, for the cost figures (default {PRICE_PER_MTOK:.2f})",
    )
    options = parser.parse_args(argv)
    if min(options.latency_base, options.latency_per_token, options.price_per_mtok) < 0:
        parser.error("--latency-base, --latency-per-token and --price-per-mtok must be >= 0")
    if options.replot is not None:
        saved = json.loads(options.replot.read_text())
        if all("calls" in e["series"] for r in saved["per_run"] for e in r.values()):
            add_user_figures(  # this invocation's latency model and price
                saved["per_run"],
                options.latency_base,
                options.latency_per_token,
                options.price_per_mtok,
            )
        write_plot(
            saved["per_run"],
            saved["systems"],
            options.plot,
            f"specialist_handover vs peers: {saved['workload']} workload, "
            f"{saved['checkpointer']}, {saved['runs']} run(s)",
        )
        print(f"plot: {options.plot}")
        return 0
    if options.turns < 1 or options.runs < 1 or options.trim_tokens < 100:
        parser.error("--turns and --runs must be at least 1, --trim-tokens at least 100")
    if options.checkpointer == "postgres" and not os.environ.get(POSTGRES_URL_ENV):
        parser.error(
            f"--checkpointer postgres needs {POSTGRES_URL_ENV} "
            "(bash -c 'source .ci/postgres.sh && .venv/bin/python bench/bench_vs_peers.py ...')"
        )
    systems: list[str] = options.systems
    if any(s != "ours" for s in systems):
        pw.require_peers()

    temporary = options.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="bench-vs-peers-")) if temporary else options.workdir
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        print(f"bench_vs_peers: {workdir} is not empty (an earlier run?)", file=sys.stderr)
        return 2

    try:
        outcome = start(options, workdir)
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    if outcome is None:
        return 2
    runs, versions, total_s = outcome
    add_user_figures(runs, options.latency_base, options.latency_per_token, options.price_per_mtok)

    calls = {s: sorted(set(runs[0][s]["series"]["model_calls"])) for s in systems}
    print(f"model calls per turn: {calls}")
    if "ours" in systems:
        kept, scripted = runs[0]["ours"]["finish"]["trail_kept"]
        print(
            f"our trail checked: the state's {kept} record(s) are the script's newest "
            f"({scripted} in all)"
        )
    if "ours" in systems and options.workload == "mixed":
        print(f"our stage-2 summarizer calls: {sum(runs[0]['ours']['series']['summarizer_calls'])}")
    report_turns = sorted({t for t in REPORT_TURNS if t <= options.turns} | {options.turns})
    print("\n(cells: min / median over runs where they differ)")
    print_tables(runs, systems, report_turns, options.checkpointer == "postgres")
    marks = sorted({min(200, options.turns), options.turns})
    print(
        "\nmemory (own process per system), MB, median over runs: RSS before turn 1 / "
        + " / ".join(f"at turn {t}" for t in marks)
        + " / peak (ru_maxrss)"
    )
    for s in systems:
        figures = [
            min_med([r[s]["finish"]["baseline_rss_mb"] for r in runs])[1],
            *(min_med([r[s]["series"]["rss_mb"][t - 1] for r in runs])[1] for t in marks),
            # ru_maxrss is updated lazily: never below an RSS the process reported
            min_med([max(r[s]["finish"]["peak_rss_mb"], *r[s]["series"]["rss_mb"]) for r in runs])[
                1
            ],
        ]
        print(f"  {s}: " + " / ".join(f"{v:,.1f}" for v in figures))
    print(
        "\ntotals over all turns (min / median over runs where they differ; tokens differ only "
        "when the code changed between runs)"
    )
    for key, label, fmt in (
        ("receiver_tokens_with_schemas", "receiver tokens with schemas", "{:,.0f}"),
        ("input_tokens", "input tokens of every model call", "{:,.0f}"),
        ("cost_usd", f"input cost at {options.price_per_mtok:g} USD per million tokens", "{:,.2f} USD"),
        ("modelled_s", "modelled time", "{:,.1f} s"),
    ):  # fmt: skip
        sums = {s: [float(sum(r[s]["series"][key])) for r in runs] for s in systems}
        line = ", ".join(f"{s} {cell(v, fmt)}" for s, v in sums.items())
        if "ours" in systems and len(systems) > 1:
            mid = {s: min_med(v)[1] for s, v in sums.items()}
            line += "; ours/" + ", ours/".join(
                f"{s} {ratio(mid['ours'], v):.3f}" for s, v in mid.items() if s != "ours"
            )
        print(f"  {label}: {line}")
    for s in systems:
        tokens = [sum(r[s]["series"]["input_tokens"]) for r in runs]
        if len(set(tokens)) > 1:
            print(
                f"  NOTE: {s}'s tokens differ between runs ({', '.join(f'{t:,}' for t in tokens)}): "
                "its code changed during this invocation (the runs' projects: "
                + "; ".join(r[s]["finish"].get("project", "?") for r in runs)
                + "); compare runs, not their median"
            )
    parallel = {s: parallel_calls(runs[0][s]["series"]) for s in systems}
    print(
        "  model calls that ran beside another (parallel LangGraph tasks; the latency model "
        "takes the slowest): " + ", ".join(f"{s} {n:,}" for s, n in parallel.items())
    )
    if options.workload == "mixed":
        print_kinds(runs, systems)

    print("\nstorage breakdown (last run)")
    for s in systems:
        for line in runs[-1][s]["finish"]["breakdown"]:
            print(f"  {line}")

    goals = goal_rows(runs, systems, report_turns)
    print_goals(
        goals,
        runs,
        "framework cost at zero latency (the guard, and the former goals for information)",
        blobs=True,
    )
    blocks = latency_blocks(options.turns)
    print_user_figures(runs, systems, blocks, options)
    user_goals = user_goal_rows(runs, systems, blocks)
    print_goals(user_goals, runs, "goals: what a user feels (the headline)", blobs=False)

    write_plot(
        runs,
        systems,
        options.plot,
        f"specialist_handover vs peers: {options.workload} workload, {options.checkpointer}, "
        f"{options.runs} run(s)",
    )
    print(f"\nplot: {options.plot}")
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(
            json.dumps(
                {
                    "workload": options.workload,
                    "turns": options.turns,
                    "runs": options.runs,
                    "systems": systems,
                    "checkpointer": options.checkpointer,
                    "trim_tokens": options.trim_tokens,
                    "project": project_label(),
                    "versions": versions,
                    "seconds": total_s,
                    "latency": {
                        "base_s": options.latency_base,
                        "per_token_s": options.latency_per_token,
                        "price_per_mtok_usd": options.price_per_mtok,
                    },
                    "goals": user_goals,
                    "framework_goals": goals,
                    "per_run": runs,
                },
                indent=1,
            )
        )
        print(f"json: {options.json}")
    print(
        f"run: {total_s:,.1f} s for {options.turns} turns x {len(systems)} systems x {options.runs} run(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
