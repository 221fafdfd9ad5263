"""Bring your own: profiles, tools, per-specialist models and a store, per build.

Everything derives from the profiles of one `build_graph` call: the nodes, the
routing, the handover tool's enum, error suggestions, the terminal's listing
and the offline model's choice. Nothing is fixed at import time.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from specialist_handover import HandoverContext, Profile, ProfileFileError, build_graph
from specialist_handover.graph.cli import main
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.specialists import builtin_profiles, load_profile_dir, resolve_profiles
from specialist_handover.state import TokenCounter
from tests.support.graphs import say, state_of
from tests.support.models import (
    RecordingOfflineModel,
    ScriptedChatModel,
    ai_call,
    model_responder,
)
from tests.support.openai_server import OpenAICompatibleServer

REPO = Path(__file__).resolve().parents[1]
BUILTINS = builtin_profiles()

DATA_SCIENTIST = """---
name: data_scientist
emoji: "📊"
description: "Analyses data sets: statistics, dataset profiling, forecasts and charts."
keywords: [statistics, dataset, data analysis, forecast, regression]
---

You are the Data Scientist. You analyse data sets and explain what they show.
"""


@tool
def describe_dataset(name: str) -> str:
    """Describe a dataset: its rows, columns and missing values."""
    return f"{name}: 1200 rows, 8 columns, 3% missing values"


@pytest.fixture
def profile_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "my-profiles"
    folder.mkdir()
    (folder / "data_scientist.md").write_text(DATA_SCIENTIST, encoding="utf-8")
    return folder


def _enum(model) -> list[str]:  # type: ignore[no-untyped-def]
    tools = model.last_tools
    spec = next(t for t in tools if t["function"]["name"] == "handover_to_specialist")
    return spec["function"]["parameters"]["properties"]["specialist_profile"]["enum"]


class EnumRecorder(RecordingOfflineModel):
    """The offline model, keeping the tool schemas of its last request."""

    last_tools: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.last_tools = list(kwargs.get("tools") or [])
        return super()._generate(messages, stop, run_manager, **kwargs)


# --- profiles ---------------------------------------------------------------------------


def test_no_profiles_gives_the_thirteen_builtins():
    assert resolve_profiles(None) is BUILTINS
    assert len(BUILTINS) == 13
    graph_nodes = {"__start__", "__end__", "handover", "consult", "consultant", "consult_answers"}
    nodes = set(build_graph().get_graph().nodes) - graph_nodes
    assert nodes == {"orchestrator", *BUILTINS.specialists}


def test_a_folder_of_profile_files_adds_specialists_to_the_builtins(profile_dir, ctx):
    model = EnumRecorder(profiles=resolve_profiles(profile_dir))
    graph = build_graph(checkpointer=InMemorySaver(), profiles=profile_dir, model=model)
    assert "data_scientist" in graph.get_graph().nodes
    assert set(BUILTINS.specialists) <= set(graph.get_graph().nodes)
    values = say(graph, "Can you run a statistics check on the sales dataset?", ctx)
    assert values["active_agent"] == "data_scientist"
    reply = values["messages"][-1]
    assert reply.name == "data_scientist" and "I'm the data scientist" in reply.content
    assert reply.response_metadata["persona_marker"] == "[data scientist]"


def test_the_handover_tools_enum_and_descriptions_derive_from_this_builds_profiles(
    profile_dir, ctx
):
    model = EnumRecorder()
    build_graph(checkpointer=InMemorySaver(), profiles=profile_dir, model=model).invoke(
        {"messages": [("user", "hello")]}, {"configurable": {"thread_id": "e"}}, context=ctx
    )
    assert "data_scientist" in _enum(model)
    description = model.last_tools[0]["function"]["description"]
    assert "data_scientist: Analyses data sets" in description
    # another build, same process: the built-ins only
    other = EnumRecorder()
    build_graph(checkpointer=InMemorySaver(), model=other).invoke(
        {"messages": [("user", "hello")]}, {"configurable": {"thread_id": "e"}}, context=ctx
    )
    assert "data_scientist" not in _enum(other)


def test_profile_objects_are_added_and_a_same_named_one_replaces_the_builtin(ctx):
    mine = Profile(
        name="frontend_designer",
        emoji="🎨",
        description="Designs pages in our house style only.",
        keywords=("landing page", "hero"),
        prompt="You are our house Frontend Designer.",
    )
    analyst = Profile(
        name="data_scientist",
        description="Analyses data sets.",
        keywords=("statistics",),
        prompt="You are the Data Scientist.",
    )
    registry = resolve_profiles([mine, analyst])
    assert registry["frontend_designer"].emoji == "🎨"
    assert registry["frontend_designer"].marker == "[frontend designer]"
    assert len(registry) == 14
    model = RecordingOfflineModel(profiles=registry)
    graph = build_graph(checkpointer=InMemorySaver(), model=model, profiles=[mine, analyst])
    say(graph, "Please design the landing page hero.", ctx)
    prompts = [str(r[0].content) for r in model.requests if "house" in str(r[0].content)]
    assert prompts and prompts[0].startswith("You are our house Frontend Designer.")


def test_unknown_profile_errors_suggest_this_builds_profiles(profile_dir, ctx):
    script = [
        ai_call(
            "handover_to_specialist",
            specialist_profile="data_scientst",
            topic="t",
            summary="s",
            handover_reason="r",
        ),
        AIMessage("ok"),
    ]
    graph = build_graph(
        checkpointer=InMemorySaver(), profiles=profile_dir, model=ScriptedChatModel(script=script)
    )
    values = say(graph, "hi", ctx)
    refusal = next(m for m in values["messages"] if isinstance(m, ToolMessage))
    assert refusal.content.startswith(
        "ERROR: unknown specialist profile 'data_scientst'. Did you mean 'data_scientist'"
    )
    assert "data_scientist" in refusal.content.split("Known profiles: ")[1]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (DATA_SCIENTIST.replace('emoji: "📊"\n', ""), "missing emoji"),
        (
            DATA_SCIENTIST.replace("keywords: [statistics", "keywords: 7\nx: [statistics"),
            "keywords",
        ),
        (DATA_SCIENTIST.replace("name: data_scientist", "name: Data Scientist"), "name"),
        (DATA_SCIENTIST.replace("emoji:", "tools: [shell]\nemoji:"), "tools: unknown tool set"),
        (DATA_SCIENTIST.replace("emoji:", "colour: red\nemoji:"), "unknown field(s) colour"),
        (DATA_SCIENTIST.replace("name: data_scientist", "name: orchestrator"), "name"),
        ("no front matter", "must start with '---'"),
    ],
)
def test_a_malformed_profile_file_raises_profile_file_error_naming_file_and_field(
    profile_dir, text, field
):
    path = profile_dir / "data_scientist.md"
    path.write_text(text, encoding="utf-8")
    if "orchestrator" in text and "name: orchestrator" in text:
        path.rename(profile_dir / "orchestrator.md")
        path = profile_dir / "orchestrator.md"
    with pytest.raises(ProfileFileError) as info:
        build_graph(profiles=profile_dir)
    assert str(info.value).startswith(str(path)), info.value
    assert field in str(info.value)


def test_a_folder_that_does_not_exist_is_a_profile_file_error(tmp_path):
    with pytest.raises(ProfileFileError, match="is not a folder of profile files"):
        build_graph(profiles=tmp_path / "missing")


@pytest.mark.parametrize("bad", [42, [42], {"a": 1}])
def test_profiles_of_the_wrong_kind_are_a_type_error(bad):
    with pytest.raises(TypeError, match="profile"):
        build_graph(profiles=bad)


def test_a_string_among_profiles_is_a_folder_and_a_missing_one_says_so():
    with pytest.raises(ProfileFileError, match="not a profile: is not a folder of profile files"):
        build_graph(profiles=["not a profile"])


def test_terminal_lists_this_builds_profiles(profile_dir, monkeypatch):
    out = io.StringIO()
    assert main(["profiles", "--profiles", str(profile_dir)], out=out) == 0
    listing = out.getvalue()
    assert "14 profiles (13 specialists)" in listing
    assert "📊 [data scientist]  data_scientist (specialist)" in listing
    assert "codebase_explorer (specialist)  tools: workspace" in listing
    monkeypatch.setenv("HANDOVER_PROFILES", str(profile_dir))
    out = io.StringIO()
    assert main(["profiles"], out=out) == 0
    assert "data_scientist" in out.getvalue()


def test_terminal_runs_a_users_specialist_from_handover_profiles(
    profile_dir, tmp_path, monkeypatch
):
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.setenv("HANDOVER_PROFILES", str(profile_dir))
    out = io.StringIO()
    code = main(
        [
            "run",
            "A statistics summary of the churn dataset, please.",
            "--thread",
            "u",
            "--project-root",
            str(root),
        ],
        out=out,
    )
    assert code == 0
    assert "🔄 Handoff to: data_scientist" in out.getvalue()
    assert "📊 [data scientist] I'm the data scientist" in out.getvalue()


def test_a_malformed_profile_folder_is_a_terminal_error_not_a_traceback(profile_dir, capsys):
    (profile_dir / "data_scientist.md").write_text("nonsense", encoding="utf-8")
    assert main(["profiles", "--profiles", str(profile_dir)], out=io.StringIO()) == 2
    assert "data_scientist.md: must start with '---'" in capsys.readouterr().err


def test_the_served_graph_reads_handover_profiles(profile_dir):
    """langgraph.json's file, loaded by path as the LangGraph server loads it."""
    served = json.loads((REPO / "langgraph.json").read_text())["graphs"]["orchestrator"]
    path = served.split(":")[0]
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('served_graph', {str(REPO / path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(sorted(module.graph.get_graph().nodes))\n"
    )
    env = {**os.environ, "HANDOVER_PROFILES": str(profile_dir)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=profile_dir,
    )
    assert done.returncode == 0, done.stderr
    assert "'data_scientist'" in done.stdout


# --- tools ------------------------------------------------------------------------------


def test_a_users_tool_is_given_to_that_agent_only(ctx):
    recorder = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="release_auditor",
                topic="t",
                summary="s",
                handover_reason="r",
            ),
            AIMessage(
                "", tool_calls=[{"name": "describe_dataset", "args": {"name": "sales"}, "id": "c1"}]
            ),
            AIMessage("Sales has 1200 rows."),
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(), model=recorder, tools={"release_auditor": [describe_dataset]}
    )
    values = say(graph, "audit", ctx)
    orchestrator_tools, specialist_tools = recorder.bound_tools[0], recorder.bound_tools[1]
    assert "describe_dataset" not in orchestrator_tools
    assert "describe_dataset" in specialist_tools
    assert {
        "return_to_orchestrator",
        "request_full_history",
        "read_briefing",
        "list_files",
        "read_file",
        "search_files",
    } <= set(specialist_tools)
    result = next(
        m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "describe_dataset"
    )
    assert result.content == "sales: 1200 rows, 8 columns, 3% missing values"
    assert values["messages"][-1].content == "Sales has 1200 rows."


