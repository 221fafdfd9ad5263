"""Benchmark: this project against langgraph-swarm and langgraph-supervisor, side by side.

    .venv/bin/pip install -q -e ".[bench]"       # the peers and matplotlib (bench extra only)
    .venv/bin/python bench/bench_vs_peers.py [--turns 200] [--plot bench/vs_peers.png]
                                             [--workdir DIR] [--json PATH]

One process plays the same scripted conversation on three systems, alternating
turns (turn 1 on ours, on swarm, on supervisor, then turn 2 ...), so noise on a
shared machine hits them alike. Each system has its own SQLite file
(`SqliteSaver`, WAL as it sets up), its own thread id, `durability="sync"`.

Every user turn (300-600 characters, from a fixed list of nine requests, with
the turn number) is a specialist request. The same deterministic, zero-latency
scripted chat model plays every role in the three systems; it decides from the
tools it is bound to and the last message:

- router (bound to a handoff tool that reaches a specialist: our
  `handover_to_specialist` without `return_to_orchestrator`, or a peer's
  `transfer_to_<specialist>`): on a user message it calls the handoff tool to
  the turn's specialist (frontend_designer, solution_architect or
  test_debug_engineer, by a fixed rotation); when control comes back within the
  turn (only langgraph-supervisor does that) it says one short fixed line;
- specialist (anything else): records the request it received and answers the
  turn's reply (300-450 characters; the same text on all three systems).

How each system runs a turn:

- ours: `build_graph(checkpointer=..., model=<scripted>)`, context
  `{"project_root": <tmp>, "model": "offline"}`; the orchestrator calls
  `handover_to_specialist` with `return_condition="after_reply"` (plus the
  topic, a one-sentence summary, two decisions, two artifacts and a reason,
  which only our tool takes); the specialist answers once; the next turn
  starts at the orchestrator. 2 model calls a turn.
- swarm: `create_swarm` of `langchain.agents.create_agent` agents: the
  orchestrator holds `create_handoff_tool`s to the three specialists, each
  specialist one back to the orchestrator (bound, never called). The next turn
  is routed back to the orchestrator through the swarm's own state: each input
  is `{"messages": [user], "active_agent": "orchestrator"}`, not by the
  specialist handing back (that would cost the swarm an extra router call in
  the same run). 2 model calls a turn.
- supervisor: `create_supervisor` (defaults: `output_mode="last_message"`,
  handoff messages on) over three `create_agent` workers without tools. The
  supervisor always gets control back after a worker, so it makes a second,
  short model call ("Done: ... answered above."). 3 model calls a turn.

Every agent gets the same system prompt on all three systems: its profile's
prompt from this project (ours adds its own lines: the orchestrator's trail and
summary, the specialist's return condition).

Measured per turn and system: the receiver tokens (the request the
specialist's model received, counted with `TokenCounter("o200k_base")
.count_messages`), the wall time of `invoke`, and the checkpoint bytes (the
SQLite file plus `-wal`/`-journal`, after the turn). Also the stored blob
bytes (checkpoint + metadata + writes values, from SQL; WAL-free) for
information. Prints the table at turns 10, 50, 100, 200 (median ms over the
10 turns ending there), the four goals against swarm, and a storage breakdown
of each file (which tables, namespaces and channels hold the bytes). Writes a
PNG (three panels against the turn) and, with --json, every per-turn figure.

Compare ratios from one run only: absolute times move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from specialist_handover import build_graph  # noqa: E402
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, resolve_profiles  # noqa: E402
from specialist_handover.state import TokenCounter  # noqa: E402

try:
    from langchain.agents import create_agent
    from langgraph_supervisor import create_supervisor
    from langgraph_swarm import create_handoff_tool, create_swarm
except ImportError as exc:  # pragma: no cover - the peers live in the bench extra only
    raise SystemExit(
        f'bench_vs_peers needs the bench extra: .venv/bin/pip install -e ".[bench]" ({exc})'
    ) from None

SYSTEMS = ("ours", "swarm", "supervisor")
ROUTER = "orchestrator"  # the router's agent name in all three systems
SPECIALISTS = ("frontend_designer", "solution_architect", "test_debug_engineer")
REPORT_TURNS = (10, 50, 100, 200)
WINDOW = 10  # turns per median at a report turn (and the plot's rolling median)
EDGE = 20  # turns of the growth ratio's first / last medians
OUR_TOOL = "handover_to_specialist"
OUR_RETURN = "return_to_orchestrator"

# --- the script: nine requests (three per specialist) and each specialist's replies -------------

REQUESTS: tuple[tuple[str, str, str], ...] = (
    (
        "frontend_designer",
        "landing-page-hero",
        "Turn {n}. Please redesign the landing page hero for the coffee subscription: the headline "
        "should say what the box contains in under eight words, the call to action must stay above "
        "the fold on a 375 px phone, and the product photo should not push the button down. Keep "
        "the espresso brown and cream palette we agreed on, and tell me which font weights to use "
        "for the headline and the sub-line.",
    ),
    (
        "solution_architect",
        "subscription-billing",
        "Turn {n}. How should we structure subscription billing? Customers pick a roast and a "
        "cadence (weekly, fortnightly, monthly), can pause for up to two months, and can swap the "
        "roast before the cut-off on Thursday night. We take payments with Stripe. I need the "
        "tables, which service owns the schedule, and what happens when a card fails on renewal "
        "day.",
    ),
    (
        "test_debug_engineer",
        "checkout-flaky-test",
        "Turn {n}. The checkout end-to-end test fails about one run in five on CI but never "
        "locally. The failure is a timeout waiting for the order confirmation banner after the "
        "Stripe test card is submitted. Logs show the webhook arriving roughly 800 ms after the "
        "redirect. What is the likely cause, how do I prove it, and how should the test wait "
        "instead of sleeping?",
    ),
    (
        "frontend_designer",
        "pricing-cards",
        "Turn {n}. Now the pricing section: three cards (single origin, house blend, decaf) with "
        "the monthly price, the cadence switcher and a 'most popular' badge on the house blend. On "
        "desktop they sit in a row, on mobile they should stack without the badge overlapping the "
        "title. Suggest spacing, the card shadow, and how the selected cadence is shown to "
        "screen-reader users.",
    ),
    (
        "solution_architect",
        "order-events",
        "Turn {n}. We want the warehouse to hear about new and changed orders without polling. "
        "Options on the table are Postgres LISTEN/NOTIFY, a small Redis stream, or a managed queue. "
        "Volume is maybe two thousand orders a day with spikes at the Thursday cut-off. Which would "
        "you pick, how do we make delivery at-least-once without double-packing a box, and how do "
        "we replay after an outage?",
    ),
    (
        "test_debug_engineer",
        "roast-swap-bug",
        "Turn {n}. A customer swapped their roast on Wednesday, got a confirmation email, but the "
        "box shipped with the old roast. The swap row exists with the right timestamp. I suspect "
        "the packing list job reads a cached subscription. Help me write a failing test first and "
        "then find where the cache should be invalidated.",
    ),
    (
        "frontend_designer",
        "account-dashboard",
        "Turn {n}. Design the account dashboard a subscriber sees after logging in: next delivery "
        "date and roast, a pause button, the swap-roast dropdown with the Thursday cut-off "
        "explained, past orders, and the payment method with an update link. It should feel calm "
        "rather than busy. Which elements get the most weight, and how does it look on a phone?",
    ),
    (
        "solution_architect",
        "multi-region",
        "Turn {n}. Marketing wants to launch in Canada next quarter. That means prices in CAD, a "
        "second warehouse in Toronto, and taxes per province. Should we run one deployment with a "
        "region column everywhere, or a second stack? I care about keeping the schedule logic in "
        "one place and not doubling the on-call load for a team of four.",
    ),
    (
        "test_debug_engineer",
        "email-preview-crash",
        "Turn {n}. The email preview page crashes with 'Cannot read properties of undefined "
        "(reading 'name')' for subscribers created before March. Newer accounts are fine. The "
        "template reads subscription.roast.name. Walk me through confirming the data shape, a "
        "regression test with an old fixture, and a fix that does not hide real errors.",
    ),
)

REPLIES: dict[str, tuple[str, ...]] = {
    "frontend_designer": (
        "For turn {n}: lead with a six-word headline in 700 weight and a 400-weight sub-line, keep "
        "the photo at a 4:3 crop beside the copy on desktop and below the button on phones, and give "
        "the call to action 16 px of padding with the espresso brown on cream (contrast 9.8:1). "
        "Spacing follows the 8 px grid; the stack collapses at 640 px.",
        "For turn {n}: use one column under 640 px, cards with a 1 px border and a soft 0 2px 8px "
        "shadow, 24 px gaps, and announce the selection with aria-pressed on the cadence buttons. "
        "The badge sits in the card's top padding so it never overlaps the title, and the price "
        "uses tabular figures so the cards line up.",
    ),
    "solution_architect": (
        "For turn {n}: keep one subscriptions table (roast, cadence, paused_until, next_run_at) "
        "owned by the scheduling service, an append-only events table for swaps and pauses, and let "
        "Stripe own payment state through webhooks. A failed renewal moves the subscription to "
        "past_due, retries on Stripe's schedule and holds the box until the payment succeeds.",
        "For turn {n}: start with a transactional outbox in Postgres drained by one worker into a "
        "managed queue; consumers are idempotent on the order version, so replays are safe and a "
        "box is packed once. At two thousand orders a day this is cheap, and replay after an outage "
        "is a re-drain of the outbox from a timestamp.",
    ),
    "test_debug_engineer": (
        "For turn {n}: the race is between the redirect and the webhook, so the banner only appears "
        "once the order row is marked paid. Prove it by logging both timestamps in CI, then make "
        "the test wait for the order status through the API with a bounded poll instead of a fixed "
        "sleep, and stub the webhook latency in a unit test.",
        "For turn {n}: write the failing test first with a fixture that predates the change, assert "
        "on the exact field the job reads, then trace the read path: the cache key misses the swap "
        "version, so invalidate on every swap event and add a regression test that swaps twice "
        "before the cut-off and checks the packing list.",
    ),
}

SUPERVISOR_CLOSING = "Done: {specialist} answered above."
DECISIONS = ["Next.js with Tailwind CSS", "Postgres for orders, Stripe for payments"]
ARTIFACTS = ["src/pages/index.tsx", "docs/architecture.md"]


@dataclass(frozen=True)
class Turn:
    n: int
    specialist: str
    topic: str
    text: str
    reply: str


def turn_script(n: int) -> Turn:
    """Turn n (1-based) of the conversation: the same on all three systems."""
    specialist, topic, text = REQUESTS[(n - 1) % len(REQUESTS)]
    replies = REPLIES[specialist]
    reply = replies[((n - 1) // len(REQUESTS)) % len(replies)]
    return Turn(n, specialist, topic, text.format(n=n), reply.format(n=n))


# --- the scripted model -------------------------------------------------------------------------


@dataclass
class Recorder:
    """What the scripted models of one system saw during the current turn."""

    turn: Turn | None = None
    specialist_requests: list[list[Any]] = field(default_factory=list)
    calls: Counter = field(default_factory=Counter)

    def start(self, turn: Turn) -> None:
        self.turn = turn
        self.specialist_requests = []
        self.calls = Counter()


def _tool_name(spec: Any) -> str:
    if isinstance(spec, dict):
        return str((spec.get("function") or {}).get("name") or spec.get("name") or "")
    return str(getattr(spec, "name", ""))


class ScriptedChatModel(BaseChatModel):
    """Zero-latency, deterministic: routes when it holds a handoff tool, else answers the turn."""

    system: str
    recorder: Any

    @property
    def _llm_type(self) -> str:
        return "scripted-bench"

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        names = {_tool_name(t) for t in kwargs.get("tools") or []}
        turn: Turn = self.recorder.turn
        ours_router = OUR_TOOL in names and OUR_RETURN not in names
        peer_router = any(f"transfer_to_{s}" in names for s in SPECIALISTS)
        if ours_router or peer_router:
            self.recorder.calls["router"] += 1
            if isinstance(messages[-1], HumanMessage):
                call_id = f"call_{self.system}_{turn.n}"
                if ours_router:
                    call = {
                        "name": OUR_TOOL,
                        "id": call_id,
                        "args": {
                            "specialist_profile": turn.specialist,
                            "topic": turn.topic,
                            "summary": turn.text.split(". ", 2)[1][:240],
                            "decisions": DECISIONS,
                            "artifacts": ARTIFACTS,
                            "return_condition": "after_reply",
                            "handover_reason": f"{turn.topic} is {turn.specialist}'s field.",
                        },
                    }
                else:
                    call = {"name": f"transfer_to_{turn.specialist}", "id": call_id, "args": {}}
                message = AIMessage(content="", tool_calls=[call])
            else:  # control came back within the turn (supervisor): a short closing line
                message = AIMessage(content=SUPERVISOR_CLOSING.format(specialist=turn.specialist))
        else:
            self.recorder.calls["specialist"] += 1
            self.recorder.specialist_requests.append(list(messages))
            message = AIMessage(content=turn.reply)
        return ChatResult(generations=[ChatGeneration(message=message)])


# --- the three systems --------------------------------------------------------------------------


def sqlite_saver(path: Path) -> SqliteSaver:
    saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
    saver.setup()
    return saver


def build_ours(saver: SqliteSaver, recorder: Recorder) -> Any:
    return build_graph(
        checkpointer=saver, model=ScriptedChatModel(system="ours", recorder=recorder)
    )


def build_swarm(saver: SqliteSaver, recorder: Recorder) -> Any:
    profiles = resolve_profiles(None)
    model = ScriptedChatModel(system="swarm", recorder=recorder)
    router = create_agent(
        model,
        tools=[
            create_handoff_tool(agent_name=s, description=profiles[s].description)
            for s in SPECIALISTS
        ],
        system_prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
        name=ROUTER,
    )
    specialists = [
        create_agent(
            model,
            tools=[
                create_handoff_tool(agent_name=ROUTER, description="Hand back to the orchestrator")
            ],
            system_prompt=profiles[s].prompt,
            name=s,
        )
        for s in SPECIALISTS
    ]
    return create_swarm([router, *specialists], default_active_agent=ROUTER).compile(
        checkpointer=saver
    )


def build_supervisor(saver: SqliteSaver, recorder: Recorder) -> Any:
    profiles = resolve_profiles(None)
    model = ScriptedChatModel(system="supervisor", recorder=recorder)
    workers = [
        create_agent(model, tools=[], system_prompt=profiles[s].prompt, name=s) for s in SPECIALISTS
    ]
    return create_supervisor(
        workers,
        model=model,
        prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
        supervisor_name=ROUTER,
    ).compile(checkpointer=saver)


# --- measuring ----------------------------------------------------------------------------------


def file_bytes(path: Path) -> int:
    """The SQLite file with its -wal and -journal companions."""
    return sum(
        os.path.getsize(p)
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-journal"))
        if p.exists()
    )


def blob_bytes(conn: sqlite3.Connection) -> int:
    """Bytes of the stored checkpoint, metadata and write blobs (what the data costs, WAL aside)."""
    checkpoints = conn.execute(
        "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
    ).fetchone()[0]
    writes = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[0]
    return int(checkpoints + writes)


def last_ai_text(result: Any) -> str:
    for message in reversed((result or {}).get("messages") or []):
        if isinstance(message, AIMessage) and message.content:
            return str(message.content)
    return ""


@dataclass
class Runner:
    name: str
    graph: Any
    saver: SqliteSaver
    path: Path
    recorder: Recorder
    config: dict[str, Any]
    context: dict[str, Any] | None = None
    series: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))

    def payload(self, turn: Turn) -> dict[str, Any]:
        payload: dict[str, Any] = {"messages": [HumanMessage(turn.text)]}
        if self.name == "swarm":
            payload["active_agent"] = ROUTER  # next turn starts at the router (see docstring)
        return payload

    def play(self, turn: Turn, counter: TokenCounter) -> None:
        self.recorder.start(turn)
        payload = self.payload(turn)
        kwargs: dict[str, Any] = {"durability": "sync"}
        if self.context is not None:
            kwargs["context"] = self.context
        start = time.perf_counter()
        result = self.graph.invoke(payload, self.config, **kwargs)
        elapsed_ms = (time.perf_counter() - start) * 1000
        # everything below is outside the timing
        requests = self.recorder.specialist_requests
        if len(requests) != 1:
            raise SystemExit(
                f"{self.name}, turn {turn.n}: the specialist was called {len(requests)} times"
            )
        if turn.reply not in last_ai_text(result) and self.name != "supervisor":
            raise SystemExit(f"{self.name}, turn {turn.n}: the turn did not end with the reply")
        self.series["turn"].append(turn.n)
        self.series["receiver_tokens"].append(counter.count_messages(requests[0]))
        self.series["receiver_messages"].append(len(requests[0]))
        self.series["ms"].append(elapsed_ms)
        self.series["checkpoint_bytes"].append(file_bytes(self.path))
        self.series["blob_bytes"].append(blob_bytes(self.saver.conn))
        self.series["model_calls"].append(sum(self.recorder.calls.values()))


def median_ending(values: list[float], turn: int, width: int = WINDOW) -> float:
    return statistics.median(values[max(0, turn - width) : turn])


def rolling_median(values: list[float], width: int = WINDOW) -> list[float]:
    return [median_ending(values, i + 1, width) for i in range(len(values))]


def verify_ours(runner: Runner) -> None:
    """Our thread after the run: every handover went to the turn's specialist under after_reply."""
    values = runner.graph.get_state(runner.config).values
    records = [r for r in values.get("handovers") or [] if r["kind"] == "handover"]
    turns = len(runner.series["turn"])
    if len(records) != turns or values.get("active_agent") != ROUTER:
        raise SystemExit(
            f"ours: {len(records)} handovers for {turns} turns, active agent "
            f"{values.get('active_agent')!r}"
        )
    bad = [r for r in records if r["return_condition"] != "after_reply"]
    if bad:
        raise SystemExit(f"ours: handovers not after_reply: {bad[:1]}")


