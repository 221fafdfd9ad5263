"""The handover node: carries out the transfer an agent asked for, or refuses it.

An agent's transfer tool (`transfer.py`) ends its run with the call unanswered;
this node answers every pending call of that reply with exactly one tool
message, so the tool-call history stays valid. The chosen call is carried out
or refused, any other is refused. A handover builds the stage-1 package into
`state["handover"]`, appends its briefing entry (once per tool-call id, so a
resumed crash does not duplicate it) and makes the target `active_agent`; a
return (`return_to_orchestrator`, or a handover to the orchestrator's profile)
gives the conversation back to the orchestrator. On refusal the caller keeps
control and sees the `ERROR:` result.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

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
    HandoverState,
    TokenCounter,
    coerce_context,
    usable,
)
from ..briefing.outcomes import last_time, write_outcome
from ..briefing.shared import put_briefing
from ..history.conversation import graph_reply, last_ai_index, pending_tool_calls, recent_turns
from ..ledger.entries import outcome_entries, stated_entries
from ..ledger.memory import thread_memory
from ..tools.names import RETURN
from .arguments import MODEL_ARGUMENTS, to_itself
from .cost import cost_event, full_history_tokens
from .review import ReviewSuperseded, review_handover
from .tool import (
    HandoverOutcome,
    PreparedHandover,
    perform_handover,
    prepare_handover,
)
from .trail import (
    handover_hop,
    handovers_in,
    ledger_figures,
    return_hop,
    return_update,
    trail_record,
)
from .transfer import TRANSFERS, chosen_transfer, transfer_refusal

CounterFor = Callable[[str, HandoverContext], TokenCounter]
"""(profile, context) -> the token counter of the model that profile's agent uses."""


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


def loop_refusal(trail: list[str], target: str, caller: str, most: int) -> str:
    """The ERROR for one handover too many in a user turn, naming the loop."""
    path = ", ".join([*trail, f"{caller} -> {target} (refused)"])
    return (
        f"ERROR: handover loop refused: this user turn already made {handovers_in(trail)} "
        f"handovers (max_handovers_per_turn={most}): {path}. Answer the user with what you "
        "have instead of handing over again."
    )


def asked_at(messages: Sequence[BaseMessage]) -> datetime | None:
    """When the caller asked for the handover: a resumed run reuses that time (and file date)."""
    i = last_ai_index(messages)
    stamp = (messages[i].response_metadata or {}).get("created_at") if i >= 0 else None
    try:
        return datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None


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


def make_handover_node(profiles: ProfileRegistry, counter_for: CounterFor):  # type: ignore[no-untyped-def]
    """The `handover` node of one build: its allow-list, and the target's token counter."""

    known = frozenset([ORCHESTRATOR, *profiles.specialists])

    def handover(state: HandoverState, runtime: Runtime[HandoverContext]) -> Command:  # type: ignore[type-arg]
        """Carry out (or refuse) the calling agent's handover; then go to whoever holds the
        conversation, or end the run when this node ended the turn."""
        update = run_handover(
            state, coerce_context(runtime.context), profiles, counter_for, runtime.store
        )
        for record in update.get("handovers") or []:
            if record["kind"] == "handover":
                get_stream_writer()(cost_event(record))  # one per handover (stream_mode="custom")
        added = update.get("messages") or []
        last = added[-1] if added else None
        flags = last.response_metadata if isinstance(last, AIMessage) else {}
        if flags.get(LOOP_STOPPED) or flags.get(TURN_ENDED):  # its answer ends the turn
            return Command(update=update, goto=END)
        return Command(update=update, goto=holder({**state, **update}, known))

    return handover


