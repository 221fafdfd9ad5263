"""How results are written: printable names, counted nouns and the token cap with its notice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate, takewhile

from ....state import TokenCounter

_CONTROL_ESCAPES = {code: f"\\x{code:02x}" for code in [*range(32), 127]}
_VISIBLE_CONTROLS: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(32) if code not in (0x09, 0x0A)},
    0x7F: "\u2421",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}
"""C0 controls and DEL as Unicode Control Pictures (ESC -> ␛, CR -> ␍, NUL -> ␀, DEL -> ␡),
C1 controls (which have no picture) as `\\x80`..`\\x9f`; tab and newline are kept."""


def _printable(name: str) -> str:
    """A file name safe to print on one line: bad bytes and control characters escaped."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").translate(_CONTROL_ESCAPES)


def _visible(text: str) -> str:
    """File text safe to show: no terminal control character (an ANSI escape) passes through."""
    return text.translate(_VISIBLE_CONTROLS)


def _plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _fitting(lines: list[str], counter: TokenCounter, room: int) -> int:
    """How many leading lines fit in `room` tokens when joined with newlines."""
    totals = accumulate(counter.count_text(line) + 1 for line in lines)  # joined: one newline less
    count = sum(1 for _ in takewhile(lambda used: used - 1 <= room, totals))
    while count and counter.count_text("\n".join(lines[:count])) > room:
        count -= 1
    return count


def _render(
    head: list[str] | Callable[[int], list[str]],
    body: list[str],
    tail: Sequence[str] = (),
    *,
    counter: TokenCounter,
    max_tokens: int,
    hint: str | Callable[[int], str],
    more: int = 0,
) -> str:
    """The whole result if it fits in max_tokens, else head + the body lines that fit + a cut
    notice (what was cut and `hint`, what to do): `head` and `hint` may depend on how many body
    lines are shown; `more` counts lines past the body that the notice names as missing too."""
    heading = head if callable(head) else lambda _shown: head

    def notice(shown: int) -> str:
        """The last line of a cut result: that it was cut, how much is missing and what to do."""
        missing = _plural(more + len(body) - shown, "more line")
        said = hint(shown) if callable(hint) else hint
        return f"[cut: the result was over {max_tokens} tokens; {missing} not shown — {said}]"

    room = max_tokens - counter.count_text("\n".join([*heading(len(body)), *tail])) - 1
    if _fitting(body, counter, room) == len(body):
        text = "\n".join([*heading(len(body)), *body, *tail])
        if counter.count_text(text) <= max_tokens:
            return text
    reserve = counter.count_text("\n".join([*heading(len(body)), notice(0)])) + 2
    room = max_tokens - reserve
    shown = body[: _fitting(body, counter, room)]
    if not shown and body and room > 8:
        shown = [counter.truncate(body[0], room - 6) + " …[line cut]"]
    text = "\n".join([*heading(len(shown)), *shown, notice(len(shown))])
    while shown and counter.count_text(text) > max_tokens:
        shown.pop()
        text = "\n".join([*heading(len(shown)), *shown, notice(len(shown))])
    return text