def test_profiles_without_a_tool_set_do_not_get_workspace_tools(ctx):
    recorder = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="frontend_designer",
                topic="t",
                summary="s",
                handover_reason="r",
            ),
            AIMessage("ok"),
        ]
    )
    say(build_graph(checkpointer=InMemorySaver(), model=recorder), "hi", ctx)
    assert "read_file" not in recorder.bound_tools[1]
    assert "return_to_orchestrator" in recorder.bound_tools[1]


@pytest.mark.parametrize(
    ("tools", "error", "match"),
    [
        (
            {"data_wizard": [describe_dataset]},
            ValueError,
            "tools\\['data_wizard'\\] names no profile",
        ),
        ({"hacker": describe_dataset}, TypeError, "must be a list of LangChain tools"),
        ({"hacker": [len]}, TypeError, "tools\\['hacker'\\]\\[0\\] must be a LangChain tool"),
        ([describe_dataset], TypeError, "tools must be a mapping"),
    ],
)
def test_bad_tools_are_refused_naming_the_entry(tools, error, match):
    with pytest.raises(error, match=match):
        build_graph(tools=tools)


def test_a_users_tool_may_not_take_a_name_the_graph_gives_the_agent():
    @tool
    def read_file(path: str) -> str:
        """Mine."""
        return path

    with pytest.raises(ValueError, match="a tool named 'read_file' is already given"):
        build_graph(tools={"codebase_explorer": [read_file]})
    build_graph(tools={"frontend_designer": [read_file]})  # no workspace set there: fine


