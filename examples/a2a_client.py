"""Talk to the served graph over A2A: three turns on one context, with a handover.

.venv/bin/python examples/a2a_client.py http://127.0.0.1:2024 [--stream]

Start the server first (`langgraph dev`, from the project folder). `langgraph dev` serves
every assistant at `/a2a/<assistant_id>` (agent card at
`/a2a/<assistant_id>/.well-known/agent-card.json`); give that URL, or the server's URL and
the graph's own assistant is looked up. Needs `pip install "specialist-handover[a2a]"`.

The card offers JSON-RPC, protocol 1.0. a2a-sdk 1.x reads langgraph-api's blocking
replies (`SendMessage`) but not its 1.0 stream events, so the client here does not stream;
`--stream` streams over the protocol-0.3 methods (`message/stream`), which the server also
answers, through a2a-sdk's 0.3 compatibility transport.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass

import httpx
from a2a.client import A2ACardResolver, A2AClientError, Client, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_artifact_text, new_message, new_text_part
from a2a.types.a2a_pb2 import Part, Role, SendMessageRequest, Task, TaskState
from google.protobuf import json_format

TURNS = (
    "Hello!",
    "Please design the landing page hero with bold typography.",
    "Make the button bigger.",
)
"""The orchestrator answers the first; it hands the second to frontend_designer, who keeps
the conversation and answers the third."""


@dataclass(frozen=True)
class Reply:
    """One turn's outcome: the task's state (`completed`, `input-required`, ...), its id and
    context, and the reply's text (the review request's JSON when input is required)."""

    state: str
    task_id: str
    context_id: str
    text: str


def state_name(state: int) -> str:
    """`TASK_STATE_INPUT_REQUIRED` -> `input-required`."""
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def reply_of(task: Task) -> Reply:
    """The task's state and its artifacts' text (a review pause's artifact is data: shown
    as its JSON)."""
    texts = [get_artifact_text(artifact) for artifact in task.artifacts]
    if not any(texts):
        texts = [
            json.dumps(json_format.MessageToDict(part.data))
            for artifact in task.artifacts
            for part in artifact.parts
        ]
    if not any(texts) and task.status.HasField("message"):  # a failed task says why here
        texts = [part.text for part in task.status.message.parts]
    return Reply(state_name(task.status.state), task.id, task.context_id, "\n".join(texts))


async def agent_url(http: httpx.AsyncClient, url: str) -> str:
    """The A2A URL of an agent: `url` itself when it is one (`.../a2a/<assistant_id>`),
    else the graph's own assistant on the LangGraph server at `url`."""
    url = url.rstrip("/")
    if "/a2a/" in url:
        return url
    found = await http.post(
        f"{url}/assistants/search",
        json={"graph_id": "orchestrator", "metadata": {"created_by": "system"}, "limit": 1},
    )
    found.raise_for_status()
    if not found.json():
        raise ValueError(f"{url} serves no 'orchestrator' graph; pass an agent's /a2a/ URL")
    return f"{url}/a2a/{found.json()[0]['assistant_id']}"


class Conversation:
    """One A2A context (the graph's thread): every message after the first names it."""

    def __init__(self, client: Client, context_id: str | None = None) -> None:
        self.client = client
        self.context_id = context_id

    async def send(self, *parts: Part, task_id: str | None = None) -> Reply:
        """Send one user message (text and/or data parts; `task_id` to answer a task that
        waits for input) and return the task it ends in."""
        message = new_message(
            list(parts), context_id=self.context_id, task_id=task_id, role=Role.ROLE_USER
        )
        task: Task | None = None
        async for event in self.client.send_message(SendMessageRequest(message=message)):
            if event.HasField("task"):
                task = event.task
            elif task is not None and event.HasField("status_update"):
                task.status.CopyFrom(event.status_update.status)
            elif task is not None and event.HasField("artifact_update"):
                task.artifacts.append(event.artifact_update.artifact)
        if task is None:
            raise RuntimeError("the agent answered with no task")
        self.context_id = task.context_id
        return reply_of(task)


async def connect(http: httpx.AsyncClient, url: str, *, stream: bool = False) -> Client:
    """An a2a-sdk client for the agent at `url` (see the module docstring for `stream`)."""
    card = await A2ACardResolver(http, url).get_agent_card()
    if stream:
        for interface in card.supported_interfaces:
            interface.protocol_version = "0.3"
    return ClientFactory(ClientConfig(streaming=stream, httpx_client=http)).create(card)


async def main(url: str, *, stream: bool = False) -> list[Reply]:
    async with httpx.AsyncClient(timeout=120) as http:
        url = await agent_url(http, url)
        print(f"agent: {url}")
        conversation = Conversation(await connect(http, url, stream=stream))
        replies = []
        for text in TURNS:
            reply = await conversation.send(new_text_part(text))
            replies.append(reply)
            speaker, _, body = reply.text.partition("\n\n")
            print(f"\nyou: {text}\n[{reply.state}] {speaker}: {body.splitlines()[0][:100]}")
        print(f"\ncontext: {conversation.context_id}")
        return replies


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the server (http://127.0.0.1:2024) or an agent's /a2a/ URL")
    parser.add_argument("--stream", action="store_true", help="stream (protocol-0.3 methods)")
    args = parser.parse_args()
    try:
        asyncio.run(main(args.url, stream=args.stream))
    except (httpx.HTTPError, A2AClientError, ValueError, RuntimeError) as exc:
        print(f"a2a_client.py: error: {exc}", file=sys.stderr)
        sys.exit(2)
