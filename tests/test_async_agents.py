"""Async-native agents: async-only tools, models' `ainvoke`, the middleware's async hooks.

An async-only tool (a `StructuredTool` with only a coroutine, as every MCP tool from
langchain-mcp-adapters is) failed under `invoke` and `ainvoke` alike ("StructuredTool does
not support sync invocation"): the agent nodes were sync code calling `agent.invoke`. Now
the agent and consultant nodes run the agent's `ainvoke` under `ainvoke`, the middleware
has `awrap_model_call` / `awrap_tool_call`, and under `invoke` an async-only tool runs on a
loop of its own. `tests/test_serve_custom.py` serves one under `langgraph dev`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.nodes.tools.async_only import is_async_only, sync_capable
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history
from tests.test_consults import consult_call

LOOPS: list[int] = []


@tool
async def lookup(q: str) -> str:
    """Look something up."""
    LOOPS.append(id(asyncio.get_running_loop()))
    await asyncio.sleep(0)
    return f"found {q}"


class AsyncOnlyModel(ScriptedChatModel):
    """A scripted model whose sync path fails: only `ainvoke` can answer."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the sync path was used under ainvoke")

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        return super()._generate(messages, stop, run_manager, **kwargs)


def graph_with(model, tools=None):  # type: ignore[no-untyped-def]
    return build_graph(checkpointer=InMemorySaver(), model=model, tools=tools)


def tool_answers(values: dict) -> list[str]:
    return [str(m.content) for m in values["messages"] if isinstance(m, ToolMessage)]


def run(graph, text, ctx, how):  # type: ignore[no-untyped-def]
    payload = {"messages": [HumanMessage(text)]}
    config = {"configurable": {"thread_id": "a"}}
    if how == "invoke":
        return graph.invoke(payload, config, context=ctx)
    return asyncio.run(graph.ainvoke(payload, config, context=ctx))


def test_the_tool_is_async_only_as_mcp_tools_are():
    assert is_async_only(lookup)
    with pytest.raises(NotImplementedError):
        lookup.invoke({"q": "x"})


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_an_async_only_tool_works_under_invoke_and_ainvoke(ctx, how):
    model = ScriptedChatModel(script=[ai_call("lookup", q="x"), AIMessage("done")])
    values = run(graph_with(model, {"orchestrator": [lookup]}), "look up x", ctx, how)
    assert tool_answers(values) == ["found x"]
    check_tool_history(values["messages"])


def test_under_invoke_async_only_tools_share_one_loop_for_the_process():
    LOOPS.clear()
    capable = sync_capable(lookup)
    assert capable.invoke({"q": "a"}) == "found a" and capable.invoke({"q": "b"}) == "found b"
    threading.Thread(target=lambda: capable.invoke({"q": "c"})).start()
    asyncio.run(asyncio.sleep(0.05))
    assert len(set(LOOPS)) == 1  # what a tool keeps open (an MCP session) stays on one loop
    assert asyncio.run(capable.ainvoke({"q": "d"})) == "found d"  # awaited directly


def test_under_ainvoke_the_agents_use_their_models_async_path(ctx):
    model = AsyncOnlyModel(script=[ai_call("lookup", q="y"), AIMessage("done")])
    values = run(graph_with(model, {"orchestrator": [lookup]}), "look up y", ctx, "ainvoke")
    assert tool_answers(values) == ["found y"]
    assert values["messages"][-1].content == "done"


def test_under_ainvoke_consultants_use_their_models_async_path(ctx):
    model = AsyncOnlyModel(
        script=[consult_call(("solution_architect", "a?"), ("frontend_designer", "b?"))],
        fallback=lambda messages: AIMessage("my answer"),
    )
    values = run(graph_with(model), "Ask them both.", ctx, "ainvoke")
    (answers,) = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert answers.content.count("my answer") == 2


def test_under_ainvoke_a_transient_model_error_is_retried_without_blocking_the_loop(ctx):
    failures = [httpx.ConnectError("refused")]

    class FlakyAsyncModel(AsyncOnlyModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
            if failures:
                raise failures.pop()
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    model = FlakyAsyncModel(script=[AIMessage("fine")])
    values = run(graph_with(model), "hello", ctx, "ainvoke")
    assert values["messages"][-1].content == "fine" and not failures


def test_the_served_examples_tool_is_async_only_and_works_in_process(tmp_path):
    path = Path(__file__).resolve().parents[1] / "examples" / "serve_custom" / "graph.py"
    spec = importlib.util.spec_from_file_location("serve_custom_graph", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert isinstance(module.summarize_csv, StructuredTool) and is_async_only(module.summarize_csv)
