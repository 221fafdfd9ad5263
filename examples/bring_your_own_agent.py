"""Bring your own agent: a LangChain `create_agent(...)` takes a specialist's place.

.venv/bin/python examples/bring_your_own_agent.py [/abs/project/root]

A `docs_writer` profile joins the built-in ones (it gives the description, the
persona marker and the allow-list entry); the agent in its place is yours:
`create_agent` with your own prompt, your own `count_words` tool and the tools
`handover_tools` gives it to hand back. The orchestrator hands a request over
with a small package, your agent uses its tool, and hands back when asked.

It runs offline on the built-in offline model; set HANDOVER_MODEL (any
`init_chat_model` string, e.g. `openai:gpt-4o-mini`) for a real one.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import HandoverContext, Profile, build_graph, handover_tools
from specialist_handover.nodes import model_from_string
from specialist_handover.specialists import resolve_profiles

DOCS_WRITER = Profile(
    name="docs_writer",
    emoji="📘",
    description="Writes user documentation: tutorials, how-to guides, READMEs and API reference.",
    examples=("write a getting-started tutorial for the cli", "draft a how-to guide on logins"),
    prompt="(the agent in this profile's place brings its own prompt)",
)


@tool
def count_words(text: str) -> str:
    """Count the words of a draft."""
    return f"{len(text.split())} words"


def main(root: Path) -> None:
    model_name = os.environ.get("HANDOVER_MODEL") or "offline"
    model = model_from_string(model_name, profiles=resolve_profiles([DOCS_WRITER]))
    writer = create_agent(
        model,
        [count_words, *handover_tools("docs_writer", [DOCS_WRITER])],
        system_prompt="You are the docs writer. Write clear, task-first documentation, count "
        "the words of each draft with count_words, and call return_to_orchestrator(summary) "
        "when the user is done.",
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        profiles=[DOCS_WRITER],
        agents={"docs_writer": writer},
    )
    config = {"configurable": {"thread_id": "example"}}
    context = HandoverContext(project_root=str(root), model=model_name)
    for text in (
        "Please write a getting-started tutorial for our CLI, then count words of the draft.",
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
