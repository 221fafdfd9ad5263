"""A model's reply made safe to store: every call answerable, every message valid for OpenAI.

Models misbehave: two calls sharing one id, calls without an id, arguments that
are not a JSON object, tool names no API accepts. Stored as they are, such a
reply poisons every later request on the thread (OpenAI answers HTTP 400). So
before a reply is stored: missing and duplicate ids get fresh ones, names are
made valid, and calls whose arguments are not a JSON object join the
unparsable ones, which the agent's model step answers with an `ERROR:`.

Nor is any agent's output bounded (a local model's 20 MB reply, a tool's huge
result, a remote agent's thousands of messages): stored whole, it would make
every later turn load and carry it. So before what an agent's run added is
stored (`stored_replies`), each message longer than `max_message_tokens` is cut
with a visible marker, and the run's messages are bounded to `max_reply_tokens`
and `MAX_REPLY_MESSAGES` in all: the oldest whole turns are left out (an
assistant message with its tool results is one unit), with one note saying how
many; the last reply always stays. Both count linearly, and only as far as they
must (`TokenCounter.exceeds`, `truncate`): the newest messages first, until the
bound is reached.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from pydantic import ValidationError

from ...specialists import Profile
from ...state import TokenCounter, message_text, speaker_label, token_counter
from ...state.defaults import MAX_MESSAGE_TOKENS, MAX_REPLY_MESSAGES, MAX_REPLY_TOKENS
from ...state.tokens import is_text_block
from ..briefing.writer import now_utc
from ..history.budget import tool_units
from ..history.conversation import GRAPH_MADE, graph_reply
from ..tools.names import CONSULT, FULL_HISTORY, HANDOVER, RETURN

TRANSFER_NAMES = (HANDOVER, RETURN, CONSULT)

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Function names OpenAI accepts (the same pattern applies to message names)."""


def new_call_id() -> str:
    """A fresh tool-call id."""
    return f"call_{uuid.uuid4().hex[:24]}"


def safe_tool_name(name: Any) -> str:
    """A name OpenAI accepts: `read file!` -> `read_file_`; nothing usable -> `unnamed_tool`."""
    text = name if isinstance(name, str) else ""
    if TOOL_NAME.match(text):
        return text
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", text)[:64]
    return cleaned if cleaned.strip("_") else "unnamed_tool"


