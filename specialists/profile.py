"""One specialist profile: its persona, description, routing keywords, tools and prompt, and
reading one from its file (`read_profile_file`, bounded and safe against special files).

A profile file is YAML front matter followed by the Markdown system prompt::

    ---
    name: data_scientist
    marker: "[data scientist]"      # optional; always "[<name with spaces>]"
    emoji: "📊"
    description: "Analyses data sets and builds models."
    keywords: [data analysis, pandas, statistics]  # optional: phrases the offline router weighs
    tools: [workspace]               # optional: built-in tool sets
    model: "openai:gpt-4o"           # optional: this agent's model (an init_chat_model string)
    examples:                        # optional: requests it should take, for the offline router
      - "which of our customers churned last quarter, and why?"
    remote:                          # optional: run it on a LangGraph server (nodes/agents/remote.py)
      url: "http://127.0.0.1:2024"   #   or any A2A agent: `protocol: a2a` and no graph_id (a2a.py)
      graph_id: data_scientist
      timeout: 120                   # optional: seconds for the whole remote run
    mcp:                             # optional: MCP servers whose tools this agent gets
      files:                         # its tools are named `files__<tool>`
        transport: stdio             # or streamable_http with url, headers, timeout
        command: npx
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/data"]
    ---

    You are the Data Scientist. ...
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from .remote import Remote, RemoteError, is_seconds, parse_remote, safe_url

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
"""Profile names: node names, message names and file names all accept these."""

MAX_FRONT_MATTER_DEPTH = 8
"""Most nested collections front matter may hold; a profile needs 2 (a mapping of lists), 4
with `mcp` (server -> connection -> env)."""

_REQUIRED = ("name", "emoji", "description")
_KNOWN_FIELDS = {*_REQUIRED, "keywords", "marker", "tools", "examples", "model", "remote", "mcp"}

MCP_SERVER_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9]*(?:[-_][a-zA-Z0-9]+)*$")
"""MCP server names: its tools are `<server>__<tool>`, so a name holds no `__` of its own."""

MCP_TRANSPORTS = {
    "stdio": ("command", "args", "env", "cwd"),
    "streamable_http": ("url", "headers", "timeout"),
    "sse": ("url", "headers", "timeout"),
}
"""The transports a profile's `mcp` servers may use, and each one's fields besides
`transport` (langchain-mcp-adapters' connection format; `http` and `streamable-http` are
read as `streamable_http`)."""


class ProfileFileError(ValueError):
    """A profile file or object is malformed; the message names the source and the field."""


def persona_marker(name: str) -> str:
    """`frontend_designer` -> `[frontend designer]`."""
    return f"[{name.replace('_', ' ')}]"


@dataclass(frozen=True)
class Profile:
    """A specialist profile: who the agent is, when to pick it, what it may use.

    >>> Profile(name="data_scientist", description="Analyses data.", prompt="You are ...",
    ...         keywords=("pandas", "statistics"), emoji="📊", tools=("workspace",))
    """

    name: str
    description: str
    prompt: str
    keywords: tuple[str, ...] = ()
    emoji: str = "🧩"
    tools: tuple[str, ...] = ()
    marker: str = ""
    examples: tuple[str, ...] = field(default=(), repr=False)
    """Requests this profile should take, in users' words: the offline router compares a
    request with them. The orchestrator's list what it keeps (small talk, planning)."""
    model: str = ""
    """This agent's model, an `init_chat_model` string (`openai:gpt-4o`, `offline`); empty:
    the build's or the run context's."""
    source: str = field(default="", compare=False)
    remote: Remote | None = None
    """Run this specialist on a LangGraph server instead of in process: a `Remote` (or a
    mapping with `url`, `graph_id` and an optional `timeout`); None: a local agent."""
    mcp: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, hash=False, repr=False)
    """MCP servers whose tools this agent gets, named `<server>__<tool>`: server name ->
    connection in langchain-mcp-adapters' format, `{transport: stdio, command, args, env,
    cwd}` or `{transport: streamable_http, url, headers, timeout}` (nodes/tools/mcp.py). Not
    in the repr: its env and headers may hold keys (`${VAR}` in either reads a variable)."""

    def __post_init__(self) -> None:
        where = self.source or f"profile {self.name!r}"
        if not isinstance(self.name, str) or not NAME_PATTERN.match(self.name):
            raise ProfileFileError(
                f"{where}: name {self.name!r} must be lower-case letters, digits and "
                "underscores, starting with a letter (at most 48 characters)"
            )
        for attr in ("description", "prompt", "emoji"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise ProfileFileError(f"{where}: {attr} must be a non-empty string")
        object.__setattr__(self, "description", " ".join(self.description.split()))
        object.__setattr__(self, "prompt", self.prompt.strip())
        object.__setattr__(self, "keywords", _strings(where, "keywords", self.keywords, lower=True))
        object.__setattr__(self, "tools", _strings(where, "tools", self.tools))
        object.__setattr__(self, "examples", _strings(where, "examples", self.examples))
        if not isinstance(self.model, str):
            raise ProfileFileError(f"{where}: model must be a string such as 'openai:gpt-4o'")
        object.__setattr__(self, "model", self.model.strip())
        expected = persona_marker(self.name)
        if self.marker and self.marker != expected:
            raise ProfileFileError(f"{where}: marker {self.marker!r} should be {expected!r}")
        object.__setattr__(self, "marker", expected)
        try:
            object.__setattr__(self, "remote", parse_remote(self.remote, where=where))
        except RemoteError as exc:
            raise ProfileFileError(str(exc)) from None
        object.__setattr__(self, "mcp", parse_mcp(self.mcp, where=where))
        for attr in ("tools", "mcp"):
            if self.remote is not None and getattr(self, attr):
                raise ProfileFileError(
                    f"{where}: {attr}: a remote specialist runs its server's tools; leave {attr} "
                    "out of a profile with remote"
                )

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Profile:
        """One profile file (and its `<name>.examples.txt`), read as a folder of them is."""
        return read_profile_file(Path(path))

    @property
    def title(self) -> str:
        """The human name: `frontend designer`."""
        return self.name.replace("_", " ")

    @property
    def label(self) -> str:
        """Emoji plus marker, as the terminal prints it: `🖌️ [frontend designer]`."""
        return f"{self.emoji} {self.marker}"


def _strings(where: str, name: str, value: Any, *, lower: bool = False) -> tuple[str, ...]:
    items = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if items is None or not all(isinstance(item, str) and item.strip() for item in items):
        raise ProfileFileError(f"{where}: {name} must be a list of strings")
    return tuple(item.strip().lower() if lower else item.strip() for item in items)


def parse_mcp(value: Any, *, where: str) -> dict[str, dict[str, Any]]:
    """A profile's `mcp` (server name -> connection) checked and normalised: the transport is
    known, its required fields are there and every field has the right type, so a mistake
    fails when the profile loads, naming `where` and the field. Nothing is imported or
    started here (nodes/tools/mcp.py connects at build time)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ProfileFileError(
            f"{where}: mcp must be a mapping of server name -> connection, got "
            f"{type(value).__name__}"
        )
    servers: dict[str, dict[str, Any]] = {}
    for name, given in value.items():
        if not isinstance(name, str) or len(name) > 32 or not MCP_SERVER_NAME.match(name):
            raise ProfileFileError(
                f"{where}: mcp: server name {name!r} must be letters and digits, single '_' "
                "or '-' between them, starting with a letter (at most 32 characters)"
            )
        servers[name] = _mcp_connection(given, f"{where}: mcp.{name}")
    return servers


def _mcp_connection(given: Any, at: str) -> dict[str, Any]:
    """One server's connection, checked (`at` names the profile and server)."""
    if not isinstance(given, Mapping):
        raise ProfileFileError(
            f"{at} must be a mapping such as {{transport: stdio, command: ..., args: [...]}}"
        )
    transport = given.get("transport")
    if transport in ("http", "streamable-http"):
        transport = "streamable_http"
    if not isinstance(transport, str) or transport not in MCP_TRANSPORTS:
        raise ProfileFileError(
            f"{at}.transport must be one of {', '.join(MCP_TRANSPORTS)}, got "
            f"{given.get('transport')!r}"
        )
    fields = MCP_TRANSPORTS[transport]
    unknown = sorted(str(k) for k in given if k != "transport" and k not in fields)
    if unknown:
        raise ProfileFileError(
            f"{at}: unknown field(s) {', '.join(unknown)}; a {transport} server takes "
            f"transport, {', '.join(fields)}"
        )
    checked: dict[str, Any] = {"transport": transport}
    required = "command" if transport == "stdio" else "url"
    text = given.get(required)
    if not isinstance(text, str) or not text.strip():
        raise ProfileFileError(f"{at}.{required} must be a non-empty string, got {text!r}")
    checked[required] = text.strip()
    if transport == "stdio":
        args = given.get("args", [])
        if not isinstance(args, list):
            raise ProfileFileError(f"{at}.args must be a list of strings (the command's arguments)")
        checked["args"] = [_mcp_text(a, f"{at}.args[{i}]") for i, a in enumerate(args)]
        if given.get("cwd") is not None:
            checked["cwd"] = _mcp_text(given["cwd"], f"{at}.cwd")
    else:
        scheme, _, rest = checked["url"].partition("://")
        if scheme not in ("http", "https") or not rest.strip("/"):
            raise ProfileFileError(
                f"{at}.url must be an http(s) URL such as 'http://127.0.0.1:8000/mcp', got "
                f"{safe_url(checked['url'])!r}"
            )
        timeout = given.get("timeout")
        if timeout is not None:
            if not is_seconds(timeout):
                raise ProfileFileError(f"{at}.timeout must be a number of seconds above 0")
            checked["timeout"] = float(timeout)
    table = "env" if transport == "stdio" else "headers"
    if given.get(table) is not None:
        items = given[table]
        if not isinstance(items, Mapping):
            raise ProfileFileError(f"{at}.{table} must be a mapping of names to strings")
        checked[table] = {
            _mcp_text(k, f"{at}.{table} name"): _mcp_text(v, f"{at}.{table}.{k}")
            for k, v in items.items()
        }
    return checked


def _mcp_text(value: Any, at: str) -> str:
    if not isinstance(value, str):
        raise ProfileFileError(
            f"{at} must be a string, got {type(value).__name__} {value!r} (quote it in YAML)"
        )
    return value


def _check_plain_yaml(front: str, source: str) -> None:
    """Refuse anchors, aliases and deep nesting before yaml builds anything from `front`.

    Only the event stream is read here (linear in the text), so nothing is expanded.
    """
    depth = 0
    for event in yaml.parse(front, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 2  # the file's line: the opening '---' is line 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ProfileFileError(
                f"{source}: line {line}: front matter uses a YAML anchor or alias "
                f"({'*' if isinstance(event, yaml.AliasEvent) else '&'}{event.anchor}); "
                "anchors, aliases and '<<:' merges are not allowed in profile files (nested "
                "aliases can expand to gigabytes), so write each value out in full"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                raise ProfileFileError(
                    f"{source}: line {line}: front matter nests more than "
                    f"{MAX_FRONT_MATTER_DEPTH} levels deep; a profile's fields are strings "
                    "and lists of strings, so flatten it"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def parse_profile(text: str, *, source: str) -> Profile:
    """Parse one profile file's text; raise ProfileFileError naming `source` and the field."""
    if not text.startswith("---\n"):
        raise ProfileFileError(f"{source}: must start with '---' YAML front matter")
    try:
        _, front, body = text.split("---\n", 2)
    except ValueError as exc:
        raise ProfileFileError(f"{source}: front matter is not closed with '---'") from exc
    try:
        _check_plain_yaml(front, source)
        meta = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        raise ProfileFileError(f"{source}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ProfileFileError(f"{source}: front matter must be a mapping")
    missing = [key for key in _REQUIRED if not meta.get(key)]
    if missing:
        raise ProfileFileError(f"{source}: missing {', '.join(missing)}")
    unknown = sorted(str(key) for key in set(meta) - _KNOWN_FIELDS)
    if unknown:
        raise ProfileFileError(
            f"{source}: unknown field(s) {', '.join(unknown)}; "
            f"known fields: {', '.join(sorted(_KNOWN_FIELDS))}"
        )
    if not body.strip():
        raise ProfileFileError(f"{source}: the system prompt (body) is empty")
    for key in ("keywords", "tools", "examples"):
        if key in meta and not isinstance(meta[key], list):
            raise ProfileFileError(f"{source}: {key} must be a list of strings")
    return Profile(
        name=str(meta["name"]),
        marker=str(meta.get("marker") or ""),
        emoji=str(meta["emoji"]),
        description=str(meta["description"]),
        keywords=tuple(meta.get("keywords") or ()),
        tools=tuple(meta.get("tools") or ()),
        examples=tuple(meta.get("examples") or ()),
        model=meta.get("model") or "",
        remote=meta.get("remote"),
        mcp=meta.get("mcp", {}),
        prompt=body,
        source=source,
    )


# --- reading a profile file ---------------------------------------------------------------

MAX_PROFILE_BYTES = 1024 * 1024
"""Largest profile file read (1 MiB); the built-ins are a few KB."""

MAX_EXAMPLES_BYTES = 4 * 1024 * 1024
"""Largest `<name>.examples.txt` read (4 MiB); the built-ins are under 30 KB."""

EXAMPLES_SUFFIX = ".examples.txt"

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int, source: str) -> ProfileFileError:
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return ProfileFileError(
        f"{source}: is {kind}, not a regular file; profile and examples files must be plain "
        "text files, so replace it with one (or remove it)"
    )


def _too_big(source: str, what: str, limit: int, size: str) -> ProfileFileError:
    return ProfileFileError(
        f"{source}: is {size}, over the {limit / (1024 * 1024):g} MiB ({limit:,}-byte) limit "
        f"for {what}; trim it below the limit"
    )


def _read_text_file(path: Path, *, limit: int, source: str, what: str) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes, or a ProfileFileError.

    A FIFO, a device, a socket or a symlink to one (such as `/dev/zero`) is refused before
    any byte is read: the file is opened with O_NONBLOCK (a FIFO cannot block the open),
    checked with fstat and read for at most limit + 1 bytes, so nothing here can hang or
    fill memory. A symlink to a regular file is followed: profiles are the user's own files
    (a folder of symlinks to a shared set is fine), and the limits hold wherever it leads.
    Raises FileNotFoundError when there is no file, for the caller to decide.
    """
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # a device is refused without even opening it
            raise _not_regular(mode, source)
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ProfileFileError(f"{source}: cannot be read: {exc}") from exc
    try:
        info = os.fstat(fd)  # what was opened, if the path changed since the stat
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(info.st_mode, source)
        if info.st_size > limit:
            raise _too_big(source, what, limit, f"{info.st_size:,} bytes")
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew since the fstat
            raise _too_big(source, what, limit, f"over {limit:,} bytes")
        return b"".join(chunks).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileFileError(f"{source}: cannot be read: {exc}") from exc
    finally:
        os.close(fd)


def read_profile_file(path: Path, *, source: str | None = None) -> Profile:
    """Parse one profile file; its name must match the file name. Example requests in a file
    beside it (`<name>.examples.txt`, one per line) join those of its front matter.

    Both are read as `_read_text_file` says: regular files only (a symlink to one is
    followed), at most MAX_PROFILE_BYTES and MAX_EXAMPLES_BYTES.
    """
    source = source or str(path)
    try:
        text = _read_text_file(path, limit=MAX_PROFILE_BYTES, source=source, what="a profile file")
    except FileNotFoundError as exc:
        raise ProfileFileError(f"{source}: cannot be read: {exc}") from exc
    profile = parse_profile(text, source=source)
    if profile.name != path.stem:
        raise ProfileFileError(f"{source}: name {profile.name!r} differs from file name")
    more = read_examples_file(path.with_name(f"{path.stem}{EXAMPLES_SUFFIX}"))
    return replace(profile, examples=(*profile.examples, *more)) if more else profile


def read_examples_file(path: Path) -> tuple[str, ...]:
    """Example requests, one per line (blank lines and `#` comments skipped); () if no file."""
    try:
        text = _read_text_file(
            path, limit=MAX_EXAMPLES_BYTES, source=path.name, what="an examples file"
        )
    except FileNotFoundError:
        return ()
    lines = (line.strip() for line in text.splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))
