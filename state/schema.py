"""The graph's state: JSON-friendly values only.

Messages are LangChain messages (LangGraph serialises them natively); every
other value is a str, int, list or dict, so checkpoints and the LangGraph
server API carry them without custom types.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel
from pydantic import Field
from typing_extensions import TypedDict

from .defaults import TRAIL_WINDOW
from .ledger import LedgerEntry, LedgerMark, RecallCard, merge_ledger, merge_recall
from .messages import merge_messages

ORCHESTRATOR = "orchestrator"
"""Node name and `active_agent` value of the orchestrator (profile a0_software_orchestrator)."""
HANDOVER_NODE = "handover"
"""The node that carries out (or refuses) a handover or a return."""
CONSULT_NODE = "consult"
"""The node that checks a consult and sends one task per entry."""
CONSULTANT_NODE = "consultant"
"""The node that runs one consult task: a specialist's agent answers one question, once."""

RETURN_CONDITIONS: dict[str, str] = {
    "user_request": "the specialist keeps the conversation until the user asks to go back",
    "task_complete": "the specialist works until done, then hands back in the same run",
    "after_reply": "the specialist answers once; the next user turn goes to the orchestrator",
}

AfterReply = Literal["keep", "hand_back", "hand_back_and_answer"]


def after_reply(condition: Any, *, failed: bool = False) -> AfterReply:
    """What a specialist's plain reply (no transfer) does, by the return condition of its
    handover chain: the one place this rule lives. `user_request` (or none) keeps the
    conversation with the specialist; `after_reply` hands it back, and the next user turn
    goes to the orchestrator; `task_complete` hands it back and the orchestrator answers in
    the same run. A remote specialist whose run `failed` hands back and the orchestrator
    answers, whatever the condition."""
    if failed or condition == "task_complete":
        return "hand_back_and_answer"
    return "hand_back" if condition == "after_reply" else "keep"


SNAPSHOT_EVERY = 20
"""Writes between snapshots of the conversation's working window (about every 5 turns): a
run loads the last snapshot and replays the writes since (docs/SCALE.md has the figures)."""
TRAIL_SNAPSHOT_EVERY = 8
"""The trail is written about a third as often: its snapshots come about as often in turns."""
LEDGER_SNAPSHOT_EVERY = 5
"""The ledger and the recall cards are written once every user turn (often with nothing new):
a run reads back to their last snapshot, about five turns, as for the conversation."""


def append_trail(state: list[dict] | None, writes: list) -> list[dict]:  # type: ignore[type-arg]
    """Each write's records appended (the whole trail, as `handover trail` reads it)."""
    merged = list(state or [])
    for write in writes:
        if isinstance(write, dict):
            merged.append(write)
        elif isinstance(write, list):
            merged.extend(record for record in write if isinstance(record, dict))
    return merged


def merge_trail(state: list[dict] | None, writes: list) -> list[dict]:  # type: ignore[type-arg]
    """The trail's batch reducer (for `DeltaChannel`): appends each write's records and keeps
    the last `TRAIL_WINDOW` in the state (keeping the last n of appends does not depend on how
    they are batched); the whole trail stays in the write log (`history/archive.py`)."""
    return append_trail(state, writes)[-TRAIL_WINDOW:]


class HoldUsage(TypedDict):
    """What a specialist's model calls used while it held the conversation after one handover,
    from the models' usage metadata (0 tokens where a model reports none)."""

    handover_id: str
    model_calls: int
    input_tokens: int
    output_tokens: int


class HandoverRecord(TypedDict):
    """One entry of the trail: a handover, a refused handover, a return or a consult (one
    specialist asked one question; its `reason` is the question)."""

    kind: Literal["handover", "refused", "return", "consult"]
    from_agent: str
    to_agent: str
    reason: str
    topic: str
    return_condition: str
    estimated_tokens: int
    briefing_path: str
    time: str
    error: NotRequired[str]
    handover_id: NotRequired[str]
    """The handover's id (a return: the id of the handover it ends)."""
    full_history_tokens: NotRequired[int]
    """A handover: what the whole conversation so far would have cost the receiver, the
    messages counted as a full-history system sends them (`estimated_tokens` is what the
    package cost)."""
    usage: NotRequired[HoldUsage]
    """A return, or a specialist's handover onward: the model calls and tokens of the hold
    it ends."""
    ledger_entries: NotRequired[int]
    """A handover or consult: the thread-ledger entries its package showed."""
    ledger_omitted: NotRequired[int]
    """... and those that did not fit (stage 2 has them)."""
    earlier_turns: NotRequired[int]
    """... and the earlier turns it carried as relevant (besides the recent ones)."""


