"""Fitting what one model request carries into `max_input_tokens`.

Every request an agent sends is bounded, counted over everything sent (the
system prompt, each message with its name, blocks and tool calls, and the tool
schemas). When a request would be over, it is shaped, never the stored
history (its messages are copies):

1. the messages the graph opens a view with (the package, the notes) are cut
   to at most a third of the room each;
2. every other message but the newest is cut to a fair share of the room (long
   tool outputs and pasted texts go first), with a note saying how much was cut;
3. the oldest whole turns are left out (an assistant message with its tool
   results is one unit, so the tool-call history stays valid) until it fits;
4. if the newest message alone is still too big, it is cut to what is left.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ...state import TokenCounter, message_text
from ...state.tokens import REPLY_PRIMING

CUT_NOTE = "\n[… {tokens:,} more tokens cut to fit max_input_tokens]"
MIN_SHARE = 64
"""No message is cut below this many tokens while older ones can still be left out."""


class RequestTooLargeError(ValueError):
    """What every request must carry (system prompt, tool schemas) alone exceeds the bound."""


def cut_message(message: BaseMessage, tokens: int, counter: TokenCounter) -> BaseMessage:
    """A copy that counts about `tokens` tokens at most: its text cut to a head with a note of
    how much was cut, and a tool call's long arguments replaced by a note."""
    if counter.count_message(message) <= tokens:
        return message
    update: dict[str, object] = {}
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = []
        for call in message.tool_calls:
            if counter.count_text(str(call.get("args"))) > tokens // 2:
                call = {**call, "args": {"note": "arguments cut to fit max_input_tokens"}}
            calls.append(call)
        update["tool_calls"] = calls
    text = message_text(message)
    total = counter.count_text(text)
    if total > tokens:
        head = counter.prefix(text, max(tokens - 16, 0))
        update["content"] = head + CUT_NOTE.format(tokens=total - counter.count_text(head))
    return message.model_copy(update=update) if update else message


def _units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Messages grouped so that an assistant message and its tool results stay together."""
    units: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and units and _calls(units[-1][0]):
            units[-1].append(message)
        else:
            units.append([message])
    return units


def _calls(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and bool(message.tool_calls or message.invalid_tool_calls)


def _opening(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name == "handover"


def fit_messages(
    messages: Sequence[BaseMessage], *, budget: int, counter: TokenCounter, fixed: int = 0
) -> list[BaseMessage]:
    """The messages, shaped (see the module docstring) so that with `fixed` tokens more (the
    system prompt, the tool schemas) the request counts at most `budget` tokens."""
    room = budget - fixed - REPLY_PRIMING
    if room <= MIN_SHARE:
        raise RequestTooLargeError(
            f"the system prompt and tool schemas alone take {fixed:,} tokens of "
            f"max_input_tokens={budget:,}; raise max_input_tokens"
        )
    out = list(messages)
    if counter.count_messages(out) <= budget - fixed or not out:
        return out
    heads = 0
    while heads < len(out) - 1 and _opening(out[heads]):
        heads += 1
    cost = counter.count_message
    head = [cut_message(m, room // 3, counter) for m in out[:heads]]
    share = max(room // 4, MIN_SHARE)
    rest = [cut_message(m, share, counter) for m in out[heads:-1]] + out[-1:]
    units = _units(rest)
    left = room - sum(cost(m) for m in head)
    while len(units) > 1 and sum(cost(m) for unit in units for m in unit) > left:
        units.pop(0)  # the oldest whole turn goes first
    kept = [m for unit in units for m in unit]
    over = sum(cost(m) for m in kept) - left
    if over > 0:  # the newest unit alone is too big: cut its longest messages
        for i in sorted(range(len(kept)), key=lambda i: -cost(kept[i])):
            if over <= 0:
                break
            size = cost(kept[i])
            kept[i] = cut_message(kept[i], max(size - over - 8, 0), counter)
            over -= size - cost(kept[i])
    return [*head, *kept]
