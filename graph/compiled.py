"""The compiled handover graph: its input is checked before anything is stored, one run a thread.

`HandoverGraph` is LangGraph's `CompiledStateGraph` with `stream` and `astream`
(which `invoke`, `ainvoke`, the event streams and the LangGraph server all go
through) wrapped:

- the run context is validated, and the model it names must resolve (provider
  known, key present) before the user's message is stored;
- the input is checked by `check_input`: a malformed message, an unknown key or
  a message over `max_input_tokens` is refused with an `InputError` naming the
  problem, and nothing is written to the thread;
- the run holds the thread's lock (`locking.py`), so concurrent runs on one
  thread queue instead of overwriting each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from ..nodes.models.resolve import ModelChoice, model_from_string
from ..state import check_input, coerce_context, token_counter
from .locking import one_writer, one_writer_async


class HandoverGraph(CompiledStateGraph):
    """A compiled handover graph (see the module docstring for what it adds)."""

    def __init__(self, *, handover_models: ModelChoice | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handover_models = handover_models

    @classmethod
    def wrap(
        cls, compiled: CompiledStateGraph[Any, Any, Any, Any], models: ModelChoice
    ) -> HandoverGraph:
        """This graph, from LangGraph's compiled one."""
        attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
        return cls(handover_models=models, **attrs)

    def checked_input(self, payload: Any, context: Any) -> Any:
        """The input as it will be stored; raises ValueError (InputError) before any write."""
        ctx = coerce_context(context)
        models = self.handover_models
        if models is not None and payload is not None and models.uses_context_model():
            try:
                model_from_string(ctx.model, profiles=models.profiles)
            except Exception as exc:  # noqa: BLE001 - any reason the model cannot be made
                raise ValueError(
                    f"the context's model {ctx.model!r} cannot be used: "
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                ) from None
        return check_input(
            payload, max_tokens=ctx.max_input_tokens, counter=token_counter(ctx.model)
        )

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        checked = self.checked_input(input, kwargs.get("context"))
        with one_writer(self.checkpointer, config):
            yield from super().stream(checked, config, **kwargs)

    async def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        # the checks read files (token vocabularies, the environment): off the event loop
        checked = await asyncio.to_thread(self.checked_input, input, kwargs.get("context"))
        async with one_writer_async(self.checkpointer, config):
            async for chunk in super().astream(checked, config, **kwargs):
                yield chunk