def run_handover(
    state: HandoverState,
    ctx: HandoverContext,
    profiles: ProfileRegistry,
    counter_for: CounterFor,
    store: Any = None,
) -> dict[str, Any]:
    """The handover node's update for this state (`store`: the graph's, for shared briefings
    and outcomes)."""
    state = usable(state)
    caller = state.get("active_agent") or ORCHESTRATOR
    messages = state.get("messages", [])
    pending = pending_tool_calls(messages)
    call = chosen_transfer(pending)
    if call is None:
        return {}
    answers: list[BaseMessage] = [
        tool_answer(c, transfer_refusal(c, call) if c["name"] in TRANSFERS else NOT_RUN)
        for c in pending
        if c is not call
    ]
    current: dict[str, Any] = dict(state.get("handover") or {})
    chain = list(current.get("chain") or []) if caller != ORCHESTRATOR else []
    depth = state.get("handover_depth", 0) if caller != ORCHESTRATOR else 0
    trail = list(state.get("turn_trail") or [])
    args = {k: v for k, v in (call.get("args") or {}).items() if k in MODEL_ARGUMENTS}
    if call["name"] == RETURN and caller == ORCHESTRATOR:
        return {"messages": [tool_answer(call, NO_ONE_TO_RETURN_TO), *answers]}
    usage = _usage_of(state, current)
    mark = state.get("ledger_mark")
    turn = mark["turns"] if mark else 0
    ended = {
        "usage": usage,
        "root": ctx.project_root,
        "store": store,
        "ledger": state.get("ledger") or [],
        "turn": turn,
        "counter": counter_for("", ctx),
    }
    if call["name"] == RETURN:
        return _return_to_orchestrator(
            caller, call, call.get("args") or {}, current, answers, trail, ended
        )
    target = args.get("specialist_profile")
    refusal = check_handover(
        caller=caller, target=target, chain=chain, depth=depth, max_depth=ctx.max_handover_depth
    )
    if refusal is None and target == ORCHESTRATOR_PROFILE:
        return _return_to_orchestrator(caller, call, args, current, answers, trail, ended)
    if refusal is None and handovers_in(trail) >= ctx.max_handovers_per_turn:
        return _stop_the_loop(
            caller,
            call,
            answers,
            loop_refusal(
                trail, "" if target is None else str(target), caller, ctx.max_handovers_per_turn
            ),
            profiles,
        )
    supplied = {
        "recent_turns": recent_turns(messages, ctx.include_recent_turns),
        "project_root": ctx.project_root,
        "max_context_tokens": ctx.max_context_tokens,
        "include_recent_turns": ctx.include_recent_turns,
    }
    memory = thread_memory(
        messages=messages,
        ledger=state.get("ledger"),
        mark=mark,
        recall=state.get("recall"),
        include_recent_turns=ctx.include_recent_turns,
    )

    def counter(name: Any) -> TokenCounter:
        return counter_for(name if isinstance(name, str) and name in profiles else "", ctx)

    def recalled(name: Any) -> list[str]:
        """The target's "last time" lines: its newest outcomes in this project."""
        name = name.strip() if isinstance(name, str) else name
        if name not in profiles or name == ORCHESTRATOR_PROFILE:
            return []
        return last_time(
            project_root=ctx.project_root, specialist=name, counter=counter(name), store=store
        )

    outcome: HandoverOutcome | str
    if refusal is not None:
        outcome = refusal
    elif ctx.review_handovers:

        def prepare(edited: dict[str, Any]) -> PreparedHandover | str:
            return prepare_handover(
                {**edited, **supplied},
                profiles=profiles,
                handover_id=call["id"],
                from_agent=caller,
                counter=counter(edited.get("specialist_profile")),
                when=asked_at(messages),
                last_time=recalled(edited.get("specialist_profile")),
                memory=memory,
            )

        def check(new_target: Any) -> str | None:
            if new_target == ORCHESTRATOR_PROFILE:
                return "ERROR: a reviewed handover cannot be turned into a return; reject it"
            return check_handover(
                caller=caller,
                target=new_target,
                chain=chain,
                depth=depth,
                max_depth=ctx.max_handover_depth,
            )

        outcome = review_handover(args, prepare=prepare, check=check, from_agent=caller)
    else:
        outcome = perform_handover(
            {**args, **supplied},
            profiles=profiles,
            handover_id=call["id"],
            from_agent=caller,
            counter=counter(target),
            when=asked_at(messages),
            last_time=recalled(target),
            memory=memory,
        )
    if isinstance(outcome, ReviewSuperseded):  # the person moved on: say so, end the turn
        note = graph_reply(
            caller,
            profiles[_profile_of(caller)],
            f"⏸️ I did not hand this over to {target}: your new message came before the "
            "review, so I'm answering that instead.",
            TURN_ENDED,
        )
        answers = [*answers, note]
    if isinstance(outcome, str):
        return {
            "messages": [tool_answer(call, outcome), *answers],
            "handovers": [
                trail_record(
                    "refused",
                    from_agent=caller,
                    to_agent="" if target is None else str(target),
                    reason=str(args.get("handover_reason") or ""),
                    topic=str(args.get("topic") or ""),
                    return_condition=str(args.get("return_condition") or ""),
                    error=outcome,
                )
            ],
        }
    package = outcome.package
    specialist = package["specialist"]
    condition = package["return_condition"]
    anchor = f"handover-{call['id']}"
    new_handover: ActiveHandover = {
        **package,
        "root_return_condition": current.get("root_return_condition", condition)
        if chain
        else condition,
        "chain": [*chain, specialist],
        "anchor_id": anchor,
    }
    stated = stated_entries(
        decisions=package["decisions"],
        artifacts=package["artifacts"],
        source="handover",
        by=caller,
        turn=turn,
        ledger=ended["ledger"],
        counter=ended["counter"],
    )
    if store is not None and outcome.when is not None:  # in the store too, for other threads
        put_briefing(
            store,
            specialist=specialist,
            topic=package["topic"],
            handover_id=package["handover_id"],
            markdown=outcome.entry,
            created_at=outcome.when,
            from_agent=caller,
        )
    return {
        **({"ledger": stated} if stated else {}),
        "messages": [tool_answer(call, outcome.to_line(ctx.project_root), anchor), *answers],
        "active_agent": specialist,
        "handover": new_handover,
        "handover_depth": depth + 1,
        "agent_turns": 0,
        "turn_trail": [*trail, handover_hop(caller, specialist)],
        "handovers": [
            trail_record(
                "handover",
                from_agent=caller,
                to_agent=specialist,
                reason=package["reason"],
                topic=package["topic"],
                return_condition=condition,
                estimated_tokens=package["estimated_tokens"],
                briefing_path=package["briefing_file"],
                handover_id=package["handover_id"],
                full_history_tokens=full_history_tokens(
                    messages, state.get("archived_tokens", 0), counter(specialist)
                ),
                usage=usage if caller != ORCHESTRATOR else None,
                **ledger_figures(package),
            )
        ],
    }