# --- models -----------------------------------------------------------------------------


def test_a_model_mapping_key_that_names_no_profile_is_a_value_error():
    with pytest.raises(ValueError, match="model\\['frontend_desiner'\\] names no profile"):
        build_graph(model={"frontend_desiner": OfflineChatModel()})


def test_each_specialist_uses_its_own_model_and_the_default_for_the_rest(ctx):
    designer = ScriptedChatModel(script=[AIMessage("hero drafted")])
    default = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="frontend_designer",
                topic="t",
                summary="s",
                handover_reason="r",
            ),
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(), model={"default": default, "frontend_designer": designer}
    )
    values = say(graph, "design", ctx)
    assert values["messages"][-1].content == "hero drafted"
    assert len(designer.requests) == 1 and len(default.requests) == 1


class NamedScripted(ScriptedChatModel):
    """A scripted model that says which model it is, as LangChain integrations do."""

    model_name: str = "gpt-4"


def _handover_with(designer_model, ctx):  # type: ignore[no-untyped-def]
    orchestrator = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="frontend_designer",
                topic="hero",
                summary="A bold hero with émojis 🚀 and ünïcode — «quoted».",
                handover_reason="design",
            ),
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "frontend_designer": designer_model},
    )
    say(graph, "design", ctx)
    return state_of(graph)["handover"]


