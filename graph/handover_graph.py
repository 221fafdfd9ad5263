"""The compiled handover graph: its input is checked before anything is stored, one run a thread.

`HandoverGraph` is LangGraph's `CompiledStateGraph` with `stream` and `astream`
(which `invoke`, `ainvoke`, the event streams and the LangGraph server all go
through) wrapped:

- the run context is validated, and the model it names must resolve (provider
  known, key present) before the user's message is stored;
- the input is checked by `check_input`: a malformed message, an unknown key or
  a message over `max_input_tokens` is refused with an `InputError` naming the
  problem, and nothing is written to the thread; but an A2A client's data part
  (whose keys the LangGraph server makes input keys) is read as part of the
  user's message (`with_a2a_data`), so it never fails the task;
- the run holds the thread's lock (`locking.py`), so concurrent runs on one
  thread queue instead of overwriting each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import END
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from ..nodes.handover.cost import thread_stats
from ..nodes.history.archive import stored_trail, stored_transcript
from ..nodes.history.conversation import pending_tool_calls
from ..nodes.models.resolve import ModelChoice, model_from_string
from ..nodes.redaction import redact
from ..specialists import ORCHESTRATOR_PROFILE
from ..state import (
    ORCHESTRATOR,
    HandoverContext,
    InputError,
    check_input,
    check_update,
    coerce_context,
    token_counter,
)
from ..state.langgraph_internals import recompiled
from ..state.writes import INPUT_KEYS
from .locking import one_writer, one_writer_async

RECURSION_LIMIT = 10_000
"""The graph's step limit, at least, whatever a caller's config says: a safety net only, since
`max_turns` and `max_handovers_per_turn` end every run long before it."""

SUPERSEDED = {
    "decisions": [{"type": "reject", "message": "a new message came before the review"}],
    "superseded": True,
}
"""The review answer a new message gives a handover still waiting for review."""

RESOLVED = {"resolved": True}
"""The review answer of "Mark as Resolved" (Agent Chat UI sends a run with
`Command(goto="__end__")` while a review waits): nothing is handed over, and the turn ends
with a note saying so."""


@dataclass(frozen=True)
class ThreadFacts:
    """What a write is checked against: the thread's stored message ids (read only when the
    write brings ids of its own or a review waits), whether a handover waits for review, and
    the tool calls the thread has not answered yet."""

    stored_ids: frozenset[str] = frozenset()
    reviewing: bool = False
    pending_calls: frozenset[str] = frozenset()


class HandoverGraph(CompiledStateGraph):
    """A compiled handover graph (see the module docstring for what it adds)."""

    def __init__(
        self,
        *,
        handover_models: ModelChoice,
        handover_warmers: Sequence[Callable[[], None]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.handover_models = handover_models
        self.handover_warmers = tuple(handover_warmers)

    @classmethod
    def wrap(
        cls,
        compiled: CompiledStateGraph[Any, Any, Any, Any],
        models: ModelChoice,
        warmers: Sequence[Callable[[], None]] = (),
    ) -> HandoverGraph:
        """This graph, from LangGraph's compiled one (`warmers`: what `warm_up` prepares
        besides the models, such as the built-in agents' tool schemas)."""
        return recompiled(cls, compiled, handover_models=models, handover_warmers=warmers)

    @property
    def agents(self) -> list[str]:
        """The graph's agents: `orchestrator` and every specialist profile."""
        profiles = self.handover_models.profiles
        return [ORCHESTRATOR, *(name for name in profiles if name != ORCHESTRATOR_PROFILE)]

    def transcript(self, config: Any) -> list[BaseMessage]:
        """The whole conversation of the thread in `config`, oldest first: the archived turns
        (the state keeps a working window of the newest, `nodes/history/archive.py`) and the
        window. Up to the config's `checkpoint_id` when it names one."""
        window = self.get_state(config).values.get("messages") or []
        return stored_transcript(self._saver(), config, window)

    def trail(self, config: Any) -> list[dict[str, Any]]:
        """The whole handover trail of the thread in `config` (the state keeps the newest)."""
        window = self.get_state(config).values.get("handovers") or []
        return stored_trail(self._saver(), config, window)

    def stats(self, config: Any) -> dict[str, int]:
        """What the thread's handovers cost and saved, summed over its whole trail: handovers,
        refusals and returns; tokens the packages sent against what the full history would
        have cost (`saved_tokens`); the specialists' model calls and tokens while they held the
        conversation (from the models' usage metadata, the current hold included)."""
        live = self.get_state(config).values.get("hold_usage")
        return thread_stats(self.trail(config), live)

    def warm_up(self, context: Any = None) -> list[str]:
        """Prepare now what the first run would otherwise: the built-in agents' tool schemas
        (pydantic builds each the first time, about 10 ms an agent), and every model this
        build's agents use under `context` (the default context when None) that offers a
        `warm_up()` gets it called once (the offline model builds its router's indexes, about
        half a second). The terminal and the served graph call this at start. Returns the
        models prepared; a model that cannot be made or prepared is left for the run to
        report."""
        for warm in self.handover_warmers:
            with contextlib.suppress(Exception):  # warming up is an optimisation, never an error
                warm()
        models = self.handover_models
        ctx = coerce_context(context)
        prepared: list[str] = []
        seen: set[tuple[type, str]] = set()
        for name in models.profiles:
            with contextlib.suppress(Exception):  # the same: an error is the run's to report
                model = models.model_for(name, ctx)
                key = (type(model), repr(model))  # one warm-up per distinct model
                prepare = getattr(model, "warm_up", None)
                if key not in seen and callable(prepare):
                    seen.add(key)
                    prepare()
                    prepared.append(type(model).__name__)
        return prepared

    def _saver(self) -> BaseCheckpointSaver | None:
        saver = self.checkpointer
        return saver if isinstance(saver, BaseCheckpointSaver) else None

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """LangGraph's output schema, `active_agent` an enum of this build's agents (Studio)."""
        schema = super().get_output_jsonschema(config)
        agent = schema.get("properties", {}).get("active_agent")
        if isinstance(agent, dict):
            agent["enum"] = self.agents
        return schema

    def checked_input(self, payload: Any, context: Any, facts: ThreadFacts = ThreadFacts()) -> Any:
        """The input as it will be stored; raises ValueError (InputError) before any write."""
        ctx = coerce_context(context)
        models = self.handover_models
        if payload is not None:
            wanted = [(f"the context's model {ctx.model!r}", ctx.model)]
            wanted = wanted if models.uses_context_model() else []
            wanted += [
                (f"profile {name}'s model {models.declared(name)!r}", models.declared(name))
                for name in models.profiles
                if models.declared(name)
            ]
            for what, spec in wanted:
                if problem := model_problem(spec, models.profiles):
                    raise ValueError(f"{what} cannot be used: {problem}")
        if isinstance(payload, Command) and payload.goto:
            self._check_goto(payload.goto)
        if facts.reviewing and _sends_messages(payload):
            payload = _without_answers_to(payload, facts.pending_calls)
        if isinstance(payload, Command) and _is_review_answer(payload.resume):
            # a reviewer's edit or reason is stored with the checkpoint: no secrets in it
            payload = dataclasses.replace(payload, resume=_redacted(payload.resume))
        return check_input(
            payload,
            max_tokens=ctx.max_input_tokens,
            counter=token_counter(ctx.model),
            agents=self.agents,
            stored_ids=facts.stored_ids,
        )

    def _check_goto(self, goto: Any) -> None:
        """A caller's `Command(goto=...)` may only end the run (`__end__`): who answers a
        message is `active_agent`'s to say, and the handover, consult and consultant nodes
        run on what the graph itself prepares for them."""
        targets = goto if isinstance(goto, list | tuple) else [goto]
        for target in targets:
            if target != END:
                shown = target if isinstance(target, str) else type(target).__name__
                raise InputError(
                    f"Command(goto={shown!r:.60}) is not accepted: a caller's goto may only "
                    f"be {END!r}. To choose who answers, set active_agent (update_state) and "
                    "send a message; to answer a review, Command(resume=...)"
                )

    def _facts(self, payload: Any, config: Any) -> ThreadFacts:
        saver = self.checkpointer
        if not isinstance(saver, BaseCheckpointSaver) or not _thread_of(config):
            return ThreadFacts()
        if not _brings_ids(payload) and not _may_wait(saver.get_tuple(config)):
            return ThreadFacts()
        return _facts_of(payload, self.get_state(config))

    async def _afacts(self, payload: Any, config: Any) -> ThreadFacts:
        saver = self.checkpointer
        if not isinstance(saver, BaseCheckpointSaver) or not _thread_of(config):
            return ThreadFacts()
        try:
            saved = await saver.aget_tuple(config)
        except NotImplementedError:  # a sync-only saver (SqliteSaver): read it off the loop
            return await asyncio.to_thread(self._facts, payload, config)
        if not _brings_ids(payload) and not _may_wait(saved):
            return ThreadFacts()
        return _facts_of(payload, await self.aget_state(config))

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        """LangGraph's `stream`, its input checked first. A new message while a handover
        waits for review means the person moved on: the handover is not carried out (the
        caller says so) and the new message is answered, in this one run."""
        with one_writer(self.checkpointer, config):
            config = with_safety_net(config)
            input = with_a2a_data(input, config)
            facts = self._facts(input, config)
            checked = self.checked_input(input, kwargs.get("context"), facts)
            for payload, run_config, run_kwargs in _runs(checked, config, kwargs, facts):
                yield from super().stream(payload, run_config, **run_kwargs)

    async def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        """`stream`'s async twin."""
        async with one_writer_async(self.checkpointer, config):
            config = with_safety_net(config)
            input = with_a2a_data(input, config)
            facts = await self._afacts(input, config)
            # the checks read files (token vocabularies, the environment): off the event loop
            checked = await asyncio.to_thread(
                self.checked_input, input, kwargs.get("context"), facts
            )
            for payload, run_config, run_kwargs in _runs(checked, config, kwargs, facts):
                async for chunk in super().astream(payload, run_config, **run_kwargs):
                    yield chunk

    def _checked_updates(self, supersteps: Any, facts: ThreadFacts) -> list[Any]:
        ctx = coerce_context(None)

        def checked(values: Any) -> Any:
            if isinstance(values, Command):
                return self.checked_input(values, None, facts)
            if values is None:
                return None
            return check_update(
                values,
                agents=self.agents,
                max_tokens=ctx.max_input_tokens,
                counter=token_counter(ctx.model),
                stored_ids=facts.stored_ids,
                together=False,
            )

        return [
            [update._replace(values=checked(update.values)) for update in step]
            for step in supersteps
        ]

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:  # type: ignore[override]
        """LangGraph's `bulk_update_state` (and so `update_state`), each value checked first."""
        with one_writer(self.checkpointer, config):
            facts = self._facts({"messages": _update_messages(supersteps)}, config)
            return super().bulk_update_state(config, self._checked_updates(supersteps, facts))

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:  # type: ignore[override]
        """LangGraph's `abulk_update_state` (and so `aupdate_state`), each value checked first."""
        async with one_writer_async(self.checkpointer, config):
            facts = await self._afacts({"messages": _update_messages(supersteps)}, config)
            checked = await asyncio.to_thread(self._checked_updates, supersteps, facts)
            return await super().abulk_update_state(config, checked)


