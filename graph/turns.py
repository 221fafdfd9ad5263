"""Running turns on a thread: crash resume and streamed events.

Every entry point (terminal, examples) goes through `run_turn`, which first
finishes a step a crash left unfinished (docs/ARCHITECTURE.md, invariant 8: a step whose writes were
saved shows in `get_state().tasks` but not in `.next`, and sending new input
instead of resuming would drop them), then sends the new message with
`durability="sync"` so a killed run resumes without losing a step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from ..state import HandoverContext, HandoverState, message_text
from .locking import one_writer

Event = tuple[str, dict[str, Any]]

STATE_KEYS = list(HandoverState.__annotations__)
"""Every state key: what `run_turn` returns, as `get_state().values` would."""


def thread_config(thread_id: str) -> dict[str, Any]:
    """The config of a conversation thread."""
    return {"configurable": {"thread_id": thread_id}}


def has_unfinished_step(graph: CompiledStateGraph, config: dict[str, Any]) -> bool:
    """True when a crash left a step to finish (`.next` or `.tasks` non-empty)."""
    snapshot = graph.get_state(cast(RunnableConfig, config))
    return bool(snapshot.next or snapshot.tasks)


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
        messages = (snapshot.values or {}).get("messages") or []
        if message_id is not None and any(m.id == message_id for m in messages):
            yield ("already_sent", {"message_id": message_id})
            text = None  # sent before: only what is unfinished of its turn is left to do
        if snapshot.next or snapshot.tasks:
            # the text of a user message the thread stores but has not answered yet, if any
            last = messages[-1] if messages else None
            pending = message_text(last) if isinstance(last, HumanMessage) else None
            reviews = pending_reviews(snapshot)[:1]
            if reviews and on_review is None:  # without text, `_drive` says the review waits
                if text is not None:
                    raise ReviewPending(
                        f"thread {thread_id!r} has a handover waiting for review; answer it "
                        "first (approve, edit or reject)"
                    )
            else:
                yield ("resume", {"pending": pending, "review": bool(reviews)})
            yield from _drive(graph, None, config, context, on_review, live, reviews)
            if text is not None and text == pending:
                return
        if text is not None:
            message = HumanMessage(content=text, id=message_id)
            yield from _drive(graph, {"messages": [message]}, config, context, on_review, live)


def _drive(graph, payload, config, context, on_review, live, requests=()) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    """Run, answering every review on the way (`requests`: one the thread already waits on), or
    stopping at the first without a reviewer."""
    requests = list(requests)
    while True:
        if requests:
            if on_review is None:
                yield ("review", {"request": requests[0]})
                return
            answer = on_review(requests[0])
            yield ("review", {"request": requests[0], "answer": answer})
            payload, requests = Command(resume=answer), []
        for node, update in _updates(graph, payload, config, context, live):
            if node == "__interrupt__":
                requests += [getattr(item, "value", item) for item in update]
            else:
                yield node, update
        if not requests:
            return


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


def _updates(graph, payload, config, context, live: bool) -> Iterator[Event]:  # type: ignore[no-untyped-def]
    """The run's (node, update) events and `("__values__", state)` after each step (the caller's
    answer, without a reload); with `live`, streamed with `subgraphs=True`, the live events too."""
    for item in graph.stream(
        payload,
        config,
        context=context,
        stream_mode=["updates", "values", "messages", "tasks"] if live else ["updates", "values"],
        subgraphs=live,
        output_keys=STATE_KEYS,
        durability="sync",
    ):
        ns, mode, chunk = (tuple(item[0] or ()), *item[1:]) if live else ((), *item)
        if mode == "messages":
            message, meta = chunk[0], chunk[1] or {}
            if meta.get("langgraph_node") == "model" and message.type in ("ai", "AIMessageChunk"):
                if text := message_text(message):
                    agent = meta.get("agent") or agent_of(ns)
                    marker = meta.get("persona_marker") or ""
                    yield _live(
                        TOKEN_EVENT, ns, agent, persona_marker=marker, text=text, id=message.id
                    )
        elif mode == "tasks":
            if "input" in chunk:  # not a task's result: its update comes as well
                call = chunk["input"].get("tool_call") if isinstance(chunk["input"], dict) else None
                tool = call.get("name") if isinstance(call, dict) else None
                node = chunk["name"]
                yield _live(TASK_EVENT, ns, agent_of(ns) if ns else node, node=node, tool=tool)
        elif ns:  # an agent's inner step
            for node, update in chunk.items() if mode == "updates" else ():
                if node != "__interrupt__":
                    yield _live(STEP_EVENT, ns, agent_of(ns), node=node, update=update or {})
        elif mode == "values":
            yield "__values__", chunk
        else:
            for node, update in chunk.items():
                yield node, update if node == "__interrupt__" else (update or {})


def _live(kind: str, ns: tuple[str, ...], agent: str, **fields: Any) -> Event:
    return kind, {"agent": agent, **fields, "ns": ns}


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
