"""One consult task: a specialist's agent answers one question, once, from its own package.

The consult node (`consult.py`) sends one task per entry to the `consultant`
node (LangGraph `Send`, so the tasks of one consult run in the same step, in
parallel). A task runs that specialist's agent the way its own node does
(`nodes/agents/member.py`: the same agent, the same `MemberRun` in its config, a
bounded view), but its view is its stage-1 package and then the question, and
it runs once: its last reply is the answer. It cannot hand over or return (its
transfer tools answer with an `ERROR:` and it answers instead; an agent that
transfers anyway has the transfer ignored, with a note). The answer is cut to
`consult_answer_max_tokens` with a visible marker, counted with the agent's own
token counter, and written into the state's `consult` round by its index.

A consultant that fails (its model after its retries, its tools, its remote
server) answers its entry with an `ERROR:` line; the other entries are not
affected. A finished task's write is kept by LangGraph when the process is
killed: a resumed run asks only the unfinished ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime

from ...specialists import Profile
from ...state import (
    ConsultAnswer,
    HandoverContext,
    MemberRun,
    TokenCounter,
    coerce_context,
    message_text,
)
from ...state.langgraph_internals import run_checkpointer
from ...state.schema import CONSULTANT_NODE, ConsultEntry, HoldUsage
from ..handover.consult_message import ConsultTask, question_message
from ..handover.cost import hold_usage
from ..handover.handover_to_specialist import package_message
from ..handover.transfer import TRANSFERS
from ..history.archive import stored_transcript
from ..history.budget import fit_messages
from ..models.resolve import ModelChoice
from ..redaction import redact
from .member import NodeSteps, both_ways, member_config
from .remote import REMOTE_FAILED


def cut_answer(text: str, *, cap: int, counter: TokenCounter) -> tuple[str, int]:
    """The answer within `cap` tokens (a longer one cut, ending with a visible marker) and
    its tokens."""
    tokens = counter.count_text(text)
    if tokens <= cap:
        return text, tokens
    marker = f"\n[… answer cut at {cap} tokens]"
    kept = counter.truncate(text, max(cap - counter.count_text(marker), 0)).rstrip()
    return kept + marker, counter.count_text(kept + marker)


def failure_text(agent: str, exc: BaseException) -> str:
    """The entry's `ERROR:` line when its agent failed (its model, after its retries, or
    its tools), the detail redacted and kept short."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return f"ERROR: {agent} could not answer: {redact(detail).text}"


def answer_of(last: AIMessage | None, *, agent: str) -> str:
    """The consultant's answer: the text of its last reply (`last`), with a note when it tried
    to transfer (which a consult ignores)."""
    text = message_text(last).strip()  # "" without a reply
    tried = [c["name"] for c in getattr(last, "tool_calls", []) if c["name"] in TRANSFERS]
    if tried:
        note = (
            f"(note: {agent} tried to call {tried[0]}, which a consult does not carry out; "
            "this is what it said before)"
        )
        text = f"{text}\n{note}".strip() if text else f"{note.strip('()')}: no answer"
    return text or f"(no answer: {agent} replied without text)"


def make_consultant_node(  # type: ignore[no-untyped-def]
    *, agents: Mapping[str, tuple[Profile, Pregel]], models: ModelChoice
):
    """The `consultant` node of one build: the agents by profile, and their models."""

    def consultant(
        task: ConsultTask, runtime: Runtime[HandoverContext], config: RunnableConfig
    ) -> NodeSteps:
        """Run one specialist once on its package and question; write its capped answer."""
        ctx = coerce_context(runtime.context)
        data = task["consult_task"]
        name = data["specialist"]
        profile, agent = agents[name]
        counter = models.counter_for(profile.name, ctx)
        cap = ctx.consult_answer_max_tokens
        view = fit_messages(
            [package_message(data["package"]), question_message(data, cap=cap)],
            budget=ctx.max_input_tokens,
            counter=counter,
        )
        seen = {m.id for m in view if m.id}
        member = MemberRun(
            agent=name,
            profile=profile.name,
            archive=lambda: stored_transcript(run_checkpointer(config), config, ()),
            view_ids=frozenset(seen),
            package_text=data["package"]["rendered"],
            counter=counter,
            model=lambda: models.model_for(profile.name, ctx),
            consult=True,
        )
        status: Literal["answered", "error"] = "answered"
        usage: HoldUsage | None = None
        try:
            run_config = member_config(config, member=member, marker=profile.marker)
            ran = yield agent, {"messages": view, "model_calls": 0}, run_config
            added = [m for m in ran if m.id not in seen and isinstance(m, AIMessage)]
            last = added[-1] if added else None
            text = answer_of(last, agent=name)
            usage = hold_usage(None, str(data["package"].get("handover_id") or ""), added)
            if last is not None and last.response_metadata.get(REMOTE_FAILED):
                status = "error"  # its remote server failed: the reply is the ERROR line
        except GraphBubbleUp:
            raise  # an interrupt or a command for LangGraph, not a failure
        except Exception as exc:  # noqa: BLE001 - one consultant's failure is its entry's only
            status, text = "error", failure_text(name, exc)
        text, tokens = cut_answer(text, cap=cap, counter=counter)
        entry: ConsultEntry = {
            "index": data["index"],
            "specialist": name,
            "question": data["question"],
            "status": status,
            "text": text,
            "tokens": tokens,
        }
        if usage is not None:  # what its model calls used (the consult's trail record)
            entry["usage"] = usage
        answer: ConsultAnswer = {"call_id": data["call_id"], "answer": entry}
        return {"consult": answer}

    return both_ways(CONSULTANT_NODE, consultant)