def model_problem(spec: str, profiles: Any) -> str | None:
    """Why the model `spec` cannot be made (the error's type and first line), or None."""
    try:
        model_from_string(spec, profiles=profiles)
    except Exception as exc:  # noqa: BLE001 - any reason the model cannot be made
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def with_safety_net(config: Any) -> Any:
    """The run's config with a recursion limit no lower than `RECURSION_LIMIT`."""
    given = (config or {}).get("recursion_limit") or 0
    return {**(config or {}), "recursion_limit": max(int(given), RECURSION_LIMIT)}


A2A_DATA_HEADING = "Data sent with this message (JSON):"
"""Opens the text an A2A data part becomes in the user's message."""


def with_a2a_data(payload: Any, config: Any) -> Any:
    """A run of the LangGraph server's A2A endpoint (its config's metadata has `a2a`) with a
    data part: the server makes the part's keys top-level input keys, which the graph does
    not take (`check_input` would refuse them and the task would fail). The agents read
    text, so the data is shown to them instead: as a JSON block appended to the user's
    message, or as a user message of its own when the part came alone (stamped with the
    run's A2A task ids, so the task's history lists it). `messages` stays the graph's own
    key; any other caller's input is left as it is, to be checked."""
    a2a = ((config or {}).get("metadata") or {}).get("a2a")
    if not isinstance(a2a, Mapping) or not isinstance(payload, Mapping):
        return payload
    data = {str(key): value for key, value in payload.items() if key not in INPUT_KEYS}
    if not data:
        return payload
    dumped = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    block = f"{A2A_DATA_HEADING}\n```json\n{dumped}\n```"
    messages = payload.get("messages")
    messages = list(messages) if isinstance(messages, list) else []
    last = messages[-1] if messages else None
    if isinstance(last, Mapping) and last.get("role", last.get("type")) in ("human", "user"):
        content = last.get("content")
        if isinstance(content, str):
            messages[-1] = {**last, "content": f"{content}\n\n{block}"}
            return {"messages": messages}
        if isinstance(content, list):
            messages[-1] = {**last, "content": [*content, {"type": "text", "text": block}]}
            return {"messages": messages}
    stamp = {key: a2a[key] for key in ("task_id", "task_start_id") if isinstance(a2a.get(key), str)}
    extra = {"additional_kwargs": {"a2a": stamp}} if stamp else {}
    return {"messages": [*messages, {"role": "user", "content": block, **extra}]}


