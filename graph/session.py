"""Running turns on a thread: SQLite persistence, crash resume, streamed events.

Every entry point (terminal, examples) goes through `run_turn`, which first
finishes a step a crash left unfinished (docs/ARCHITECTURE.md, invariant 8: a step whose writes were
saved shows in `get_state().tasks` but not in `.next`, and sending new input
instead of resuming would drop them), then sends the new message with
`durability="sync"` so a killed run resumes without losing a step.

`open_checkpointer` picks the store from one string: nothing for the default
SQLite file, a path for another SQLite file, or a `postgresql://` URL for
PostgreSQL (`PostgresSaver`, from the optional `postgres` extra).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from ..nodes.briefing.writer import STATE_DIR
from ..state import HandoverContext, HandoverState, message_text
from .files import open_sqlite_saver, release_sqlite_saver
from .locking import one_writer

CHECKPOINT_FILE = "checkpoints.sqlite"

Event = tuple[str, dict[str, Any]]

STATE_KEYS = list(HandoverState.__annotations__)
"""Every state key: what `run_turn` returns, as `get_state().values` would."""


def default_checkpoint_path(project_root: str) -> str:
    """`<project_root>/.a0proj/checkpoints.sqlite`."""
    return os.path.join(project_root, STATE_DIR, CHECKPOINT_FILE)


def sqlite_checkpointer(path: str) -> SqliteSaver:
    """The durable SQLite checkpointer of the file `path` (made 0600, its folder 0700).

    One per file per process: opening the same file again returns the same saver,
    on the same connection (see `files.open_sqlite_saver`: why, and what is refused).
    `close_checkpointer` closes it once every opener has.
    """
    return open_sqlite_saver(path)


POSTGRES_SCHEMES = ("postgresql", "postgres")
POSTGRES_EXTRA_HINT = 'pip install "specialist-handover[postgres]"'
ACCEPTED_CHECKPOINTERS = (
    "nothing (the SQLite file <project_root>/.a0proj/checkpoints.sqlite), "
    "a SQLite file path, or a postgresql://user:password@host:port/dbname URL"
)
POSTGRES_CONNECT_TIMEOUT = 10  # seconds, unless the URL sets connect_timeout
# pg_advisory_lock(classid, objid): one process at a time creates the tables of a fresh database
_SETUP_LOCK = (0x68616E64, 1)  # "hand", 1


class CheckpointerError(RuntimeError):
    """The checkpointer cannot be opened: a missing optional extra or an unreachable server."""


class CheckpointerSpecError(ValueError):
    """The value names no checkpointer we can open (an unknown scheme, a malformed URL)."""


def is_postgres_url(spec: str | None) -> bool:
    """True for `postgresql://...` and `postgres://...`."""
    scheme = (spec or "").strip().split("://", 1)[0].lower() if "://" in (spec or "") else ""
    return scheme in POSTGRES_SCHEMES


def redact_url(url: str) -> str:
    """The URL with its password (and any `password=` query value) replaced by `***`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hostport}"
        query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # unparsable: show only the scheme, never what might be a secret
        return url.split("://", 1)[0] + "://***"


def _check_spec(spec: str) -> None:
    """ValueError unless `spec` is a Postgres URL or something that can only be a file path."""
    if "://" in spec and not is_postgres_url(spec):
        scheme = spec.split("://", 1)[0]
        raise CheckpointerSpecError(
            f"unsupported checkpointer {redact_url(spec)!r} (scheme {scheme!r}); "
            f"accepted: {ACCEPTED_CHECKPOINTERS}"
        )
    looks_like = re.match(r"(?i)^(postgres(ql)?:|\w+\s*=)", spec)
    if "://" not in spec and looks_like:  # `postgresql:x` or a libpq `host=... dbname=...` string
        raise CheckpointerSpecError(
            f"unsupported checkpointer {spec.split('=', 1)[0]!r}...: a PostgreSQL server is "
            f"given as a URL; accepted: {ACCEPTED_CHECKPOINTERS}"
        )


def describe_checkpointer(spec: str | None, *, project_root: str) -> str:
    """What `open_checkpointer(spec, ...)` uses, safe to print (no password)."""
    spec = (spec or "").strip()
    if not spec:
        return default_checkpoint_path(project_root)
    if is_postgres_url(spec):
        return f"PostgreSQL {redact_url(spec)}"
    return spec