def used_call_ids(messages: Iterable[BaseMessage]) -> set[str]:
    """Every tool-call id already in these messages."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            ids.update(c.get("id") or "" for c in message.tool_calls + message.invalid_tool_calls)
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids - {""}


def make_reply_safe(
    reply: AIMessage, taken: set[str], renamed: dict[str, str] | None = None
) -> AIMessage:
    """The reply with unique ids, valid names, and non-object arguments moved to invalid calls.

    `renamed` (when given) records each id replaced because `taken` held it already.
    """
    seen: set[str] = set()  # this reply's ids (`taken` is not copied: it may hold thousands)

    def unique(call_id: Any) -> str:
        usable = isinstance(call_id, str) and call_id and call_id not in taken
        fresh = call_id if usable and call_id not in seen else None
        if fresh is None:
            fresh = new_call_id()
            if renamed is not None and call_id in taken:
                renamed.setdefault(call_id, fresh)
        seen.add(fresh)
        return fresh

    calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    for call in reply.tool_calls:
        args = call.get("args")
        fixed = {**call, "id": unique(call.get("id")), "name": safe_tool_name(call.get("name"))}
        if isinstance(args, dict):
            calls.append(fixed)
        else:
            invalid.append(_invalid(fixed, args, "the arguments are not a JSON object"))
    for bad in reply.invalid_tool_calls:
        fixed = {**bad, "id": unique(bad.get("id")), "name": safe_tool_name(bad.get("name"))}
        invalid.append(_invalid(fixed, bad.get("args"), bad.get("error") or _why(bad.get("args"))))
    if calls == list(reply.tool_calls) and invalid == list(reply.invalid_tool_calls):
        return reply
    extra = {k: v for k, v in reply.additional_kwargs.items() if k not in _CALL_KWARGS}
    return reply.model_copy(
        update={"tool_calls": calls, "invalid_tool_calls": invalid, "additional_kwargs": extra}
    )


def _invalid(call: dict[str, Any], args: Any, error: Any) -> dict[str, Any]:
    return {
        "type": "invalid_tool_call",
        "id": call["id"],
        "name": call["name"],
        # OpenAI wants the arguments as a string, even when there were none
        "args": "" if args is None else args if isinstance(args, str) else _json(args),
        "error": error if isinstance(error, str) else None,
    }


def _why(args: Any) -> str:
    """Why arguments a client could not use are unusable: not JSON, or JSON but not an object."""
    try:
        parsed = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return "the arguments are not valid JSON"
    if isinstance(parsed, dict):
        return "the arguments could not be used"
    return "the arguments are not a JSON object"


def unparsable_answers(reply: AIMessage) -> list[ToolMessage]:
    """An `ERROR:` tool result for each call whose arguments could not be read."""
    return [
        error_answer(
            bad,
            f"ERROR: the call to {bad.get('name') or 'a tool'} could not be read "
            f"({_reason(bad)}); call it again with a JSON object of arguments.",
        )
        for bad in reply.invalid_tool_calls
    ]


def error_answer(call: Any, content: str) -> ToolMessage:
    """The `ERROR:` tool result that answers `call`."""
    return ToolMessage(
        content=content,
        tool_call_id=call["id"],
        name=call.get("name") or "unknown",
        id=f"tool-{uuid.uuid4().hex}",
        status="error",
    )


def _reason(bad: Any) -> str:
    error = bad.get("error") or ""
    if "not a JSON object" in error:
        return "the arguments are not a JSON object"
    if not error or "not valid JSON" in error:
        return "the arguments are not valid JSON"
    return error.splitlines()[0][:200]


def is_unreadable_tool_call(exc: BaseException) -> bool:
    """A client's parser gave up on a reply whose tool-call arguments are not an object."""
    return isinstance(exc, ValidationError) and any(
        "tool_calls" in [str(p) for p in err.get("loc", ())] for err in exc.errors()
    )


def streaming_copy(model: BaseChatModel) -> BaseChatModel:
    """The same model with streaming switched on, whatever the instance said (a client that
    cannot parse a reply's tool-call arguments keeps them as invalid calls when it streams)."""
    fields = type(model).model_fields
    update = {k: v for k, v in (("streaming", True), ("disable_streaming", False)) if k in fields}
    return model.model_copy(update=update) if update else model


def tag_reply(message: AIMessage, agent: str, profile: Profile) -> AIMessage:
    """A reply as stored: named by the agent, its persona marker in its metadata, and when it
    was made (a handover resumed after a crash keeps that time and its file's date)."""
    metadata = dict(message.response_metadata or {})
    metadata.update({"persona_marker": profile.marker, "persona_emoji": profile.emoji})
    metadata.setdefault("created_at", now_utc().isoformat())
    message_id = message.id or f"msg-{uuid.uuid4().hex}"
    return message.model_copy(
        update={"name": agent, "response_metadata": metadata, "id": message_id}
    )


def stop_message(agent: str, profile: Profile, turns: int, max_turns: int) -> AIMessage:
    """What an agent says when it reaches max_turns model calls in a row."""
    return graph_reply(
        agent,
        profile,
        f"⚠️ {profile.label} stopped after {turns} model calls in a row without finishing "
        f"(max_turns={max_turns}). Nothing was lost: ask again or rephrase, and the "
        "conversation continues from here.",
        MAX_TURNS_REACHED,
    )


MAX_TURNS_REACHED = "max_turns_reached"
"""Metadata flag of the message an agent stops with at `max_turns`."""