def _runs(
    checked: Any, config: Any, kwargs: dict[str, Any], facts: ThreadFacts
) -> list[tuple[Any, Any, dict[str, Any]]]:
    """The runs a checked input makes, each (input, config, stream's arguments): itself, but
    while a review waits a run in review (`_in_review`) that answers it: "Mark as Resolved"
    (`_resolves`) resolves it, a new message first supersedes it, then runs on its own
    (the caller's context, the thread's latest checkpoint)."""
    if not facts.reviewing:
        return [(checked, config, kwargs)]
    if _resolves(checked):
        return [(Command(resume=RESOLVED), config, _in_review(kwargs))]
    if _sends_messages(checked):
        return [
            (Command(resume=SUPERSEDED), _aside(config), _in_review(kwargs)),
            (checked, _at_head(config), kwargs),
        ]
    return [(checked, config, _in_review(kwargs))]


def _aside(config: Any) -> Any:
    """The config of the step that ends a superseded review, before the new message's run:
    its own run id (derived from the run's), so the checkpoint it saves does not carry the
    run's id. LangGraph takes a run whose id the latest checkpoint carries for a re-entry
    (a stream reconnecting) and would drop the new message; a retried run still re-enters."""
    configurable = (config or {}).get("configurable") or {}
    run_id = configurable.get("run_id") or (config or {}).get("run_id")
    if not run_id:
        return config
    aside = uuid.uuid5(uuid.NAMESPACE_OID, f"{run_id}/superseded-review")
    out = {**config, "configurable": {**configurable, "run_id": str(aside)}}
    return {**out, "run_id": aside} if "run_id" in config else out