def test_token_counts_follow_the_model_the_agent_actually_uses(ctx):
    gpt4 = _handover_with(NamedScripted(script=[AIMessage("ok")]), ctx)
    assert gpt4["estimated_tokens"] == TokenCounter("cl100k_base").count_text(gpt4["rendered"])
    other = _handover_with(ScriptedChatModel(script=[AIMessage("ok")]), ctx)
    assert other["estimated_tokens"] == TokenCounter("o200k_base").count_text(other["rendered"])
    assert gpt4["estimated_tokens"] != other["estimated_tokens"]


def test_the_store_is_passed_to_compile():
    store = InMemoryStore()
    assert build_graph(store=store).store is store
    with pytest.raises(TypeError, match="store must be a LangGraph store"):
        build_graph(store={"not": "a store"})


# --- over HTTP ----------------------------------------------------------------------------


def test_your_own_profile_and_tool_through_chat_openai_over_http(profile_dir, tmp_path):
    """A user's specialist and tool, with every model request going over HTTP."""
    registry = resolve_profiles(profile_dir)
    offline = OfflineChatModel(profiles=registry)

    responder = model_responder(offline)

    root = tmp_path / "project"
    root.mkdir()
    with OpenAICompatibleServer(responder) as server:
        model = ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)
        graph = build_graph(
            checkpointer=InMemorySaver(),
            model=model,
            profiles=profile_dir,
            tools={"data_scientist": [describe_dataset]},
        )
        values = graph.invoke(
            {
                "messages": [
                    HumanMessage(
                        'Please run a statistics check: describe dataset "sales.csv" for me.'
                    )
                ]
            },
            {"configurable": {"thread_id": "http"}},
            context=HandoverContext(project_root=str(root)),
            durability="sync",
        )
        assert not server.rejected, server.rejected
        bodies = list(server.requests)
    assert values["active_agent"] == "data_scientist"
    specialist = [
        b
        for b in bodies
        if any(t["function"]["name"] == "describe_dataset" for t in b.get("tools", []))
    ]
    assert len(specialist) == 2  # the call, then the answer with the tool's result
    assert specialist[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": specialist[1]["messages"][-2]["tool_calls"][0]["id"],
        "content": "sales.csv: 1200 rows, 8 columns, 3% missing values",
    }
    final = values["messages"][-1]
    assert final.name == "data_scientist"
    assert "sales.csv: 1200 rows" in final.content


