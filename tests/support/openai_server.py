"""A local, dependency-free OpenAI-compatible Chat Completions server for tests.

Serves ``POST /v1/chat/completions`` (JSON or Server-Sent Events streaming) and ``GET /v1/models``
from a background thread. Bodies are validated the way OpenAI validates them (roles, tool-call
sequencing, message names, tool schemas) and rejected with HTTP 400 and OpenAI's error JSON, so
malformed histories fail in tests; valid requests are answered by a :data:`Responder`, e.g.
``OpenAICompatibleServer(lambda messages, tools: {"content": "hi"})``.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HTTPFault", "OpenAICompatibleServer", "Responder", "validate_chat_request"]

Responder = Callable[[list[dict], list[dict]], dict]
"""``(messages, tools) -> {"content": str | None, "tool_calls": [...]}`` (tool_calls optional)."""

ALLOWED_ROLES = ("system", "developer", "user", "assistant", "tool")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PRECEDING_TOOL_ERROR = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
MISSING_TOOL_RESPONSES_ERROR = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
MISSING_KEY_ERROR = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header "
    "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)
MODEL_ID = "gpt-4o"


class HTTPFault(Exception):
    """Raised by a responder to answer with an HTTP error (429, 500, 503 ...) instead of a reply."""

    def __init__(self, status: int, message: str = "fault injected by the test") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class RequestError(Exception):
    """A request problem to be reported as an OpenAI ``invalid_request_error``."""

    def __init__(self, message: str, param: str | None = "messages") -> None:
        super().__init__(message)
        self.message = message
        self.param = param


def _pattern_error(field: str) -> str:
    """OpenAI's wording for a name that does not match :data:`NAME_PATTERN`."""
    return (
        f"Invalid '{field}': string does not match pattern. "
        f"Expected a string that matches the pattern '{NAME_PATTERN.pattern}'."
    )


def _check_tools(tools: Any) -> None:
    """Raise :class:`RequestError` unless ``tools`` is a list of function tool schemas."""
    if not isinstance(tools, list) or not tools:
        raise RequestError("Invalid 'tools': expected a non-empty array.", "tools")
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or tool.get("type") != "function":
            raise RequestError(f"Invalid 'tools[{i}]': expected a function tool.", "tools")
        if not isinstance(fn.get("name"), str) or not NAME_PATTERN.match(fn["name"]):
            raise RequestError(_pattern_error(f"tools[{i}].function.name"), "tools")
        if not isinstance(fn.get("parameters"), dict):
            raise RequestError(
                f"Invalid 'tools[{i}].function.parameters': expected an object.", "tools"
            )


def _tool_call_ids(message: dict, index: int) -> list[str]:
    """Return the ids of an assistant message's ``tool_calls`` after checking their shape."""
    calls = message["tool_calls"]
    if not isinstance(calls, list) or not calls:
        raise RequestError(f"Invalid 'messages[{index}].tool_calls': expected a non-empty array.")
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not (
            isinstance(fn, dict)
            and isinstance(call.get("id"), str)
            and call.get("type") == "function"
            and isinstance(fn.get("name"), str)
            and isinstance(fn.get("arguments"), str)
        ):
            raise RequestError(f"Invalid 'messages[{index}].tool_calls[{j}]'.")
    ids = [call["id"] for call in calls]
    if len(set(ids)) != len(ids):
        raise RequestError(f"Invalid 'messages[{index}].tool_calls': duplicate tool_call ids.")
    return ids


def validate_chat_request(body: Any) -> None:
    """Validate a Chat Completions body like OpenAI does; raise :class:`RequestError` if bad."""
    if not isinstance(body, dict):
        raise RequestError("We could not parse the JSON body of your request.", None)
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("you must provide a model parameter", None)
    if "messages" not in body:
        raise RequestError("Missing required parameter: 'messages'.")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise RequestError("Invalid type for 'messages': expected an array.")
    if not messages:
        raise RequestError("[] is too short - 'messages'")
    if "tools" in body and body["tools"] is not None:
        _check_tools(body["tools"])
    group: list[str] | None = None  # tool_call ids of the open assistant tool-call group
    answered: set[str] = set()

    def close_group() -> None:
        missing = [i for i in (group or []) if i not in answered]
        if missing:
            raise RequestError(MISSING_TOOL_RESPONSES_ERROR.format(ids=", ".join(missing)))

    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RequestError(f"Invalid type for 'messages[{i}]': expected an object.")
        role = msg.get("role")
        if role not in ALLOWED_ROLES:
            supported = ", ".join(f"'{r}'" for r in ALLOWED_ROLES)
            raise RequestError(f"Invalid value: '{role}'. Supported values are: {supported}.")
        name = msg.get("name")
        if name is not None and (not isinstance(name, str) or not NAME_PATTERN.match(name)):
            raise RequestError(_pattern_error(f"messages[{i}].name"))
        content = msg.get("content")
        if content is None and not (role == "assistant" and msg.get("tool_calls")):
            raise RequestError(f"Missing required parameter: 'messages[{i}].content'.")
        if content is not None and not isinstance(content, str | list):
            raise RequestError(f"Invalid type for 'messages[{i}].content'.")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str):
                raise RequestError(f"Missing required parameter: 'messages[{i}].tool_call_id'.")
            if group is None or call_id not in group:
                raise RequestError(PRECEDING_TOOL_ERROR)
            if call_id in answered:
                raise RequestError(
                    f"Invalid parameter: duplicate tool message responding to tool_call_id "
                    f"'{call_id}' (messages[{i}])."
                )
            answered.add(call_id)
            continue
        close_group()
        group, answered = None, set()
        if role == "assistant" and msg.get("tool_calls") is not None:
            group = _tool_call_ids(msg, i)
    close_group()