def _at_head(config: Any) -> Any:
    """The config of the new message's run once the review is superseded: the thread's
    latest checkpoint, where the superseding step left it, not the one the caller
    addressed (Agent Chat UI sends the id of the checkpoint it shows, the one before)."""
    configurable = {**((config or {}).get("configurable") or {})}
    configurable.pop("checkpoint_id", None)
    return {**config, "configurable": configurable}


def _resolves(payload: Any) -> bool:
    """A run that only goes to the end (`Command(goto="__end__")`, no resume, no message):
    what "Mark as Resolved" sends."""
    if not isinstance(payload, Command) or payload.resume is not None or payload.update:
        return False
    goto = payload.goto if isinstance(payload.goto, list | tuple) else [payload.goto]
    return list(goto) == [END]


def _is_review_answer(resume: Any) -> bool:
    return isinstance(resume, Mapping) and isinstance(resume.get("decisions"), list)


def _redacted(value: Any) -> Any:
    """A review answer with every text in it redacted."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, Mapping):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def _thread_of(config: Any) -> Any:
    return ((config or {}).get("configurable") or {}).get("thread_id")


def _sends_messages(payload: Any) -> bool:
    """A new message, not a resume: plain input, or a Command whose update holds messages."""
    if isinstance(payload, Command):
        return isinstance(payload.update, Mapping) and "messages" in payload.update
    return payload is not None


def _message_items(payload: Any) -> list[Any]:
    if isinstance(payload, Command):
        payload = payload.update
    items = payload.get("messages") if isinstance(payload, Mapping) else None
    if isinstance(items, BaseMessage | Mapping):
        return [items]
    return list(items) if isinstance(items, list) else []


def _brings_ids(payload: Any) -> bool:
    """Whether the write's messages carry ids of their own (only then are stored ids read)."""
    return any(
        (item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None))
        for item in _message_items(payload)
    )


