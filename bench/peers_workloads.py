"""The scripted conversations, the scripted model and the five systems of `bench_vs_peers.py`.

`bench_vs_peers.py` documents what is played and measured; this module holds the
parts that run inside each system's child process: the turn script of both
workloads, the zero-latency scripted chat model, the builders of ours, swarm,
supervisor and their trimming variants, the checkpoint savers (SQLite or
PostgreSQL), and `serve`, the child's loop that plays one turn at a time when the
parent says so and checks that every turn did what the script says.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sqlite3
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import AgentMiddleware  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.config import get_config  # noqa: E402

from specialist_handover import build_graph  # noqa: E402
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, resolve_profiles  # noqa: E402
from specialist_handover.state import TokenCounter  # noqa: E402
from specialist_handover.state.tokens import REPLY_PRIMING  # noqa: E402

try:  # the peers live in the bench extra only; this module imports without them (the unit
    # tests of bench_vs_peers' figures run on `.[test]`), and `require_peers` stops a run
    from langgraph_supervisor import create_supervisor
    from langgraph_swarm import create_handoff_tool, create_swarm

    PEERS_MISSING = ""
except ImportError as exc:  # pragma: no cover
    PEERS_MISSING = str(exc)


def require_peers() -> None:
    """SystemExit when the bench extra (langgraph-swarm, langgraph-supervisor) is missing."""
    if PEERS_MISSING:
        raise SystemExit(
            f'bench_vs_peers needs the bench extra: .venv/bin/pip install -e ".[bench]" '
            f"({PEERS_MISSING})"
        )


SYSTEMS = ("ours", "swarm", "supervisor", "swarm-trim", "supervisor-trim")
WORKLOADS = ("handovers", "mixed")
ROUTER = "orchestrator"  # the router's agent name in every system
SPECIALISTS = ("frontend_designer", "solution_architect", "test_debug_engineer")
SUMMARIZER = "summarizer"  # our stage 2 asks the specialist's model to condense old turns
OUR_HANDOVER = "handover_to_specialist"
OUR_RETURN = "return_to_orchestrator"
OUR_FULL_HISTORY = "request_full_history"
FULL_HISTORY_HEADER = "FULL HISTORY"
SUMMARISE_PROMPT = "Summarise this conversation excerpt"
KINDS = ("request", "chat", "open", "session", "full_history", "chain", "return")

# --- the texts: the same on every system ---------------------------------------------------------

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

FOLLOW_UPS: dict[str, str] = {
    "frontend_designer": "Turn {n}. Following up on that: the design review asked for a darker "
    "hover state on the call to action and a smaller badge on phones. Keep the 8 px grid. What "
    "exactly changes in the CSS, and does the contrast still pass AA on the cream background?",
    "solution_architect": "Turn {n}. Following up on that: the team worries the scheduling "
    "service becomes a single point of failure on Thursday nights. What do we run in two "
    "replicas, what stays single, and how do we make the renewal job safe to run twice?",
    "test_debug_engineer": "Turn {n}. Following up on that: the fix is in a branch, but I want "
    "the regression test to fail on main first. Which fixture do I copy, what do I assert, and "
    "how do I keep the test under two seconds on CI?",
}

CHATS: tuple[tuple[str, str], ...] = (
    (
        "Turn {n}. Quick one before we go on, no specialist needed: remind me what we agreed to "
        "ship first, and what is still open from this week? A short list is fine.",
        "For turn {n}: first we ship the landing page and the subscription checkout; still open "
        "are the roast-swap bug, the pricing cards on mobile and the choice of the order-events "
        "queue. None of this needs a specialist right now; tell me when one should pick it up.",
    ),
    (
        "Turn {n}. Thanks, that is useful. Who on the team should I ask about the Stripe account "
        "settings, and when is the next planning meeting?",
        "For turn {n}: the Stripe settings sit with whoever owns billing this sprint, and the "
        "planning meeting is on Monday at ten; bring the open questions from the last session and "
        "I will route each one to the right specialist.",
    ),
    (
        "Turn {n}. Can you put the three open decisions in priority order for me? Just your "
        "judgement, one line each.",
        "For turn {n}: one, the order-events queue, because the warehouse work waits on it; two, "
        "the roast-swap cache fix, because customers notice; three, the pricing card spacing, "
        "which can ship a week later without harm.",
    ),
)

FULL_HISTORY_TEXT = (
    "Turn {n}. Before you answer, go back over the whole conversation, including what the other "
    "specialists and the orchestrator said in earlier sessions: which earlier decisions does your "
    "last proposal contradict, and which of them should we revisit first?"
)
FULL_HISTORY_REPLY = (
    "For turn {n}: going back over the whole conversation, two earlier decisions bear on this: "
    "Postgres stays the system of record for orders, and the Thursday cut-off is fixed. My last "
    "proposal keeps both; the one to revisit is the cached subscription read in the packing job, "
    "which the roast-swap fix already questions."
)
CHAIN_TEXT = (
    "Turn {n}. This part needs the {label}: please bring them in on {topic} and let them take it "
    "from here; I will keep talking to them for a while."
)
RETURN_TEXT = (
    "Turn {n}. Thanks, that covers it for now. Please hand me back to the orchestrator and give "
    "me a two-line summary of where we are."
)
RETURN_REPLY = (
    "For turn {n}: back with the orchestrator. The specialists settled the open points of this "
    "session; their decisions are in the briefing files, and the next step is the review on "
    "Thursday."
)
SUPERVISOR_CLOSING = "Done: {specialist} answered above."
SUMMARY_REPLY = "Earlier turns: the coffee subscription's design, billing and test work."
DECISIONS = ["Next.js with Tailwind CSS", "Postgres for orders, Stripe for payments"]
ARTIFACTS = ["src/pages/index.tsx", "docs/architecture.md"]

# the mixed workload repeats this block of 23 turns: a 20-turn session (open .. last session turn)
MIXED_BLOCK: tuple[str, ...] = (
    ("chat", "chat", "open")
    + ("session",) * 5
    + ("full_history",)
    + ("session",) * 3
    + ("chain",)
    + ("session",) * 4
    + ("full_history",)
    + ("session",) * 4
    + ("return",)
)


@dataclass(frozen=True)
class Turn:
    """One user turn: the same texts on every system; who answers and who holds it after."""

    n: int
    kind: str
    text: str
    reply: str
    answerer: str  # ROUTER or the specialist whose reply ends the turn
    holder: str  # who holds the conversation before the turn (ours, swarm)
    after: str  # who holds it after the turn (ours, swarm)
    topic: str = ""
    condition: str = ""  # our return_condition, for the turns that hand over
    force_router: bool = False  # swarm: the input sets active_agent to the router


def _requests_of(specialist: str) -> list[tuple[str, str, str]]:
    return [r for r in REQUESTS if r[0] == specialist]


def handovers_turn(n: int) -> Turn:
    """Turn n (1-based) of the `handovers` workload: every turn a one-off specialist request."""
    specialist, topic, text = REQUESTS[(n - 1) % len(REQUESTS)]
    replies = REPLIES[specialist]
    reply = replies[((n - 1) // len(REQUESTS)) % len(replies)]
    return Turn(
        n,
        "request",
        text.format(n=n),
        reply.format(n=n),
        answerer=specialist,
        holder=ROUTER,
        after=ROUTER,
        topic=topic,
        condition="after_reply",
        force_router=True,
    )


def mixed_turn(n: int) -> Turn:
    """Turn n (1-based) of the `mixed` workload (see `MIXED_BLOCK` and bench_vs_peers' docstring)."""
    block, pos = divmod(n - 1, len(MIXED_BLOCK))
    kind = MIXED_BLOCK[pos]
    first = SPECIALISTS[block % len(SPECIALISTS)]
    second = SPECIALISTS[(block + 1) % len(SPECIALISTS)]
    chain_at = MIXED_BLOCK.index("chain")
    holder = ROUTER if kind in ("chat", "open") else first if pos <= chain_at else second
    if kind == "chat":
        text, reply = CHATS[n % len(CHATS)]
        return Turn(n, kind, text.format(n=n), reply.format(n=n), ROUTER, ROUTER, ROUTER)
    if kind == "return":
        return Turn(
            n, kind, RETURN_TEXT.format(n=n), RETURN_REPLY.format(n=n), ROUTER, holder, ROUTER
        )
    replies = REPLIES
    if kind == "open":
        _, topic, text = _requests_of(first)[(block // len(SPECIALISTS)) % 3]
        return Turn(
            n,
            kind,
            text.format(n=n),
            replies[first][n % 2].format(n=n),
            answerer=first,
            holder=ROUTER,
            after=first,
            topic=topic,
            condition="user_request",
        )
    if kind == "chain":
        topic = _requests_of(second)[(block // len(SPECIALISTS)) % 3][1]
        text = CHAIN_TEXT.format(n=n, label=second.replace("_", " "), topic=topic)
        return Turn(
            n,
            kind,
            text,
            replies[second][n % 2].format(n=n),
            answerer=second,
            holder=first,
            after=second,
            topic=topic,
            condition="user_request",
        )
    if kind == "full_history":
        text, reply = FULL_HISTORY_TEXT.format(n=n), FULL_HISTORY_REPLY.format(n=n)
        return Turn(n, kind, text, reply, answerer=holder, holder=holder, after=holder)
    options = [r[2] for r in _requests_of(holder)] + [FOLLOW_UPS[holder]]
    text = options[n % len(options)].format(n=n)
    return Turn(
        n, kind, text, replies[holder][n % 2].format(n=n), holder, holder=holder, after=holder
    )


def turn_script(workload: str, n: int) -> Turn:
    return handovers_turn(n) if workload == "handovers" else mixed_turn(n)


def base_system(system: str) -> str:
    """`swarm-trim` -> `swarm`: the trimming variants play their base system's way."""
    return system.removesuffix("-trim")


def expected_calls(system: str, turn: Turn) -> Counter:
    """The model calls each agent makes in this turn (our stage-2 summarizer aside)."""
    base, kind, who = base_system(system), turn.kind, turn.answerer
    if kind == "chat" or (kind == "return" and base == "supervisor"):
        return Counter({ROUTER: 1})
    if kind == "return":
        return Counter({turn.holder: 1, ROUTER: 1})
    if base == "supervisor":  # it routes every specialist turn itself and closes it
        return Counter({ROUTER: 2, who: 1})
    if kind in ("request", "open"):
        return Counter({ROUTER: 1, who: 1})
    if kind == "chain":
        return Counter({turn.holder: 1, who: 1})
    if kind == "full_history" and base == "ours":
        return Counter({who: 2})
    return Counter({who: 1})


# --- the scripted model --------------------------------------------------------------------------


@dataclass
class Call:
    agent: str
    messages: list[Any]
    tools: list[Any]
    answered: bool  # this call wrote the turn's reply
    place: tuple[str, str] = ("", "")  # call_place(): (root step, root task)


def call_place() -> tuple[str, str]:
    """Where a model call runs: (the root graph's checkpoint its step started from, the root
    task it runs in, `node:task_id`), from the config LangGraph gives the call.

    Calls with the same root checkpoint ran in one step of the root graph; in different root
    tasks of that step (our consults' `Send` tasks) they ran in parallel, on LangGraph's
    executor threads; in one task (an agent subgraph's loop) one after another. ("", "")
    outside a graph run: taken as a call of its own."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:
        return "", ""
    step = (configurable.get("checkpoint_map") or {}).get("", "")
    task = str(configurable.get("checkpoint_ns") or "").split("|", 1)[0]
    return str(step), task


def call_rows(places: list[tuple[str, str]], tokens: list[int]) -> list[list[int]]:
    """A turn's calls, in order, as [input tokens, stage, lane]: stage numbers the root steps
    (one after another), lane the root tasks within a stage (in parallel)."""
    stages: dict[str, int] = {}
    lanes: dict[tuple[str, str], int] = {}
    rows = []
    for i, ((step, task), count) in enumerate(zip(places, tokens, strict=True)):
        key = step or f"unplaced-{i}"  # outside a run: a stage of its own
        stage = stages.setdefault(key, len(stages))
        lane = lanes.setdefault((key, task), len(lanes))
        rows.append([count, stage, lane])
    return rows


@dataclass
class Recorder:
    """What the scripted models of one system saw during the current turn."""

    turn: Turn | None = None
    calls: list[Call] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def start(self, turn: Turn) -> None:
        self.turn = turn
        self.calls = []
        self.counts = Counter()


def _tool_call(name: str, call_id: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "id": call_id, "args": args}])


def _our_handover_args(turn: Turn, target: str) -> dict[str, Any]:
    return {
        "specialist_profile": target,
        "topic": turn.topic,
        "summary": turn.text.split(". ", 1)[1][:240],
        "decisions": DECISIONS,
        "artifacts": ARTIFACTS,
        "return_condition": turn.condition,
        "handover_reason": f"{turn.topic} is {target}'s field.",
    }


class ScriptedChatModel(BaseChatModel):
    """Zero-latency, deterministic: one instance per agent; acts on the turn's script."""

    system: str
    agent: str
    recorder: Any

    @property
    def _llm_type(self) -> str:
        return "scripted-bench"

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        rec: Recorder = self.recorder
        turn: Turn = rec.turn  # type: ignore[assignment]
        tools = list(kwargs.get("tools") or [])
        first = messages[0] if messages else None
        if isinstance(first, SystemMessage) and str(first.content).startswith(SUMMARISE_PROMPT):
            rec.counts[SUMMARIZER] += 1  # our stage 2 condensing old turns with this model
            rec.calls.append(Call(SUMMARIZER, list(messages), tools, False, call_place()))
            return _result(AIMessage(content=SUMMARY_REPLY))
        agent, base = self.agent, base_system(self.system)
        made = rec.counts[agent]
        rec.counts[agent] += 1
        call_id = f"call_{self.system}_{turn.n}_{agent}_{made}"
        message: AIMessage | None = None
        if agent == ROUTER:
            if turn.answerer == ROUTER:  # chit-chat, or after the specialist handed back
                message = AIMessage(content=turn.reply)
            elif made == 0 and base == "ours":
                message = _tool_call(OUR_HANDOVER, call_id, _our_handover_args(turn, turn.answerer))
            elif made == 0:
                message = _tool_call(f"transfer_to_{turn.answerer}", call_id, {})
            elif base == "supervisor":  # control came back within the turn
                message = AIMessage(content=SUPERVISOR_CLOSING.format(specialist=turn.answerer))
        elif turn.kind == "return" and agent == turn.holder:
            if base == "ours":
                summary = f"Session on {turn.topic or 'the open points'} done; see the briefing."
                message = _tool_call(OUR_RETURN, call_id, {"summary": summary})
            else:
                message = _tool_call(f"transfer_to_{ROUTER}", call_id, {})
        elif turn.kind == "chain" and agent == turn.holder and agent != turn.answerer:
            if base == "ours":
                message = _tool_call(OUR_HANDOVER, call_id, _our_handover_args(turn, turn.answerer))
            else:
                message = _tool_call(f"transfer_to_{turn.answerer}", call_id, {})
        elif agent == turn.answerer:
            if turn.kind == "full_history" and base == "ours" and made == 0:
                message = _tool_call(OUR_FULL_HISTORY, call_id, {})
            else:
                message = AIMessage(content=turn.reply)
        if message is None:  # not in the script: the turn's checks will name it
            message = AIMessage(content=f"UNSCRIPTED call of {agent} in turn {turn.n}")
        answered = bool(message.content) and message.content == turn.reply
        rec.calls.append(Call(agent, list(messages), tools, answered, call_place()))
        return _result(message)


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


# --- token counting (outside the timings) and the peers' trimming (inside them) ------------------


def _message_key(message: Any) -> int:
    calls = getattr(message, "tool_calls", None)
    return hash(
        (
            message.type,
            message.id,
            getattr(message, "name", None),
            str(message.content),
            repr(calls) if calls else None,
            getattr(message, "tool_call_id", None),
        )
    )


class MemoCounter:
    """`TokenCounter.count_messages` with each message's count remembered (by its content)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.memo: dict[int, int] = {}
        self.schema_memo: dict[str, int] = {}

    def message(self, message: Any) -> int:
        key = _message_key(message)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self.counter.count_message(message)
        return found

    def __call__(self, messages: list[Any]) -> int:
        return sum(self.message(m) for m in messages) + REPLY_PRIMING

    def schemas(self, tools: list[Any]) -> int:
        """The tool schemas bound to a call, as JSON (what a provider is sent beside them)."""
        if not tools:
            return 0
        text = json.dumps(tools, sort_keys=True)
        found = self.schema_memo.get(text)
        if found is None:
            found = self.schema_memo[text] = self.counter.count_text(text)
        return found


def make_trimmer(budget: int, counter: TokenCounter):  # type: ignore[no-untyped-def]
    """`trim_messages` as LangGraph's docs use it in a pre_model_hook: the newest messages that
    fit `budget` tokens, starting on a user message; counted with our counter (memoised)."""
    count = MemoCounter(counter)

    def trim(messages: list[Any]) -> list[Any]:
        return trim_messages(
            messages,
            max_tokens=budget,
            strategy="last",
            token_counter=count,
            start_on="human",
            end_on=("human", "tool"),
            include_system=True,
        )

    return trim


class TrimMessages(AgentMiddleware):
    """For `create_agent`: the model call gets the trimmed messages; the state keeps them all
    (as a pre_model_hook returning `llm_input_messages` does for `create_react_agent`)."""

    def __init__(self, trim: Any) -> None:
        super().__init__()
        self.trim = trim

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        return handler(request.override(messages=self.trim(list(request.messages))))


# --- the systems ---------------------------------------------------------------------------------


def _models(system: str, recorder: Recorder) -> dict[str, ScriptedChatModel]:
    return {
        name: ScriptedChatModel(system=system, agent=name, recorder=recorder)
        for name in (ROUTER, *SPECIALISTS, "unexpected-agent")
    }


def build_ours(saver: Any, recorder: Recorder, trim: Any = None) -> Any:
    models = _models("ours", recorder)
    return build_graph(
        checkpointer=saver,
        model={
            ORCHESTRATOR_PROFILE: models[ROUTER],
            **{s: models[s] for s in SPECIALISTS},
            "default": models["unexpected-agent"],
        },
    )


def build_swarm(saver: Any, recorder: Recorder, trim: Any = None) -> Any:
    system = "swarm-trim" if trim else "swarm"
    models = _models(system, recorder)
    profiles = resolve_profiles(None)
    middleware = [TrimMessages(trim)] if trim else []
    router = create_agent(
        models[ROUTER],
        tools=[
            create_handoff_tool(agent_name=s, description=profiles[s].description)
            for s in SPECIALISTS
        ],
        system_prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
        middleware=middleware,
        name=ROUTER,
    )
    specialists = [
        create_agent(
            models[s],
            tools=[
                create_handoff_tool(agent_name=other, description=profiles[other].description)
                for other in SPECIALISTS
                if other != s
            ]
            + [create_handoff_tool(agent_name=ROUTER, description="Hand back to the orchestrator")],
            system_prompt=profiles[s].prompt,
            middleware=middleware,
            name=s,
        )
        for s in SPECIALISTS
    ]
    return create_swarm([router, *specialists], default_active_agent=ROUTER).compile(
        checkpointer=saver
    )


def build_supervisor(saver: Any, recorder: Recorder, trim: Any = None) -> Any:
    system = "supervisor-trim" if trim else "supervisor"
    models = _models(system, recorder)
    profiles = resolve_profiles(None)
    middleware = [TrimMessages(trim)] if trim else []
    workers = [
        create_agent(
            models[s], tools=[], system_prompt=profiles[s].prompt, middleware=middleware, name=s
        )
        for s in SPECIALISTS
    ]

    def trim_hook(state: Any) -> dict[str, Any]:
        return {"llm_input_messages": trim(list(state["messages"]))}

    return create_supervisor(
        workers,
        model=models[ROUTER],
        prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
        supervisor_name=ROUTER,
        pre_model_hook=trim_hook if trim else None,
    ).compile(checkpointer=saver)


BUILDERS = {"ours": build_ours, "swarm": build_swarm, "supervisor": build_supervisor}


# --- the savers and what their storage holds -----------------------------------------------------

PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


class SqliteStore:
    """`SqliteSaver` on its own file (WAL, as it sets up)."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.path = path
        self.saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
        self.saver.setup()
        self.conn = self.saver.conn

    def bytes(self) -> int:
        """The SQLite file with its -wal and -journal companions."""
        return sum(
            os.path.getsize(p)
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-journal"))
            if p.exists()
        )

    def blob_bytes(self) -> int:
        """Bytes of the stored checkpoint, metadata and write blobs (WAL aside)."""
        checkpoints = self.conn.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        ).fetchone()[0]
        writes = self.conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[
            0
        ]
        return int(checkpoints + writes)

    def breakdown(self, name: str) -> list[str]:
        """Where the file's bytes are: tables, root vs subgraph namespaces, channels."""
        conn = self.conn
        lines = [f"{name}: {self.bytes():,} file bytes, {self.blob_bytes():,} blob bytes"]
        for ns_kind, where in (
            ("root", "checkpoint_ns = ''"),
            ("subgraphs", "checkpoint_ns != ''"),
        ):
            rows, cp, meta = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint)), 0), "
                f"COALESCE(SUM(LENGTH(metadata)), 0) FROM checkpoints WHERE {where}"
            ).fetchone()
            lines.append(
                f"  checkpoints ({ns_kind}): {rows:,} rows, {cp:,} B checkpoint blobs, "
                f"{meta:,} B metadata"
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
            serde = self.saver.serde
            checkpoint = serde.loads_typed((row[0], row[1]))
            sizes = sorted(
                (
                    (len(serde.dumps_typed(v)[1]), k)
                    for k, v in checkpoint["channel_values"].items()
                ),
                reverse=True,
            )
            lines.append(
                f"    last root checkpoint {len(row[1]):,} B; channels: "
                + ", ".join(f"{k} {b:,} B" for b, k in sizes[:5])
            )
        return lines

    def close(self) -> None:
        self.conn.close()


class PostgresStore:
    """`PostgresSaver` on its own database (the parent creates and drops it)."""

    kind = "postgres"

    def __init__(self, dsn: str) -> None:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        self.conn = psycopg.Connection.connect(
            dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        self.saver = PostgresSaver(self.conn)
        self.saver.setup()

    def _sizes(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT c.relname AS t, pg_total_relation_size(c.oid) AS b FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname = ANY(%s)",
            (list(PG_TABLES),),
        ).fetchall()
        return {r["t"]: int(r["b"]) for r in rows}

    def bytes(self) -> int:
        """pg_total_relation_size of the checkpoint tables (heap, TOAST and indexes)."""
        return sum(self._sizes().values())

    def blob_bytes(self) -> int:
        row = self.conn.execute(
            "SELECT (SELECT COALESCE(SUM(octet_length(checkpoint::text) + "
            "octet_length(metadata::text)), 0) FROM checkpoints) + "
            "(SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_blobs) + "
            "(SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_writes) AS b"
        ).fetchone()
        return int(row["b"])

    def breakdown(self, name: str) -> list[str]:
        sizes = self._sizes()
        lines = [f"{name}: {sum(sizes.values()):,} table bytes, {self.blob_bytes():,} blob bytes"]
        for table in PG_TABLES:
            rows = self.conn.execute(f"SELECT COUNT(*) AS c FROM {table}").fetchone()["c"]
            lines.append(f"  {table}: {rows:,} rows, {sizes.get(table, 0):,} B")
        return lines

    def close(self) -> None:
        self.conn.close()


# --- one system's run, in its own process --------------------------------------------------------


def rss_mb() -> float:
    """The process's resident set now (Linux /proc; else its peak so far)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """ru_maxrss of this process (kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6


def last_texts(result: Any, count: int = 8) -> list[str]:
    messages = (result or {}).get("messages") or []
    return [str(m.content) for m in messages[-count:] if isinstance(m, AIMessage) and m.content]


class Player:
    """One system, one thread: plays a turn, checks it, measures it."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name: str = spec["system"]
        self.workload: str = spec["workload"]
        self.base = base_system(self.name)
        self.store = (
            PostgresStore(spec["dsn"])
            if spec["checkpointer"] == "postgres"
            else SqliteStore(Path(spec["path"]))
        )
        self.counter = TokenCounter("o200k_base")
        self.counter.count_text("warm up")  # load the vocabulary outside the timings
        self.count = MemoCounter(self.counter)
        trim = (
            make_trimmer(spec["trim_tokens"], self.counter) if self.name.endswith("-trim") else None
        )
        self.recorder = Recorder()
        self.graph = BUILDERS[self.base](self.store.saver, self.recorder, trim)
        self.config = {"configurable": {"thread_id": f"bench-{self.name}-{spec['run']}"}}
        self.context = (
            {"project_root": spec["project_root"], "model": "offline"}
            if self.base == "ours"
            else None
        )
        self.per_turn_blobs = self.store.kind == "sqlite"
        self.turns: list[Turn] = []
        self.trail_kept: tuple[int, int] | None = None  # (records in the state, in the script)
        self.baseline_rss = rss_mb()

    def payload(self, turn: Turn) -> dict[str, Any]:
        payload: dict[str, Any] = {"messages": [HumanMessage(turn.text)]}
        if self.base == "swarm" and turn.force_router:
            payload["active_agent"] = ROUTER  # the handovers workload: back to the router
        return payload

    def fail(self, turn: Turn, why: str) -> None:
        raise SystemExit(f"{self.name}, turn {turn.n} ({turn.kind}): {why}")

    def play(self, n: int) -> dict[str, Any]:
        turn = turn_script(self.workload, n)
        self.recorder.start(turn)
        payload = self.payload(turn)
        kwargs: dict[str, Any] = {"durability": "sync"}
        if self.context is not None:
            kwargs["context"] = self.context
        start = time.perf_counter()
        result = self.graph.invoke(payload, self.config, **kwargs)
        elapsed_ms = (time.perf_counter() - start) * 1000
        # everything below is outside the timing
        self.check(turn, result)
        del result
        self.turns.append(turn)
        calls = self.recorder.calls
        answer = next(c for c in calls if c.answered)
        messages_tokens = self.count(answer.messages)
        schema_tokens = self.count.schemas(answer.tools)
        per_call = [self.count(c.messages) + self.count.schemas(c.tools) for c in calls]
        row = {
            "turn": n,
            "kind": turn.kind,
            "ms": elapsed_ms,
            "receiver_tokens": messages_tokens,
            "receiver_schema_tokens": schema_tokens,
            "receiver_tokens_with_schemas": messages_tokens + schema_tokens,
            "receiver_messages": len(answer.messages),
            "input_tokens": sum(per_call),
            # each call's [input tokens, stage, lane]: the latency model's input (bench_vs_peers)
            "calls": call_rows([c.place for c in calls], per_call),
            "model_calls": len(calls),
            "summarizer_calls": self.recorder.counts[SUMMARIZER],
            "checkpoint_bytes": self.store.bytes(),
            "blob_bytes": self.store.blob_bytes() if self.per_turn_blobs else None,
        }
        del answer, calls
        self.recorder.calls = []  # the requests it kept are not the system's memory
        row["rss_mb"] = rss_mb()
        return row

    def check(self, turn: Turn, result: Any) -> None:
        """Every turn did what the script says, or SystemExit naming what it did instead."""
        calls = self.recorder.calls
        made = Counter(c.agent for c in calls if c.agent != SUMMARIZER)
        wanted = expected_calls(self.name, turn)
        if made != wanted:
            self.fail(turn, f"model calls {dict(made)}, expected {dict(wanted)}")
        answers = [c for c in calls if c.answered]
        if len(answers) != 1 or answers[0].agent != turn.answerer:
            self.fail(turn, f"answered by {[c.agent for c in answers]}, not {turn.answerer}")
        if self.base == "supervisor":
            if turn.reply not in last_texts(result):
                self.fail(turn, "the reply is not among the turn's last messages")
        elif (last_texts(result, 1) or [""])[-1] != turn.reply:
            self.fail(turn, "the turn did not end with the reply")
        after = turn.after
        if self.base == "swarm" and turn.force_router:
            after = turn.answerer  # the next input moves it back to the router
        holder = result.get("active_agent") or ROUTER  # none set yet: the default, the router
        if self.base in ("ours", "swarm") and holder != after:
            self.fail(turn, f"{holder!r} holds the conversation, not {after}")
        for call in calls:
            for message in call.messages[-4:]:
                if isinstance(message, ToolMessage) and str(message.content).startswith("ERROR"):
                    self.fail(turn, f"{call.agent} saw an error: {str(message.content)[:200]}")
        if turn.kind == "full_history" and self.base == "ours":
            tail = answers[0].messages[-3:]
            if not any(
                isinstance(m, ToolMessage)
                and m.name == OUR_FULL_HISTORY
                and str(m.content).startswith(FULL_HISTORY_HEADER)
                for m in tail
            ):
                self.fail(turn, "the answer was not made with request_full_history's result")

    def verify_ours(self) -> None:
        """Our trail after the run: exactly the handovers and returns the script asks for."""
        values = self.graph.get_state(self.config).values
        got = [
            (
                r["kind"],
                r["from_agent"],
                r["to_agent"],
                r["return_condition"] if r["kind"] == "handover" else "",
            )
            for r in values.get("handovers") or []
        ]
        wanted: list[tuple[str, str, str, str]] = []
        for t in self.turns:
            if t.kind in ("request", "open", "chain"):
                wanted.append(("handover", t.holder, t.answerer, t.condition))
            if t.kind == "request":  # after_reply: the graph hands back without a model call
                wanted.append(("return", t.answerer, ROUTER, ""))
            if t.kind == "return":
                wanted.append(("return", t.holder, ROUTER, ""))
        # the state may keep only the newest records (the whole trail is in the write log)
        kept = wanted[len(wanted) - len(got) :] if len(got) <= len(wanted) else wanted
        if got != kept or (wanted and not got):
            first = next(
                (i for i, (a, b) in enumerate(zip(got, kept, strict=False)) if a != b),
                min(len(got), len(kept)),
            )
            raise SystemExit(
                f"ours: the trail differs from the script at kept record {first}: "
                f"{got[first : first + 1]} vs {kept[first : first + 1]} "
                f"({len(got)} records kept, {len(wanted)} in the script)"
            )
        self.trail_kept = (len(got), len(wanted))

    def finish(self) -> dict[str, Any]:
        if self.base == "ours":
            self.verify_ours()
        out = {
            "trail_kept": self.trail_kept,
            "breakdown": self.store.breakdown(self.name),
            "final_blob_bytes": self.store.blob_bytes(),
            "final_bytes": self.store.bytes(),
            "baseline_rss_mb": self.baseline_rss,
            "peak_rss_mb": peak_rss_mb(),
        }
        self.store.close()
        return out


def serve(conn: Any, spec: dict[str, Any]) -> None:
    """The child process: build the system, then play each turn the parent asks for."""
    try:
        player = Player(spec)
        conn.send(("ready", {"pid": os.getpid(), "baseline_rss_mb": player.baseline_rss}))
        while True:
            message = conn.recv()
            if message[0] == "turn":
                conn.send(("turn", player.play(message[1])))
            elif message[0] == "finish":
                conn.send(("done", player.finish()))
                return
            else:
                return
    except SystemExit as exc:
        conn.send(("error", str(exc)))
    except BaseException as exc:  # the parent reports it and stops every child
        conn.send(
            ("error", f"{spec['system']}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        )


def fingerprint(workload: str, turns: int) -> str:
    """A digest of the script's texts (the same for every system of a run)."""
    digest = hashlib.sha256()
    for n in range(1, turns + 1):
        t = turn_script(workload, n)
        digest.update(f"{t.kind}|{t.text}|{t.reply}\n".encode())
    return digest.hexdigest()[:12]
