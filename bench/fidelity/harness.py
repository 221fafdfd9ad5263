"""The systems of the fidelity benchmark and one conversation played on one of them.

Five systems (README.md has the details):

- `ours-terse`: this project with scripted chat models; the orchestrator hands over with a
  one-line summary, no decisions, no artifacts; the specialists hand back with the
  return's summary, decisions and artifacts (`artifacts` only when the tool takes it).
- `ours-offline`: this project with its built-in offline model (each profile's model wrapped
  to record its requests); it decides itself when to hand over and back.
- `swarm`, `swarm-trim`: langgraph-swarm (`create_agent` agents, `create_handoff_tool`s),
  the same script; `-trim` trims every model call with `trim_messages` to a per-turn budget.
- `supervisor`: langgraph-supervisor over `create_agent` workers, the same script.

`play(system, conversation)` plays every user turn, checks that the scripted systems did
what the script says, and returns the measurements of each handover's receiving request
(tokens and which planted facts it carries) and, for ours, the thread ledger's entries.
The peers are imported only when a peer system is played.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph, handover_tools
from specialist_handover.nodes import model_from_string
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, resolve_profiles
from specialist_handover.state import token_counter
from specialist_handover.state.defaults import INCLUDE_RECENT_TURNS, MAX_CONTEXT_TOKENS

from .corpus import ORCHESTRATOR, SPECIALISTS, Conversation, Fact, Item, Plan, has_term, norm

SYSTEMS = ("ours-terse", "ours-offline", "swarm", "swarm-trim", "supervisor")
OURS = ("ours-terse", "ours-offline")
PEERS = ("swarm", "swarm-trim", "supervisor")
HANDOVER_TOOL = "handover_to_specialist"
RETURN_TOOL = "return_to_orchestrator"
TOKENS_MODEL = "gpt-4o"
RECENT_USER_TURNS = INCLUDE_RECENT_TURNS // 2
"""User turns before a handover that today's package carries verbatim: its recent turns are
the last INCLUDE_RECENT_TURNS messages, the handover's own user turn among them, the others
alternating user and assistant (5 messages: turns h-2, h-1 and h)."""

ORCHESTRATOR_REPLIES = (
    "Noted.",
    "Got it.",
    "OK, noted.",
    "Understood.",
    "Thanks, noted.",
    "Sure.",
    "Makes sense.",
    "All right.",
)
SPECIALIST_REPLIES = (
    "On it.",
    "Understood, continuing.",
    "OK, I'll take that into account.",
    "Noted; next step when you're ready.",
    "Sure, go on.",
    "Got it, working through it.",
)
WELCOME_BACK = "Welcome back. What next?"
SUPERVISOR_CLOSING = "Done."


def peers_missing() -> str:
    """'' when langgraph-swarm and langgraph-supervisor import, else why not."""
    try:
        import langgraph_supervisor  # noqa: F401
        import langgraph_swarm  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return ""


def base_of(system: str) -> str:
    return {"ours-terse": "ours", "ours-offline": "offline", "swarm-trim": "swarm"}.get(
        system, system
    )


# --- recording the requests -----------------------------------------------------------------------


@dataclass
class Call:
    agent: str
    messages: list[Any]


@dataclass
class Recorder:
    """The current turn's plan and every model request of that turn."""

    plan: Plan | None = None
    calls: list[Call] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def start(self, plan: Plan) -> None:
        self.plan = plan
        self.calls = []
        self.counts = Counter()


def request_text(messages: list[Any]) -> str:
    """What a model is sent, as text: every message's content (system prompt included) and the
    arguments of the tool calls it carries. Normalised (lower case, single spaces)."""
    parts: list[str] = []
    for m in messages:
        content = m.content
        if isinstance(content, list):
            for block in content:
                if isinstance(block, str):
                    parts.append(block)
                elif isinstance(block, dict) and block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
        else:
            parts.append(str(content))
        for call in getattr(m, "tool_calls", None) or []:
            parts.append(json.dumps(call.get("args") or {}, ensure_ascii=False))
    return norm("\n".join(parts))


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