def stored_replies(
    added: list[BaseMessage],
    *,
    agent: str,
    profile: Profile,
    taken: set[str],
    stored_ids: set[str | None] = frozenset(),  # type: ignore[assignment]
    label: bool = False,
    counter: TokenCounter | None = None,
    max_message_tokens: int = MAX_MESSAGE_TOKENS,
    max_reply_tokens: int = MAX_REPLY_TOKENS,
) -> list[BaseMessage]:
    """What an agent added, as the conversation stores it: its replies and tool results only,
    replies named and tagged, every tool-call id unique in the thread (a repeated one is
    renamed, in its results too), every message id new (a reused one would overwrite a stored
    message), and calls no result answers closed with an `ERROR:` (the last reply's transfer
    calls excepted: the handover node answers them).

    Bounded, counted with `counter` (the agent's; default o200k_base): each message cut to
    `max_message_tokens` (`capped_message`), and the newest whole turns (an assistant message
    with its tool results) kept while they fit `max_reply_tokens` and `MAX_REPLY_MESSAGES`;
    the older ones are left out, replaced by one note saying how many (flagged `REPLY_CUT`,
    with the left-out model replies' count and usage in its metadata). The newest turn always
    stays: when it alone is over `max_reply_tokens`, its longest messages are cut to a fair
    share. Counts from the newest message back, and stops at the bound."""
    seen = set(taken)
    renamed: dict[str, str] = {}
    out: list[BaseMessage] = []
    for message in added:
        if message.id in stored_ids:
            message = message.model_copy(update={"id": f"{message.type}-{uuid.uuid4().hex}"})
        if isinstance(message, AIMessage):
            safe = make_reply_safe(tag_reply(message, agent, profile), seen, renamed)
            seen |= used_call_ids([safe])
            out.append(labeled(safe, agent, profile) if label else safe)
        elif isinstance(message, ToolMessage):
            call_id = renamed.get(message.tool_call_id, message.tool_call_id)
            update: dict[str, Any] = {"tool_call_id": call_id}
            if message.name == FULL_HISTORY and len(message.text) > STAGE_2_STORED_CHARS:
                update["content"] = stage_2_record(message.text, agent)
            out.append(message.model_copy(update=update))
    messages = _close_pending(out)
    counter = counter or token_counter(None)
    units = tool_units(messages)
    kept: list[list[tuple[BaseMessage, int]]] = []
    tokens = count = fit_with_note = 0
    for start, end in reversed(units):
        if kept and count + end - start > MAX_REPLY_MESSAGES:
            break
        unit = [capped_message(m, max_message_tokens, counter) for m in messages[start:end]]
        cost = sum(size for _, size in unit)
        if kept and tokens + cost > max_reply_tokens:
            break
        kept.append(unit)
        tokens, count = tokens + cost, count + len(unit)
        if tokens <= max_reply_tokens - REPLY_NOTE_TOKENS and count < MAX_REPLY_MESSAGES:
            fit_with_note = len(kept)
    whole = len(kept) == len(units)
    if not whole:
        kept = kept[: max(fit_with_note, 1)]
    room = max_reply_tokens - (0 if whole else REPLY_NOTE_TOKENS)
    if kept and sum(size for _, size in kept[0]) > room:  # the newest turn alone is too big
        start, end = units[-1]
        kept[0] = _fair_shares(messages[start:end], kept[0], room, counter, max_reply_tokens)
    bounded = [m for unit in reversed(kept) for m, _ in unit]
    if whole:
        return bounded
    left_out = messages[: units[len(units) - len(kept)][0]]
    return [_left_out_note(left_out, agent, profile, max_reply_tokens, label), *bounded]


# --- size caps -----------------------------------------------------------------------------

EXACT_COUNT_CHARS = 200_000
"""A message cut for its size is counted exactly for its marker when its parts hold at most
this many characters (a few hundredths of a second at worst); a longer one's count is
estimated from its first characters (encoding 20 MB takes seconds), and the marker says
"about"."""
REPLY_NOTE_TOKENS = 120
"""Tokens kept free for the note that says how many messages of a run were left out."""
MIN_MESSAGE_SHARE = 100
"""No message of the newest turn is cut below this many tokens to fit `max_reply_tokens`."""
REPLY_CUT = "reply_messages_left_out"
"""Metadata flag of the note that says how many of an agent run's messages were left out."""
_CALL_KWARGS = ("tool_calls", "function_call")
"""A provider's raw copies of the tool calls in `additional_kwargs` (the parsed ones rule)."""


