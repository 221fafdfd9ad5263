"""Tests for the local OpenAI-compatible test server in ``tests/support/openai_server.py``."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

try:  # run from the repo root (``python -m pytest``) or with only ``tests/`` on sys.path
    from tests.support.openai_server import OpenAICompatibleServer
except ImportError:  # pragma: no cover - depends on how pytest was launched
    from support.openai_server import OpenAICompatibleServer

AUTH = {"Authorization": "Bearer test"}
WEATHER_CALL = {"id": "call_w1", "name": "get_weather", "args": {"city": "Paris"}}


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}"


def weather_responder(messages: list[dict], tools: list[dict]) -> dict:
    """Call ``get_weather`` when tools are offered, summarise once a tool result arrives."""
    if messages[-1]["role"] == "tool":
        return {"content": f"The tool said: {messages[-1]['content']}"}
    if tools:
        args = json.dumps({"city": "Paris", "unit": "celsius and some padding text"})
        call = {"name": tools[0]["function"]["name"], "arguments": args}
        return {
            "content": None,
            "tool_calls": [{"id": "call_w1", "type": "function", "function": call}],
        }
    return {"content": "The quick brown fox jumps over the lazy dog."}


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(weather_responder) as srv:
        yield srv


def make_llm(srv: OpenAICompatibleServer, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-4o", base_url=srv.base_url, api_key="test", max_retries=0, **kwargs
    )


def post(srv: OpenAICompatibleServer, body: dict, headers: dict | None = None) -> httpx.Response:
    url = f"{srv.base_url}/chat/completions"
    return httpx.post(url, json=body, headers=AUTH if headers is None else headers, timeout=10)


def sse_events(response: httpx.Response) -> list[str]:
    return [line[len("data: ") :] for line in response.text.split("\n\n") if line]


def test_plain_invoke(server: OpenAICompatibleServer) -> None:
    reply = make_llm(server).invoke("hello")
    assert isinstance(reply, AIMessage)
    assert reply.content == "The quick brown fox jumps over the lazy dog."
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.usage_metadata and reply.usage_metadata["total_tokens"] > 0
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hello"}]
    assert server.rejected == []


def test_stream_text_in_several_chunks(server: OpenAICompatibleServer) -> None:
    chunks = list(make_llm(server).stream("hello"))
    assert len([c for c in chunks if c.content]) > 1
    assert "".join(str(c.content) for c in chunks) == "The quick brown fox jumps over the lazy dog."
    assert server.requests[0]["stream"] is True


def test_stream_usage_chunk(server: OpenAICompatibleServer) -> None:
    chunks = list(make_llm(server, stream_usage=True).stream("hello"))
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    full = chunks[0]
    for chunk in chunks[1:]:
        full = full + chunk
    assert full.usage_metadata and full.usage_metadata["total_tokens"] > 0


@pytest.mark.parametrize("streaming", [False, True])
def test_tool_call_via_bind_tools(server: OpenAICompatibleServer, streaming: bool) -> None:
    llm = make_llm(server).bind_tools([get_weather])
    if streaming:
        chunks = list(llm.stream("weather in Paris?"))
        reply = chunks[0]
        for chunk in chunks[1:]:
            reply = reply + chunk
        assert len(chunks) > 3  # arguments arrive split across deltas
    else:
        reply = llm.invoke("weather in Paris?")
    assert reply.tool_calls == [
        {
            "name": "get_weather",
            "args": {"city": "Paris", "unit": "celsius and some padding text"},
            "id": "call_w1",
            "type": "tool_call",
        }
    ]
    assert server.requests[0]["tools"][0]["function"]["name"] == "get_weather"


def test_full_tool_round_trip_is_accepted(server: OpenAICompatibleServer) -> None:
    history: list[BaseMessage] = [
        HumanMessage("weather in Paris?"),
        AIMessage(content="", tool_calls=[WEATHER_CALL]),
        ToolMessage(content="Sunny in Paris", tool_call_id="call_w1"),
    ]
    reply = make_llm(server).bind_tools([get_weather]).invoke(history)
    assert reply.content == "The tool said: Sunny in Paris"
    sent = server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_w1"
    assert server.rejected == []


def test_unanswered_tool_call_is_rejected() -> None:
    calls: list[list[dict]] = []
    with OpenAICompatibleServer(lambda m, t: calls.append(m) or {"content": "x"}) as srv:
        history: list[BaseMessage] = [
            HumanMessage("weather?"),
            AIMessage(content="", tool_calls=[WEATHER_CALL]),
            HumanMessage("and tomorrow?"),
        ]
        with pytest.raises(openai.BadRequestError) as info:
            make_llm(srv).invoke(history)
    assert info.value.status_code == 400
    assert "did not have response messages: call_w1" in str(info.value)
    assert info.value.body["type"] == "invalid_request_error"
    assert info.value.body["param"] == "messages"
    assert len(srv.rejected) == 1 and srv.rejected[0][0] is srv.requests[0]
    assert "must be followed by tool messages" in srv.rejected[0][1]
    assert calls == []  # the responder never sees invalid requests


def test_orphan_tool_message_is_rejected(server: OpenAICompatibleServer) -> None:
    history = [HumanMessage("hi"), ToolMessage(content="Sunny", tool_call_id="call_nope")]
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding message"):
        make_llm(server).invoke(history)
    assert len(server.rejected) == 1


def test_tool_answer_for_wrong_id_is_rejected(server: OpenAICompatibleServer) -> None:
    history: list[BaseMessage] = [
        HumanMessage("hi"),
        AIMessage(content="", tool_calls=[WEATHER_CALL]),
        ToolMessage(content="Sunny", tool_call_id="call_other"),
    ]
    with pytest.raises(openai.BadRequestError, match="preceeding message with 'tool_calls'"):
        make_llm(server).invoke(history)


def test_invalid_message_name_is_rejected(server: OpenAICompatibleServer) -> None:
    with pytest.raises(openai.BadRequestError, match="does not match pattern"):
        make_llm(server).invoke([HumanMessage("hi", name="Dr. Who")])
    make_llm(server).invoke([HumanMessage("hi", name="dr_who-2")])
    assert len(server.requests) == 2 and len(server.rejected) == 1


def tool_call_dict(call_id: str) -> dict:
    fn = {"name": "get_weather", "arguments": "{}"}
    return {"id": call_id, "type": "function", "function": fn}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"model": "gpt-4o"}, "Missing required parameter: 'messages'"),
        ({"model": "gpt-4o", "messages": []}, "too short"),
        ({"model": "gpt-4o", "messages": "hi"}, "expected an array"),
        ({"model": "gpt-4o", "messages": [{"role": "robot", "content": "x"}]}, "'robot'"),
        (
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": None, "tool_calls": [tool_call_dict("a")]},
                    {"role": "tool", "tool_call_id": "a", "content": "1"},
                    {"role": "tool", "tool_call_id": "a", "content": "2"},
                ],
            },
            "duplicate",
        ),
        (
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "user", "content": "x"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [tool_call_dict("a"), tool_call_dict("b")],
                    },
                    {"role": "tool", "tool_call_id": "b", "content": "1"},
                ],
            },
            "did not have response messages: a",
        ),
        (
            {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "f"}}],
            },
            "parameters",
        ),
        (
            {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "f", "parameters": {}}],
            },
            "tools[0]",
        ),
    ],
)
def test_raw_validation_errors(server: OpenAICompatibleServer, body: dict, needle: str) -> None:
    response = post(server, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert needle in error["message"]
    assert error["type"] == "invalid_request_error" and error["code"] is None
    assert server.rejected == [(body, error["message"])]


def test_two_parallel_tool_calls_answered_in_any_order_are_valid(
    server: OpenAICompatibleServer,
) -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call_dict("a"), tool_call_dict("b")],
            },
            {"role": "tool", "tool_call_id": "b", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "2"},
        ],
    }
    response = post(server, body)
    assert response.status_code == 200, response.text
    payload = response.json()
    assert payload["object"] == "chat.completion" and payload["model"] == "gpt-4o"
    assert payload["choices"][0]["message"]["role"] == "assistant"
    assert set(payload["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_raw_stream_shape(server: OpenAICompatibleServer) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = {
        "model": "gpt-4o",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "x"}],
        "tools": tools,
    }
    response = post(server, body)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0]["id"] == "call_w1" and calls[0]["function"]["name"] == "f"
    assert all("id" not in c and c["index"] == 0 for c in calls[1:]) and len(calls) > 2
    args = "".join(c["function"]["arguments"] for c in calls)
    assert json.loads(args)["city"] == "Paris"
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_missing_bearer_gives_401(server: OpenAICompatibleServer) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
    for headers in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer"}):
        response = post(server, body, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["type"] == "invalid_request_error"
    assert httpx.get(f"{server.base_url}/models", timeout=10).status_code == 401
    assert server.requests == []


def test_models_endpoint(server: OpenAICompatibleServer) -> None:
    response = httpx.get(f"{server.base_url}/models", headers=AUTH, timeout=10)
    assert response.status_code == 200
    payload = response.json()
    assert payload["object"] == "list" and len(payload["data"]) == 1


def test_responder_exception_gives_500() -> None:
    def broken(messages: list[dict], tools: list[dict]) -> dict:
        raise RuntimeError("boom")

    with OpenAICompatibleServer(broken) as srv:
        with pytest.raises(openai.InternalServerError, match="boom"):
            make_llm(srv).invoke("hi")
    assert isinstance(srv.errors[0], RuntimeError)


def test_concurrent_requests_are_all_recorded(server: OpenAICompatibleServer) -> None:
    llm = make_llm(server)
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda i: llm.invoke(f"q{i}"), range(16)))
    assert all(r.content for r in replies)
    assert sorted(r["messages"][0]["content"] for r in server.requests) == sorted(
        f"q{i}" for i in range(16)
    )


def test_port_zero_picks_free_port_and_stop_frees_it() -> None:
    first = OpenAICompatibleServer(weather_responder, port=0).start()
    second = OpenAICompatibleServer(weather_responder, port=0).start()
    try:
        assert first.port != 0 and second.port != 0 and first.port != second.port
        assert first.base_url == f"http://127.0.0.1:{first.port}/v1"
        assert httpx.get(f"{first.base_url}/models", headers=AUTH, timeout=10).status_code == 200
    finally:
        first.stop()
        second.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", first.port), timeout=5).close()
    with socket.socket() as probe:  # SO_REUSEADDR tolerates TIME_WAIT from the closed connection
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", first.port))
    with OpenAICompatibleServer(weather_responder, port=first.port) as again:
        assert make_llm(again).invoke("hi").content
    first.stop()  # idempotent