class HandoverPackage(TypedDict):
    """A stage-1 package: the one record the state, the tool, the briefing entry, the review
    and the receiving agent all read (the receiver as data and as `rendered` text)."""

    handover_id: str
    specialist: str
    topic: str
    summary: str
    recent_turns: list[str]
    decisions: list[str]
    artifacts: list[str]
    reason: str
    return_condition: str
    from_agent: str
    briefing_file: str
    estimated_tokens: int
    """Counted over `rendered`, the very text the specialist is shown."""
    max_context_tokens: int
    oversize_warning: bool
    rendered: str
    last_time: NotRequired[list[str]]
    """The specialist's newest outcomes in this project, one line each ("last time")."""
    ledger: NotRequired[list[str]]
    """The thread ledger's lines the package shows (what the conversation has settled), newest
    and most relevant first."""
    ledger_omitted: NotRequired[int]
    """Current ledger entries that did not fit (stage 2, `request_full_history`, has them)."""
    earlier_turns: NotRequired[list[str]]
    """Earlier turns of the whole thread most relevant to the handover (retrieved lexically),
    besides the recent turns."""


PUBLIC_PACKAGE_FIELDS = tuple(
    "specialist topic summary briefing_file estimated_tokens max_context_tokens "
    "oversize_warning handover_id return_condition".split()
)
"""The fields of the tool's returned `package{...}` JSON, in the documented order."""


class ActiveHandover(HandoverPackage, total=False):
    """The package the active specialist works from, and where it sits in the chain."""

    root_return_condition: str
    """The first handover's return condition: it decides when the chain hands back."""
    chain: list[str]
    anchor_id: str
    """Id of the tool message that answered the handover: the specialist's turns follow it."""


class ConsultEntry(TypedDict):
    """One entry of a consult: the specialist asked, the question, and how it went."""

    index: int
    """Its place in the call, from 1 (the answers keep the call's order)."""
    specialist: str
    question: str
    status: Literal["asked", "answered", "error"]
    text: str
    """The answer (cut to the cap) once answered, the `ERROR: ...` line on error."""
    tokens: int
    """Tokens of `text`."""
    usage: NotRequired[HoldUsage]
    """An answered entry: the consultant's model calls and tokens (its `handover_id` is the
    entry's package's)."""


class ConsultRound(TypedDict):
    """A consult under way: the orchestrator's pending `consult_specialists` call and its
    entries; the answers are gathered into it, then it is cleared (None)."""

    call_id: str
    from_agent: str
    entries: list[ConsultEntry]
    records: NotRequired[list[HandoverRecord]]
    """The `consult` trail records of the entries sent, written when the answers are gathered
    (each with its consultant's `usage`)."""


class ConsultAnswer(TypedDict):
    """One consultant's write: its answered entry of the round `call_id`."""

    call_id: str
    answer: ConsultEntry


def merge_consult(
    current: ConsultRound | None, update: ConsultRound | ConsultAnswer | None
) -> ConsultRound | None:
    """The consult channel's reducer: a round replaces, an answer fills its entry of the
    same round (parallel consultants write in one step), None clears."""
    if not isinstance(update, dict):
        return None
    if "entries" in update:
        return update  # type: ignore[return-value]
    if not isinstance(current, dict) or current.get("call_id") != update.get("call_id"):
        return current  # an answer to a round that is over: nothing to fill
    answer = update["answer"]  # type: ignore[typeddict-item]
    entries = [answer if e["index"] == answer["index"] else e for e in current["entries"]]
    return {**current, "entries": entries}


Conversation = Annotated[
    list[AnyMessage],
    DeltaChannel(merge_messages, snapshot_frequency=SNAPSHOT_EVERY),
    Field(
        description="The conversation: the user's messages and every agent's replies and tool "
        "results, each reply named by its agent."
    ),
]
"""The stored conversation: a DeltaChannel, so a checkpoint stores a step's writes, not the list."""