def _json(value: Any) -> str:
    """The JSON text a request carries for `value` (as `TokenCounter` counts it)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a circular structure
        return str(value)


def _parts(message: BaseMessage) -> list[str]:
    """The texts a request carries for a message, in order (what `count_message` counts)."""
    content = message.content
    parts = [message.name or "", *([content] if isinstance(content, str) else map(_text, content))]
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            parts += [call.get("name") or "", _json(call.get("args"))]
        for bad in message.invalid_tool_calls:
            parts += [bad.get("name") or "", str(bad.get("args") or "")]
    return parts


def _size_of(texts: list[str], counter: TokenCounter) -> str:
    """The tokens of these texts, `12,345` (exact) or `about 5,250,000` (estimated from their
    first `EXACT_COUNT_CHARS` characters when longer)."""
    chars = sum(map(len, texts))
    if chars <= EXACT_COUNT_CHARS:
        return f"{sum(map(counter.count_text, texts)):,}"
    sample = ""
    for text in texts:
        sample += text[: EXACT_COUNT_CHARS - len(sample)]
    ratio = counter.count_text(sample) / len(sample)
    return f"about {round(chars * ratio, -3):,.0f}"


def _marker(what: str, size: str, why: str, verb: str = "was") -> str:
    return f"… [cut: {what} {verb} {size} tokens, over {why}; the rest is left out]"


def capped_message(
    message: BaseMessage, limit: int, counter: TokenCounter, *, why: str = ""
) -> tuple[BaseMessage, int]:
    """The message as stored within `limit` tokens (counted as a model request carries it),
    and its tokens. Over it: a tool call's arguments or a non-text block that alone takes more
    than a quarter of the limit is replaced by a note (all of them, when they still take more
    than half), and the text is cut to what is left, ending with a visible marker: `… [cut:
    the message was N tokens, over max_message_tokens=M; the rest is left out]` (`why` names
    the bound). Values of `additional_kwargs`, `response_metadata` and a tool result's
    `artifact` over the limit (stored, never sent) are replaced by a note too.

    Counts only as far as it must: a message whose characters cannot reach the limit is
    counted once; a longer one is probed (`TokenCounter.exceeds`) before anything is counted
    in full."""
    why = why or f"max_message_tokens={limit:,}"
    message = _capped_extras(message, limit, counter, why)
    parts = _parts(message)
    chars = sum(map(len, parts))
    if chars * 4 + 64 <= limit:  # a token is at least one UTF-8 byte: it cannot be over
        return message, counter.count_message(message)
    size = None
    if not any(counter.exceeds(part, limit) for part in parts):
        size = counter.count_message(message)  # no part is over: counting it all is cheap
        if size <= limit:
            return message, size
    if size is None and chars <= EXACT_COUNT_CHARS:
        size = counter.count_message(message)
    original = _size_of(parts, counter) if size is None else f"{size:,}"
    update: dict[str, Any] = {}
    for share in (limit // 4, 0):  # long parts first; all of them when that is not enough
        if isinstance(message, AIMessage):
            update.update(_capped_calls(message, share, limit, counter, why))
        if not isinstance(message.content, str):
            update["content"] = _capped_blocks(message.content, share, counter, why)
        bare = message.model_copy(update={**update, "content": _without_text(update, message)})
        rest = counter.count_message(bare)
        if rest <= limit // 2:
            break
    text = _text_of(update.get("content", message.content))
    marker = "\n" + _marker("the message", original, why)
    room = max(limit - rest - counter.count_text(marker), 0)
    if not counter.exceeds(text, room):
        short = message.model_copy(update={**update, "content": _with_text(bare, text)})
        return short, counter.count_message(short)
    head = counter.truncate(text, room)
    while True:
        short = message.model_copy(update={**update, "content": _with_text(bare, head + marker)})
        size = counter.count_message(short)
        if size <= limit or not head:
            return short, size
        head = counter.truncate(head, max(counter.count_text(head) - (size - limit), 0))


def _text_of(content: str | list[Any]) -> str:
    """The text of a message's content: the string, or its text blocks joined."""
    return (
        content if isinstance(content, str) else "".join(map(_text, filter(is_text_block, content)))
    )


