"""Benchmark: per-turn graph overhead and the tokens a specialist receives.

    .venv/bin/python bench/bench_graph.py

1. Per-turn overhead: 200 user turns on one thread with the SQLite checkpointer
   (durability="sync") and a zero-latency model, so the time is the graph's own
   (routing, state, checkpoint writes). Prints the median ms of turns 1-10 and
   191-200 and their ratio.
2. Tokens: a conversation of N turns with the orchestrator, then a handover;
   the specialist's whole request (system prompt + package + its turns) against
   the full history's tokens, for N = 10, 50, 100, 200.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

from specialist_handover.graph import build_graph  # noqa: E402
from specialist_handover.graph.checkpointers import sqlite_checkpointer  # noqa: E402
from specialist_handover.nodes.models.offline import OfflineChatModel  # noqa: E402
from specialist_handover.state import HandoverContext, TokenCounter  # noqa: E402


class ZeroLatencyModel(BaseChatModel):
    """Answers instantly with a fixed reply; no tool calls."""

    @property
    def _llm_type(self) -> str:
        return "zero-latency"

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


class CountingOfflineModel(OfflineChatModel):
    """The offline model, keeping the last request it received."""

    last_request: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        CountingOfflineModel.last_request = list(messages)
        return super()._generate(messages, stop, run_manager, **kwargs)


def per_turn_overhead(turns: int = 200) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = HandoverContext(project_root=tmp, model="offline")
        graph = build_graph(
            checkpointer=sqlite_checkpointer(f"{tmp}/cp.sqlite"), model=ZeroLatencyModel()
        )
        config = {"configurable": {"thread_id": "bench"}}
        times = []
        for i in range(turns):
            start = time.perf_counter()
            graph.invoke(
                {"messages": [HumanMessage(f"turn {i}: a short user message about the plan")]},
                config,
                context=ctx,
                durability="sync",
            )
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[:10]), statistics.median(times[-10:])


def specialist_tokens(turns: int, counter: TokenCounter) -> tuple[int, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = HandoverContext(project_root=tmp, model="offline")
        from langgraph.checkpoint.memory import InMemorySaver

        graph = build_graph(model=CountingOfflineModel(), checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "bench"}}
        for i in range(turns - 1):
            graph.invoke(
                {
                    "messages": [
                        HumanMessage(
                            f"Note {i}: we keep refining the product plan, the team roles and the budget for quarter {i % 4 + 1}."
                        )
                    ]
                },
                config,
                context=ctx,
            )
        graph.invoke(
            {
                "messages": [
                    HumanMessage("Please design the landing page hero with bold typography.")
                ]
            },
            config,
            context=ctx,
        )
        values = graph.get_state(config).values
        request = CountingOfflineModel.last_request
        return (
            counter.count_messages(request),
            values["handover"]["estimated_tokens"],
            counter.count_messages(values["messages"]),
        )


def main() -> int:
    counter = TokenCounter()
    first, last = per_turn_overhead()
    print("Per-turn overhead, zero-latency model, SQLite checkpointer, durability=sync")
    print(f"  median ms, turns 1-10:    {first:7.2f}")
    print(f"  median ms, turns 191-200: {last:7.2f}")
    print(f"  ratio 200/10:             {last / first:7.2f}")
    print()
    print("Tokens the specialist receives vs the full history (o200k_base)")
    print(
        f"  {'turns':>5}  {'specialist request':>18}  {'package':>7}  {'full history':>12}  {'share':>6}"
    )
    for n in (10, 50, 100, 200):
        request, package, history = specialist_tokens(n, counter)
        print(f"  {n:>5}  {request:>18}  {package:>7}  {history:>12}  {request / history:>6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
