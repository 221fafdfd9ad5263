"""The LangGraph internals the project still relies on, all here; everything else uses
public API only (`tests/test_public_api.py` scans the package for private names).

LangGraph offers no public way to do these. Each is checked by
`tests/test_public_api.py`, which fails loudly, naming the function, when an
upgrade moves what it relies on:

- `run_checkpointer`: the checkpointer of the run in progress. Under the LangGraph
  server the compiled graph has none (the server supplies it per run), and stage 2
  must read the thread's archive through it: it is the config's
  `CONFIG_KEY_CHECKPOINTER`, which LangGraph re-exports "for langgraph-api" and
  means to drop in v2.
- `command_of`: the `Command` a tool's `Command(graph=Command.PARENT)` carries up
  to the agent's node inside a `ParentCommand` (its first argument: the exception
  has no attribute for it).
- `remote_error_of`: what a `RemoteGraph` run's failure says (the error the server
  sent, its first argument: `RemoteException` has no attribute for it).
- `recompiled`: our `CompiledStateGraph` subclass made from the graph
  `StateGraph.compile()` returns (it has no hook for the class): the same
  attributes, given to the subclass's constructor.
- `sqlite_checkpoints`, `sqlite_writes`, `sqlite_channel_value`: `SqliteSaver`'s
  tables read directly, so a thread's archive is read in three queries instead of
  one `get_tuple` per checkpoint (a 650-turn thread: 0.4 s; every other saver is
  walked through `get_tuple`, the public way).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER  # public, kept for langgraph-api
from langgraph.errors import ParentCommand
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

Compiled = TypeVar("Compiled", bound=CompiledStateGraph)  # type: ignore[type-arg]


def run_checkpointer(config: Mapping[str, Any]) -> BaseCheckpointSaver | None:
    """The checkpointer of the run whose config this is (None without one)."""
    found = (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER)
    return found if isinstance(found, BaseCheckpointSaver) else None


def command_of(exc: ParentCommand) -> Command | None:  # type: ignore[type-arg]
    """The command a `ParentCommand` carries to the parent graph (None if it carries none)."""
    command = exc.args[0] if exc.args else None
    return command if isinstance(command, Command) else None


def remote_error_of(exc: BaseException) -> Any:
    """The error a `RemoteException` carries from the server (a mapping with `error` and
    `message`, or whatever it sent), None when it carries nothing."""
    return exc.args[0] if exc.args else None


def recompiled(cls: type[Compiled], compiled: CompiledStateGraph, **extra: Any) -> Compiled:  # type: ignore[type-arg]
    """`compiled` as an instance of `cls` (a `CompiledStateGraph` subclass whose constructor
    takes `extra` besides LangGraph's own arguments)."""
    attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
    return cls(**extra, **attrs)


def sqlite_checkpoints(
    saver: Any, thread: str
) -> dict[str, tuple[str | None, dict[str, Any]]] | None:
    """A `SqliteSaver` thread's root checkpoints: id -> (parent id, metadata); None for any
    other saver."""
    from langgraph.checkpoint.sqlite import SqliteSaver  # a dependency, imported when used

    if not isinstance(saver, SqliteSaver):
        return None
    with saver.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread,),
        )
        return {cid: (parent, _metadata(meta)) for cid, parent, meta in cur.fetchall()}


def sqlite_writes(saver: Any, thread: str, channel: str) -> list[tuple[str, str, str, int, Any]]:
    """A `SqliteSaver` thread's root writes to `channel`, each as (checkpoint id, task path,
    task id, index, encoded value): decode a value with `sqlite_decode`."""
    with saver.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT checkpoint_id, task_path, task_id, idx, type, value FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ?",
            (thread, channel),
        )
        return [
            (cid, path or "", task, idx, (kind, value))
            for cid, path, task, idx, kind, value in cur.fetchall()
        ]


def sqlite_decode(saver: Any, encoded: Any) -> Any:
    """A value `sqlite_writes` returned, decoded by the saver's serializer."""
    return saver.serde.loads_typed(encoded)


def sqlite_channel_value(saver: Any, thread: str, checkpoint_id: str, channel: str) -> Any:
    """The value of `channel` stored in one root checkpoint of a `SqliteSaver` thread (a
    `DeltaChannel` snapshot, or a value stored whole), None when it holds none."""
    with saver.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT type, checkpoint FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            (thread, checkpoint_id),
        )
        blob = cur.fetchone()
    if blob is None:
        return None
    return saver.serde.loads_typed((blob[0], blob[1]))["channel_values"].get(channel)


def _metadata(metadata: Any) -> dict[str, Any]:
    try:
        found = json.loads(metadata) if metadata is not None else {}
    except (TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
