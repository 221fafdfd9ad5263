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
    """A copy of a message over `tokens` tokens that counts about `tokens` at most: its text cut
    to a head with a note of how much was cut, and a tool call's long arguments replaced by a
    note."""
    update: dict[str, object] = {}
    if isinstance(message, AIMessage) and message.tool_calls:
        update["tool_calls"] = [
            {**call, "args": {"note": "arguments cut to fit max_input_tokens"}}
            if counter.count_text(str(call.get("args"))) > tokens // 2
            else call
            for call in message.tool_calls
        ]
    text = message_text(message)
    total = counter.count_text(text)
    if total > tokens:
        head = counter.prefix(text, max(tokens - 16, 0))
        update["content"] = head + CUT_NOTE.format(tokens=total - counter.count_text(head))
    return message.model_copy(update=update) if update else message


def tool_units(messages: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """The messages grouped so that an assistant message and its tool results stay together:
    each group as its (start, end) slice."""
    units: list[tuple[int, int]] = []
    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage) and units and _calls(messages[units[-1][0]]):
            units[-1] = (units[-1][0], i + 1)
        else:
            units.append((i, i + 1))
    return units


def _calls(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and bool(message.tool_calls or message.invalid_tool_calls)


def _opening(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name == "handover"


def fit_messages(
    messages: Sequence[BaseMessage], *, budget: int, counter: TokenCounter, fixed: int = 0
) -> list[BaseMessage]:
    """The messages, shaped (see the module docstring) so that with `fixed` tokens more (the
    system prompt, the tool schemas) the request counts at most `budget` tokens.

    Linear in the messages: each is counted once (a message that is cut, once more), and the
    turns left out are taken off running totals."""
    room = budget - fixed - REPLY_PRIMING
    if room <= MIN_SHARE:
        raise RequestTooLargeError(
            f"the system prompt and tool schemas alone take {fixed:,} tokens of "
            f"max_input_tokens={budget:,}; raise max_input_tokens"
        )
    out = list(messages)
    sizes = [counter.count_message(m) for m in out]
    if sum(sizes) + REPLY_PRIMING <= budget - fixed:
        return out

    def cut(message: BaseMessage, size: int, tokens: int) -> tuple[BaseMessage, int]:
        if size <= tokens:
            return message, size
        short = cut_message(message, tokens, counter)
        return short, size if short is message else counter.count_message(short)

    heads = 0
    while heads < len(out) - 1 and _opening(out[heads]):
        heads += 1
    head = [cut(out[i], sizes[i], room // 3) for i in range(heads)]
    share = max(room // 4, MIN_SHARE)
    rest = [cut(out[i], sizes[i], share) for i in range(heads, len(out) - 1)]
    rest.append((out[-1], sizes[-1]))
    left = room - sum(size for _, size in head)
    units = tool_units([m for m, _ in rest])
    unit_sizes = [sum(size for _, size in rest[start:end]) for start, end in units]
    total, first = sum(unit_sizes), 0
    while len(units) - first > 1 and total > left:
        total -= unit_sizes[first]  # the oldest whole turn goes first
        first += 1
    kept = rest[units[first][0] :]
    over = total - left
    # still over (the newest unit alone is too big): cut its longest messages
    for i in sorted(range(len(kept)), key=lambda i: -kept[i][1]):
        if over <= 0:
            break
        message, size = kept[i]
        kept[i] = cut(message, size, max(size - over - 8, 0))
        over -= size - kept[i][1]
    return [m for m, _ in [*head, *kept]]
