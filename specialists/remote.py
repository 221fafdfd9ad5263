"""Where a remote specialist runs, named by a profile's `remote`: a graph on a LangGraph server
(`protocol: langgraph`, the default), or any A2A agent (`protocol: a2a`).

One definition of the field: a profile file's front matter (`remote: {url, graph_id,
timeout, protocol}`) and `Profile(remote=...)` (a `Remote` or the same mapping) both become
a `Remote`, checked here, with errors naming the file (or profile) and the field.
"""

from __future__ import annotations

import math
import reprlib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ..state.defaults import MAX_REMOTE_TIMEOUT, REMOTE_TIMEOUT

REMOTE_FIELDS = ("url", "graph_id", "timeout", "protocol")
PROTOCOLS = ("langgraph", "a2a")
"""How a remote specialist is reached: LangGraph's `RemoteGraph` (nodes/agents/remote.py) or
the A2A protocol (nodes/agents/a2a.py)."""


class RemoteError(ValueError):
    """A `remote` value that cannot work; the message names the field and the fix."""


@dataclass(frozen=True)
class Remote:
    """Where a specialist runs: a LangGraph server and the graph on it, or an A2A agent.

    >>> Remote(url="http://127.0.0.1:2024", graph_id="reviewer", timeout=60)
    >>> Remote(url="https://agents.example.com/reviewer", protocol="a2a")
    """

    url: str
    """The base URL, http(s): a LangGraph server's (a deployment's, or `langgraph dev`'s), or
    an A2A agent's (its agent card is at `<url>/.well-known/agent-card.json`)."""
    graph_id: str | None = None
    """The graph (or assistant id) to run on a LangGraph server, as its `langgraph.json`
    names it; required for `langgraph`, refused for `a2a` (the agent card names the agent)."""
    timeout: float = REMOTE_TIMEOUT
    """Seconds the whole remote run may take (connect, run, reply) before it counts as failed."""
    protocol: Literal["langgraph", "a2a"] = "langgraph"
    """`langgraph` (a graph on a LangGraph server) or `a2a` (any A2A agent)."""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise RemoteError(
                f"protocol must be 'langgraph' (a graph on a LangGraph server, the default) or "
                f"'a2a' (an A2A agent), got {_SHORT_REPR.repr(self.protocol)}"
            )
        object.__setattr__(self, "url", _checked_url(self.url, self.protocol))
        if self.protocol == "a2a":
            if self.graph_id is not None:
                raise RemoteError(
                    f"graph_id is for protocol 'langgraph' only, got {self.graph_id!r} with "
                    "protocol 'a2a': an A2A agent is found by its url (its agent card); "
                    "remove graph_id"
                )
        elif not isinstance(self.graph_id, str) or not self.graph_id.strip():
            raise RemoteError(f"graph_id must be a non-empty string, got {self.graph_id!r}")
        elif not self.graph_id.strip().isprintable():
            raise RemoteError(f"graph_id must be printable text, got {self.graph_id!r}")
        else:
            object.__setattr__(self, "graph_id", self.graph_id.strip())
        if not is_seconds(self.timeout, MAX_REMOTE_TIMEOUT):
            raise RemoteError(
                f"timeout must be a number of seconds above 0 and at most "
                f"{MAX_REMOTE_TIMEOUT:g}, got {self.timeout!r}"
            )
        object.__setattr__(self, "timeout", float(self.timeout))


