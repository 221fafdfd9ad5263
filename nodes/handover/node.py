"""The handover node: carries out the transfer an agent asked for, or refuses it; and the
handover trail it writes.

An agent's transfer tool (`transfer.py`) ends its run with the call unanswered;
this node answers every pending call of that reply with exactly one tool
message, so the tool-call history stays valid. The chosen call is carried out
or refused, any other is refused. A handover builds the stage-1 package into
`state["handover"]`, appends its briefing entry (once per tool-call id, so a
resumed crash does not duplicate it) and makes the target `active_agent`; a
return (`return_to_orchestrator`, or a handover to the orchestrator's profile)
gives the conversation back to the orchestrator. On refusal the caller keeps
control and sees the `ERROR:` result.

The trail is the state's append-only `handovers` (the agent's node writes records too:
`return_update`, `refused_calls`). `turn_trail` lists the hops of the current user turn,
returns included; the agent that takes a new user message starts it afresh. This node
counts its handovers against `max_handovers_per_turn`, so a model that keeps handing the
same task back and forth is stopped however often control returns.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry
from ...state import (
    ORCHESTRATOR,
    ActiveHandover,
    HandoverContext,
    HandoverPackage,
    HandoverRecord,
    HandoverState,
    HoldUsage,
    TokenCounter,
    coerce_context,
    usable,
)
from ...state.schema import HANDOVER_NODE
from ..briefing.outcomes import last_time, write_outcome
from ..briefing.shared import put_briefing
from ..briefing.writer import now_utc
from ..history.conversation import (
    GRAPH_MADE,
    graph_reply,
    last_ai_index,
    pending_tool_calls,
    recent_turns,
)
from ..ledger.entries import outcome_entries, stated_entries
from ..ledger.memory import ThreadMemory, thread_memory
from ..redaction import redact
from ..tools.names import HANDOVER, RETURN
from .arguments import MODEL_ARGUMENTS, to_itself
from .cost import cost_event, full_history_tokens
from .handover_to_specialist import HandoverOutcome, perform_handover, prepare_handover
from .review import Reissued, ReviewResolved, ReviewSuperseded, review_handover
from .transfer import TRANSFERS, chosen_transfer, transfer_refusal

CounterFor = Callable[[str, HandoverContext], TokenCounter]
"""(profile, context) -> the token counter of the model that profile's agent uses."""
NOT_RUN = "ERROR: not run: the same reply handed the conversation on."
NO_ONE_TO_RETURN_TO = "ERROR: the orchestrator has no one to return to; answer the user."
LOOP_STOPPED = "handover_loop_stopped"
"""Metadata flag of the answer that ends a turn whose handovers were looping."""
TURN_ENDED = "handover_turn_ended"
"""Metadata flag of the note that ends a turn whose handover a new message superseded."""


# --- the trail ------------------------------------------------------------------------------


