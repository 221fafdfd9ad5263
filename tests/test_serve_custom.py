"""Serving your own build: `examples/serve_custom/` runs under `langgraph dev` as documented.

Its `langgraph.json` names its own `graph.py`, built with a profile folder and a
tool of its own; over the SDK a request reaches that specialist, which uses its
tool, and the schemas Studio reads list it among the agents.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.support.langgraph_server import langgraph_dev_server

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "serve_custom"


def test_your_own_build_is_served_and_answers_with_your_specialist_and_tool(tmp_path):
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "sales.csv").write_text(
        "month,units,revenue\njan,120,2400\nfeb,135,2750\nmar,160,3300\n", encoding="utf-8"
    )
    with langgraph_dev_server(log_dir=tmp_path / "logs", cwd=EXAMPLE) as server:
        client = get_sync_client(url=server.url, api_key=None)
        (assistant,) = client.assistants.search(
            graph_id="my_team", metadata={"created_by": "system"}
        )
        schemas = client.assistants.get_schemas(assistant["assistant_id"])
        agents = schemas["output_schema"]["properties"]["active_agent"]["enum"]
        assert "data_analyst" in agents and "orchestrator" in agents
        thread = client.threads.create()
        out = client.runs.wait(
            thread["thread_id"],
            assistant["assistant_id"],
            input={
                "messages": [
                    {
                        "role": "user",
                        "content": "Can you give me statistics on our sales data? Please "
                        'summarize csv "data/sales.csv".',
                    }
                ]
            },
            context={"project_root": str(root), "model": "offline"},
        )
        client.threads.delete(thread["thread_id"])
    assert out["active_agent"] == "data_analyst"
    tools = [m for m in out["messages"] if m["type"] == "tool" and m["name"] == "summarize_csv"]
    assert tools and tools[0]["content"].startswith("data/sales.csv: 3 rows")
    last = out["messages"][-1]
    assert last["name"] == "data_analyst" and last["content"].startswith("📊 **data analyst**")
