"""Every write to a thread's state is checked before it is stored, the way input is.

LangGraph stores a write before its reducer runs, so a malformed value that
reaches a channel is saved and then breaks every later turn of the thread. The
compiled graph (`graph/handover_graph.py`) passes everything a caller writes through
here first, whatever the way: input to `invoke`/`stream` (and the LangGraph
server's runs), `Command(update=...)`, and `update_state` (Studio's and the
server API's state edits included). A refused write raises `InputError`
naming the problem, and nothing is stored.

- Messages come from the user, or are plain assistant replies: no tool calls,
  no tool or system messages, no removals (stored history is never rewritten).
  Each has text; no NUL or lone surrogate; it can be stored (no objects the
  checkpointer cannot serialise); its id is not one the thread already stores
  (a message with a stored id would overwrite it). All of it counts against
  `max_input_tokens`: every content block, the name and any extra fields, and
  all the messages of one write together.
- The other keys take values of their declared types (`state/schema.py`); an
  agent named must be one of the build's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command
from pydantic import TypeAdapter, ValidationError

from .ledger import LedgerEntry, LedgerMark, RecallCard
from .messages import message_text
from .schema import ActiveHandover, ConsultAnswer, ConsultRound, HandoverRecord, HoldUsage
from .tokens import TokenCounter

INPUT_KEYS = ("messages",)

_SERDE = JsonPlusSerializer()


class InputError(ValueError):
    """A write the graph refuses before storing anything; the message names the problem."""


def _message_size_text(message: BaseMessage) -> str:
    """Everything a message would send and store, as text to count: every content block,
    its name and any extra fields."""
    blocks = message.content if isinstance(message.content, list) else [message.content]
    parts = [b if isinstance(b, str) else json.dumps(b, default=str) for b in blocks]
    extra = {"name": message.name, "kwargs": message.additional_kwargs or None}
    return "\n".join([*parts, json.dumps(extra, default=str)])


def _check_message(
    where: str,
    item: Any,
    remaining: int,
    counter: TokenCounter,
    stored_ids: Collection[str],
    max_tokens: int,
) -> tuple[BaseMessage, int]:
    """The message as it will be stored and the tokens it counts, or InputError."""
    if item is None:
        raise InputError(
            f"{where} is None; send a message such as {{'role': 'user', 'content': '...'}}"
        )
    try:
        (message,) = convert_to_messages([item])
    except Exception as exc:  # noqa: BLE001 - LangChain raises several kinds here
        detail = str(exc).splitlines()[0]
        raise InputError(f"{where} is not a chat message ({detail})") from None
    if isinstance(message, AIMessage):
        if message.tool_calls or message.invalid_tool_calls:
            raise InputError(
                f"{where}: an assistant message with tool calls cannot be sent as input"
            )
    elif not isinstance(message, HumanMessage):
        raise InputError(
            f"{where} has role {message.type!r}; input messages come from the user "
            "(role 'user'), or are plain assistant replies"
        )
    if not isinstance(message.content, str | list):
        raise InputError(f"{where}: content must be text")
    text = message_text(message)
    if "\x00" in text:
        raise InputError(f"{where} holds a NUL character")
    size_text = _message_size_text(message)
    try:
        size_text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{where} is not valid text (it holds a lone surrogate)") from None
    if not text.strip() and isinstance(message, HumanMessage):
        raise InputError(f"{where} is empty")
    if counter.exceeds(size_text, remaining):
        raise InputError(
            f"{where} is over max_input_tokens={max_tokens:,} tokens (counted over every "
            "block, the name and all the messages sent together); send a shorter message "
            "or a file path the specialists can read"
        )
    if message.id and message.id in stored_ids:
        raise InputError(
            f"{where} has the id {message.id!r} of a message the thread already stores; it "
            "would overwrite it. Send it without an id, or with a new one"
        )
    if not message.id:
        message = message.model_copy(update={"id": f"{message.type}-{uuid.uuid4().hex}"})
    _storable(where, message)
    return message, counter.count_text(size_text)


def check_messages(
    items: Any,
    *,
    max_tokens: int,
    counter: TokenCounter,
    stored_ids: Collection[str] = (),
    together: bool = True,
) -> list[BaseMessage]:
    """The messages of one write as they will be stored, or InputError naming the first bad one.

    With `together` (input to a run) all of them count against `max_tokens` as one; without
    (a state edit, such as importing an earlier conversation) each one does.
    """
    if isinstance(items, BaseMessage | str | tuple | Mapping):
        items = [items]
    if not isinstance(items, list) or not items:
        raise InputError(
            f"'messages' must be a non-empty list of messages, got {type(items).__name__}"
            if not isinstance(items, list)
            else "'messages' is empty; send at least one user message"
        )
    checked, remaining = [], max_tokens
    for i, item in enumerate(items):
        message, tokens = _check_message(
            f"messages[{i}]", item, remaining, counter, stored_ids, max_tokens
        )
        checked.append(message)
        remaining -= tokens if together else 0
    return checked


_HANDOVER = TypeAdapter(ActiveHandover | None)
_RECORDS = TypeAdapter(list[HandoverRecord])
_USAGE = TypeAdapter(HoldUsage | None)
_CONSULT = TypeAdapter(ConsultRound | ConsultAnswer | None)
_LEDGER = TypeAdapter(list[LedgerEntry])
_MARK = TypeAdapter(LedgerMark | None)


def check_update(
    values: Any,
    *,
    agents: Collection[str],
    max_tokens: int,
    counter: TokenCounter,
    stored_ids: Collection[str] = (),
    together: bool = True,
) -> dict[str, Any]:
    """A state update (`update_state`, `Command(update=...)`) as it will be stored, or InputError.

    `together`: see `check_messages` (False for `update_state`, True for a run's input)."""
    if not isinstance(values, Mapping):
        raise InputError(
            f"a state update must be a dict of state keys, got {type(values).__name__}"
        )
    checked: dict[str, Any] = {}
    for key, value in values.items():
        if key == "messages":
            checked[key] = check_messages(
                value,
                max_tokens=max_tokens,
                counter=counter,
                stored_ids=stored_ids,
                together=together,
            )
        elif key == "active_agent":
            if value not in agents:
                raise InputError(
                    f"active_agent {value!r:.60} names no agent of this graph; agents: "
                    f"{', '.join(agents)}"
                )
            checked[key] = value
        elif key in _VALIDATORS:
            adapter, what = _VALIDATORS[key]
            if key in ("handovers", "ledger", "recall") and isinstance(value, Mapping):
                value = [value]
            try:
                checked[key] = adapter.validate_python(value, strict=True)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ()))
                raise InputError(
                    f"{key} must be {what}; {where + ': ' if where else ''}{first['msg']}"
                ) from None
            if key in ("handover_depth", "agent_turns", "archived_tokens") and checked[key] < 0:
                raise InputError(f"{key} must be an integer >= 0, got {checked[key]}")
        else:
            raise InputError(
                f"unknown state key {key!r}; the state's keys: messages, {', '.join(_VALIDATORS)}"
                ", active_agent"
            )
    return checked