def _text(block: Any) -> str:
    """A content block as a request carries it: its text, or (not a text block) its JSON."""
    if isinstance(block, str):
        return block
    return str(block.get("text", "")) if is_text_block(block) else _json(block)


def _capped_calls(
    message: AIMessage, share: int, limit: int, counter: TokenCounter, why: str
) -> dict[str, Any]:
    """The message's tool calls with arguments over `share` tokens replaced by a note. A
    transfer's arguments keep their shape (the handover node reads them): only their strings
    over half the limit are cut, each with a marker."""
    calls = []
    for call in message.tool_calls:
        args = _json(call.get("args"))
        if not counter.exceeds(args, share) or _is_note(call.get("args")):
            pass
        elif call.get("name") in TRANSFER_NAMES:
            call = {**call, "args": _capped_strings(call.get("args"), "", limit, counter, why)}
        else:
            note = _marker("the arguments", _size_of([args], counter), why, "were")
            call = {**call, "args": {"note": note}}
        calls.append(call)
    invalid = []
    for bad in message.invalid_tool_calls:
        args = str(bad.get("args") or "")
        if counter.exceeds(args, share) and not args.startswith("… [cut:"):
            size = _size_of([args], counter)
            bad = {**bad, "args": _marker("the arguments", size, why, "were")}
        invalid.append(bad)
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in _CALL_KWARGS}
    return {"tool_calls": calls, "invalid_tool_calls": invalid, "additional_kwargs": extra}