def _call(name: str, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "id": call_id, "args": args, "type": "tool_call"}


class ScriptedModel(BaseChatModel):
    """Zero-latency and deterministic: one instance per agent; acts on the turn's plan."""

    system: str
    agent: str
    recorder: Any
    conversation: Any = None  # the Conversation being played (set per conversation)
    return_takes_artifacts: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted-fidelity"

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        rec: Recorder = self.recorder
        plan: Plan = rec.plan  # type: ignore[assignment]
        made = rec.counts[self.agent]
        rec.counts[self.agent] += 1
        rec.calls.append(Call(self.agent, list(messages)))
        base = base_of(self.system)
        call_id = f"call_{plan.n}_{self.agent}_{made}"
        kind, agent = plan.kind, self.agent
        if agent == ORCHESTRATOR:
            if base == "supervisor" and kind != "chat":
                if made == 0:
                    worker = plan.target if kind == "handover" else plan.holder
                    return _result(
                        AIMessage(
                            content="", tool_calls=[_call(f"transfer_to_{worker}", call_id, {})]
                        )
                    )
                return _result(AIMessage(content=SUPERVISOR_CLOSING))
            if kind == "handover" and made == 0:
                h = plan.handover
                assert h is not None
                if base == "ours":
                    args = {
                        "specialist_profile": h.to,
                        "topic": h.topic,
                        "summary": h.summary,
                        "handover_reason": f"{h.topic} is the {h.to.replace('_', ' ')}'s field.",
                        "return_condition": "user_request",
                    }
                    return _result(
                        AIMessage(content="", tool_calls=[_call(HANDOVER_TOOL, call_id, args)])
                    )
                return _result(
                    AIMessage(content="", tool_calls=[_call(f"transfer_to_{h.to}", call_id, {})])
                )
            if kind == "return":
                return _result(AIMessage(content=WELCOME_BACK))
            return _result(
                AIMessage(content=ORCHESTRATOR_REPLIES[plan.n % len(ORCHESTRATOR_REPLIES)])
            )
        # a specialist
        if kind == "return" and agent == plan.holder and made == 0:
            r = plan.ret
            assert r is not None
            if base == "ours":
                args: dict[str, Any] = {"summary": r.summary, "decisions": list(r.decisions)}
                if self.return_takes_artifacts:
                    args["artifacts"] = list(r.artifacts)
                return _result(
                    AIMessage(content="", tool_calls=[_call(RETURN_TOOL, call_id, args)])
                )
            if base == "swarm":
                return _result(
                    AIMessage(
                        content=r.text(),
                        tool_calls=[_call(f"transfer_to_{ORCHESTRATOR}", call_id, {})],
                    )
                )
            return _result(AIMessage(content=r.text()))  # supervisor: the worker's last answer
        if agent in (plan.target, plan.holder) and made == 0:
            return _result(AIMessage(content=SPECIALIST_REPLIES[plan.n % len(SPECIALIST_REPLIES)]))
        return _result(AIMessage(content=f"UNSCRIPTED call of {agent} in turn {plan.n}"))


class RecordingModel(BaseChatModel):
    """Wraps a chat model (the offline one): records each request under `agent`, then
    delegates the call unchanged."""

    agent: str
    recorder: Any
    inner: Any

    @property
    def _llm_type(self) -> str:
        return "recording-fidelity"

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        rec: Recorder = self.recorder
        rec.counts[self.agent] += 1
        rec.calls.append(Call(self.agent, list(messages)))
        return self.inner._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


# --- the systems ----------------------------------------------------------------------------------


def return_takes_artifacts() -> bool:
    """Whether our `return_to_orchestrator` has an `artifacts` argument yet."""
    for tool in handover_tools(SPECIALISTS[0]):
        if tool.name == RETURN_TOOL:
            return "artifacts" in tool.args
    return False


