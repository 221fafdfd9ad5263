"""Serve your own build with `langgraph dev`: your profiles, tools, models and agents.

    cd examples/serve_custom && ../../.venv/bin/langgraph dev --no-browser

`langgraph.json` here names this file's `graph` (as `my_team`). It is built like any
`build_graph(...)` call, without a checkpointer (the server brings its own), with
`label_replies=True` so chat UIs show who is speaking. Your profiles come from `profiles/`,
your tools from this file; `HANDOVER_MODEL` (or the run context's `model`) picks the model.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from langchain.tools import ToolRuntime
from langchain_core.tools import tool

from specialist_handover import HandoverContext, build_graph

HERE = Path(__file__).resolve().parent


@tool
async def summarize_csv(path: str, runtime: ToolRuntime[HandoverContext]) -> str:
    """Summarise a CSV file under the project root: rows, columns and each numeric column's mean."""
    # async-only, as every MCP tool is: awaited under ainvoke and `langgraph dev`, run on a
    # loop of its own under invoke
    root = Path(runtime.context.project_root).resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        return f"ERROR: {path!r} is not a file under the project root"
    with target.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    columns = list(rows[0]) if rows else []
    lines = [f"{path}: {len(rows)} rows, columns: {', '.join(columns)}"]
    for column in columns:
        try:
            values = [float(row[column]) for row in rows]
        except ValueError:
            continue
        lines.append(f"mean {column} = {statistics.fmean(values):.2f}")
    return "\n".join(lines)


graph = build_graph(
    profiles=HERE / "profiles",
    tools={"data_analyst": [summarize_csv]},
    label_replies=True,
)
