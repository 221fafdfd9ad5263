"""Where a remote specialist runs: a graph on a LangGraph server, named by a profile's `remote`.

One definition of the field: a profile file's front matter (`remote: {url, graph_id,
timeout}`) and `Profile(remote=...)` (a `Remote` or the same mapping) both become a
`Remote`, checked here, with errors naming the file (or profile) and the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..state.defaults import MAX_REMOTE_TIMEOUT, REMOTE_TIMEOUT

REMOTE_FIELDS = ("url", "graph_id", "timeout")


class RemoteError(ValueError):
    """A `remote` value that cannot work; the message names the field and the fix."""


@dataclass(frozen=True)
class Remote:
    """A LangGraph server and the graph on it that runs a specialist.

    >>> Remote(url="http://127.0.0.1:2024", graph_id="reviewer", timeout=60)
    """

    url: str
    """The server's base URL, http(s) (a deployment's URL, or `langgraph dev`'s)."""
    graph_id: str
    """The graph (or assistant id) to run there, as its `langgraph.json` names it."""
    timeout: float = REMOTE_TIMEOUT
    """Seconds the whole remote run may take (connect, run, reply) before it counts as failed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", _checked_url(self.url))
        if not isinstance(self.graph_id, str) or not self.graph_id.strip():
            raise RemoteError(f"graph_id must be a non-empty string, got {self.graph_id!r}")
        if not self.graph_id.strip().isprintable():
            raise RemoteError(f"graph_id must be printable text, got {self.graph_id!r}")
        object.__setattr__(self, "graph_id", self.graph_id.strip())
        timeout = self.timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_REMOTE_TIMEOUT
        ):
            raise RemoteError(
                f"timeout must be a number of seconds above 0 and at most "
                f"{MAX_REMOTE_TIMEOUT:g}, got {timeout!r}"
            )
        object.__setattr__(self, "timeout", float(timeout))


def _checked_url(url: Any) -> str:
    example = "such as 'http://127.0.0.1:2024'"
    if not isinstance(url, str) or not url.strip():
        raise RemoteError(f"url must be an http(s) URL {example}, got {url!r}")
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError as exc:
        raise RemoteError(f"url {text!r} cannot be read ({exc}); give one {example}") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise RemoteError(f"url must be an http(s) URL {example}, got {text!r}")
    if parts.username is not None or parts.password is not None:
        raise RemoteError(
            f"url {parts.scheme}://***@{host} carries credentials; leave them out (the "
            "client reads its API key from LANGGRAPH_API_KEY or LANGSMITH_API_KEY)"
        )
    if parts.query or parts.fragment:
        raise RemoteError(f"url must have no query or fragment, got {text!r}")
    return text.rstrip("/")


def parse_remote(value: Any, *, where: str) -> Remote | None:
    """A profile's `remote` (None, a `Remote`, or a mapping with `url`, `graph_id` and an
    optional `timeout`) as a `Remote`; a bad one raises RemoteError naming `where` and the
    field."""
    if value is None or isinstance(value, Remote):
        return value
    if not isinstance(value, Mapping):
        raise RemoteError(
            f"{where}: remote must be a mapping with url and graph_id (and optionally "
            f"timeout), got {type(value).__name__}"
        )
    unknown = sorted(str(k) for k in value if k not in REMOTE_FIELDS)
    if unknown:
        raise RemoteError(
            f"{where}: remote: unknown field(s) {', '.join(unknown)}; known fields: "
            f"{', '.join(REMOTE_FIELDS)}"
        )
    missing = [k for k in ("url", "graph_id") if k not in value]
    if missing:
        raise RemoteError(f"{where}: remote: missing {', '.join(missing)}")
    try:
        return Remote(
            url=value["url"],
            graph_id=value["graph_id"],
            timeout=value.get("timeout", REMOTE_TIMEOUT),
        )
    except RemoteError as exc:
        raise RemoteError(f"{where}: remote.{exc}") from None