def open_checkpointer(spec: str | None, *, project_root: str) -> Any:
    """The checkpointer `spec` names, ready to use (its tables created).

    - None or "": the SQLite file `<project_root>/.a0proj/checkpoints.sqlite`;
    - a path: a SQLite file there (see `sqlite_checkpointer`);
    - `postgresql://...` or `postgres://...`: a `PostgresSaver` on one psycopg
      connection (`autocommit=True, prepare_threshold=0, row_factory=dict_row`);
      needs the `postgres` extra.

    Raises CheckpointerSpecError (a ValueError) for anything else or a malformed URL,
    ValueError or OSError when the SQLite file cannot be used, and CheckpointerError
    when the extra is missing or the server cannot be reached.
    """
    spec = (spec or "").strip()
    if not spec:
        return sqlite_checkpointer(default_checkpoint_path(project_root))
    _check_spec(spec)
    if is_postgres_url(spec):
        return postgres_checkpointer(spec)
    return sqlite_checkpointer(spec)


def postgres_checkpointer(url: str) -> Any:
    """A `PostgresSaver` on a fresh connection to `url`, with `.setup()` done."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as exc:
        raise CheckpointerError(
            f"PostgreSQL checkpoints need the optional `postgres` extra ({exc.name or exc} is "
            f"missing): {POSTGRES_EXTRA_HINT}"
        ) from None
    shown = redact_url(url)
    try:
        options = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise CheckpointerSpecError(
            f"malformed PostgreSQL URL {shown!r}: {_first_line(exc, url)}"
        ) from None
    try:  # libpq only finds a bad port when it connects; say it is the URL
        if "," not in urlsplit(url).netloc:
            urlsplit(url).port  # noqa: B018 - raises ValueError when it is not a port number
    except ValueError as exc:
        raise CheckpointerSpecError(
            f"malformed PostgreSQL URL {shown!r}: {_first_line(exc, url)}"
        ) from None
    extra: dict[str, Any] = (
        {} if "connect_timeout" in options else {"connect_timeout": POSTGRES_CONNECT_TIMEOUT}
    )
    try:
        conn = psycopg.Connection.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row, **extra
        )
    except psycopg.ProgrammingError as exc:  # libpq refused the URL's options
        raise CheckpointerSpecError(
            f"malformed PostgreSQL URL {shown!r}: {_first_line(exc, url)}"
        ) from None
    except psycopg.Error as exc:
        raise CheckpointerError(
            f"cannot connect to PostgreSQL at {shown}: {_first_line(exc, url)}"
        ) from None
    try:
        saver = PostgresSaver(conn)
        # concurrent first runs on a fresh database must not race creating the tables
        conn.execute("SELECT pg_advisory_lock(%s, %s)", _SETUP_LOCK)
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", _SETUP_LOCK)
    except psycopg.Error as exc:
        conn.close()
        raise CheckpointerError(
            f"cannot set up checkpoints in PostgreSQL at {shown}: {_first_line(exc, url)}"
        ) from None
    return saver


def close_checkpointer(checkpointer: Any) -> None:
    """Close the connection of a checkpointer `open_checkpointer` made (quietly); a SQLite
    one that was opened more than once stays open until its last opener closes it."""
    if release_sqlite_saver(checkpointer):
        return
    conn = getattr(checkpointer, "conn", None)
    close = getattr(conn, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - closing must not fail a finished run
            pass


def _first_line(exc: BaseException, url: str = "") -> str:
    """The error's first line, with the URL and its password blanked out."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    if url:
        line = line.replace(url, redact_url(url))
        for secret in _password_candidates(url):
            line = line.replace(secret, "***")
    return line


def _password_candidates(url: str) -> set[str]:
    """What a URL's password could be (parsers split `user:pa@ss@host` differently)."""
    found: set[str] = set()
    rest = url.split("://", 1)[-1].split("/", 1)[0]
    for userinfo in (rest.partition("@")[0], rest.rpartition("@")[0]):
        if ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    found.update(re.findall(r"(?i)(?:^|[?&])password=([^&]*)", url))
    return {secret for secret in found if len(secret) >= 4}  # shorter ones would mangle the text