# --- profiles and keys, more ways -------------------------------------------------------


def test_a_folder_and_profile_objects_together(profile_dir):
    extra = Profile(
        name="release_writer", emoji="📝", description="Writes release notes.", prompt="Write."
    )
    nodes = build_graph(profiles=[profile_dir, extra]).get_graph().nodes
    assert "data_scientist" in nodes and "release_writer" in nodes


def test_profile_from_file_reads_one_file_with_its_examples(profile_dir):
    profile = Profile.from_file(profile_dir / "data_scientist.md")
    assert profile.name == "data_scientist" and profile.source.endswith("data_scientist.md")


def test_a_profile_names_its_own_model_in_front_matter(tmp_path, ctx):
    (tmp_path / "scout.md").write_text(
        '---\nname: scout\nemoji: "🔭"\ndescription: "Scouts."\nmodel: offline\n---\n\nScout.\n',
        encoding="utf-8",
    )
    (profile,) = load_profile_dir(tmp_path)
    assert profile.model == "offline"
    graph = build_graph(profiles=tmp_path, model=ScriptedChatModel(script=[AIMessage("hi")]))
    models = graph.handover_models
    assert models.fixed("scout").__class__.__name__ == "OfflineChatModel"  # its own
    assert isinstance(models.fixed("hacker"), ScriptedChatModel)  # the build's for the rest
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "scout.md").write_text(
        (tmp_path / "scout.md").read_text().replace("model: offline", "model: nosuch:model"),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="profile scout's model 'nosuch:model' cannot be used"):
        build_graph(profiles=bad).invoke({"messages": [("user", "hi")]}, context=ctx)


def test_plain_functions_are_tools(ctx):
    def count_letters(text: str) -> str:
        """Count the letters of a text."""
        return f"{sum(c.isalpha() for c in text)} letters"

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={
            "default": ScriptedChatModel(
                script=[
                    ai_call(
                        "handover_to_specialist",
                        specialist_profile="hacker",
                        topic="t",
                        summary="s",
                        handover_reason="r",
                    )
                ]
            ),
            "hacker": ScriptedChatModel(
                script=[ai_call("count_letters", text="ab1"), AIMessage("Two.")]
            ),
        },
        tools={"hacker": [count_letters]},
    )
    values = graph.invoke(
        {"messages": [("user", "count")]}, {"configurable": {"thread_id": "f"}}, context=ctx
    )
    assert any(m.content == "2 letters" for m in values["messages"] if m.type == "tool")


def test_the_orchestrator_node_name_is_a_key_and_a_typo_gets_a_did_you_mean():
    graph = build_graph(model={"orchestrator": ScriptedChatModel()})
    assert isinstance(graph.handover_models.fixed("a0_software_orchestrator"), ScriptedChatModel)
    with pytest.raises(ValueError, match="Did you mean 'frontend_designer'"):
        build_graph(tools={"frontend_desginer": []})