class Dynamic:
    """The trimming budget of swarm-trim, set before each turn (one trimmer per budget)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._trimmers: dict[int, Any] = {}

    def __call__(self, messages: list[Any]) -> list[Any]:
        trim = self._trimmers.get(self.budget)
        if trim is None:
            from peers_workloads import make_trimmer

            trim = self._trimmers[self.budget] = make_trimmer(
                self.budget, token_counter(TOKENS_MODEL)
            )
        return list(trim(messages))


@dataclass
class Built:
    system: str
    graph: Any
    saver: InMemorySaver
    recorder: Recorder
    scripted: list[ScriptedModel]
    trim: Dynamic | None = None
    system_tokens: dict[str, int] = field(default_factory=dict)
    """A peer agent's system prompt in tokens: `create_agent` sends it beside the messages the
    trimming middleware trims, so swarm-trim's budget at a handover is our request's tokens
    less the receiving agent's prompt (the whole request then costs what ours did)."""


def _scripted(system: str, recorder: Recorder, takes_artifacts: bool) -> dict[str, ScriptedModel]:
    return {
        name: ScriptedModel(
            system=system, agent=name, recorder=recorder, return_takes_artifacts=takes_artifacts
        )
        for name in (ORCHESTRATOR, *SPECIALISTS)
    }


def build(system: str, trim_tokens: int = MAX_CONTEXT_TOKENS) -> Built:
    """One system's graph (compiled once, a new thread per conversation)."""
    recorder = Recorder()
    saver = InMemorySaver()
    base = base_of(system)
    if base == "ours":
        models = _scripted(system, recorder, return_takes_artifacts())
        graph = build_graph(
            checkpointer=saver,
            model={
                ORCHESTRATOR_PROFILE: models[ORCHESTRATOR],
                **{s: models[s] for s in SPECIALISTS},
            },
        )
        return Built(system, graph, saver, recorder, list(models.values()))
    if base == "offline":
        offline = model_from_string("offline")
        wrapped = {
            ORCHESTRATOR_PROFILE: RecordingModel(
                agent=ORCHESTRATOR, recorder=recorder, inner=offline
            ),
            **{s: RecordingModel(agent=s, recorder=recorder, inner=offline) for s in SPECIALISTS},
        }
        graph = build_graph(checkpointer=saver, model=wrapped)
        return Built(system, graph, saver, recorder, [])
    missing = peers_missing()
    if missing:
        raise SystemExit(
            f'{system} needs the bench extra: .venv/bin/pip install -e ".[bench]" ({missing})'
        )
    from langchain.agents import create_agent
    from langgraph_supervisor import create_supervisor
    from langgraph_swarm import create_handoff_tool, create_swarm

    models = _scripted(system, recorder, False)
    profiles = resolve_profiles(None)
    trim = Dynamic(trim_tokens) if system.endswith("-trim") else None
    middleware: list[Any] = []
    if trim is not None:
        bench_dir = str(Path(__file__).resolve().parents[1])
        if bench_dir not in sys.path:
            sys.path.insert(0, bench_dir)
        from peers_workloads import TrimMessages

        middleware = [TrimMessages(trim)]
    if base == "swarm":
        router = create_agent(
            models[ORCHESTRATOR],
            tools=[
                create_handoff_tool(agent_name=s, description=profiles[s].description)
                for s in SPECIALISTS
            ],
            system_prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
            middleware=middleware,
            name=ORCHESTRATOR,
        )
        specialists = [
            create_agent(
                models[s],
                tools=[
                    create_handoff_tool(
                        agent_name=ORCHESTRATOR, description="Hand back to the orchestrator"
                    )
                ],
                system_prompt=profiles[s].prompt,
                middleware=middleware,
                name=s,
            )
            for s in SPECIALISTS
        ]
        graph = create_swarm([router, *specialists], default_active_agent=ORCHESTRATOR).compile(
            checkpointer=saver
        )
    else:
        workers = [
            create_agent(models[s], tools=[], system_prompt=profiles[s].prompt, name=s)
            for s in SPECIALISTS
        ]
        graph = create_supervisor(
            workers,
            model=models[ORCHESTRATOR],
            prompt=profiles[ORCHESTRATOR_PROFILE].prompt,
            supervisor_name=ORCHESTRATOR,
        ).compile(checkpointer=saver)
    counter = token_counter(TOKENS_MODEL)
    prompts = {ORCHESTRATOR: profiles[ORCHESTRATOR_PROFILE].prompt}
    prompts.update({s: profiles[s].prompt for s in SPECIALISTS})
    system_tokens = {n: counter.count_message(SystemMessage(p)) for n, p in prompts.items()}
    return Built(system, graph, saver, recorder, list(models.values()), trim, system_tokens)