def rough_tokens(value: Any) -> int:
    """A rough token estimate (~4 characters per token) for usage blocks."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4) if text else 0


def _normalize_reply(reply: Any) -> dict:
    """Turn a responder's return value into a complete assistant message dict."""
    if not isinstance(reply, dict):
        raise TypeError(f"responder must return a dict, got {type(reply).__name__}")
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    message["refusal"] = None
    calls = []
    for call in reply.get("tool_calls") or []:
        fn = dict(call["function"])
        if not isinstance(fn.get("arguments"), str):
            fn["arguments"] = json.dumps(fn.get("arguments") or {})
        call_id = call.get("id") or f"call_{uuid.uuid4().hex[:24]}"
        calls.append({"id": call_id, "type": "function", "function": fn})
    if calls:
        message["tool_calls"] = calls
    return message


def _split(text: str, parts: int = 3) -> list[str]:
    """Split ``text`` into up to ``parts`` non-empty pieces (at least one piece)."""
    if not text:
        return [text]
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stream_chunks(base: dict, message: dict, finish: str, usage: dict | None) -> Iterator[dict]:
    """Yield ``chat.completion.chunk`` payloads for ``message`` the way OpenAI streams them."""

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        out = {**base, "object": "chat.completion.chunk", "choices": [choice]}
        if usage is not None:
            out["usage"] = None
        return out

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    if message.get("content"):
        for piece in _split(message["content"]):
            yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls", [])):
        fn = call["function"]
        first = {"index": index, "id": call["id"], "type": "function"}
        first["function"] = {"name": fn["name"], "arguments": ""}
        yield chunk({"tool_calls": [first]})
        for piece in _split(fn["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, finish)
    if usage is not None:
        yield {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}


class _Handler(BaseHTTPRequestHandler):
    """Request handler; the owning :class:`OpenAICompatibleServer` is ``self.server.owner``."""

    server_version = "FakeOpenAI/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default stderr access log."""

    def _send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, param: str | None = None) -> None:
        type_ = "server_error" if status >= 500 else "invalid_request_error"
        err = {"message": message, "type": type_, "param": param, "code": None}
        self._send_json(status, {"error": err})

    def _guard(self, path: str) -> bool:
        """Answer 404/401 (and return False) unless the path matches and a bearer is given."""
        if self.path.split("?")[0].rstrip("/") != path:
            self._error(404, f"Unknown request URL: {self.command} {self.path}.")
            return False
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and auth[len("Bearer ") :].strip():
            return True
        self._error(401, MISSING_KEY_ERROR)
        return False

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Serve ``GET /v1/models``."""
        if self._guard("/v1/models"):
            model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "system"}
            self._send_json(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Serve ``POST /v1/chat/completions``."""
        owner: OpenAICompatibleServer = self.server.owner  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self._guard("/v1/chat/completions"):
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return self._error(400, "We could not parse the JSON body of your request.", None)
        owner._record(owner.requests, body)
        try:
            validate_chat_request(body)
        except RequestError as exc:
            owner._record(owner.rejected, (body, exc.message))
            return self._error(400, exc.message, exc.param)
        try:
            message = _normalize_reply(owner.responder(body["messages"], body.get("tools") or []))
        except HTTPFault as fault:
            return self._error(fault.status, fault.message, None)
        except Exception as exc:  # responder bugs must surface as 500s, not hangs
            owner._record(owner.errors, exc)
            return self._error(500, f"Responder failed: {type(exc).__name__}: {exc}", None)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        prompt = rough_tokens(body["messages"])
        completion = rough_tokens(message.get("content") or "") + sum(
            rough_tokens(c["function"]) for c in message.get("tool_calls", [])
        )
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        usage["total_tokens"] = prompt + completion
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "created": int(time.time())}
        base.update(model=body["model"], system_fingerprint="fp_local")
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            base.update(object="chat.completion", choices=[choice], usage=usage)
            return self._send_json(200, base)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for payload in _stream_chunks(base, message, finish, usage if include_usage else None):
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class OpenAICompatibleServer:
    """Background-thread OpenAI Chat Completions server backed by a :data:`Responder`.

    Attributes:
        base_url: ``http://host:port/v1``, usable as ``ChatOpenAI(base_url=...)``.
        requests: every authorised, JSON-parsed body sent to ``/v1/chat/completions``, in order
            (including those later rejected).
        rejected: ``(body, reason)`` for each body rejected with HTTP 400.
        errors: exceptions raised by the responder (each answered with HTTP 500).
    """

    def __init__(self, responder: Responder, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder = responder
        self.host = host
        self.port = port
        self.requests: list[dict] = []
        self.rejected: list[tuple[dict, str]] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL; the real port is known once :meth:`start` has run."""
        return f"http://{self.host}:{self.port}/v1"

    def _record(self, target: list[Any], item: Any) -> None:
        with self._lock:
            target.append(item)

    def start(self) -> OpenAICompatibleServer:
        """Bind the socket (port 0 picks a free port) and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        httpd = ThreadingHTTPServer((self.host, self.port), _Handler)
        httpd.daemon_threads = True
        httpd.owner = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket, freeing the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
