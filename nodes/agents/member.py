"""An agent's node in the handover graph: the orchestrator's, and one per specialist.

The node is the same for every agent, ours (`create_agent` made from a
profile) and a user's (`create_agent(...)` or any compiled graph whose state
has `messages`):

1. **Its view in.** A specialist sees the stage-1 package (`handover_to_specialist.py`: text,
   and the package as data) and a window of its own recent turns since its
   handover; the orchestrator a window of whole recent turns of the
   conversation. Both windows are opened by the handover notes (the
   orchestrator's with the trail) with a short summary of what came before.
   Other agents' tool plumbing is reduced to their text. Never the whole
   history, and never over `max_input_tokens` (`history/budget.py`).
2. **The agent runs as a subgraph of this step**, with the node's config: its
   model and tool steps are checkpointed under this step (a run resumed after a
   crash continues the loop instead of asking the model again) and stream with
   `subgraphs=True`, their messages carrying `agent` and `persona_marker`
   metadata. Its tools find the run's `MemberRun` (the stored conversation for
   stage 2, the agent's token counter and model) in the config, in process.
3. **What it added out.** Only the agent's new replies and tool results join
   the conversation, named by the agent, their tool-call ids unique in the
   thread. A transfer tool (`handover_to_specialist`, `return_to_orchestrator`)
   ends the agent's run with its `Command` to this node; the call is left for
   the handover node to answer.
   The node runs natively both ways (`both_ways`): under `invoke` the agent's
   `invoke`, under `ainvoke` (and on `langgraph dev`) its `ainvoke`, so its
   model's and tools' async paths are used, async-only tools included.
4. **The next hop, decided here** (`Command(goto=...)`). A transfer goes to the
   handover node, the orchestrator's consult to the consult node, its reply to
   the end. After a specialist's plain reply its return condition decides
   (`after_reply` in `state/schema.py`), for agents that know none of our tools
   too: `user_request` keeps the conversation (the end), `after_reply` hands back
   (the end; the next user turn goes to the orchestrator), `task_complete` hands
   back to the orchestrator, which answers now. A remote specialist whose run
   failed (`remote.py`) hands back and the orchestrator answers; an A2A specialist
   that asks for input (`a2a.py`) keeps the conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.errors import ParentCommand
from langgraph.graph import END
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command

from ...specialists import ORCHESTRATOR_PROFILE, Profile
from ...state import (
    MEMBER_RUN_KEY,
    ORCHESTRATOR,
    HandoverContext,
    HandoverState,
    MemberRun,
    coerce_context,
    message_text,
    usable,
)
from ...state.defaults import (
    AGENT_WINDOW_USER_TURNS,
    ORCHESTRATOR_SUMMARY_LOOKBACK,
    ORCHESTRATOR_SUMMARY_WORDS,
)
from ...state.langgraph_internals import run_checkpointer
from ...state.schema import CONSULT_NODE, HANDOVER_NODE, after_reply
from ..briefing.outcomes import reply_summary, write_outcome
from ..handover.cost import hold_usage
from ..handover.handover_to_specialist import HANDOVER_SENDER, package_message
from ..handover.node import describe_trail, refused_calls, return_hop, return_update
from ..handover.transfer import chosen_transfer, transferred_messages
from ..history.archive import archive_removals, stored_transcript
from ..history.budget import fit_messages
from ..history.conversation import (
    FOR_READERS,
    graph_reply,
    is_turn,
    messages_since,
    own_view,
    pending_tool_calls,
    window_of_turns,
)
from ..history.extractive import extractive_summary
from ..ledger.entries import outcome_entries, user_entries
from ..ledger.memory import ledger_appendix
from ..ledger.recall import recall_cards
from ..models.resolve import ModelChoice
from ..tools.names import CONSULT
from .remote import AWAITS_USER, REMOTE_FAILED
from .replies import MAX_TURNS_REACHED, stop_message, stored_replies, used_call_ids


def notes_message(
    scope: Sequence[BaseMessage], window_start: int, trail: list[Any] | None
) -> HumanMessage | None:
    """The handover notes that open a view: the trail (the orchestrator's) and a short summary
    of the turns before the view's window (None when there is neither)."""
    earlier = scope[max(0, window_start - ORCHESTRATOR_SUMMARY_LOOKBACK) : window_start]
    texts = [message_text(m) for m in earlier if is_turn(m)]
    if not texts and not trail:
        return None
    lines = ["HANDOVER NOTES (from the handover graph, not from the user)"]
    if trail is not None:
        lines.append(f"Handover trail (most recent last):\n{describe_trail(trail)}")
    if texts:
        summary = extractive_summary(texts, max_words=ORCHESTRATOR_SUMMARY_WORDS)
        lines.append(f"Earlier in this conversation (before the turns below): {summary}")
    anchor = scope[window_start].id if window_start < len(scope) else "start"
    return HumanMessage("\n\n".join(lines), name=HANDOVER_SENDER, id=f"notes-{anchor}")


def view_of(name: str, state: HandoverState) -> list[BaseMessage]:
    """What an agent sees, never the whole history: a specialist the package, the orchestrator
    nothing before; then the notes; then a window of whole recent turns (of the conversation,
    or the specialist's since its handover), other agents' tool plumbing reduced to text."""
    messages = state.get("messages", [])
    if name == ORCHESTRATOR:
        opening, scope, trail = [], messages, state.get("handovers") or []
    else:
        handover: dict[str, Any] = dict(state.get("handover") or {})
        opening = [package_message(handover)]  # type: ignore[arg-type]
        scope, trail = messages_since(messages, handover.get("anchor_id")), None
    start, window = window_of_turns(scope, AGENT_WINDOW_USER_TURNS)
    notes = notes_message(scope, start, trail)
    return [*opening, *([notes] if notes else []), *own_view(window, name)]


AgentRun = tuple[Pregel, dict[str, Any], RunnableConfig]
"""What a node asks to run: the agent, its input (its view, its model calls so far), its
config."""
NodeSteps = Generator[AgentRun, Any, dict[str, Any] | Command]  # type: ignore[type-arg]
"""A node's body: it yields the agent run it needs, is sent what the agent added (or has the
run's exception thrown in), and returns its update."""


def _messages(out: Any) -> list[BaseMessage]:
    """What the agent has at the end of its run (or at its transfer)."""
    return list(out.get("messages") or []) if isinstance(out, dict) else []


def _stopped(exc: Exception) -> tuple[list[BaseMessage] | None, Exception | None]:
    """A run that raised: a transfer's messages, else the exception (a command of the agent's
    own, or a failure) for the body."""
    transferred = transferred_messages(exc) if isinstance(exc, ParentCommand) else None
    return (transferred, None) if transferred is not None else (None, exc)


class AgentNode(RunnableLambda):  # type: ignore[type-arg]
    """A node with a sync and an async function; `deps` names its agent (if it has one), so
    LangGraph takes the agent for the node's subgraph (Studio's xray drawing shows its model
    and tool loop)."""

    def __init__(self, func: Any, afunc: Any, name: str, agent: Pregel | None) -> None:
        super().__init__(func, afunc=afunc, name=name)
        self.agent = agent

    @property
    def deps(self) -> list[Any]:
        return [self.agent] if self.agent is not None else []


def both_ways(
    name: str,
    steps: Callable[[Any, Runtime[HandoverContext], RunnableConfig], NodeSteps],
    agent: Pregel | None = None,
) -> AgentNode:
    """A node that runs `steps` natively under `invoke` (the agent's `invoke`) and under
    `ainvoke` (its `ainvoke`): the same body, only the agent's run differs. An exception of
    the run is thrown into the body where it asked for it. `agent`: the node's one agent."""

    def node(state: Any, config: RunnableConfig) -> Any:
        body = steps(state, get_runtime(), config)
        added, error = None, None
        while True:
            try:
                runner, given, conf = body.send(added) if error is None else body.throw(error)
            except StopIteration as done:
                return done.value
            try:
                added, error = _messages(runner.invoke(given, conf)), None
            except Exception as exc:  # noqa: BLE001 - the body decides what it means
                added, error = _stopped(exc)

    async def anode(state: Any, config: RunnableConfig) -> Any:
        body = steps(state, get_runtime(), config)
        added, error = None, None
        while True:
            try:
                runner, given, conf = body.send(added) if error is None else body.throw(error)
            except StopIteration as done:
                return done.value
            try:
                added, error = _messages(await runner.ainvoke(given, conf)), None
            except Exception as exc:  # noqa: BLE001 - the body decides what it means
                added, error = _stopped(exc)

    return AgentNode(node, anode, name, agent)


def member_config(config: RunnableConfig, *, member: MemberRun, marker: str) -> RunnableConfig:
    """The agent's run config: the node's, with the `MemberRun` for its tools and middleware
    (in process) and the metadata every streamed chunk carries (`agent`, `persona_marker`)."""
    metadata = {**(config.get("metadata") or {}), "agent": member.agent, "persona_marker": marker}
    return {
        **config,
        "configurable": {**(config.get("configurable") or {}), MEMBER_RUN_KEY: member},
        "metadata": metadata,
    }


def stage2_package_text(handover: dict[str, Any], ledger: list[Any]) -> str:
    """What stage 2 shows as the package: the package the specialist got, then the whole
    current ledger (the entries the package could not fit are there)."""
    parts = (str(handover.get("rendered") or ""), ledger_appendix(ledger))
    return "\n\n".join(part for part in parts if part)


def handed_back_note(profile: Profile, models: ModelChoice, label: bool) -> AIMessage:
    """The orchestrator's note, after a specialist's `after_reply` answer, that it holds the
    conversation again (a chat shows nothing else of the hand-back)."""
    return graph_reply(
        ORCHESTRATOR,
        models.profiles[ORCHESTRATOR_PROFILE],
        f"↩️ The {profile.title} handed the conversation back: your next message comes to me, "
        "the orchestrator.",
        FOR_READERS,
        label=label,
    )


def make_agent_node(  # type: ignore[no-untyped-def]
    *, name: str, profile: Profile, agent: Pregel, models: ModelChoice, label: bool = False
):
    """The node of one agent (`name`: `orchestrator` or the specialist's profile); with
    `label`, its stored replies open with its speaker label (for chat UIs)."""
    orchestrator = name == ORCHESTRATOR

    def steps(
        state: HandoverState, runtime: Runtime[HandoverContext], config: RunnableConfig
    ) -> NodeSteps:
        ctx = coerce_context(runtime.context)  # a context that cannot work fails here, by name
        state = usable(state)
        messages = state.get("messages", [])
        new_user_turn = bool(messages) and isinstance(messages[-1], HumanMessage)
        handover: dict[str, Any] = dict(state.get("handover") or {})
        came_back = orchestrator and state.get("active_agent", ORCHESTRATOR) != ORCHESTRATOR
        calls = 0 if new_user_turn or came_back else state.get("agent_turns", 0)
        counter = models.counter_for(profile.name, ctx)
        mark = state.get("ledger_mark")
        ledger = list(state.get("ledger") or [])
        heard, new_mark = user_entries(messages, mark=mark, ledger=ledger, counter=counter)
        mark = new_mark or mark
        view = fit_messages(view_of(name, state), budget=ctx.max_input_tokens, counter=counter)
        taken = used_call_ids(messages)
        seen = {m.id for m in view if m.id}
        member = MemberRun(
            agent=name,
            profile=profile.name,
            conversation=messages,
            archive=lambda: stored_transcript(run_checkpointer(config), config, messages),
            call_ids=frozenset(taken),
            view_ids=frozenset(seen),
            package_text="" if orchestrator else stage2_package_text(handover, [*ledger, *heard]),
            counter=counter,
            model=lambda: models.model_for(profile.name, ctx),
        )
        if calls >= ctx.max_turns:  # re-entered too often (say, refused handovers): stop
            result: list[BaseMessage] = [stop_message(name, profile, calls, ctx.max_turns)]
        else:
            run_config = member_config(config, member=member, marker=profile.marker)
            ran = yield agent, {"messages": view, "model_calls": calls}, run_config
            result = [m for m in ran if m.id not in seen]
        added = stored_replies(
            result,
            agent=name,
            profile=profile,
            taken=taken,
            stored_ids={m.id for m in messages if m.id},
            label=label,
            counter=counter,
            max_message_tokens=ctx.max_message_tokens,
            max_reply_tokens=ctx.max_reply_tokens,
        )
        removals = archive_removals(messages, len(added))
        update: dict[str, Any] = {
            "messages": [*removals, *added],
            "agent_turns": calls + sum(isinstance(m, AIMessage) for m in added),
        }
        if new_mark is not None:  # what the new user turns settled joins the ledger
            # written every user turn, empty or not: a delta channel written rarely would make
            # every run read far back for its last snapshot (state/ledger.py)
            update.update({"ledger_mark": new_mark, "ledger": heard, "recall": []})
        if removals:  # what leaves the window still counts in the full history's cost
            gone = {r.id for r in removals}
            archived = [m for m in messages if m.id in gone]  # oldest first: the cut is a prefix
            archived_tokens = sum(map(counter.count_stored, archived))
            update["archived_tokens"] = state.get("archived_tokens", 0) + archived_tokens
            cards = recall_cards(archived, messages, last_turn=mark["turns"] if mark else 0)
            if cards:
                update["recall"] = cards
        if new_user_turn:
            update["turn_trail"] = []  # a new user turn: its handovers are counted afresh
        refused = refused_calls(name, added)  # refused by the agent's own tool node
        if refused:
            update["handovers"] = refused
        pending = pending_tool_calls([*messages, *added])
        if orchestrator:
            update.update({"active_agent": ORCHESTRATOR, "handover_depth": 0})
            if not pending:
                return Command(update=update, goto=END)  # its reply ends the run
            chosen = chosen_transfer(pending)
            consult = chosen is not None and chosen.get("name") == CONSULT
            return Command(update=update, goto=CONSULT_NODE if consult else HANDOVER_NODE)
        usage = None
        if handover.get("handover_id"):  # the hold's model calls and tokens so far
            usage = hold_usage(state.get("hold_usage"), str(handover["handover_id"]), added)
            update["hold_usage"] = usage
        last = next((m for m in reversed(added) if isinstance(m, AIMessage)), None)
        if pending:  # a transfer: the handover node carries it out (or refuses it)
            return Command(update=update, goto=HANDOVER_NODE)
        flags = last.response_metadata if last is not None else {}
        stopped = bool(flags.get(MAX_TURNS_REACHED) or flags.get(AWAITS_USER))
        condition = handover.get("root_return_condition") or handover.get("return_condition")
        failed = bool(flags.get(REMOTE_FAILED))
        then = after_reply(condition, failed=failed)
        if then == "keep" or (stopped and not failed):
            return Command(update=update, goto=END)  # it keeps the conversation
        trail = [] if new_user_turn else list(state.get("turn_trail") or [])
        reason = message_text(last) if failed else f"{condition}: replied"
        if not failed:  # a remote run that failed did nothing to remember
            summary = reply_summary(message_text(last))  # "" without a reply
            write_outcome(
                project_root=ctx.project_root,
                handover=handover,
                how=reason,
                summary=summary,
                usage=usage,
                store=runtime.store,
            )
            settled = outcome_entries(
                summary,
                by=name,
                turn=mark["turns"] if mark else 0,
                ledger=[*ledger, *heard],
                counter=counter,
            )
            if settled:
                update["ledger"] = [*heard, *settled]
        returned = return_update(name, handover, reason, usage)
        update.update(returned, handovers=[*refused, *returned["handovers"]])
        update["turn_trail"] = [*trail, return_hop(name)]
        if then == "hand_back_and_answer":
            return Command(update=update, goto=ORCHESTRATOR)
        update["messages"] = [*update["messages"], handed_back_note(profile, models, label)]
        return Command(update=update, goto=END)

    return both_ways(name, steps, agent)