Trail = Annotated[
    list[HandoverRecord],
    DeltaChannel(merge_trail, snapshot_frequency=TRAIL_SNAPSHOT_EVERY),
    Field(
        description="The handover trail, append-only: every handover, refused handover and "
        "return, with its time, reason, topic and token figures."
    ),
]
"""The append-only handover trail, stored the same way."""

ActiveAgent = Annotated[
    str,
    Field(
        description="Who holds the conversation: `orchestrator`, or the specialist whose "
        "profile name it is. The next user message goes to it."
    ),
]


class InputState(TypedDict):
    """What a user sends: messages. (An A2A client's data part reaches the graph as other
    keys; the graph reads it as part of the user's message: `with_a2a_data`.)"""

    messages: Conversation


class OutputState(TypedDict):
    """What a user reads back: the messages and who holds the conversation."""

    messages: Conversation
    active_agent: ActiveAgent


class HandoverState(TypedDict, total=False):
    """The whole graph state."""

    messages: Conversation
    active_agent: ActiveAgent
    handover: Annotated[
        ActiveHandover | None,
        Field(
            description="The stage-1 package the active specialist works from, with its "
            "place in the handover chain; null while the orchestrator holds the thread."
        ),
    ]
    handover_depth: Annotated[
        int, Field(ge=0, description="Handovers in the current chain (max_handover_depth).")
    ]
    handovers: Trail
    agent_turns: Annotated[
        int, Field(ge=0, description="Model calls the active agent made in a row (max_turns).")
    ]
    turn_trail: Annotated[
        list[str],
        Field(
            description="The hops of the current user turn, returns included "
            "(max_handovers_per_turn)."
        ),
    ]
    hold_usage: Annotated[
        HoldUsage | None,
        Field(
            description="The active specialist's model calls and tokens since its handover "
            "(from the models' usage metadata); written on the record that ends the hold."
        ),
    ]
    archived_tokens: Annotated[
        int,
        Field(
            ge=0,
            description="Tokens of the messages archived out of the working window: with the "
            "window's own, what the whole conversation would cost a full-history system.",
        ),
    ]
    ledger: Annotated[
        list[LedgerEntry],
        DeltaChannel(merge_ledger, snapshot_frequency=LEDGER_SNAPSHOT_EVERY),
        Field(
            description="The thread ledger: the decisions, constraints and artifacts the "
            "conversation has settled, with their source and turn; bounded, redacted; every "
            "handover's package carries it."
        ),
    ]
    ledger_mark: Annotated[
        LedgerMark | None,
        Field(description="How far the ledger's extractor has read the conversation."),
    ]
    recall: Annotated[
        list[RecallCard],
        DeltaChannel(merge_recall, snapshot_frequency=LEDGER_SNAPSHOT_EVERY),
        Field(
            description="Short texts of the turns archived out of the window, for retrieving "
            "a relevant earlier turn into a package (the newest few hundred)."
        ),
    ]
    consult: Annotated[
        ConsultRound | None,
        Field(
            description="The consult under way (the orchestrator asked several specialists "
            "at once): its entries and the answers gathered so far; null otherwise."
        ),
        merge_consult,
    ]


def usable(state: HandoverState) -> HandoverState:
    """The state as the graph reads it: a value that cannot be used (written by an older
    version, or straight into the checkpoint) reads as its default, so a thread can always
    answer its next message. Writes are checked before they are stored (`writes.py`)."""
    out = dict(state)
    for key in ("handover", "hold_usage", "consult"):
        if not isinstance(out.get(key), dict):
            out[key] = None
    if not isinstance(out.get("active_agent"), str):
        out["active_agent"] = ORCHESTRATOR
    for key in ("handover_depth", "agent_turns", "archived_tokens"):
        value = out.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            out[key] = 0
    if not isinstance(out.get("messages"), list):
        out["messages"] = []
    for key, kind in (("turn_trail", str), ("handovers", dict), ("ledger", dict), ("recall", dict)):
        value = out.get(key)
        out[key] = [v for v in value if isinstance(v, kind)] if isinstance(value, list) else []
    mark: Any = out.get("ledger_mark")
    ok = isinstance(mark, dict) and isinstance(mark.get("turns"), int)
    out["ledger_mark"] = mark if ok and isinstance(mark.get("upto"), str) else None
    return out  # type: ignore[return-value]
