"""A real A2A agent for tests/test_a2a_remote.py: the a2a-sdk's server (its JSON-RPC routes and
its agent card, a Starlette app under uvicorn) on 127.0.0.1, in a thread, on a free port.

Its executor (`ScriptedAgent`) records every message it gets (text, contextId, taskId) and
answers by a script of outcomes, one per message, `completed` when the script is empty:
`completed` (an artifact and a status message), `message` (a plain message, no task),
`input` (asks for input), `failed`, `rejected`, `canceled`, `auth` (auth-required), or `slow`
(sleeps `SLOW_SECONDS` first, then completes).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

SLOW_SECONDS = 3.0
QUESTION = "Which module should I review first?"
LEAKY_STATUS = "the reviewer broke; logs at https://ops:hunter2@logs.example.com/run?token=abc"
"""A failed task's status message that carries a credential in a URL (it must not be shown)."""


@dataclass
class Received:
    """One message the agent got."""

    text: str
    context_id: str
    task_id: str
    continued: bool
    """Whether it continued a task the agent already had (an input-required one)."""


class ScriptedAgent(AgentExecutor):
    """Answers each message with the next outcome of `script` (see the module docstring)."""

    def __init__(self) -> None:
        self.script: list[str] = []
        self.received: list[Received] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        self.received.append(
            Received(
                text=context.get_user_input(),
                context_id=context.context_id or "",
                task_id=context.task_id or "",
                continued=context.current_task is not None,
            )
        )
        turn = len(self.received)
        outcome = self.script.pop(0) if self.script else "completed"
        if outcome == "message":
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id=uuid.uuid4().hex,
                    context_id=context.context_id or "",
                    parts=[Part(text=f"Plain answer {turn}.")],
                )
            )
            return
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Message:
            return updater.new_agent_message([Part(text=text)])

        if outcome == "slow":
            await asyncio.sleep(SLOW_SECONDS)
        if outcome in ("completed", "slow"):
            await updater.add_artifact([Part(text=f"Review {turn}: looks good.")])
            await updater.complete(say(f"Done ({turn})."))
        elif outcome == "input":
            await updater.requires_input(say(QUESTION))
        elif outcome == "failed":
            await updater.failed(say(LEAKY_STATUS))
        elif outcome == "rejected":
            await updater.reject(say("I only review Python."))
        elif outcome == "canceled":
            await updater.cancel(say("Cancelled by its operator."))
        elif outcome == "auth":
            await updater.requires_auth(say("Sign in to the review service first."))
        else:
            raise ValueError(f"unknown outcome {outcome!r}")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Nothing runs long enough to be cancelled."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def a2a_server(agent: ScriptedAgent, binding: str = "JSONRPC") -> Iterator[str]:
    """The agent served on 127.0.0.1; yields its base URL. Its card is also reachable only
    through a redirect, at `<url>/moved/.well-known/agent-card.json`. `binding`: the interface
    its card offers, `JSONRPC` or `HTTP+JSON` (served), or any other (named, not served)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="Scripted reviewer",
        description="Reviews code, by a test's script.",
        version="1.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="review", name="review", description="Reviews code.", tags=["x"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=agent, task_store=InMemoryTaskStore(), agent_card=card
    )

    async def moved(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{url}/.well-known/agent-card.json", status_code=302)

    routes = [
        *create_agent_card_routes(card),
        Route("/moved/.well-known/agent-card.json", moved),
        *(create_rest_routes(handler) if binding == "HTTP+JSON" else []),
        *(create_jsonrpc_routes(handler, "/") if binding == "JSONRPC" else []),
    ]
    config = uvicorn.Config(
        Starlette(routes=routes),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the A2A test server did not start")
        time.sleep(0.02)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
