"""The real model path: the whole graph through ChatOpenAI over HTTP.

A local OpenAI-compatible server (tests/support/openai_server.py) answers with
the offline model's decisions and rejects an invalid tool-call history with
HTTP 400 exactly as OpenAI does, so these runs prove invariant 1 of docs/ARCHITECTURE.md over the wire.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover.graph import build_graph
from specialist_handover.nodes.models.offline import OfflineChatModel
from tests.support.models import model_responder
from tests.support.openai_server import OpenAICompatibleServer

OFFLINE = OfflineChatModel()


offline_responder = model_responder(OFFLINE)


@pytest.fixture(scope="module")
def server():
    with OpenAICompatibleServer(offline_responder) as srv:
        yield srv


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return {"project_root": str(root), "model": "openai:gpt-4o"}


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_handover_reply_and_return_through_chat_openai(server, ctx, streaming):
    model = ChatOpenAI(
        model="gpt-4o",
        base_url=server.base_url,
        api_key="test-key",
        max_retries=0,
        streaming=streaming,
    )
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    config = {"configurable": {"thread_id": f"http-{streaming}"}}
    before = len(server.requests)

    def say(text):
        return graph.invoke({"messages": [("user", text)]}, config, context=ctx, durability="sync")

    values = say("Please design the landing page hero with bold typography.")
    assert values["active_agent"] == "frontend_designer"
    assert values["messages"][-1].name == "frontend_designer"
    assert "taking over" in values["messages"][-1].content
    values = say("Make the button bigger.")
    assert values["messages"][-1].name == "frontend_designer"
    values = say("Thanks, go back to the orchestrator please.")
    assert values["active_agent"] == "orchestrator"
    assert "Back with the orchestrator" in values["messages"][-1].content

    sent = server.requests[before:]
    assert len(sent) >= 5
    assert all(body.get("stream", False) is streaming for body in sent)
    assert not server.rejected, server.rejected
    # the specialist's requests went over HTTP with its own prompt and the package
    specialist = [
        b for b in sent if "(profile `frontend_designer`)" in (b["messages"][0]["content"] or "")
    ]
    assert specialist and "HANDOVER PACKAGE (stage 1)" in specialist[0]["messages"][1]["content"]
    assert specialist[0]["messages"][1]["role"] == "user"


def test_server_rejects_a_dangling_tool_call_like_openai(server):
    """The guard the graph relies on: a request with an unanswered call is a 400."""
    import openai
    from langchain_core.messages import HumanMessage

    model = ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)
    dangling = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "handover_to_specialist", "args": {}, "id": "call_x"}]),
        HumanMessage("hello?"),
    ]
    with pytest.raises(openai.BadRequestError):
        model.invoke(dangling)


def test_failed_handover_over_http_keeps_history_valid(server, ctx):
    model = ChatOpenAI(model="gpt-4o", base_url=server.base_url, api_key="k", max_retries=0)
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    config = {"configurable": {"thread_id": "http-fail"}}
    root = ctx["project_root"]
    # a real append failure: .a0proj is a file
    (Path(root) / ".a0proj").write_text("in the way")
    before = len(server.rejected)
    values = graph.invoke(
        {"messages": [("user", "Please design the landing page hero.")]}, config, context=ctx
    )
    assert values["active_agent"] == "orchestrator"
    assert "could not hand this over" in values["messages"][-1].content
    assert len(server.rejected) == before


def test_malformed_tool_arguments_over_http_are_answered_before_the_next_request(ctx):
    state = {"first": True}

    def responder(messages, tools):
        if state["first"]:
            state["first"] = False
            return {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_bad",
                        "type": "function",
                        "function": {"name": "handover_to_specialist", "arguments": "{bad json"},
                    }
                ],
            }
        return offline_responder(messages, tools)

    with OpenAICompatibleServer(responder) as srv:
        model = ChatOpenAI(model="gpt-4o", base_url=srv.base_url, api_key="k", max_retries=0)
        graph = build_graph(checkpointer=InMemorySaver(), model=model)
        values = graph.invoke(
            {"messages": [("user", "Please design the landing page hero.")]},
            {"configurable": {"thread_id": "bad-args"}},
            context=ctx,
        )
        assert not srv.rejected, srv.rejected
        # the second request carried the unparsable call and its ERROR answer, and was accepted
        second = srv.requests[1]["messages"]
        assert second[-2]["tool_calls"][0]["id"] == "call_bad"
        assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_bad"
    assert values["messages"][-1].name == "orchestrator"
    answers = [m for m in values["messages"] if getattr(m, "tool_call_id", None) == "call_bad"]
    assert len(answers) == 1 and answers[0].content.startswith("ERROR: the call to")