# --- matching facts and ledger entries -------------------------------------------------------------


def _words(text: str) -> set[str]:
    return {w.strip(".,;:()[]'\"`") for w in norm(text).split()} - {""}


def term_matches(entry_text: str, term: str) -> bool:
    """An entry holds a term: the term is in it, or (a long term, such as a return's whole
    decision) the entry is a piece of it or shares 60% of the shorter one's words."""
    e, t = norm(entry_text), norm(term)
    if t in e:
        return True
    if len(t.split()) < 4:
        return False
    if len(e) >= 12 and e in t:
        return True
    we, wt = _words(e), _words(t)
    shorter = min(len(we), len(wt)) or 1
    return len(we & wt) / shorter >= 0.6


def entry_matches(entry: dict[str, Any], item: Item, tolerance: int = 1) -> bool:
    """A ledger entry is this labelled item: an entry the user's message made lies within
    `tolerance` turns of the item's turn; one a handover, return or outcome made may repeat
    any item stated up to its own turn; and it holds one of the item's terms."""
    turn = int(entry.get("turn") or 0)
    if entry.get("source") == "user" and item.source == "user":
        if abs(turn - item.turn) > tolerance:
            return False
    elif item.turn > turn + tolerance:
        return False
    text = str(entry.get("text", ""))
    return any(term_matches(text, t) for t in item.terms)


def noise(entries: list[dict[str, Any]], conv: Conversation) -> dict[str, Any]:
    """Ledger entries matching neither a planted fact nor a labelled real item."""
    items = conv.items()
    unmatched = [e for e in entries if not any(entry_matches(e, i) for i in items)]
    by_source = Counter(str(e.get("source")) for e in entries)
    return {
        "entries": len(entries),
        "noise": len(unmatched),
        "by_source": dict(by_source),
        "noise_entries": [
            {k: e.get(k) for k in ("turn", "source", "kind", "text", "status")} for e in unmatched
        ],
    }


def superseded_check(entries: list[dict[str, Any]], conv: Conversation) -> list[dict[str, Any]]:
    """Changed minds whose old value the ledger still holds as current: an entry recorded
    before the change that names the old value (and not the new) and is not superseded."""
    out = []
    for f in conv.facts:
        if not f.changed:
            continue
        stale = [
            e
            for e in entries
            if e.get("status") == "current"
            and int(e.get("turn") or 0) < f.turn
            and any(has_term(norm(e.get("text", "")), t) for t in f.old_terms)
            and not any(has_term(norm(e.get("text", "")), t) for t in f.terms)
        ]
        new_current = any(
            e.get("status") == "current"
            and all(has_term(norm(e.get("text", "")), t) for t in f.terms)
            for e in entries
        )
        out.append(
            {
                "fact": f.id,
                "old_current": [e.get("text") for e in stale],
                "new_current": new_current,
            }
        )
    return out