def is_seconds(value: Any, most: float = math.inf) -> bool:
    """A timeout that can work: a finite number (no bool) above 0 and at most `most`."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and 0 < value <= most


SECRET_MASK = "***"
"""What a URL shown in a message has in place of its userinfo and its query and fragment
values (`safe_url`)."""


def safe_url(url: Any) -> str:
    """`url` as every message shows it: its userinfo (`user:pw@`) replaced by `***@` and the
    value of every query and fragment item by `***` (`?api_key=***`, `#access_token=***`; an
    item without `=` is `***` whole). Never raises, whatever `url` is: a message about a URL
    that cannot be read must not fail, nor echo a credential.

    >>> safe_url("https://me:pw@host:8443/api?api_key=SECRET&v=2#token=T")
    'https://***@host:8443/api?api_key=***&v=***#token=***'
    """
    text = url if isinstance(url, str) else str(url)
    rest, fragment = _split_off(text, "#")
    rest, query = _split_off(rest, "?")
    scheme, sep, tail = rest.partition("//")
    if not sep:
        scheme, tail = "", rest
    if "@" in tail:  # userinfo, even one a parser would misread (`user:p/w@host`): all of it
        tail = SECRET_MASK + "@" + tail.rpartition("@")[2]
    shown = f"{scheme}{sep}{tail}"
    if query is not None:
        shown += "?" + _masked_items(query)
    if fragment is not None:
        shown += "#" + _masked_items(fragment)
    return shown


def _split_off(text: str, mark: str) -> tuple[str, str | None]:
    head, found, tail = text.partition(mark)
    return head, tail if found else None


def _masked_items(items: str) -> str:
    """`a=1&b` -> `a=***&***`: every value masked, and every item that has no `=` (it may be a
    bare token)."""
    parts = []
    for item in items.split("&"):
        key, eq, _ = item.partition("=")
        parts.append(f"{key}={SECRET_MASK}" if eq and key else SECRET_MASK if item else "")
    return "&".join(parts)


def _check_printable(text: str) -> None:
    """RemoteError naming the first character of `text` a URL cannot hold as it is: a control
    character (C0, DEL, C1: CR, LF, TAB, NUL, ...), a space of any kind or an invisible format
    character (a zero-width space), with its position and `U+XXXX` code."""
    for index, char in enumerate(text):
        if char.isprintable() and char != " ":
            continue
        kind = {
            "Cc": "a control character",
            "Cf": "an invisible format character",
            "Zs": "a space",
            "Zl": "a line separator",
            "Zp": "a paragraph separator",
        }.get(unicodedata.category(char), "an unprintable character")
        raise RemoteError(
            f"url must not contain control characters or spaces: it holds {kind} "
            f"(U+{ord(char):04X}) at position {index}; write the URL on one line, such as "
            "'http://127.0.0.1:2024'"
        )


_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = 60

KEY_HINTS = {
    "langgraph": "the client reads its API key from LANGGRAPH_API_KEY or LANGSMITH_API_KEY",
    "a2a": "no credential is sent to an A2A agent",
}
"""Where a credential goes instead of the URL, by protocol (said when a URL carries one)."""


def _checked_url(url: Any, protocol: str) -> str:
    """The URL, checked: http(s), a host, a port that is a number, no credentials (no `@` at
    all: `user:p/w@host` reads as a path), no query or fragment, no control characters or
    spaces. Every error shows the URL as `safe_url` does."""
    example = "such as 'http://127.0.0.1:2024'"
    key_hint = KEY_HINTS[protocol]
    if not isinstance(url, str) or not url.strip(" "):
        if url is None or isinstance(url, str | bool | int | float):  # blank, or no text
            got = repr(url)
        else:  # a mapping or a list may hold anything: name its type only
            got = f"a {type(url).__name__}"
        raise RemoteError(f"url must be an http(s) URL {example}, got {got}")
    text = url.strip(" ")  # spaces around it only: a CR, LF or TAB anywhere is refused
    _check_printable(text)
    shown = safe_url(text)
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        raise RemoteError(
            f"url {shown!r} cannot be read (its host is not a valid name or address); give "
            f"one {example}"
        ) from None
    if parts.scheme not in ("http", "https") or not host:
        raise RemoteError(f"url must be an http(s) URL {example}, got {shown!r}")
    if parts.username is not None or parts.password is not None or "@" in text:
        raise RemoteError(f"url {shown} carries credentials; leave them out ({key_hint})")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        raise RemoteError(
            f"url {shown!r} cannot be read (its port is not a number from 0 to 65535); give "
            f"one {example}"
        ) from None
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise RemoteError(
            f"url must have no query or fragment, got {shown!r} (never a credential in the "
            f"URL: {key_hint})"
        )
    return text.rstrip("/")


def parse_remote(value: Any, *, where: str) -> Remote | None:
    """A profile's `remote` (None, a `Remote`, or a mapping with `url`, `graph_id` and an
    optional `timeout`; or `url` and `protocol: a2a`) as a `Remote`; a bad one raises
    RemoteError naming `where` and the field."""
    if value is None or isinstance(value, Remote):
        return value
    if not isinstance(value, Mapping):
        raise RemoteError(
            f"{where}: remote must be a mapping with url and graph_id (or url and protocol: "
            f"a2a), and optionally timeout, got {type(value).__name__}"
        )
    unknown = sorted(str(k) for k in value if k not in REMOTE_FIELDS)
    if unknown:
        raise RemoteError(
            f"{where}: remote: unknown field(s) {', '.join(unknown)}; known fields: "
            f"{', '.join(REMOTE_FIELDS)}"
        )
    langgraph = value.get("protocol", "langgraph") == "langgraph"  # else Remote checks it
    needed = ("url", "graph_id") if langgraph else ("url",)
    missing = [k for k in needed if k not in value]
    if missing:
        raise RemoteError(f"{where}: remote: missing {', '.join(missing)}")
    try:
        return Remote(**value)
    except RemoteError as exc:
        raise RemoteError(f"{where}: remote.{exc}") from None