def thread_config(thread_id: str) -> dict[str, Any]:
    """The config of a conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def has_unfinished_step(graph: CompiledStateGraph, config: dict[str, Any]) -> bool:
    """True when a crash left a step to finish (`.next` or `.tasks` non-empty)."""
    snapshot = graph.get_state(cast(RunnableConfig, config))
    return bool(snapshot.next or snapshot.tasks)


def pending_message(snapshot: Any) -> str | None:
    """The text of a user message the thread stores but has not answered yet, if any."""
    messages = (snapshot.values or {}).get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage):
        return message_text(messages[-1])
    return None


def thread_status(graph: CompiledStateGraph, thread_id: str) -> dict[str, Any]:
    """Where a thread stands: `started` (it holds messages), `active_agent` (who gets the
    next message), `reviews` (handovers waiting for review) and `unfinished` (a step to
    finish first)."""
    snapshot = graph.get_state(cast(RunnableConfig, thread_config(thread_id)))
    values = snapshot.values or {}
    return {
        "started": bool(values.get("messages")),
        "active_agent": values.get("active_agent") or "orchestrator",
        "reviews": pending_reviews(snapshot),
        "unfinished": bool(snapshot.next or snapshot.tasks),
    }


class ReviewPending(RuntimeError):
    """A handover waits for a person's review; answer it before sending anything else."""


Reviewer = Callable[[dict[str, Any]], Any]
"""Answers a handover review: gets the interrupt's value, returns the resume value."""


def pending_reviews(snapshot: Any) -> list[Any]:
    """The review requests (interrupt values) a thread is paused on."""
    return [item.value for item in getattr(snapshot, "interrupts", ()) or ()]


def stream_turn(
    graph: CompiledStateGraph,
    text: str | None,
    *,
    thread_id: str,
    context: HandoverContext,
    on_review: Reviewer | None = None,
    live: bool = False,
    message_id: str | None = None,
) -> Iterator[Event]:
    """Resume anything unfinished, then run one user turn; yield (node, update) events.

    After each step comes a `("__values__", state)` event: the thread's state values.
    A handover paused for review yields `("review", {"request": ...})`; `on_review`
    answers it and the run goes on. Without `on_review` the thread stays paused,
    and a new message is refused (`ReviewPending`) until the review is answered.
    `("resume", {"pending": text, "review": bool})` says an unfinished step (or a
    waiting review) is taken up first.

    With `live=True` the run is streamed with `subgraphs=True` and the agents' inner
    steps come too (see `LIVE_EVENTS`): each model token, each task as it starts,
    and each step of an agent's loop as it ends.

    When the unfinished step was this very message (a run that failed before
    answering it), resuming answers it and the message is not sent twice. With
    `message_id` the message is sent under that id, and a message the thread
    already stores under it is never sent again, whatever moment the earlier run
    was stopped at: its turn is finished if it was not, and `("already_sent",
    {"message_id"})` says so.
    """
    config = thread_config(thread_id)
    with one_writer(graph.checkpointer, config):  # resume and send as one run of the thread
        snapshot = graph.get_state(cast(RunnableConfig, config))
        stored = message_id is not None and any(
            m.id == message_id for m in (snapshot.values or {}).get("messages") or []
        )
        if stored:
            yield ("already_sent", {"message_id": message_id})
            text = None  # sent before: only what is unfinished of its turn is left to do
        if snapshot.next or snapshot.tasks:
            pending = pending_message(snapshot)
            reviews = pending_reviews(snapshot)
            if reviews and on_review is None:
                if text is None:
                    yield ("review", {"request": reviews[0]})
                    return
                raise ReviewPending(
                    f"thread {thread_id!r} has a handover waiting for review; answer it "
                    "first (approve, edit or reject)"
                )
            yield ("resume", {"pending": pending, "review": bool(reviews)})
            first: Command | None = None
            if reviews and on_review is not None:
                answer = on_review(reviews[0])
                yield ("review", {"request": reviews[0], "answer": answer})
                first = Command(resume=answer)
            yield from _drive(graph, first, config, context, on_review, live)
            if text is not None and text == pending:
                return
        if text is not None:
            message = HumanMessage(content=text, id=message_id)
            yield from _drive(graph, {"messages": [message]}, config, context, on_review, live)


def _drive(graph, payload, config, context, on_review, live=False) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    """Run, answering every review on the way (or stopping at the first without a reviewer)."""
    while True:
        requests: list[Any] = []
        stream = _live_updates if live else _updates
        for node, update in stream(graph, payload, config, context):
            if node == "__interrupt__":
                requests += [getattr(item, "value", item) for item in update]
                continue
            yield node, update
        if not requests:
            return
        if on_review is None:
            yield ("review", {"request": requests[0]})
            return
        answer = on_review(requests[0])
        yield ("review", {"request": requests[0], "answer": answer})
        payload = Command(resume=answer)


