"""Every agent is a LangGraph agent: a subgraph with a model step and a tool step.

Its loop is drawn by `get_graph(xray=True)`, its tool calls stream with
`subgraphs=True`, each model call and each tool run is its own checkpoint, and
its requests stay bounded. No production module depends on the offline model,
which learns its role from what it is bound to and from the package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.specialists import builtin_profiles
from tests.support.graphs import REQUESTS, say, state_of
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    check_tool_history,
    specialist_tools,
)

REPO = Path(__file__).resolve().parents[1]
PROFILES = builtin_profiles()


@tool
def count_words(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


def test_xray_drawing_shows_each_agents_model_and_tool_loop():
    drawing = build_graph().get_graph(xray=True).draw_mermaid()
    for agent in ["orchestrator", *PROFILES.specialists]:
        assert f"{agent}\\3amodel" in drawing, agent
        assert f"{agent}\\3atools" in drawing, agent
        assert f"{agent}\\3amodel -.-> {agent}\\3atools;" in drawing
        assert f"{agent}\\3atools -.-> {agent}\\3amodel;" in drawing


def test_flat_drawing_still_shows_every_specialist_as_one_node():
    nodes = set(build_graph().get_graph().nodes)
    consults = {"consult", "consultant", "consult_answers"}
    assert nodes == {
        "__start__",
        "__end__",
        "orchestrator",
        "handover",
        *consults,
        *PROFILES.specialists,
    }


def counting_specialist(*steps, checkpointer=None):  # type: ignore[no-untyped-def]
    """A graph whose orchestrator hands over to test_debug_engineer, which then plays `steps`."""
    model = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="test_debug_engineer",
                topic="flaky",
                summary="s",
                handover_reason="r",
            ),
            *steps,
        ]
    )
    return build_graph(
        checkpointer=checkpointer or InMemorySaver(),
        model=model,
        tools={"test_debug_engineer": [count_words]},
    )


def test_tool_calls_and_results_stream_as_updates_of_the_agents_subgraph(ctx):
    graph = counting_specialist(
        ai_call("count_words", text="one two three"), AIMessage("It has three words.")
    )
    seen = []
    for namespace, chunk in graph.stream(
        {"messages": [HumanMessage("Count the words please.")]},
        {"configurable": {"thread_id": "s"}},
        context=ctx,
        stream_mode="updates",
        subgraphs=True,
        durability="sync",
    ):
        for node, update in chunk.items():
            for message in (update or {}).get("messages") or []:
                seen.append((namespace[0].split(":")[0] if namespace else "", node, message))
    calls = [
        (ns, node)
        for ns, node, m in seen
        if isinstance(m, AIMessage) and m.tool_calls and m.tool_calls[0]["name"] == "count_words"
    ]
    results = [
        (ns, node, m.content)
        for ns, node, m in seen
        if isinstance(m, ToolMessage) and m.name == "count_words"
    ]
    assert ("test_debug_engineer", "model") in calls
    assert ("test_debug_engineer", "tools", "3 words") in results


def test_each_model_call_and_each_tool_run_is_its_own_checkpoint(ctx):
    saver = InMemorySaver()
    graph = counting_specialist(
        ai_call("count_words", text="a b"), AIMessage("Two words."), checkpointer=saver
    )
    say(graph, "Count please.", ctx, thread="c")
    loop = [
        c
        for c in saver.list({"configurable": {"thread_id": "c"}})
        if c.config["configurable"]["checkpoint_ns"].startswith("test_debug_engineer:")
    ]
    loop.sort(key=lambda c: c.metadata["step"])
    # input, then one checkpoint after each step: model, tools, model (and the end)
    assert [c.metadata["source"] for c in loop][:4] == ["input", "loop", "loop", "loop"]
    writes = [sorted({w[1] for w in c.pending_writes or []}) for c in loop[1:]]
    model_steps = [w for w in writes if "model_calls" in w]
    tool_steps = [w for w in writes if "branch:to:model" in w and "model_calls" not in w]
    assert len(model_steps) == 2 and len(tool_steps) == 1, writes


def test_max_turns_is_a_per_activation_limit_with_a_clear_message(ctx):
    loop = ScriptedChatModel(fallback=lambda _m: ai_call("count_words", text="again"))
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "default": ScriptedChatModel(
                script=[
                    ai_call(
                        "handover_to_specialist",
                        specialist_profile="test_debug_engineer",
                        topic="t",
                        summary="s",
                        handover_reason="r",
                    )
                ]
            ),
            "test_debug_engineer": loop,
        },
        tools={"test_debug_engineer": [count_words]},
    )
    values = say(graph, "go", {**ctx, "max_turns": 4}, thread="m")
    last = values["messages"][-1]
    assert last.response_metadata.get("max_turns_reached")
    assert "stopped after 4 model calls in a row" in last.content
    assert len(loop.requests) == 4
    # a new user turn is a new activation: it may call the model max_turns times again
    say(graph, "try again", {**ctx, "max_turns": 4}, thread="m")
    assert len(loop.requests) == 8
    check_tool_history(state_of(graph, "m")["messages"])


def test_a_tool_that_raises_or_an_unknown_tool_is_an_error_result_and_the_agent_goes_on(ctx):
    @tool
    def broken(x: str) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    model = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="test_debug_engineer",
                topic="t",
                summary="s",
                handover_reason="r",
            ),
            AIMessage(
                "",
                tool_calls=[
                    {"name": "broken", "args": {"x": "1"}, "id": "call_b"},
                    {"name": "no_such_tool", "args": {}, "id": "call_u"},
                ],
            ),
            AIMessage("I saw both errors."),
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(), model=model, tools={"test_debug_engineer": [broken]}
    )
    values = say(graph, "go", ctx, thread="e")
    answers = {m.tool_call_id: m for m in values["messages"] if isinstance(m, ToolMessage)}
    assert answers["call_b"].content == "ERROR: broken failed: RuntimeError: disk on fire"
    assert answers["call_u"].content.startswith("ERROR: unknown tool 'no_such_tool'.")
    assert answers["call_b"].status == answers["call_u"].status == "error"
    assert values["messages"][-1].content == "I saw both errors."
    check_tool_history(values["messages"])


def test_a_specialists_request_stays_the_package_plus_its_own_turns(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    for i in range(12):
        say(graph, f"Background note {i}: the service handles {i} requests.", ctx, thread="b")
    say(graph, REQUESTS["frontend_designer"], ctx, thread="b")
    say(graph, "Make the button bigger.", ctx, thread="b")
    last = model.requests[-1]
    texts = [str(m.content) for m in last]
    assert not any("Background note 3:" in t for t in texts[2:])  # only inside the package
    assert "HANDOVER PACKAGE (stage 1)" in texts[1]
    assert texts[-1] == "Make the button bigger."


def test_the_offline_model_takes_its_role_from_the_package_not_the_prompt():
    package = (
        "🖌️ [frontend designer] HANDOVER PACKAGE (stage 1)\nSpecialist: frontend_designer\n"
        "Topic: hero\n\n## Recent turns (verbatim, oldest first)\n1. user: Design the hero.\n"
    )
    misleading = "You are the hacker (profile `hacker`)."
    from langchain_core.messages import SystemMessage

    reply = (
        OfflineChatModel()
        .bind_tools(specialist_tools("frontend_designer"))
        .invoke([SystemMessage(misleading), HumanMessage(package, name="handover")])
    )
    assert reply.name == "frontend_designer"
    assert "I'm the frontend designer" in reply.content


def test_the_offline_model_chooses_only_among_the_specialists_it_is_offered():
    from tests.support.models import orchestrator_tools

    tools = orchestrator_tools()
    enum = tools[0]["function"]["parameters"]["properties"]["specialist_profile"]["enum"]
    enum.remove("frontend_designer")
    reply = (
        OfflineChatModel()
        .bind_tools(tools)
        .invoke([HumanMessage("Please design the landing page hero with bold typography.")])
    )
    assert not reply.tool_calls or reply.tool_calls[0]["args"]["specialist_profile"] != (
        "frontend_designer"
    )


def test_no_production_module_imports_the_offline_model():
    offenders = []
    for path in REPO.glob("[gns]*/**/*.py"):
        if "offline" in path.relative_to(REPO).parts[:-1] or path.name == "offline.py":
            continue  # the offline model's own package
        text = path.read_text(encoding="utf-8")
        if re.search(r"OfflineChatModel|from \.offline import|models\.offline", text):
            offenders.append(str(path.relative_to(REPO)))
    # model resolution makes it by name ("offline"), like init_chat_model makes the others
    assert offenders == ["nodes/models/resolve.py"], offenders


def test_a_graph_on_another_model_never_loads_the_offline_model(tmp_path):
    script = (
        "import sys\n"
        "from langchain_core.language_models.fake_chat_models import FakeListChatModel\n"
        "from specialist_handover import build_graph\n"
        "class Model(FakeListChatModel):\n"
        "    def bind_tools(self, tools, **kwargs):\n"
        "        return self\n"
        "g = build_graph(model=Model(responses=['hello']))\n"
        f"out = g.invoke({{'messages': [('user', 'hi')]}}, context={{'project_root': {str(tmp_path)!r}}})\n"
        "assert out['messages'][-1].content == 'hello'\n"
        "print('offline loaded:', 'specialist_handover.nodes.models.offline' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "offline loaded: False" in done.stdout


def test_async_runs_with_an_async_checkpointer(ctx, tmp_path):
    """`ainvoke`/`astream` on AsyncSqliteSaver: the agents' loops run and checkpoint as well."""
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def run() -> tuple[dict, list]:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as saver:
            graph = counting_specialist(
                ai_call("count_words", text="x y z"), AIMessage("Three."), checkpointer=saver
            )
            config = {"configurable": {"thread_id": "a"}}
            steps = [
                (ns[0].split(":")[0] if ns else "", list(chunk))
                async for ns, chunk in graph.astream(
                    {"messages": [HumanMessage("count")]},
                    config,
                    context=ctx,
                    stream_mode="updates",
                    subgraphs=True,
                    durability="sync",
                )
            ]
            return (await graph.aget_state(config)).values, steps

    values, steps = asyncio.run(run())
    assert values["messages"][-1].content == "Three."
    assert ("test_debug_engineer", ["tools"]) in steps
    check_tool_history(values["messages"])


def test_the_model_step_waits_longer_after_each_failed_attempt_with_jitter():
    from specialist_handover.nodes.agents.middleware import backoff
    from specialist_handover.nodes.agents.retry import MODEL_RETRY

    assert MODEL_RETRY.jitter and MODEL_RETRY.backoff_factor > 1
    assert MODEL_RETRY.initial_interval >= 1
    first, third = [backoff(1) for _ in range(20)], [backoff(3) for _ in range(20)]
    assert min(first) >= 1 and min(third) >= 4 and len(set(first)) > 1  # grows, jittered
    assert max(backoff(50) for _ in range(20)) <= MODEL_RETRY.max_interval + 1  # capped