def due_facts(conv: Conversation, turn: int, system: str) -> tuple[list[Fact], list[Fact]]:
    """The planted facts stated before a handover at `turn` (user turns before it, and
    returns before it), and those not applicable to the system (ours-offline's specialists
    write their own return summary, so the script's return facts never exist there)."""
    due, na = [], []
    for f in conv.facts:
        if f.turn >= turn:
            continue
        if f.source == "return" and system == "ours-offline":
            na.append(f)
        else:
            due.append(f)
    return due, na


# --- playing one conversation ----------------------------------------------------------------------


def _expected(system: str, plan: Plan) -> Counter:
    base = base_of(system)
    if plan.kind == "chat":
        return Counter({ORCHESTRATOR: 1})
    if base == "supervisor":
        worker = plan.target if plan.kind == "handover" else plan.holder
        return Counter({ORCHESTRATOR: 2, worker: 1})
    if plan.kind == "handover":
        return Counter({ORCHESTRATOR: 1, plan.target: 1})
    if plan.kind == "return":
        return Counter({plan.holder: 1, ORCHESTRATOR: 1})
    return Counter({plan.holder: 1})


def _trail_key(record: dict[str, Any]) -> tuple[Any, ...]:
    return (
        record.get("kind"),
        record.get("handover_id"),
        record.get("to_agent"),
        record.get("from_agent"),
        record.get("time"),
    )


class TokenTally:
    """Token counts of requests, each message's count remembered by its content."""

    def __init__(self) -> None:
        self.counter = token_counter(TOKENS_MODEL)
        self.memo: dict[tuple[Any, ...], int] = {}

    def __call__(self, messages: list[Any]) -> int:
        from specialist_handover.state.tokens import REPLY_PRIMING

        total = 0
        for m in messages:
            calls = getattr(m, "tool_calls", None)
            key = (
                m.type,
                getattr(m, "name", None),
                str(m.content),
                repr(calls) if calls else None,
                getattr(m, "tool_call_id", None),
            )
            found = self.memo.get(key)
            if found is None:
                found = self.memo[key] = self.counter.count_message(m)
            total += found
        return total + REPLY_PRIMING


