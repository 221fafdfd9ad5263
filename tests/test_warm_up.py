"""`graph.warm_up()`: what a first run would build, built at start instead.

The offline model routes by an index of every profile's example requests, built the
first time the orchestrator is asked (about half a second for the built-ins). The
terminal and the served graph call `warm_up()` at start, so the first turn is quick.
"""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import Profile, build_graph
from specialist_handover.graph.turns import run_turn
from specialist_handover.nodes.models.offline import examples, index


def _builds() -> tuple[int, int]:
    return examples._cached.cache_info().misses, index._cached_index.cache_info().misses


def test_after_warm_up_the_first_turn_builds_no_router_index(tmp_path):
    own = Profile(
        name="warm_up_checker",
        description="Checks that the router was warmed up before the first turn.",
        keywords=("warm-up check",),
        prompt="You check warm-ups.",
    )
    # a profile set no other test has: a cold index
    graph = build_graph(profiles=[own], checkpointer=InMemorySaver())
    before = _builds()
    assert graph.warm_up() == ["OfflineChatModel"]
    warmed = _builds()
    assert warmed[0] == before[0] + 1 and warmed[1] == before[1] + 1
    assert graph.warm_up() == ["OfflineChatModel"] and _builds() == warmed  # built once
    reply = run_turn(
        graph,
        "Please design the landing page hero with bold typography.",
        thread_id="t",
        context={"project_root": str(tmp_path), "model": "offline"},
    )
    assert reply and _builds() == warmed  # the first turn routed on the warmed index


def test_models_without_a_warm_up_are_left_alone():
    model = GenericFakeChatModel(messages=iter([AIMessage("hi")]))
    assert build_graph(model=model).warm_up() == []
    # a context whose model cannot be made is no error: the run reports it
    assert build_graph().warm_up({"model": "nosuch:model"}) == []


def test_after_warm_up_no_agent_converts_its_tools_in_the_first_turn(tmp_path, monkeypatch):
    from specialist_handover.nodes.agents import middleware

    converted: list[str] = []
    convert = middleware.convert_to_openai_tool

    def counting(tool):  # type: ignore[no-untyped-def]
        converted.append(getattr(tool, "name", "?"))
        return convert(tool)

    monkeypatch.setattr(middleware, "convert_to_openai_tool", counting)
    context = {"project_root": str(tmp_path), "model": "offline"}
    text = "Please design the landing page hero with bold typography."

    cold = build_graph(checkpointer=InMemorySaver())
    run_turn(cold, text, thread_id="t", context=context)
    assert "handover_to_specialist" in converted  # without warm_up: in the first turn

    warm = build_graph(checkpointer=InMemorySaver())
    converted.clear()
    warm.warm_up()
    assert "handover_to_specialist" in converted and "return_to_orchestrator" in converted
    converted.clear()
    run_turn(warm, text, thread_id="t", context=context)
    assert converted == []
    # the graph's copies (with_config) keep what warm_up prepares
    assert warm.with_config(tags=["x"]).handover_warmers == warm.handover_warmers