_VALIDATORS: dict[str, tuple[TypeAdapter[Any], str]] = {
    "handover": (_HANDOVER, "null or a handover package (state/schema.py: ActiveHandover)"),
    "handovers": (_RECORDS, "trail records (state/schema.py: HandoverRecord)"),
    "handover_depth": (TypeAdapter(int), "an integer >= 0"),
    "agent_turns": (TypeAdapter(int), "an integer >= 0"),
    "archived_tokens": (TypeAdapter(int), "an integer >= 0"),
    "hold_usage": (_USAGE, "null or a hold's usage (state/schema.py: HoldUsage)"),
    "turn_trail": (TypeAdapter(list[str]), "a list of strings"),
    "consult": (_CONSULT, "null or a consult round (state/schema.py: ConsultRound)"),
    "ledger": (_LEDGER, "thread-ledger entries to add (state/ledger.py: LedgerEntry)"),
    "ledger_mark": (_MARK, "null or the ledger's reading mark (state/ledger.py: LedgerMark)"),
    "recall": (TypeAdapter(list[RecallCard]), "recall cards to add (state/ledger.py: RecallCard)"),
}


REVIEW_MESSAGE_CHARS = 16 * 1000
"""A reviewer's message is cut to this many characters before it is stored (the review then
cuts it to `MAX_REVIEW_MESSAGE_TOKENS` tokens)."""


