"""Your own agents: a `create_agent(...)` (or any compiled graph with `messages`) in a profile's place.

Over HTTP, every model is `ChatOpenAI` talking to the local OpenAI-compatible
server, whose responder tells the agents apart by the tools they are offered:
- a user's specialist (`release_writer`, knowing none of our tools) calls its own
  `word_count` tool, then answers;
- an orchestrator (offered `handover_to_specialist` but not
  `return_to_orchestrator`) hands release work over, and answers everything else;
- a specialist holding our tools answers, or hands back when asked to go back.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from specialist_handover import Profile, build_graph, handover_tools
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history
from tests.support.openai_server import OpenAICompatibleServer

REPO = Path(__file__).resolve().parents[1]
WRITER = Profile(
    name="release_writer",
    emoji="📝",
    description="Writes release notes and changelog entries from merged work.",
    prompt="(a user's own agent takes this profile's place)",
)
WRITER_PROMPT = "You are the release notes writer. Count the words of every draft."


@tool
def word_count(text: str) -> str:
    """Count the words of a draft."""
    return f"{len(text.split())} words"


def _call(name: str, args: dict) -> dict:
    return {
        "id": f"call_{name}_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


class Team:
    """The responder for every agent, by the tools it is offered (see the module docstring)."""

    def __init__(self, condition: str = "after_reply", target: str = "release_writer") -> None:
        self.condition, self.target = condition, target
        self.asked: list[tuple[str, list[dict]]] = []

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        names = {t["function"]["name"] for t in tools}
        last = messages[-1]
        text = str(last.get("content") or "")
        if "word_count" in names:
            role = "writer"
            reply = (
                {"content": f"Release notes drafted ({text})."}
                if last["role"] == "tool"
                else {"content": None, "tool_calls": [_call("word_count", {"text": "a b c"})]}
            )
        elif "return_to_orchestrator" in names:
            role = "specialist"
            if "go back" in text and last.get("name") != "handover":
                summary = {"summary": "Drafted the hero."}
                reply = {"content": None, "tool_calls": [_call("return_to_orchestrator", summary)]}
            else:
                reply = {"content": "Hero designed: bold type, one call to action."}
        else:
            role = "orchestrator"
            if last["role"] == "user" and ("release notes" in text or "design" in text):
                args = {
                    "specialist_profile": self.target,
                    "topic": "release-2-0",
                    "summary": "The user wants the 2.0 release notes.",
                    "handover_reason": "release notes are this specialist's work",
                    "return_condition": self.condition,
                }
                reply = {"content": None, "tool_calls": [_call("handover_to_specialist", args)]}
            elif last["role"] == "tool":
                reply = {"content": "The specialist has it."}
            else:
                reply = {"content": f"Noted ({len(messages)} messages)."}
        self.asked.append((role, messages))
        return reply

    def requests_of(self, role: str) -> list[list[dict]]:
        return [messages for who, messages in self.asked if who == role]


def chat_model(server: OpenAICompatibleServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)


def writer_agent(server: OpenAICompatibleServer, *tools):  # type: ignore[no-untyped-def]
    return create_agent(chat_model(server), [word_count, *tools], system_prompt=WRITER_PROMPT)


@pytest.mark.parametrize("condition", ["after_reply", "task_complete", "user_request"])
def test_your_create_agent_specialist_takes_a_handover_sees_the_package_and_hands_back(
    ctx, condition
):
    team = Team(condition)
    with OpenAICompatibleServer(team) as server:
        graph = build_graph(
            checkpointer=InMemorySaver(),
            model=chat_model(server),
            profiles=[WRITER],
            agents={"release_writer": writer_agent(server)},
        )
        for i in range(8):
            say(graph, f"Background note {i}: the codename is BLUEBIRD-{i}.", ctx)
        before = len(state_of(graph)["messages"])
        values = say(graph, "Please write the release notes for 2.0.", ctx)
        assert not server.rejected, server.rejected

        (first, second) = team.requests_of("writer")  # its tool call, then its answer
        assert first[0] == {"role": "system", "content": WRITER_PROMPT}
        assert first[1]["role"] == "user" and first[1]["name"] == "handover"
        assert "HANDOVER PACKAGE (stage 1)" in first[1]["content"]
        assert "Specialist: release_writer" in first[1]["content"]
        assert len(first) == 2  # the package: never the older history
        # an older turn reaches it only through the package's thread ledger or earlier turns
        package = first[1]["content"]
        verbatim = package.split("## Recent turns")[1].split("## Thread ledger")[0]
        assert "BLUEBIRD-0" not in verbatim
        assert "BLUEBIRD-0" not in json.dumps(first[2:]) + json.dumps(second[2:])
        assert second[2:4] == [  # only its own turns follow the package
            {"role": "assistant", "content": None, "tool_calls": second[2]["tool_calls"]},
            {
                "role": "tool",
                "tool_call_id": second[2]["tool_calls"][0]["id"],
                "content": "3 words",
            },
        ]

        added = values["messages"][before:]
        check_tool_history(values["messages"])
        assert [type(m).__name__ for m in added][:5] == [
            "HumanMessage",
            "AIMessage",  # the orchestrator's handover call
            "ToolMessage",  # answered by the handover node
            "AIMessage",  # the writer's word_count call
            "ToolMessage",
        ]
        writer = [m for m in added if isinstance(m, AIMessage) and m.name == "release_writer"]
        assert writer[-1].content == "Release notes drafted (3 words)."
        assert writer[-1].response_metadata["persona_marker"] == "[release writer]"
        assert not any("HANDOVER PACKAGE" in str(m.content) for m in values["messages"])

        if condition == "user_request":  # it keeps the conversation: the next turn goes to it
            assert values["active_agent"] == "release_writer"
            again = say(graph, "Add a line about the new API.", ctx)
            assert again["active_agent"] == "release_writer"
            latest = team.requests_of("writer")[-2]
            assert latest[1]["name"] == "handover" and latest[-1]["content"] == (
                "Add a line about the new API."
            )
            assert "BLUEBIRD-0" not in json.dumps(latest[2:])  # the package is the same one
            assert not server.rejected, server.rejected
            return
        assert values["active_agent"] == "orchestrator"
        trail = state_of(graph)["handovers"]
        assert trail[-1]["kind"] == "return" and trail[-1]["reason"] == f"{condition}: replied"
        *_, answer, last = values["messages"]
        if condition == "after_reply":  # the writer's answer, then the note who holds it now
            assert answer.name == "release_writer" and last.response_metadata["for_readers"]
        assert last.name == "orchestrator"  # task_complete: it answers in the same run


def test_your_create_agent_orchestrator_with_handover_tools_hands_over(ctx):
    team = Team(condition="user_request", target="frontend_designer")
    with OpenAICompatibleServer(team) as server:
        mine = create_agent(
            chat_model(server),
            handover_tools("a0_software_orchestrator"),
            system_prompt="You route requests to the right specialist.",
        )
        graph = build_graph(
            checkpointer=InMemorySaver(),
            model=chat_model(server),
            agents={"a0_software_orchestrator": mine},
        )
        values = say(graph, "Please design the landing page hero.", ctx)
        assert not server.rejected, server.rejected
    asked = team.requests_of("orchestrator")[0]
    assert asked[0]["content"] == "You route requests to the right specialist."
    assert values["active_agent"] == "frontend_designer"
    handover = state_of(graph)["handover"]
    assert handover["from_agent"] == "orchestrator"
    assert Path(handover["briefing_file"]).is_file()
    (specialist,) = team.requests_of("specialist")
    assert "Specialist: frontend_designer" in specialist[1]["content"]
    assert values["messages"][-1].content.startswith("Hero designed")
    check_tool_history(values["messages"])


def test_your_specialist_with_handover_tools_hands_back_with_return_to_orchestrator(ctx):
    team = Team(condition="user_request")
    with OpenAICompatibleServer(team) as server:
        writer = create_agent(
            chat_model(server), handover_tools("release_writer", [WRITER]), system_prompt="Write."
        )
        graph = build_graph(
            checkpointer=InMemorySaver(),
            model=chat_model(server),
            profiles=[WRITER],
            agents={"release_writer": writer},
        )
        first = say(graph, "Please write the release notes for 2.0.", ctx)
        assert first["active_agent"] == "release_writer"
        values = say(graph, "Thanks, go back to the orchestrator.", ctx)
        assert not server.rejected, server.rejected
    assert values["active_agent"] == "orchestrator"
    answers = [m for m in values["messages"] if isinstance(m, ToolMessage)]
    assert answers[-1].name == "return_to_orchestrator"
    assert answers[-1].content == "Returned to the orchestrator."
    assert state_of(graph)["handovers"][-1]["reason"] == "Drafted the hero."
    assert values["messages"][-1].name == "orchestrator"  # it answers in the same run
    check_tool_history(values["messages"])


# --- in process -------------------------------------------------------------------------


def handover_to(target: str, condition: str = "after_reply") -> AIMessage:
    return ai_call(
        "handover_to_specialist",
        specialist_profile=target,
        topic="notes",
        summary="s",
        handover_reason="r",
        return_condition=condition,
    )


def test_any_compiled_graph_with_messages_works_as_a_specialist(ctx):
    def answer(state: MessagesState) -> dict:
        package = state["messages"][0]
        return {"messages": [AIMessage(f"I read {len(package.content)} characters of package.")]}

    plain = StateGraph(MessagesState)
    plain.add_node("answer", answer)
    plain.add_edge(START, "answer")
    plain.add_edge("answer", END)
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model=ScriptedChatModel(script=[handover_to("release_writer")]),
        profiles=[WRITER],
        agents={"release_writer": plain.compile()},
    )
    values = say(graph, "Write the notes.", ctx)
    answer = values["messages"][-2]  # before the hand-back note
    assert answer.name == "release_writer" and answer.content.startswith("I read ")
    assert values["active_agent"] == "orchestrator"  # after_reply


def test_your_agent_streams_its_steps_and_tokens_with_subgraphs(ctx):
    agent = create_agent(
        ScriptedChatModel(script=[ai_call("word_count", text="x y"), AIMessage("Two.")]),
        [word_count],
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model=ScriptedChatModel(script=[handover_to("release_writer")]),
        profiles=[WRITER],
        agents={"release_writer": agent},
    )
    steps, tokens = [], []
    for namespace, mode, chunk in graph.stream(
        {"messages": [HumanMessage("Count.")]},
        {"configurable": {"thread_id": "s"}},
        context=ctx,
        stream_mode=["updates", "messages"],
        subgraphs=True,
        durability="sync",
    ):
        node = namespace[0].split(":")[0] if namespace else ""
        if mode == "updates" and node == "release_writer":
            steps.extend(chunk)
        elif mode == "messages" and node == "release_writer":
            tokens.append(chunk[1])
    assert steps[:3] == ["model", "tools", "model"]
    assert tokens and all(meta["agent"] == "release_writer" for meta in tokens)
    assert {meta["persona_marker"] for meta in tokens} == {"[release writer]"}


def test_a_handover_beside_other_calls_is_refused_and_the_agent_goes_on(ctx):
    both = AIMessage(
        "",
        tool_calls=[
            {"name": "word_count", "args": {"text": "a"}, "id": "call_w"},
            {"name": "return_to_orchestrator", "args": {"summary": "done"}, "id": "call_r"},
        ],
    )
    agent = create_agent(
        ScriptedChatModel(script=[both, AIMessage("Still here.")]),
        [word_count, *handover_tools("release_writer", [WRITER])],
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model=ScriptedChatModel(script=[handover_to("release_writer", "user_request")]),
        profiles=[WRITER],
        agents={"release_writer": agent},
    )
    values = say(graph, "Count.", ctx)
    answers = {m.tool_call_id: m for m in values["messages"] if isinstance(m, ToolMessage)}
    assert answers["call_w"].content == "1 words"
    assert answers["call_r"].content.startswith(
        "ERROR: return_to_orchestrator must be the only tool call of its reply"
    )
    assert values["messages"][-1].content == "Still here."
    assert values["active_agent"] == "release_writer"
    check_tool_history(values["messages"])


def test_handover_tools_used_outside_the_graph_answer_with_an_error():
    agent = create_agent(
        ScriptedChatModel(script=[handover_to("frontend_designer"), AIMessage("ok")]),
        handover_tools("a0_software_orchestrator"),
    )
    out = agent.invoke({"messages": [HumanMessage("design it")]})
    (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answer.content == "ERROR: handover_to_specialist works inside the handover graph only."


def test_handover_tools_give_the_orchestrator_two_tools_and_a_specialist_four():
    assert [t.name for t in handover_tools("a0_software_orchestrator")] == [
        "handover_to_specialist",
        "consult_specialists",
    ]
    names = [t.name for t in handover_tools("hacker")]
    assert names == [
        "handover_to_specialist",
        "return_to_orchestrator",
        "request_full_history",
        "read_briefing",
    ]
    with pytest.raises(ValueError, match="'nobody' names no profile of this build"):
        handover_tools("nobody")


def test_bad_agents_are_refused_by_name():
    agent = create_agent(ScriptedChatModel(), [])
    with pytest.raises(ValueError, match=r"agents\['nobody'\] names no profile of this build"):
        build_graph(agents={"nobody": agent})
    with pytest.raises(TypeError, match=r"agents\['hacker'\] must be a compiled LangGraph graph"):
        build_graph(agents={"hacker": lambda state: state})
    no_messages = StateGraph(dict)  # type: ignore[type-var]
    no_messages.add_node("n", lambda state: {})
    no_messages.add_edge(START, "n")
    with pytest.raises(ValueError, match=r"agents\['hacker'\]: its state has no 'messages'"):
        build_graph(agents={"hacker": no_messages.compile()})
    saving = create_agent(ScriptedChatModel(), [], checkpointer=InMemorySaver())
    with pytest.raises(ValueError, match="compiled with a checkpointer of its own"):
        build_graph(agents={"hacker": saving})
    with pytest.raises(ValueError, match="is your own agent; give it its tools yourself"):
        build_graph(agents={"hacker": agent}, tools={"hacker": [word_count]})


def test_a_call_id_your_agent_repeats_from_the_thread_is_renamed_with_its_result(ctx):
    handover = handover_to("release_writer")
    reused = AIMessage(
        "",
        tool_calls=[
            {"name": "word_count", "args": {"text": "a b"}, "id": handover.tool_calls[0]["id"]}
        ],
    )
    agent = create_agent(ScriptedChatModel(script=[reused, AIMessage("Two.")]), [word_count])
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model=ScriptedChatModel(script=[handover]),
        profiles=[WRITER],
        agents={"release_writer": agent},
    )
    values = say(graph, "Count.", ctx)
    check_tool_history(values["messages"])  # every id answered once, in order
    (call,) = [m for m in values["messages"] if m.name == "release_writer" and m.tool_calls]
    assert call.tool_calls[0]["id"] != handover.tool_calls[0]["id"]
    answer = next(
        m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "word_count"
    )
    assert answer.tool_call_id == call.tool_calls[0]["id"] and answer.content == "2 words"