# --- storage breakdown --------------------------------------------------------------------------


def storage_breakdown(runner: Runner) -> list[str]:
    """Where one file's bytes are: tables, root vs subgraph namespaces, channels."""
    conn = runner.saver.conn
    lines = [
        f"{runner.name}: {file_bytes(runner.path):,} file bytes, {blob_bytes(conn):,} blob bytes"
    ]
    for ns_kind, where in (("root", "checkpoint_ns = ''"), ("subgraphs", "checkpoint_ns != ''")):
        rows, cp, meta = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint)), 0), "
            f"COALESCE(SUM(LENGTH(metadata)), 0) FROM checkpoints WHERE {where}"
        ).fetchone()
        lines.append(
            f"  checkpoints ({ns_kind}): {rows:,} rows, {cp:,} B checkpoint blobs, {meta:,} B metadata"
        )
    rows, total = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM writes"
    ).fetchone()
    lines.append(f"  writes: {rows:,} rows, {total:,} B")
    top = conn.execute(
        "SELECT channel, COUNT(*), SUM(LENGTH(value)) AS b FROM writes GROUP BY channel "
        "ORDER BY b DESC LIMIT 4"
    ).fetchall()
    lines.append("    by channel: " + ", ".join(f"{c} {n:,}x {b:,} B" for c, n, b in top))
    row = conn.execute(
        "SELECT type, checkpoint FROM checkpoints WHERE checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()
    if row:
        serde = runner.saver.serde
        checkpoint = serde.loads_typed((row[0], row[1]))
        sizes = sorted(
            ((len(serde.dumps_typed(v)[1]), k) for k, v in checkpoint["channel_values"].items()),
            reverse=True,
        )
        lines.append(
            f"    last root checkpoint {len(row[1]):,} B; channels: "
            + ", ".join(f"{k} {b:,} B" for b, k in sizes[:5])
        )
    return lines


# --- output -------------------------------------------------------------------------------------


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def print_tables(runners: dict[str, Runner], report_turns: list[int]) -> None:
    metrics = (
        ("receiver tokens (the specialist's request)", "receiver_tokens", "{:,.0f}"),
        (f"turn time, median ms of the {WINDOW} turns ending there", "ms", "{:,.1f}"),
        ("checkpoint bytes (SQLite file + -wal/-journal)", "checkpoint_bytes", "{:,.0f}"),
        (
            "for information: stored blob bytes (checkpoints + writes, WAL aside)",
            "blob_bytes",
            "{:,.0f}",
        ),
    )
    for title, key, fmt in metrics:
        print(f"\n{title}")
        print("| turn | ours | swarm | supervisor | ours/swarm | ours/supervisor |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for t in report_turns:
            row = {}
            for name, runner in runners.items():
                values = runner.series[key]
                row[name] = median_ending(values, t) if key == "ms" else values[t - 1]
            print(
                f"| {t} | "
                + " | ".join(fmt.format(row[s]) for s in SYSTEMS)
                + f" | {ratio(row['ours'], row['swarm']):.3f}"
                + f" | {ratio(row['ours'], row['supervisor']):.3f} |"
            )


def goals(runners: dict[str, Runner]) -> list[dict[str, Any]]:
    ours, swarm, sup = (runners[s].series for s in SYSTEMS)
    last = len(ours["turn"])
    edge = min(EDGE, last)

    def tail(s: dict) -> float:
        return statistics.median(s["ms"][-edge:])

    return [
        {
            "goal": f"receiver tokens <= 1/9 of swarm's (at turn {last})",
            "limit": 1 / 9,
            "measured": ratio(ours["receiver_tokens"][-1], swarm["receiver_tokens"][-1]),
            "vs_supervisor": ratio(ours["receiver_tokens"][-1], sup["receiver_tokens"][-1]),
        },
        {
            "goal": f"turn time <= 0.5x swarm's (median of the last {edge} turns)",
            "limit": 0.5,
            "measured": ratio(tail(ours), tail(swarm)),
            "vs_supervisor": ratio(tail(ours), tail(sup)),
        },
        {
            "goal": f"checkpoint bytes <= 1/10 of swarm's (at turn {last})",
            "limit": 0.1,
            "measured": ratio(ours["checkpoint_bytes"][-1], swarm["checkpoint_bytes"][-1]),
            "vs_supervisor": ratio(ours["checkpoint_bytes"][-1], sup["checkpoint_bytes"][-1]),
        },
        {
            "goal": f"our time growth, last {edge} turns / first {edge}, <= 2",
            "limit": 2.0,
            "measured": ratio(tail(ours), statistics.median(ours["ms"][:edge])),
            "vs_supervisor": None,
        },
    ]


def print_goals(rows: list[dict[str, Any]], runners: dict[str, Runner]) -> None:
    print("\n| goal | measured | result | (same ratio vs supervisor) |")
    print("| --- | ---: | --- | ---: |")
    for g in rows:
        verdict = "PASS" if g["measured"] <= g["limit"] else "MISS"
        sup = "" if g["vs_supervisor"] is None else f"{g['vs_supervisor']:.3f}"
        print(f"| {g['goal']} | {g['measured']:.3f} | {verdict} | {sup} |")
    ours, swarm = runners["ours"].series, runners["swarm"].series
    print(
        "(the bytes goal on stored blob bytes instead of files, WAL aside: "
        f"{ratio(ours['blob_bytes'][-1], swarm['blob_bytes'][-1]):.3f})"
    )


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


def write_plot(runners: dict[str, Runner], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    panels = (
        ("receiver tokens (specialist's request)", lambda s: s["receiver_tokens"]),
        (f"turn time, ms (rolling median of {WINDOW})", lambda s: rolling_median(s["ms"])),
        ("checkpoint MB (file + wal)", lambda s: [b / 1e6 for b in s["checkpoint_bytes"]]),
    )
    for ax, (title, pick) in zip(axes, panels, strict=True):
        for name in SYSTEMS:
            series = runners[name].series
            (line,) = ax.plot(series["turn"], pick(series), label=name, linewidth=1.6)
            if title.startswith("checkpoint"):
                ax.plot(
                    series["turn"],
                    [b / 1e6 for b in series["blob_bytes"]],
                    color=line.get_color(),
                    linestyle="--",
                    linewidth=1,
                    label=f"{name} (stored blobs)",
                )
        ax.set_title(title)
        ax.set_xlabel("turn")
        ax.grid(alpha=0.3)
    axes[0].legend()
    axes[2].legend(fontsize=8)
    fig.suptitle("specialist_handover vs langgraph-swarm vs langgraph-supervisor (same script)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200, help="user turns (default 200)")
    parser.add_argument(
        "--plot",
        type=Path,
        default=Path(__file__).resolve().parent / "vs_peers.png",
        help="PNG to write (default bench/vs_peers.png)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="an empty folder for the files")
    parser.add_argument("--json", type=Path, default=None, help="write every per-turn figure here")
    options = parser.parse_args(argv)
    if options.turns < 1:
        parser.error("--turns must be at least 1")

    temporary = options.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="bench-vs-peers-")) if temporary else options.workdir
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        print(f"bench_vs_peers: {workdir} is not empty (an earlier run?)", file=sys.stderr)
        return 2
    project_root = workdir / "project"
    project_root.mkdir()

    counter = TokenCounter("o200k_base")
    counter.count_text("warm up")  # load the vocabulary outside the timings
    builders = {"ours": build_ours, "swarm": build_swarm, "supervisor": build_supervisor}
    runners: dict[str, Runner] = {}
    for name in SYSTEMS:
        path = workdir / f"{name}.sqlite"
        saver = sqlite_saver(path)
        recorder = Recorder()
        runners[name] = Runner(
            name=name,
            graph=builders[name](saver, recorder),
            saver=saver,
            path=path,
            recorder=recorder,
            config={"configurable": {"thread_id": f"bench-{name}"}},
            context={"project_root": str(project_root), "model": "offline"}
            if name == "ours"
            else None,
        )

    print(
        f"bench_vs_peers: {options.turns} turns, alternating ours / swarm / supervisor; "
        f"files in {workdir}"
    )
    print(f"project: {project_label()}")
    print(
        "versions: "
        + ", ".join(
            f"{p} {version(p)}"
            for p in ("langgraph", "langgraph-swarm", "langgraph-supervisor", "langchain")
        )
        + f"; python {platform.python_version()}"
    )
    started = time.perf_counter()
    for n in range(1, options.turns + 1):
        turn = turn_script(n)
        for name in SYSTEMS:
            runners[name].play(turn, counter)
        if n % 50 == 0 or n == options.turns:
            print(f"  turn {n}: {time.perf_counter() - started:,.1f} s", flush=True)
    total_s = time.perf_counter() - started
    verify_ours(runners["ours"])

    calls = {s: sorted(set(runners[s].series["model_calls"])) for s in SYSTEMS}
    print(f"model calls per turn: {calls}")
    report_turns = sorted({t for t in REPORT_TURNS if t <= options.turns} | {options.turns})
    print_tables(runners, report_turns)
    goal_rows = goals(runners)
    print_goals(goal_rows, runners)

    print("\nstorage breakdown")
    for name in SYSTEMS:
        for line in storage_breakdown(runners[name]):
            print(f"  {line}")

    write_plot(runners, options.plot)
    print(f"\nplot: {options.plot}")
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(
            json.dumps(
                {
                    "turns": options.turns,
                    "project": project_label(),
                    "seconds": total_s,
                    "goals": goal_rows,
                    "systems": {s: dict(runners[s].series) for s in SYSTEMS},
                },
                indent=1,
            )
        )
        print(f"json: {options.json}")
    print(f"run: {total_s:,.1f} s for {options.turns} turns x 3 systems")

    for runner in runners.values():
        runner.saver.conn.close()
    if temporary:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
