"""Use the handover graph from Python: SQLite checkpoints, two turns on one thread, the trail.

.venv/bin/python examples/python_caller.py [/abs/project/root]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from specialist_handover.graph import build_graph
from specialist_handover.graph.session import default_checkpoint_path, run_turn, sqlite_checkpointer
from specialist_handover.state import HandoverContext


def main(project_root: str) -> None:
    # every step is saved to <project_root>/.a0proj/checkpoints.sqlite
    checkpointer = sqlite_checkpointer(default_checkpoint_path(project_root))
    graph = build_graph(checkpointer=checkpointer)
    context = HandoverContext(project_root=project_root, model="offline", max_context_tokens=2000)

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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(tempfile.mkdtemp()).resolve()))