def trail_record(
    kind: str,
    *,
    from_agent: str,
    to_agent: str,
    reason: str = "",
    topic: str = "",
    return_condition: str = "",
    estimated_tokens: int = 0,
    briefing_path: str = "",
    error: str | None = None,
    **figures: Any,
) -> HandoverRecord:
    """One trail entry with the current UTC time; its free texts redacted (a refused
    handover's arguments come straight from a model, secrets included)."""
    record: dict[str, Any] = {
        "kind": kind,
        "from_agent": from_agent,
        "to_agent": redact(to_agent).text,
        "reason": redact(reason).text,
        "topic": redact(topic).text,
        "return_condition": return_condition,
        "estimated_tokens": estimated_tokens,
        "briefing_path": briefing_path,
        "time": now_utc().strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if error is not None:
        record["error"] = redact(error).text
    record.update({k: v for k, v in figures.items() if v is not None})  # ids, token figures
    return record  # type: ignore[return-value]


def refused_record(agent: str, args: dict[str, Any], error: str) -> HandoverRecord:
    """The `refused` record of a handover call with these arguments."""
    target = args.get("specialist_profile")
    return trail_record(
        "refused",
        from_agent=agent,
        to_agent="" if target is None else str(target),
        reason=str(args.get("handover_reason") or ""),
        topic=str(args.get("topic") or ""),
        return_condition=str(args.get("return_condition") or ""),
        error=error,
    )


def package_record(
    kind: str, caller: str, package: HandoverPackage, full_history: int, **figures: Any
) -> HandoverRecord:
    """The trail record of a package handed over (`kind` "handover") or sent with a consult's
    question ("consult"): what it cost against the `full_history`, and its ledger figures
    (entries shown, entries left out, earlier turns carried)."""
    return trail_record(
        kind,
        from_agent=caller,
        to_agent=package["specialist"],
        reason=package["reason"],
        topic=package["topic"],
        estimated_tokens=package["estimated_tokens"],
        briefing_path=package["briefing_file"],
        handover_id=package["handover_id"],
        full_history_tokens=full_history,
        **figures,
        ledger_entries=len(package.get("ledger") or []),
        ledger_omitted=int(package.get("ledger_omitted") or 0),
        earlier_turns=len(package.get("earlier_turns") or []),
    )


def return_update(
    agent: str, handover: dict[str, Any], reason: str, usage: HoldUsage | None = None
) -> dict[str, Any]:
    """The state update of `agent` handing the conversation back to the orchestrator; its
    record carries the hold's `usage` (model calls and tokens since the handover)."""
    condition = handover.get("root_return_condition") or handover.get("return_condition") or ""
    return {
        "active_agent": ORCHESTRATOR,
        "handover_depth": 0,
        "agent_turns": 0,
        "handovers": [
            trail_record(
                "return",
                from_agent=agent,
                to_agent=ORCHESTRATOR,
                reason=reason,
                topic=str(handover.get("topic") or ""),
                return_condition=str(condition),
                handover_id=handover.get("handover_id"),
                usage=usage,
            )
        ],
    }


def refused_calls(agent: str, added: list[Any]) -> list[HandoverRecord]:
    """A `refused` record for each handover call among `added` that the agent's own tool node
    answered with an error (its arguments failed the transfer tool's schema: an unknown or own
    target, a missing topic): the trail keeps every refused handover, wherever it was refused."""
    calls = {c["id"]: c for m in added for c in getattr(m, "tool_calls", None) or []}
    return [
        refused_record(agent, call.get("args") or {}, str(m.content))
        for m in added
        if (call := calls.get(getattr(m, "tool_call_id", None))) is not None
        and call["name"] == HANDOVER
        and getattr(m, "status", "") == "error"
    ]


def return_hop(agent: str) -> str:
    """A return in the turn trail."""
    return f"{agent} -> {ORCHESTRATOR} (returned)"


TRAIL_LINES = {
    "handover": "- {time} handover {from_agent} -> {to_agent} on '{topic}' ({return_condition}, "
    "{estimated_tokens} tokens): {reason}",
    "return": "- {time} {from_agent} returned: {reason}",
    "consult": "- {time} consult {from_agent} -> {to_agent} on '{topic}' ({estimated_tokens} "
    "tokens): {reason}",
    "refused": "- {time} refused {from_agent} -> {to_agent}: {error}",
}
"""How `describe_trail` shows each kind of record (any other kind as a refusal)."""


def describe_trail(records: list[HandoverRecord], limit: int = 8) -> str:
    """The last `limit` trail entries, one line each, for the orchestrator's prompt."""
    lines = [
        TRAIL_LINES.get(str(r["kind"]), TRAIL_LINES["refused"]).format_map({"error": "", **r})
        for r in records[-limit:]
    ]
    return "\n".join(lines) or "(no handovers yet)"


# --- the node -------------------------------------------------------------------------------


def _profile_of(agent: str) -> str:
    return ORCHESTRATOR_PROFILE if agent == ORCHESTRATOR else agent


def tool_answer(call: dict[str, Any], content: str, message_id: str | None = None) -> ToolMessage:
    """The tool result for a handover or consult call: a refusal (`ERROR: ...`) carries status
    "error"."""
    return ToolMessage(
        content=content,
        tool_call_id=call["id"],
        name=call["name"],
        id=message_id or f"tool-{uuid.uuid4().hex}",
        status="error" if content.startswith("ERROR") else "success",
    )


def other_answers(pending: list[Any], call: Any, not_run: str) -> list[BaseMessage]:
    """The answers to a reply's pending calls besides the chosen transfer `call`: another
    transfer refused, any other call `not_run`."""
    return [
        tool_answer(c, transfer_refusal(c, call) if c["name"] in TRANSFERS else not_run)
        for c in pending
        if c is not call
    ]


def asked_at(messages: Sequence[BaseMessage]) -> datetime | None:
    """When the caller asked for the handover: a resumed run reuses that time (and file date)."""
    i = last_ai_index(messages)
    stamp = (messages[i].response_metadata or {}).get("created_at") if i >= 0 else None
    try:
        return datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None


def graph_supplied(
    state: HandoverState, ctx: HandoverContext
) -> tuple[dict[str, Any], ThreadMemory]:
    """What the graph gives a package itself: the arguments a model does not (recent turns,
    project root, budgets), and the thread's memory (ledger and turns)."""
    messages = state.get("messages", [])
    supplied = {
        "recent_turns": recent_turns(messages, ctx.include_recent_turns),
        "project_root": ctx.project_root,
        "max_context_tokens": ctx.max_context_tokens,
        "include_recent_turns": ctx.include_recent_turns,
    }
    memory = thread_memory(
        messages=messages,
        ledger=state.get("ledger"),
        mark=state.get("ledger_mark"),
        recall=state.get("recall"),
        include_recent_turns=ctx.include_recent_turns,
    )
    return supplied, memory


def share_briefing(store: Any, outcome: HandoverOutcome, caller: str) -> None:
    """Put a handover's briefing entry into the graph's store too (when it has one), for other
    threads."""
    package = outcome.package
    if store is not None and outcome.when is not None:
        put_briefing(
            store,
            specialist=package["specialist"],
            topic=package["topic"],
            handover_id=package["handover_id"],
            markdown=outcome.entry,
            created_at=outcome.when,
            from_agent=caller,
        )


def check_handover(
    *, caller: str, target: Any, chain: list[str], depth: int, max_depth: int
) -> str | None:
    """The refusal text for a handover the graph does not allow, or None."""
    caller_profile = _profile_of(caller)
    if isinstance(target, str) and target.strip() == caller_profile:
        return to_itself(caller_profile)
    if target == ORCHESTRATOR_PROFILE:
        return None  # a specialist handing back: a return, not a new handover
    if isinstance(target, str) and target in chain:
        path = " -> ".join([ORCHESTRATOR, *chain, target])
        return (
            f"ERROR: circular handover refused: {path}. {target} is already in this chain; "
            "finish the task or return to the orchestrator."
        )
    if depth >= max_depth:
        path = " -> ".join([ORCHESTRATOR, *chain])
        return (
            f"ERROR: handover depth limit reached (max_handover_depth={max_depth}, chain: "
            f"{path}); finish the task yourself or return to the orchestrator."
        )
    return None


def ended_note(
    caller: str, profiles: ProfileRegistry, undone: str, ended: ReviewSuperseded, label: bool
) -> AIMessage:
    """The caller's note that ends the turn of a review that `ended` without a decision: it
    did not do what `undone` says."""
    said = (
        f"✅ Marked as resolved: I did not {undone}. Tell me what you would like next."
        if isinstance(ended, ReviewResolved)
        else f"⏸️ I did not {undone}: your new message came before the review, so I'm answering "
        "that instead."
    )
    return graph_reply(caller, profiles[_profile_of(caller)], said, TURN_ENDED, label=label)


def make_handover_node(  # type: ignore[no-untyped-def]
    profiles: ProfileRegistry, counter_for: CounterFor, *, label: bool = False
):
    """The `handover` node of one build: its allow-list, and the target's token counter."""

    known = frozenset([ORCHESTRATOR, *profiles.specialists])

    def handover(state: HandoverState, runtime: Runtime[HandoverContext]) -> Command:  # type: ignore[type-arg]
        """Carry out (or refuse) the calling agent's handover; then go to whoever holds the
        conversation, or end the run when this node ended the turn."""
        update = run_handover(
            state, coerce_context(runtime.context), profiles, counter_for, runtime.store, label
        )
        for record in update.get("handovers") or []:
            if record["kind"] == "handover":
                get_stream_writer()(cost_event(record))  # one per handover (stream_mode="custom")
        added = update.get("messages") or []
        flags = added[-1].response_metadata if added and isinstance(added[-1], AIMessage) else {}
        if flags.get(LOOP_STOPPED) or flags.get(TURN_ENDED):  # its answer ends the turn
            return Command(update=update, goto=END)
        if added and isinstance(added[-1], AIMessage) and added[-1].tool_calls:
            return Command(update=update, goto=HANDOVER_NODE)  # an edited call, reviewed again
        return Command(update=update, goto=holder({**state, **update}, known))

    return handover


def run_handover(
    state: HandoverState,
    ctx: HandoverContext,
    profiles: ProfileRegistry,
    counter_for: CounterFor,
    store: Any = None,
    label: bool = False,
) -> dict[str, Any]:
    """The handover node's update for this state (`store`: the graph's, for shared briefings
    and outcomes; `label`: its notes open with their speaker's label)."""
    state = usable(state)
    caller = state.get("active_agent") or ORCHESTRATOR
    messages = state.get("messages", [])
    pending = pending_tool_calls(messages)
    call = chosen_transfer(pending)
    if call is None:
        return {}
    answers = other_answers(pending, call, NOT_RUN)
    if call["name"] == RETURN and caller == ORCHESTRATOR:
        return {"messages": [tool_answer(call, NO_ONE_TO_RETURN_TO), *answers]}
    current: dict[str, Any] = dict(state.get("handover") or {})
    chain = list(current.get("chain") or []) if caller != ORCHESTRATOR else []
    depth = state.get("handover_depth", 0) if caller != ORCHESTRATOR else 0
    trail = list(state.get("turn_trail") or [])
    args = {k: v for k, v in (call.get("args") or {}).items() if k in MODEL_ARGUMENTS}
    usage = state.get("hold_usage")  # the hold's usage, when it is the current handover's
    if not (isinstance(usage, dict) and usage.get("handover_id") == current.get("handover_id")):
        usage = None
    mark = state.get("ledger_mark")
    made: dict[str, Any] = {  # how a handover's or a return's own ledger entries are made
        "by": caller,
        "turn": mark["turns"] if mark else 0,
        "ledger": state.get("ledger") or [],
        "counter": counter_for("", ctx),
    }

    def hand_back(given: dict[str, Any]) -> dict[str, Any]:
        """The caller hands back; its outcome (summary, decisions) is appended to its briefing."""
        reason = str(given.get("summary") or given.get("handover_reason") or "handed back")
        decisions, artifacts = (
            [str(item) for item in given[name]] if isinstance(given.get(name), list) else []
            for name in ("decisions", "artifacts")
        )
        write_outcome(
            project_root=ctx.project_root,
            handover=current,
            how=call["name"],
            summary=reason,
            decisions=decisions,
            artifacts=artifacts,
            usage=usage,
            store=store,
        )
        if decisions or artifacts:
            entries = stated_entries(
                decisions=decisions, artifacts=artifacts, source="return", **made
            )
        else:  # a terse hand-back: what its summary settles
            entries = outcome_entries(reason, source="return", **made)
        return {
            **({"ledger": entries} if entries else {}),
            "messages": [tool_answer(call, "Returned to the orchestrator."), *answers],
            **return_update(caller, current, reason, usage),
            "turn_trail": [*trail, return_hop(caller)],
        }

    if call["name"] == RETURN:
        return hand_back(call.get("args") or {})
    target = args.get("specialist_profile")
    allowed = partial(
        check_handover, caller=caller, chain=chain, depth=depth, max_depth=ctx.max_handover_depth
    )
    refusal = allowed(target=target)
    if refusal is None and target == ORCHESTRATOR_PROFILE:
        return hand_back(args)
    most = ctx.max_handovers_per_turn
    made_in_turn = sum(not hop.endswith("(returned)") for hop in trail)  # returns are no handovers
    if refusal is None and made_in_turn >= most:  # the loop: refused, and the turn ends
        path = ", ".join([*trail, f"{caller} -> {'' if target is None else target} (refused)"])
        refusal = (
            f"ERROR: handover loop refused: this user turn already made {made_in_turn} "
            f"handovers (max_handovers_per_turn={most}): {path}. Answer the user with what you "
            "have instead of handing over again."
        )
        answer = graph_reply(
            caller,
            profiles[_profile_of(caller)],
            f"⚠️ I stopped handing this over: {refusal.removeprefix('ERROR: ')} "
            "Tell me how you would like to go on, and I'll take it from here.",
            LOOP_STOPPED,
            label=label,
        )
        record = trail_record(
            "refused",
            from_agent=caller,
            to_agent=str(target or ""),
            reason=str(args.get("handover_reason") or ""),
            topic=str(args.get("topic") or ""),
            error=refusal,
        )
        return {"messages": [tool_answer(call, refusal), *answers, answer], "handovers": [record]}
    supplied, memory = graph_supplied(state, ctx)

    def counter(name: Any) -> TokenCounter:
        return counter_for(name if isinstance(name, str) and name in profiles else "", ctx)

    def options(target: Any, handover_id: str = call["id"]) -> dict[str, Any]:
        """`prepare_handover`'s options for a handover to `target` (made by the call
        `handover_id`), with its "last time" lines (its newest outcomes in this project)."""
        name = target.strip() if isinstance(target, str) else target
        recalled = (
            last_time(
                project_root=ctx.project_root, specialist=name, counter=counter(name), store=store
            )
            if name in profiles and name != ORCHESTRATOR_PROFILE
            else []
        )
        return {
            "profiles": profiles,
            "handover_id": handover_id,
            "from_agent": caller,
            "counter": counter(target),
            "when": asked_at(messages),
            "last_time": recalled,
            "memory": memory,
        }

    def check(new_target: Any) -> str | None:
        if new_target == ORCHESTRATOR_PROFILE:
            return "ERROR: a reviewed handover cannot be turned into a return; reject it"
        return allowed(target=new_target)

    outcome: HandoverOutcome | Reissued | str
    before: list[BaseMessage] = []  # an edited call, answered and made again with the edit
    carried = call  # the call the handover answers: the edited one, when made again
    if refusal is not None:
        outcome = refusal
    elif ctx.review_handovers:
        shown_again = review_again(messages)
        remade_id = f"call_{uuid.uuid4().hex[:24]}"  # an edit's new call: its handover's id
        outcome = review_handover(
            args,
            prepare=lambda edited, remade: prepare_handover(
                {**edited, **supplied},
                **options(edited.get("specialist_profile"), remade_id if remade else call["id"]),
            ),
            check=check,
            from_agent=caller,
            kept=shown_again.get("kept"),
            error=shown_again.get("error"),
        )
        if isinstance(outcome, Reissued):
            shown = (
                {"kept": outcome.kept, "error": outcome.error} if outcome.outcome is None else {}
            )
            again = reissued_call(caller, profiles, HANDOVER, outcome.args, shown, remade_id)
            before = [tool_answer(call, outcome.note), *answers, again]
            if outcome.outcome is None:  # not applied: the new call is reviewed again
                return {"messages": before}
            carried, answers, outcome = cast(Any, again.tool_calls[0]), [], outcome.outcome
    else:
        outcome = perform_handover({**args, **supplied}, **options(target))
    if isinstance(outcome, ReviewSuperseded):  # the person moved on: say so, end the turn
        what = f"hand this over to {target}"
        answers = [*answers, ended_note(caller, profiles, what, outcome, label)]
    if isinstance(outcome, str):
        return {
            "messages": [tool_answer(call, outcome), *answers],
            "handovers": [refused_record(caller, args, outcome)],
        }
    package = outcome.package
    specialist = package["specialist"]
    condition = package["return_condition"]
    anchor = f"handover-{carried['id']}"
    new_handover: ActiveHandover = {
        **package,
        "root_return_condition": current.get("root_return_condition", condition)
        if chain
        else condition,
        "chain": [*chain, specialist],
        "anchor_id": anchor,
    }
    share_briefing(store, outcome, caller)
    entries = stated_entries(
        decisions=package["decisions"], artifacts=package["artifacts"], source="handover", **made
    )
    return {
        **({"ledger": entries} if entries else {}),
        "messages": [
            *before,
            tool_answer(carried, outcome.to_line(ctx.project_root), anchor),
            *answers,
        ],
        "active_agent": specialist,
        "handover": new_handover,
        "handover_depth": depth + 1,
        "agent_turns": 0,
        "turn_trail": [*trail, f"{caller} -> {specialist}"],
        "handovers": [
            package_record(
                "handover",
                caller,
                package,
                full_history_tokens(messages, state.get("archived_tokens", 0), counter(specialist)),
                return_condition=condition,
                usage=usage if caller != ORCHESTRATOR else None,
            )
        ],
    }


REVIEW_AGAIN = "review_again"
"""`additional_kwargs` key of a handover call the graph made again after an edit that did not
validate: the reviewer's values (`kept`) and the `error`, shown when it is reviewed."""


def review_again(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """What the pending call's review shows again (`REVIEW_AGAIN`), or {}."""
    index = last_ai_index(messages)
    found = messages[index].additional_kwargs.get(REVIEW_AGAIN) if index >= 0 else None
    return found if isinstance(found, dict) else {}


def reissued_call(
    caller: str,
    profiles: ProfileRegistry,
    name: str,
    args: dict[str, Any],
    again: dict[str, Any],
    call_id: str | None = None,
) -> AIMessage:
    """The caller's `name` call made again with `args`: a reviewer's edit, or (with `again`, the
    reviewer's values and the error of an edit that did not validate) to be reviewed again."""
    profile = profiles[_profile_of(caller)]
    return AIMessage(
        content="",
        name=caller,
        id=f"msg-{uuid.uuid4().hex}",
        tool_calls=[{"name": name, "args": args, "id": call_id or f"call_{uuid.uuid4().hex[:24]}"}],
        additional_kwargs={REVIEW_AGAIN: again} if again else {},
        response_metadata={
            "persona_marker": profile.marker,
            "persona_emoji": profile.emoji,
            GRAPH_MADE: True,
        },
    )


def holder(state: Any, known: frozenset[str]) -> str:
    """The node of whoever holds the conversation (`active_agent`): the orchestrator when
    none is known, or when a specialist lacks its package (it could not work: start over)."""
    state = usable(state)
    agent = state.get("active_agent") or ORCHESTRATOR
    if agent != ORCHESTRATOR and not (state.get("handover") or {}).get("rendered"):
        return ORCHESTRATOR
    return agent if agent in known else ORCHESTRATOR
