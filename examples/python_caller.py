"""Use the handover graph from Python: checkpoints, two turns on one thread, the trail.

.venv/bin/python examples/python_caller.py [/abs/project/root] [--checkpointer PATH_OR_URL]

Checkpoints go to `--checkpointer` (default HANDOVER_CHECKPOINTER, else the SQLite
file <project_root>/.a0proj/checkpoints.sqlite): a SQLite file path, or a
postgresql://user:password@host:port/dbname URL (pip install "specialist-handover[postgres]").
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import (
    CheckpointerError,
    close_checkpointer,
    describe_checkpointer,
    open_checkpointer,
)
from specialist_handover.graph.turns import run_turn
from specialist_handover.state import HandoverContext


def main(project_root: str, checkpointer_spec: str | None = None) -> None:
    # every step is saved: by default to <project_root>/.a0proj/checkpoints.sqlite
    checkpointer = open_checkpointer(checkpointer_spec, project_root=project_root)
    print(f"checkpoints: {describe_checkpointer(checkpointer_spec, project_root=project_root)}\n")
    try:
        graph = build_graph(checkpointer=checkpointer)
        context = HandoverContext(
            project_root=project_root, model="offline", max_context_tokens=2000
        )

        for text in (
            "Please design the landing page hero with bold typography; we decided on Tailwind.",
            "Make the call-to-action bigger on mobile.",
        ):
            # run_turn resumes a step a crash left unfinished, then sends the message
            values = run_turn(graph, text, thread_id="example", context=context)
            reply = values["messages"][-1]
            print(f"you: {text}\n{reply.name}: {reply.content.splitlines()[0]}\n")

        print("handover trail:")
        for record in values["handovers"]:
            print(
                f"  {record['kind']}: {record['from_agent']} -> {record['to_agent']} "
                f"({record['estimated_tokens']} tokens) {record['briefing_path']}"
            )
        print(f"active agent: {values['active_agent']}")
    finally:
        close_checkpointer(checkpointer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "project_root",
        nargs="?",
        default=None,
        help="absolute project folder (default: a temp one)",
    )
    parser.add_argument(
        "--checkpointer",
        default=os.environ.get("HANDOVER_CHECKPOINTER") or None,
        metavar="PATH_OR_URL",
        help="a SQLite file path or a postgresql:// URL (default: HANDOVER_CHECKPOINTER, "
        "else <project_root>/.a0proj/checkpoints.sqlite)",
    )
    args = parser.parse_args()
    root = args.project_root or str(Path(tempfile.mkdtemp()).resolve())
    try:
        main(root, args.checkpointer)
    except (ValueError, CheckpointerError) as exc:  # a bad value or an unreachable server
        print(f"python_caller.py: error: {exc}", file=sys.stderr)
        sys.exit(2)