def _capped_strings(value: Any, key: str, limit: int, counter: TokenCounter, why: str) -> Any:
    """`value` with every string in it over half of `limit` tokens cut, with a marker."""
    if isinstance(value, dict):
        return {k: _capped_strings(v, str(k), limit, counter, why) for k, v in value.items()}
    if isinstance(value, list):
        return [_capped_strings(v, key, limit, counter, why) for v in value]
    if isinstance(value, str) and counter.exceeds(value, limit // 2):
        marker = "\n" + _marker(f"the {key or 'value'}", _size_of([value], counter), why)
        return counter.truncate(value, limit // 2 - counter.count_text(marker)) + marker
    return value


def _is_note(args: Any) -> bool:
    return isinstance(args, dict) and list(args) == ["note"] and "[cut:" in str(args["note"])


def _capped_blocks(blocks: list[Any], share: int, counter: TokenCounter, why: str) -> list[Any]:
    """Content blocks with every non-text block over `share` tokens replaced by a note."""
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") != "text":
            data = _json(block)
            if counter.exceeds(data, share):
                what = f"the {block.get('type') or 'content'} block"
                block = {"type": "text", "text": _marker(what, _size_of([data], counter), why)}
        out.append(block)
    return out


def _without_text(update: dict[str, Any], message: BaseMessage) -> Any:
    """The message's content (as `update` has it) without its text: what else it sends."""
    content = update.get("content", message.content)
    return "" if isinstance(content, str) else [b for b in content if not is_text_block(b)]


def _with_text(bare: BaseMessage, text: str) -> Any:
    """`bare`'s content with `text` as its text: a string, or a text block first."""
    if isinstance(bare.content, str):
        return text
    blocks = [b for b in bare.content if not is_text_block(b)]
    return [{"type": "text", "text": text}, *blocks] if text else blocks


def _capped_extras(
    message: BaseMessage, limit: int, counter: TokenCounter, why: str
) -> BaseMessage:
    """The message with each stored-only value over `limit` tokens replaced by a note (the
    raw copies of tool calls a provider keeps are left out instead)."""

    def capped(what: str, value: Any) -> Any:
        data = value if isinstance(value, str) else _json(value)
        if len(data) * 4 > limit and counter.exceeds(data, limit):
            return _marker(f"the {what}", _size_of([data], counter), why)
        return value

    update: dict[str, Any] = {}
    for field in ("additional_kwargs", "response_metadata"):
        values: dict[str, Any] = getattr(message, field)
        kept = {key: capped(f"{key} value", value) for key, value in values.items()}
        if field == "additional_kwargs":
            kept = {k: v for k, v in kept.items() if k not in _CALL_KWARGS or v is values[k]}
        if len(kept) != len(values) or any(kept[k] is not values[k] for k in kept):
            update[field] = kept
    artifact = getattr(message, "artifact", None)  # a tool result's only
    if artifact is not None and (short := capped("artifact", artifact)) is not artifact:
        update["artifact"] = short
    return message.model_copy(update=update) if update else message


def _fair_shares(
    originals: list[BaseMessage],
    unit: list[tuple[BaseMessage, int]],
    room: int,
    counter: TokenCounter,
    max_reply_tokens: int,
) -> list[tuple[BaseMessage, int]]:
    """The newest turn within `room` tokens: its smaller messages as they are, the larger ones
    cut (from the originals) to an equal share of what is left."""
    order = sorted(range(len(unit)), key=lambda i: unit[i][1])
    left = room
    for k, i in enumerate(order):
        share = left // (len(order) - k)
        if unit[i][1] <= share:
            left -= unit[i][1]
            continue
        share = max(share, MIN_MESSAGE_SHARE)
        why = f"its share ({share:,}) of max_reply_tokens={max_reply_tokens:,}"
        out = list(unit)
        for j in order[k:]:
            out[j] = capped_message(originals[j], share, counter, why=why)
        return out
    return unit


def _left_out_note(
    left_out: list[BaseMessage], agent: str, profile: Profile, max_reply_tokens: int, label: bool
) -> AIMessage:
    """The one note standing for the messages of a run that were left out."""
    replies = [
        m
        for m in left_out
        if isinstance(m, AIMessage) and not (m.response_metadata or {}).get(GRAPH_MADE)
    ]
    usage = {"input_tokens": 0, "output_tokens": 0}
    for reply in replies:
        for key in usage:
            value = dict(reply.usage_metadata or {}).get(key)
            usage[key] += value if isinstance(value, int) and value > 0 else 0
    note = graph_reply(
        agent,
        profile,
        f"… [{len(left_out):,} earlier messages of this reply were left out: one agent's run "
        f"may add at most {MAX_REPLY_MESSAGES:,} messages and max_reply_tokens="
        f"{max_reply_tokens:,} tokens; the newest are kept]",
        REPLY_CUT,
    )
    note.response_metadata.update(
        left_out_messages=len(left_out), left_out_model_replies=len(replies), left_out_usage=usage
    )
    return labeled(note, agent, profile) if label else note


STAGE_2_STORED_CHARS = 2000
"""A `request_full_history` result longer than this is stored as its record (below)."""


def stage_2_record(text: str, agent: str) -> str:
    """What the conversation keeps of a stage-2 result: its header line and a note. The agent
    had the whole text in the turn it asked; storing up to 50,000 tokens of a history the
    thread already holds would make every later load and view carry it."""
    header = text.splitlines()[0] if text else ""
    return (
        f"{header[:300]}\n(the full history was given to {agent} in this turn and is not "
        f"stored again; request_full_history gives it anew)"
    )


def labeled(reply: AIMessage, agent: str, profile: Profile) -> AIMessage:
    """The reply opened by its speaker's label (`🖌️ **frontend designer**`), for chat UIs that
    show message text only; a reply without text, or labelled already, stays as it is."""
    text = message_text(reply)
    if not text.strip() or text != reply.text:  # no text, or the label is there
        return reply
    label = speaker_label(profile.emoji, agent)
    if isinstance(reply.content, str):
        return reply.model_copy(update={"content": label + reply.content})
    return reply.model_copy(update={"content": [{"type": "text", "text": label}, *reply.content]})


def _close_pending(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Answer the calls no tool message answers, but the last reply's transfer calls."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    out: list[BaseMessage] = []
    for i, message in enumerate(messages):
        out.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in [*message.tool_calls, *message.invalid_tool_calls]:
            if call["id"] in answered or (i == last and call.get("name") in TRANSFER_NAMES):
                continue
            out.append(
                error_answer(call, f"ERROR: {call.get('name') or 'the tool'} was not answered.")
            )
    return out