def _update_messages(supersteps: Any) -> list[Any]:
    return [
        item
        for superstep in supersteps
        for update in superstep
        for item in _message_items(update.values)
    ]


def _in_review(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's arguments with `review_handovers` on: a handover or consult waiting for review
    is answered only by a review decision (or superseded by a new message), whatever the
    context of the run that reaches it says."""
    context = kwargs.get("context")
    if isinstance(context, HandoverContext):
        return {**kwargs, "context": dataclasses.replace(context, review_handovers=True)}
    # else a dict or None: `checked_input` refused anything else (`coerce_context`)
    return {**kwargs, "context": {**(context or {}), "review_handovers": True}}


def _may_wait(saved: Any) -> bool:
    """Whether the thread's last checkpoint may wait on an interrupt: only one with pending
    writes can (a finished run leaves none), so `get_state` is read only then."""
    return saved is not None and bool(saved.pending_writes)


def _facts_of(payload: Any, state: StateSnapshot) -> ThreadFacts:
    """What the thread's state says a write is checked against: a review waits when the state
    has a pending interrupt; the messages are read when the write brings ids or a review
    waits."""
    reviewing = bool(state.interrupts)
    read = reviewing or _brings_ids(payload)
    messages = list(state.values.get("messages") or []) if read else []
    return ThreadFacts(
        stored_ids=frozenset(m.id for m in messages if getattr(m, "id", None)),
        reviewing=reviewing,
        pending_calls=frozenset(c["id"] for c in pending_tool_calls(messages)),
    )


def _without_answers_to(payload: Any, pending: frozenset[str]) -> Any:
    """The input without tool messages answering the thread's pending calls (a chat UI sends
    them for a call it sees unanswered; the graph answers its calls itself)."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("messages"), list):
        return payload

    def answers(item: Any) -> bool:
        if isinstance(item, ToolMessage):
            return item.tool_call_id in pending
        if isinstance(item, Mapping) and item.get("role", item.get("type")) == "tool":
            return item.get("tool_call_id") in pending
        return False

    return {**payload, "messages": [m for m in payload["messages"] if not answers(m)]}