def play(
    built: Built,
    conv: Conversation,
    *,
    trim_budgets: dict[int, int] | None = None,
    default_trim: int = MAX_CONTEXT_TOKENS,
    count: TokenTally | None = None,
) -> dict[str, Any]:
    """Play every user turn of `conv` on `built`; measure each handover's receiving request."""
    system = built.system
    base = base_of(system)
    count = count or TokenTally()
    rec = built.recorder
    for model in built.scripted:
        model.conversation = conv
    thread = f"fidelity-{system}-{conv.id}"
    config = {"configurable": {"thread_id": thread}}
    root = tempfile.mkdtemp(prefix="fidelity-")
    context = {"project_root": root, "model": "offline"} if base in ("ours", "offline") else None
    ledger: dict[str, dict[str, Any]] = {}
    ledger_order: list[str] = []
    trail_seen: set[tuple[Any, ...]] = set()
    handovers: list[dict[str, Any]] = []
    problems: list[str] = []
    scripted_at = {h.turn: i for i, h in enumerate(conv.handovers)}
    started = time.perf_counter()
    try:
        for plan in conv.plans:
            rec.start(plan)
            if built.trim is not None:
                budget = (trim_budgets or {}).get(plan.n)
                if budget is None:
                    built.trim.budget = default_trim
                else:  # equal tokens: our request's, less the receiver's system prompt
                    receiver = plan.target if plan.kind == "handover" else plan.holder
                    built.trim.budget = max(1, budget - built.system_tokens.get(receiver, 0))
            kwargs: dict[str, Any] = {}
            if context is not None:
                kwargs["context"] = context
            result = built.graph.invoke({"messages": [HumanMessage(plan.text)]}, config, **kwargs)
            values: dict[str, Any] = {}
            if base in ("ours", "offline"):
                values = built.graph.get_state(config).values
                for entry in values.get("ledger") or []:
                    key = str(entry.get("id"))
                    if key not in ledger:
                        ledger_order.append(key)
                    ledger[key] = dict(entry)
            # which handovers happened in this turn, and to whom
            events: list[tuple[str, int | None]] = []  # (target, scripted index)
            if base == "offline":
                for record in values.get("handovers") or []:
                    key = _trail_key(record)
                    if key in trail_seen:
                        continue
                    trail_seen.add(key)
                    if record.get("kind") == "handover":
                        target = str(record.get("to_agent"))
                        index = scripted_at.get(plan.n)
                        if index is not None and conv.handovers[index].to != target:
                            index = None
                        events.append((target, index))
            else:
                made = Counter(c.agent for c in rec.calls)
                wanted = _expected(system, plan)
                if made != wanted:
                    problems.append(
                        f"turn {plan.n} ({plan.kind}): model calls {dict(made)}, "
                        f"expected {dict(wanted)}"
                    )
                for c in rec.calls:
                    for m in c.messages[-3:]:
                        if isinstance(m, ToolMessage) and str(m.content).startswith("ERROR"):
                            problems.append(f"turn {plan.n}: {c.agent} saw {str(m.content)[:160]}")
                if base in ("ours", "swarm"):
                    holder = (result or {}).get("active_agent") or ORCHESTRATOR
                    if holder == ORCHESTRATOR_PROFILE:
                        holder = ORCHESTRATOR
                    after = plan.target if plan.kind in ("handover", "return") else plan.holder
                    if holder != after:
                        problems.append(f"turn {plan.n}: {holder} holds it, not {after}")
                if plan.kind == "handover":
                    events.append((plan.target, scripted_at[plan.n]))
            for target, index in events:
                call = next((c for c in rec.calls if c.agent == target), None)
                handovers.append(
                    _measure(conv, system, plan.n, target, index, call, values, ledger, count)
                )
            del result
    finally:
        try:
            built.saver.delete_thread(thread)
        except Exception:  # noqa: BLE001 - freeing memory only
            pass
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.perf_counter() - started
    entries = [ledger[k] for k in ledger_order]
    happened = sorted({h["scripted_index"] for h in handovers if h["scripted_index"] is not None})
    out: dict[str, Any] = {
        "system": system,
        "conversation": conv.id,
        "turns": conv.n_turns,
        "seconds": elapsed,
        "handovers": handovers,
        "scripted_handovers": len(conv.handovers),
        "scripted_happened": len(happened),
        "unscripted_handovers": sum(h["scripted_index"] is None for h in handovers),
        "problems": problems,
    }
    if base in ("ours", "offline"):
        out["ledger_present"] = "ledger" in values
        out["ledger"] = [
            {k: e.get(k) for k in ("id", "kind", "text", "source", "by", "turn", "status")}
            for e in entries
        ]
        out["noise"] = noise(entries, conv)
        out["superseded"] = superseded_check(entries, conv)
    return out


