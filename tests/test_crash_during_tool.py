"""A process killed (SIGKILL) while a specialist's tool runs resumes without asking the model again.

The model is `ChatOpenAI` over HTTP against the local OpenAI-compatible server,
which records every request. The first process hands over to a specialist whose
tool hangs; it is killed while the tool runs. A second process, on the same
SQLite file, resumes: the tool runs again (it never finished), but the model
request that asked for it is not sent again. The specialist is ours (a profile
with the user's tool) or yours (`create_agent(...)` with that tool, in its place).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAICompatibleServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from specialist_handover import build_graph
    from specialist_handover.graph.turns import run_turn
    from specialist_handover.graph.checkpointers import sqlite_checkpointer

    base_url, db, root, marker, text = sys.argv[1:6]

    @tool
    def slow_probe(target: str) -> str:
        \"\"\"Probe a part of the system (slow).\"\"\"
        with open(marker, "a") as fh:
            fh.write("started\\n")
        if os.environ.get("HANG_IN_TOOL"):
            time.sleep(120)
        return f"probe of {target}: 3 handlers, 1 slow query"

    model = ChatOpenAI(model="gpt-4o", base_url=base_url, api_key="k", max_retries=0)
    if os.environ.get("YOUR_AGENT"):
        from langchain.agents import create_agent

        explorer = create_agent(model, [slow_probe], system_prompt="You explore code.")
        mine = {"agents": {"codebase_explorer": explorer}}
    else:
        mine = {"tools": {"codebase_explorer": [slow_probe]}}
    graph = build_graph(checkpointer=sqlite_checkpointer(db), model=model, **mine)
    values = run_turn(graph, text or None, thread_id="k", context={"project_root": root})
    print("LAST:", values["messages"][-1].content)
    """
)


class Scripted:
    """Orchestrator: hand over to codebase_explorer. Specialist: call slow_probe, then answer."""

    def __init__(self) -> None:
        self.replies: list[dict] = []

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        names = {t["function"]["name"] for t in tools}
        last = messages[-1]
        if "slow_probe" not in names:
            if last["role"] == "user":
                args = {
                    "specialist_profile": "codebase_explorer",
                    "topic": "slow-endpoint",
                    "summary": "The search endpoint is slow.",
                    "handover_reason": "needs someone to read the code",
                }
                reply = {"content": None, "tool_calls": [_call("handover_to_specialist", args)]}
            else:
                reply = {"content": "The specialist has it."}
        elif last["role"] == "tool":
            reply = {"content": f"Found it: {last['content']}"}
        else:
            reply = {"content": None, "tool_calls": [_call("slow_probe", {"target": "search"})]}
        self.replies.append(reply)
        return reply


def _call(name: str, args: dict) -> dict:
    call_id = f"call_{name}_{int(time.time() * 1e6)}"
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _started(marker: Path) -> bool:
    return marker.exists() and "started" in marker.read_text()


def _child(args: list[str], *, hang: bool, yours: bool) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL")}
    env["PYTHONPATH"] = str(REPO)
    if hang:
        env["HANG_IN_TOOL"] = "1"
    if yours:
        env["YOUR_AGENT"] = "1"
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("agent", ["ours", "yours"])
def test_sigkill_while_a_specialists_tool_runs_resumes_without_repeating_the_model_request(
    tmp_path, agent
):
    root = tmp_path / "project"
    root.mkdir()
    db, marker = str(tmp_path / "cp.sqlite"), tmp_path / "tool-started"
    responder = Scripted()
    with OpenAICompatibleServer(responder) as server:
        first = _child(
            [server.base_url, db, str(root), str(marker), "Why is the search endpoint slow?"],
            hang=True,
            yours=agent == "yours",
        )
        deadline = time.monotonic() + 90
        # the file exists as soon as it is opened; wait for the line (written when it closes)
        while not _started(marker) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _started(marker), first.communicate(timeout=5)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL
        asked = [json.dumps(body["messages"], sort_keys=True) for body in server.requests]
        assert len(asked) == 2  # orchestrator -> handover; specialist -> slow_probe

        second = _child(
            [server.base_url, db, str(root), str(marker), ""], hang=False, yours=agent == "yours"
        )
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert "LAST: Found it: probe of search: 3 handlers, 1 slow query" in out

        sent = [json.dumps(body["messages"], sort_keys=True) for body in server.requests]
        assert not server.rejected, server.rejected
    # the tool ran twice (it never finished the first time) ...
    assert marker.read_text().count("started") == 2
    # ... but the request that asked for it went out once, and only one more followed
    assert sent[:2] == asked
    assert len(sent) == 3
    assert sent.count(asked[1]) == 1
    resumed = json.loads(sent[2])
    probe_call = responder.replies[1]["tool_calls"][0]
    assert resumed[-2]["tool_calls"][0]["id"] == probe_call["id"]
    assert resumed[-1] == {
        "role": "tool",
        "tool_call_id": probe_call["id"],
        "content": "probe of search: 3 handlers, 1 slow query",
    }
