"""Ctrl-C during a turn: the turn stops at its next step, tool call, model call or token.

A KeyboardInterrupt raised wherever the main thread happens to be does not stop
a turn: the agents run in LangGraph's worker threads, and LangGraph waits for
them to finish before it unwinds. So while a turn runs, SIGINT only records the
request (`StopRequest.catching_ctrl_c`), and the request, bound to the graph as a
LangChain callback handler (`graph.with_config(callbacks=[stop])`), raises
LangGraph's `GraphDrained` in the worker at the next step, model call, tool call
or streamed token. Like an interrupt it passes through every agent, middleware
and tool wrapper: the stopped step writes nothing, the steps before it are
checkpointed (`durability="sync"`), and `run_turn` finishes what is left before
the thread's next message, so a tool call is never left unanswered and nothing
is stored twice. A question to the person (a review) is interrupted as usual.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.errors import GraphDrained
from langgraph.pregel import Pregel

STOP_REASON = "stopped by the person (Ctrl-C)"

Graph = TypeVar("Graph", bound=Pregel)
Ask = Callable[[str], str]
OnEvent = Callable[[str, dict[str, Any]], None]


class TurnStopped(Exception):
    """The turn was stopped on request; what its finished steps wrote is saved."""


def _not_a_stop(record: logging.LogRecord) -> bool:
    """LangChain logs every exception a callback handler raises; a stop is not an error."""
    args = record.args if isinstance(record.args, tuple) else ()
    return not (args and args[0] == StopRequest.__name__)


_CALLBACK_LOG = logging.getLogger("langchain_core.callbacks.manager")


class StopRequest(BaseCallbackHandler):
    """A person's request to stop the running turn, honoured by the graph it is bound to.

    stop = StopRequest()
    graph = stop.bind(graph)
    with stop.catching_ctrl_c():  # Ctrl-C now requests the stop
        run_turn(graph, text, ...)  # raises TurnStopped once it has stopped
    """

    raise_error = True  # a raised stop must reach the graph, not only the log

    def __init__(self, on_request: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.on_request = on_request
        self._requested = threading.Event()
        self._asking = 0
        if _not_a_stop not in _CALLBACK_LOG.filters:
            _CALLBACK_LOG.addFilter(_not_a_stop)

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self) -> None:
        """Stop the turn at its next step, tool call, model call or token (any thread)."""
        self._requested.set()
        if self.on_request is not None:
            self.on_request()

    def bind(self, graph: Graph) -> Graph:
        """The graph with this request among its callbacks (LangGraph's `with_config`)."""
        return graph.with_config(callbacks=[self])

    @contextmanager
    def catching_ctrl_c(self) -> Iterator[None]:
        """One turn: Ctrl-C requests the stop, and a turn that stopped raises TurnStopped.

        The request holds for this turn only; SIGINT's handler is given back on the way
        out (it is only replaced in the main thread, the one Python delivers signals to)."""
        self._requested.clear()
        previous: Any = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        except Exception as exc:
            if self.requested:
                raise TurnStopped(STOP_REASON) from exc
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            self._requested.clear()

    def interruptible(self, ask: Ask) -> Ask:
        """`ask`, interrupted by Ctrl-C as usual (KeyboardInterrupt) even during a turn."""

        def ask_interruptibly(prompt: str) -> str:
            self._asking += 1
            try:
                return ask(prompt)
            finally:
                self._asking -= 1

        return ask_interruptibly

    def unless_stopping(self, on_event: OnEvent) -> OnEvent:
        """`on_event`, quiet once the stop is requested: nothing more of the turn is shown."""

        def shown(node: str, update: dict[str, Any]) -> None:
            if not self.requested:
                on_event(node, update)

        return shown

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._asking:
            raise KeyboardInterrupt
        self.request()

    # --- the callbacks: each is a point where the turn may stop -----------------------------
    def _stop_here(self, *args: Any, **kwargs: Any) -> None:
        if self.requested:
            raise GraphDrained(STOP_REASON)

    on_chain_start = on_chat_model_start = on_llm_start = _stop_here
    on_llm_new_token = on_tool_start = _stop_here