def _measure(
    conv: Conversation,
    system: str,
    turn: int,
    target: str,
    index: int | None,
    call: Call | None,
    values: dict[str, Any],
    ledger: dict[str, dict[str, Any]],
    count: TokenTally,
) -> dict[str, Any]:
    """One handover's receiving request: tokens, the due facts delivered or missed (and why)."""
    due, na = due_facts(conv, turn, system)
    row: dict[str, Any] = {
        "turn": turn,
        "target": target,
        "scripted_index": index,
        "received": call is not None,
        "due": [f.id for f in due],
        "not_applicable": [f.id for f in na],
    }
    if call is None:
        row.update(tokens=None, delivered=[], missed=[f.id for f in due], stale=[], why={})
        return row
    text = request_text(call.messages)
    delivered = [f.id for f in due if all(has_term(text, t) for t in f.terms)]
    missed = [f for f in due if f.id not in delivered]
    stale = [
        f.id
        for f in due
        if f.changed
        and any(has_term(text, t) for t in f.old_terms)
        and not all(has_term(text, t) for t in f.terms)
    ]
    row.update(
        tokens=count(call.messages),
        messages=len(call.messages),
        system_tokens=count([m for m in call.messages if isinstance(m, SystemMessage)]),
        delivered=delivered,
        missed=[f.id for f in missed],
        stale=stale,
    )
    package = values.get("handover") if values else None
    if system in OURS and isinstance(package, dict):
        estimated = int(package.get("estimated_tokens") or 0)
        limit = int(package.get("max_context_tokens") or MAX_CONTEXT_TOKENS)
        row["package"] = {
            "specialist": package.get("specialist"),
            "estimated_tokens": estimated,
            "max_context_tokens": limit,
            "within_budget": estimated <= limit,
            "ledger_lines": len(package.get("ledger") or []),
            "ledger_omitted": package.get("ledger_omitted"),
            "earlier_turns": len(package.get("earlier_turns") or []),
        }
        row["why"] = {f.id: _why(f, turn, package, ledger, text) for f in missed}
    else:
        row["why"] = {}
    return row


def _why(
    fact: Fact, turn: int, package: dict[str, Any], ledger: dict[str, dict[str, Any]], text: str
) -> str:
    """Our best reading of why a fact did not reach the specialist."""
    distance = turn - fact.turn
    where = "returned" if fact.source == "return" else "stated"
    present = [t for t in fact.terms if has_term(text, t)]
    item = Item(fact.turn, fact.kind, fact.terms, fact.source, fact.id)
    entries = [e for e in ledger.values() if entry_matches(e, item)]
    complete = [e for e in entries if all(has_term(norm(e.get("text", "")), t) for t in fact.terms)]
    lines = " ".join(package.get("ledger") or [])
    if not ledger:
        reason = f"{where} {distance} turns before; no ledger entries in this thread"
    elif not entries:
        reason = f"{where} {distance} turns before; no ledger entry holds it"
    elif not complete:
        reason = (
            f"{where} {distance} turns before; the ledger entry lacks the terms "
            f"({str(entries[0].get('text'))[:80]!r})"
        )
    elif all(e.get("status") == "superseded" for e in complete):
        reason = f"{where} {distance} turns before; its ledger entry is marked superseded"
    elif not any(has_term(norm(lines), t) for t in fact.terms):
        reason = (
            f"{where} {distance} turns before; in the ledger but not among the package's "
            f"{len(package.get('ledger') or [])} ledger lines (omitted: "
            f"{package.get('ledger_omitted')})"
        )
    else:
        reason = f"{where} {distance} turns before; in the package's ledger lines but cut"
    if present:
        reason += f"; partly present: {present}"
    return reason


def play_many(
    system: str,
    convs: list[Conversation],
    *,
    trim_budgets: dict[str, dict[int, int]] | None = None,
    default_trim: int = MAX_CONTEXT_TOKENS,
    progress: Any = None,
) -> list[dict[str, Any]]:
    """Build the system once and play each conversation on its own thread."""
    built = build(system, default_trim)
    count = TokenTally()
    out = []
    for conv in convs:
        result = play(
            built,
            conv,
            trim_budgets=(trim_budgets or {}).get(conv.id),
            default_trim=default_trim,
            count=count,
        )
        out.append(result)
        if progress is not None:
            progress(result)
    return out


def job(args: tuple[str, list[str], dict[str, dict[int, int]] | None, int]) -> list[dict[str, Any]]:
    """A worker process's job: one system on some conversations (loaded in the worker)."""
    from .corpus import load_corpus

    system, ids, budgets, default_trim = args
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    convs = load_corpus(ids)
    return play_many(system, convs, trim_budgets=budgets, default_trim=default_trim)
