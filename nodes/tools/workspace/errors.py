"""How the workspace functions fail: one `ERROR: ...` line, never an exception."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class _Refused(Exception):
    """Internal: carries one `ERROR: ...` line out to the public function's return value."""


def _show(value: object) -> str:
    """A short repr of a bad value for an error message (one line, at most ~80 chars)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _failed(tool: str, exc: BaseException) -> str:
    """The error text for an unexpected exception, so a tool never raises."""
    return f"ERROR: {tool} failed: {type(exc).__name__}: {exc}"


def _guarded(name: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Turn a refusal into its ERROR text and any other exception into `ERROR: <name> failed`."""

    def decorate(func: Callable[..., str]) -> Callable[..., str]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> str:
            try:
                return func(*args, **kwargs)
            except _Refused as refusal:
                return str(refusal)
            except Exception as exc:
                return _failed(name, exc)

        return run

    return decorate
