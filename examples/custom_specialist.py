"""Bring your own specialist: a user-defined profile with a user tool, on the offline model.

.venv/bin/python examples/custom_specialist.py [/abs/project/root]

A `data_analyst` profile joins the 13 built-in ones, with the built-in
read-only workspace tools and a tool of our own, `summarize_csv`, which reads a
CSV file under the run's project root. The orchestrator hands the request over
to the analyst, the analyst calls the tool, and hands back when asked.
"""

from __future__ import annotations

import csv
import statistics
import sys
import tempfile
from pathlib import Path

from langchain.tools import ToolRuntime
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import HandoverContext, Profile, build_graph

ANALYST = Profile(
    name="data_analyst",
    emoji="📊",
    description="Analyses tabular data: statistics, trends and data-quality checks on CSV files.",
    keywords=("statistics", "csv", "sales data", "trend", "average", "data quality"),
    tools=("workspace",),
    prompt=(
        "You are the Data Analyst. You answer questions about tabular data with numbers you "
        "computed, not guesses. Use summarize_csv on the files the user names, say which "
        "columns you looked at, and call return_to_orchestrator(summary) when the user is done."
    ),
)


@tool
def summarize_csv(path: str, runtime: ToolRuntime[HandoverContext]) -> str:
    """Summarise a CSV file under the project root: rows, columns and each numeric column's mean."""
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


def main(root: Path) -> None:
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "sales.csv").write_text(
        "month,units,revenue\njan,120,2400\nfeb,135,2750\nmar,160,3300\n", encoding="utf-8"
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        profiles=[ANALYST],
        tools={"data_analyst": [summarize_csv]},
    )
    config = {"configurable": {"thread_id": "example"}}
    context = HandoverContext(project_root=str(root), model="offline")
    for text in (
        'Can you give me statistics on our sales data? Please summarize csv "data/sales.csv".',
        "Thanks, that's all. Go back to the orchestrator please.",
    ):
        print(f"user: {text}")
        before = len(graph.get_state(config).values.get("messages", []))
        values = graph.invoke({"messages": [("user", text)]}, config, context=context)
        for message in values["messages"][before + 1 :]:
            if message.type == "ai" and message.content:
                print(f"{message.name}: {message.content}")
            elif message.type == "tool":
                print(f"  [tool {message.name}] {message.content.splitlines()[0]}")
    for record in graph.get_state(config).values["handovers"]:
        print(f"trail: {record['kind']} {record['from_agent']} -> {record['to_agent']}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