def _updates(graph, payload, config, context) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    for mode, chunk in graph.stream(
        payload,
        config,
        context=context,
        stream_mode=["updates", "values"],
        output_keys=STATE_KEYS,
        durability="sync",
    ):
        if mode == "values":  # the state after the step: the caller's answer, without a reload
            yield "__values__", chunk
            continue
        for node, update in chunk.items():
            yield node, update if node == "__interrupt__" else (update or {})


TOKEN_EVENT = "__token__"
TASK_EVENT = "__task__"
STEP_EVENT = "__step__"
LIVE_EVENTS = (TOKEN_EVENT, TASK_EVENT, STEP_EVENT)
"""The events `live=True` adds (names no node can have):

- `("__token__", {"agent", "persona_marker", "text", "id", "ns"})`: a piece of a
  model's reply as it arrives (`stream_mode="messages"`; the whole reply at once
  for a model that does not stream), `id` being the reply's message id;
- `("__task__", {"agent", "node", "tool", "ns"})`: a step starts; `node` is a graph
  node (`ns` empty, `agent` the node) or a step of an agent's loop (`model` or
  `tools`, with the tool's name);
- `("__step__", {"agent", "node", "update", "ns"})`: a step of an agent's loop
  ended with this update (the model's reply with its tool calls, a tool's result).
"""


def agent_of(ns: tuple[str, ...]) -> str:
    """The graph node an agent's inner step runs under: `("frontend_designer:<id>",)` ->
    `frontend_designer`."""
    return ns[0].split(":", 1)[0] if ns else ""


def _live_updates(graph, payload, config, context) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    """`_updates`, streamed with `subgraphs=True`, plus the live events."""
    for ns, mode, chunk in graph.stream(
        payload,
        config,
        context=context,
        stream_mode=["updates", "values", "messages", "tasks"],
        subgraphs=True,
        output_keys=STATE_KEYS,
        durability="sync",
    ):
        ns = tuple(ns or ())
        if mode == "messages":
            message, meta = chunk
            if (meta or {}).get("langgraph_node") != "model" or message.type not in (
                "ai",
                "AIMessageChunk",
            ):
                continue
            text = message_text(message)
            if text:
                yield (
                    TOKEN_EVENT,
                    {
                        "agent": meta.get("agent") or agent_of(ns),
                        "persona_marker": meta.get("persona_marker") or "",
                        "text": text,
                        "id": message.id,
                        "ns": ns,
                    },
                )
        elif mode == "tasks":
            if "input" not in chunk:  # a task's result: its update comes as well
                continue
            tool = None
            call = chunk["input"].get("tool_call") if isinstance(chunk["input"], dict) else None
            if isinstance(call, dict):
                tool = call.get("name")
            yield (
                TASK_EVENT,
                {
                    "agent": agent_of(ns) if ns else chunk["name"],
                    "node": chunk["name"],
                    "tool": tool,
                    "ns": ns,
                },
            )
        elif ns:  # an agent's inner step
            if mode == "updates":
                for node, update in chunk.items():
                    if node != "__interrupt__":
                        yield (
                            STEP_EVENT,
                            {"agent": agent_of(ns), "node": node, "update": update or {}, "ns": ns},
                        )
        elif mode == "values":
            yield "__values__", chunk
        else:
            for node, update in chunk.items():
                yield node, update if node == "__interrupt__" else (update or {})


def run_turn(
    graph: CompiledStateGraph,
    text: str | None,
    *,
    thread_id: str,
    context: HandoverContext,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    on_review: Reviewer | None = None,
    live: bool = False,
    message_id: str | None = None,
) -> dict[str, Any]:
    """Run one turn (after resuming a crashed one) and return the thread's state values.

    `on_review` answers handovers paused for review (`review_handovers` in the
    context); without it the turn stops at the first one, the thread paused.
    `live=True` also passes the live events (tokens, tasks, agents' steps; see
    `LIVE_EVENTS`) to `on_event`, as the terminal shows them. `message_id`: see
    `stream_turn` (a message already stored under that id is not sent again).
    """
    values: dict[str, Any] | None = None
    events = stream_turn(
        graph,
        text,
        thread_id=thread_id,
        context=context,
        on_review=on_review,
        live=live,
        message_id=message_id,
    )
    for node, update in events:
        if node == "__values__":
            values = update
        elif on_event:
            on_event(node, update)
    if values is None:
        values = graph.get_state(cast(RunnableConfig, thread_config(thread_id))).values
    return values