def bounded_resume(value: Any) -> Any:
    """A review's resume value with every decision's `message` (and a terminal answer's
    `reason`) as storable text: lone surrogates replaced, cut to `REVIEW_MESSAGE_CHARS`."""
    if not isinstance(value, Mapping):
        return value
    out = dict(value)
    decisions = out.get("decisions")
    if isinstance(decisions, list):
        out["decisions"] = [
            {**d, "message": _bounded_text(d["message"])}
            if isinstance(d, Mapping) and isinstance(d.get("message"), str)
            else d
            for d in decisions
        ]
    if isinstance(out.get("reason"), str):
        out["reason"] = _bounded_text(out["reason"])
    return out


def _bounded_text(text: str) -> str:
    if len(text) > REVIEW_MESSAGE_CHARS:
        text = text[:REVIEW_MESSAGE_CHARS] + " … [cut]"
    return text.encode("utf-8", "replace").decode("utf-8")


def _storable(what: str, value: Any, example: str = "") -> None:
    """InputError unless the checkpointer can store `value` (and its text is valid UTF-8)."""
    try:
        _SERDE.dumps_typed(value)
    except Exception as exc:  # noqa: BLE001 - whatever the checkpointer cannot store
        raise InputError(
            f"{what} cannot be stored ({type(exc).__name__}: {str(exc)[:120]}); send text and "
            f"JSON values only{example}"
        ) from None


def check_input(
    payload: Any,
    *,
    max_tokens: int,
    counter: TokenCounter,
    agents: Collection[str] = (),
    stored_ids: Collection[str] = (),
) -> Any:
    """The input as the graph stores it, or InputError naming what is wrong (nothing stored).

    `None` (resume) passes; a `Command`'s `update` is checked like a state update.
    """
    if payload is None:
        return None
    if isinstance(payload, Command):
        if payload.update is None and payload.resume is None and not payload.goto:
            raise InputError(
                "the Command carries nothing: resume a paused run with "
                "Command(resume=...), e.g. {'action': 'approve'}"
            )
        resume = bounded_resume(payload.resume)
        if resume is not None:
            _storable("the resume value", resume, ", e.g. {'decisions': [{'type': 'approve'}]}")
        update = payload.update
        if update is not None:
            update = check_update(
                update, agents=agents, max_tokens=max_tokens, counter=counter, stored_ids=stored_ids
            )
        return Command(graph=payload.graph, update=update, resume=resume, goto=payload.goto)
    if not isinstance(payload, Mapping):
        raise InputError(
            f"input must be a dict like {{'messages': [{{'role': 'user', 'content': '...'}}]}}, "
            f"got {type(payload).__name__}"
        )
    unknown = sorted(str(k) for k in payload if k not in INPUT_KEYS)
    if unknown:
        raise InputError(
            f"unknown input key(s) {', '.join(unknown)}; the graph takes: {', '.join(INPUT_KEYS)}"
        )
    if "messages" not in payload:
        raise InputError("input has no 'messages'; send {'messages': [...]}")
    return {
        "messages": check_messages(
            payload["messages"], max_tokens=max_tokens, counter=counter, stored_ids=stored_ids
        )
    }
