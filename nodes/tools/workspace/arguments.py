"""Checks on the arguments the workspace functions take: text, integers, budget, query."""

from __future__ import annotations

from .errors import _Refused, _show
from .limits import MAX_QUERY_CHARS, WORKSPACE_MAX_TOKENS


def _check_text(value: object, arg: str, example: str) -> str:
    """A non-empty string without NUL bytes, or a refusal naming `arg`."""
    if not isinstance(value, str) or not value.strip():
        raise _Refused(
            f"ERROR: {arg} must be a non-empty string, got {_show(value)}; pass e.g. {arg}={example!r}."
        )
    if "\0" in value:
        raise _Refused(
            f"ERROR: {arg} {_show(value)} contains a NUL byte; pass plain text, e.g. {arg}={example!r}."
        )
    return value


def _check_int(value: object, arg: str, example: int) -> int:
    """An int >= 1 (a bool is not an int here), or a refusal naming `arg`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(
            f"ERROR: {arg} must be an integer >= 1, got {_show(value)}; pass e.g. {arg}={example}."
        )
    return value


def _check_budget(counter: object, max_tokens: object) -> None:
    """Refuse a counter without count_text/truncate, or a max_tokens that is not an int >= 1."""
    if not all(callable(getattr(counter, name, None)) for name in ("count_text", "truncate")):
        raise _Refused(
            f"ERROR: counter must be a TokenCounter, got {_show(counter)}; pass counter=token_counter()."
        )
    _check_int(max_tokens, "max_tokens", WORKSPACE_MAX_TOKENS)


def _check_query(query: object) -> str:
    """A one-line search text of at most MAX_QUERY_CHARS characters."""
    text = _check_text(query, "query", "def main")
    if "\n" in text or "\r" in text:
        raise _Refused(
            f"ERROR: query {_show(text)} spans lines; search_files matches within one line, "
            "so pass a single line of text."
        )
    if len(text) > MAX_QUERY_CHARS:
        raise _Refused(
            f"ERROR: query is {len(text)} characters long; pass at most {MAX_QUERY_CHARS}, "
            "e.g. the most distinctive part of the line."
        )
    return text
