"""Decoded window snapshots, reused between runs of a process instead of decoded on every run.

The conversation and the trail are `DeltaChannel`s: a checkpoint stores a step's
writes, and every `SNAPSHOT_EVERY` writes a snapshot of the whole working window
(200-250 messages, about 180 KB). Every run starts by rebuilding the window: the
checkpointer walks back to the newest snapshot and LangGraph replays the writes
after it. Decoding that snapshot (200-250 LangChain messages built from msgpack) is
most of what a run's start costs at a full window, and the same snapshot is decoded
again on each of the next few turns, until the next one is written.

`with_snapshot_reuse(config, saver)` lends a run (and its agents' subgraphs) a shallow
clone of the saver: the same connection, lock and tables, as LangGraph's own
`with_allowlist` makes. The clone's `get_tuple` and delta-history reads keep the last
`ENTRIES` decoded checkpoint blobs of at least `MIN_BYTES` (the ones holding a
snapshot). A blob is recognised by its bytes, so a hit is exactly what decoding would
give. What is stored is unchanged, and so is every read outside a run: the graph keeps
the saver it was given, so `get_state`, locks and closing see the caller's object.

What a hit hands out is fresh wherever a reader may write: a new checkpoint dict,
deep copies of its versions and small channel values, and a new list inside each
snapshot. The messages in a snapshot are shared between runs, as LangGraph shares them
between a run's steps: nothing here (or in LangGraph's reducers) changes a message in
place.
"""

from __future__ import annotations

import copy
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.constants import CONFIG_KEY_CHECKPOINTER

MIN_BYTES = 16 * 1024
"""Blobs smaller than this are decoded every time (a snapshot of a few turns decodes fast)."""

ENTRIES = 8
"""Decoded blobs kept per process, newest used first: one a thread in use is enough."""

STRICT_MSGPACK = os.getenv("LANGGRAPH_STRICT_MSGPACK", "false").lower() in ("1", "true", "yes")
"""LangGraph's strict msgpack mode (that environment variable, read as LangGraph reads it): it
narrows what a saver's serializer may decode, which only its own serializer can do, so runs
then read through the caller's saver as it is."""

_reading_for_run: ContextVar[bool] = ContextVar("handover_reading_for_run", default=False)
"""Set while the clone reads a checkpoint for a run (only then is a decoded blob kept)."""


class SnapshotReuse:
    """A serializer that decodes a large delta-history blob once per process (see the module
    docstring); everything else goes straight to the saver's own serializer."""

    def __init__(self, inner: Any, *, min_bytes: int = MIN_BYTES, entries: int = ENTRIES) -> None:
        self.inner = inner
        self.min_bytes = min_bytes
        self.entries = entries
        self._decoded: OrderedDict[tuple[str, bytes], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)  # type: ignore[no-any-return]

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if not _reading_for_run.get() or blob is None or len(blob) < self.min_bytes:
            return self.inner.loads_typed(data)
        key = (type_, bytes(blob))
        with self._lock:
            decoded = self._decoded.get(key)
            if decoded is not None:
                self._decoded.move_to_end(key)
                self.hits += 1
        if decoded is None:
            decoded = self.inner.loads_typed(data)
            with self._lock:
                self.misses += 1
                self._decoded[key] = decoded
                while len(self._decoded) > self.entries:
                    self._decoded.popitem(last=False)
        return _fresh(decoded)

    def __getattr__(self, name: str) -> Any:  # the saver's serializer's other methods
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def _fresh(value: Any) -> Any:
    """`value` with new containers where a reader of it writes."""
    if isinstance(value, _DeltaSnapshot):
        inner = value.value
        return _DeltaSnapshot(list(inner) if isinstance(inner, list) else copy.copy(inner))
    if isinstance(value, dict) and isinstance(value.get("channel_values"), dict):
        fresh = {k: copy.deepcopy(v) for k, v in value.items() if k != "channel_values"}
        fresh["channel_values"] = {
            k: _fresh(v) if isinstance(v, _DeltaSnapshot) else copy.deepcopy(v)
            for k, v in value["channel_values"].items()
        }
        return fresh
    return value


def _for_run(method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def read(*args: Any, **kwargs: Any) -> Any:
        token = _reading_for_run.set(True)
        try:
            return method(*args, **kwargs)
        finally:
            _reading_for_run.reset(token)

    return read


def _for_run_async(method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    async def read(*args: Any, **kwargs: Any) -> Any:
        token = _reading_for_run.set(True)
        try:
            return await method(*args, **kwargs)
        finally:
            _reading_for_run.reset(token)

    return read


def reuse_snapshots(saver: Any) -> Any:
    """A clone of `saver` that reuses decoded snapshots (see the module docstring); `saver`
    itself is left as it was. Anything that is not a LangGraph saver is returned as given."""
    if not isinstance(saver, BaseCheckpointSaver) or isinstance(saver.serde, SnapshotReuse):
        return saver
    clone = copy.copy(saver)
    clone.serde = SnapshotReuse(saver.serde)  # type: ignore[assignment]
    for name in ("get_tuple", "get_delta_channel_history"):
        setattr(clone, name, _for_run(getattr(clone, name)))
        setattr(clone, f"a{name}", _for_run_async(getattr(clone, f"a{name}")))
    return clone


_clones: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_clones_lock = threading.Lock()


def with_snapshot_reuse(config: RunnableConfig, saver: Any) -> RunnableConfig:
    """`config` lending the run `saver`'s snapshot-reusing clone (one per saver, made once and
    dropped with the saver). A config that already lends a saver (a parent graph's, or the
    LangGraph server's) is left as it is, and so is any saver LangGraph cannot clone, and
    every saver in strict msgpack mode (`STRICT_MSGPACK`)."""
    configurable = config.get("configurable") or {}
    if (
        STRICT_MSGPACK
        or not isinstance(saver, BaseCheckpointSaver)
        or CONFIG_KEY_CHECKPOINTER in configurable
    ):
        return config
    with _clones_lock:
        clone = _clones.get(saver)
        if clone is None:
            try:
                clone = _clones[saver] = reuse_snapshots(saver)
            except TypeError:  # a saver that cannot be weakly referenced or copied
                return config
    return {**config, "configurable": {**configurable, CONFIG_KEY_CHECKPOINTER: clone}}


def lent_saver(config: RunnableConfig, saver: Any) -> Any:
    """The saver a run with `config` uses: the one the config lends, else `saver`."""
    return (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER, saver)