def _usage_of(state: HandoverState, current: dict[str, Any]) -> Any:
    """The state's hold usage when it is the current handover's."""
    usage = state.get("hold_usage")
    ok = isinstance(usage, dict) and usage.get("handover_id") == current.get("handover_id")
    return usage if ok else None


NOT_RUN = "ERROR: not run: the same reply handed the conversation on."
NO_ONE_TO_RETURN_TO = "ERROR: the orchestrator has no one to return to; answer the user."


def _return_to_orchestrator(
    caller: str,
    call: dict,
    args: dict,
    current: dict,
    answers: list,
    trail: list[str],
    ended: dict[str, Any],
) -> dict[str, Any]:
    """The caller hands back; its outcome (summary, decisions) is appended to its briefing."""
    reason = str(args.get("summary") or args.get("handover_reason") or "handed back")
    decisions, artifacts = args.get("decisions"), args.get("artifacts")
    decisions = [str(d) for d in decisions] if isinstance(decisions, list) else []
    artifacts = [str(a) for a in artifacts] if isinstance(artifacts, list) else []
    write_outcome(
        project_root=ended["root"],
        handover=current,
        how=f"{call['name']}",
        summary=reason,
        decisions=decisions,
        artifacts=artifacts,
        usage=ended["usage"],
        store=ended["store"],
    )
    stated = stated_entries(
        decisions=decisions,
        artifacts=artifacts,
        source="return",
        by=caller,
        turn=ended["turn"],
        ledger=ended["ledger"],
        counter=ended["counter"],
    )
    if not decisions and not artifacts:  # a terse hand-back: what its summary settles
        stated = outcome_entries(
            reason,
            by=caller,
            turn=ended["turn"],
            ledger=ended["ledger"],
            counter=ended["counter"],
            source="return",
        )
    return {
        **({"ledger": stated} if stated else {}),
        "messages": [tool_answer(call, "Returned to the orchestrator."), *answers],
        **return_update(caller, current, reason, ended["usage"]),
        "turn_trail": [*trail, return_hop(caller)],
    }


def holder(state: Any, known: frozenset[str]) -> str:
    """The node of whoever holds the conversation (`active_agent`): the orchestrator when
    none is known, or when a specialist lacks its package (it could not work: start over)."""
    state = usable(state)
    agent = state.get("active_agent") or ORCHESTRATOR
    handover: dict[str, Any] = dict(state.get("handover") or {})
    if agent != ORCHESTRATOR and not handover.get("rendered"):
        return ORCHESTRATOR
    return agent if agent in known else ORCHESTRATOR


LOOP_STOPPED = "handover_loop_stopped"
"""Metadata flag of the answer that ends a turn whose handovers were looping."""
TURN_ENDED = "handover_turn_ended"
"""Metadata flag of the note that ends a turn whose handover a new message superseded."""


def _stop_the_loop(
    caller: str, call: dict, answers: list, refusal: str, profiles: ProfileRegistry
) -> dict[str, Any]:
    """Refuse the handover, and end the turn with an answer to the user from the caller."""
    answer = graph_reply(
        caller,
        profiles[_profile_of(caller)],
        f"⚠️ I stopped handing this over: {refusal.removeprefix('ERROR: ')} "
        "Tell me how you would like to go on, and I'll take it from here.",
        LOOP_STOPPED,
    )
    return {
        "messages": [tool_answer(call, refusal), *answers, answer],
        "handovers": [
            trail_record(
                "refused",
                from_agent=caller,
                to_agent=str(call.get("args", {}).get("specialist_profile") or ""),
                reason=str(call.get("args", {}).get("handover_reason") or ""),
                topic=str(call.get("args", {}).get("topic") or ""),
                error=refusal,
            )
        ],
    }
