"""Readable in any UI: who speaks, Markdown replies, relative paths, and schemas Studio can show.

Chat UIs show a message's text only, so the served graph opens each reply with its
speaker's label (`🖌️ **frontend designer**`); models never see the labels. Replies
are Markdown paragraphs and lists; a handover's answer names its briefing relative
to the project root. The schemas carry the agents' names as an enum, a description
for every field, and the context's bounds.
"""

from __future__ import annotations

import dataclasses

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import HandoverContext, build_graph
from specialist_handover.state import message_text
from tests.support.graphs import REQUESTS, say
from tests.support.models import RecordingOfflineModel


def test_labelled_replies_show_their_speaker_and_models_never_see_the_labels(ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=InMemorySaver(), model=model, label_replies=True)
    first = say(graph, "Hello there!", ctx)["messages"][-1]
    assert first.content.startswith("🧭 **orchestrator**\n\n")
    designer = say(graph, REQUESTS["frontend_designer"], ctx)["messages"][-1]
    assert designer.content.startswith("🖌️ **frontend designer**\n\nI'm the frontend designer")
    assert message_text(designer).startswith("I'm the frontend designer")  # label left out
    say(graph, "Make the button bigger.", ctx)
    sent = [str(m.content) for m in model.requests[-1] if isinstance(m, AIMessage)]
    assert sent and not any("**frontend designer**" in text for text in sent)


def test_replies_are_not_labelled_unless_asked(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    assert "**" not in say(graph, REQUESTS["frontend_designer"], ctx)["messages"][-1].content


def test_the_served_graph_labels_its_replies(ctx):
    from specialist_handover.graph import served

    out = served.graph.invoke({"messages": [("user", "Hello there!")]}, context=ctx)
    assert out["messages"][-1].content.startswith("🧭 **orchestrator**\n\n")


def test_replies_are_markdown_paragraphs_and_lists(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    reply = say(graph, REQUESTS["frontend_designer"], ctx)["messages"][-1].content
    assert "\n\nYou asked:" in reply  # paragraphs, not lines a Markdown renderer joins
    assert "\n\n1. Pin down the goal" in reply and "\n2. Produce" in reply  # a list


def test_a_handovers_answer_names_its_briefing_relative_to_the_project_root(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    values = say(graph, REQUESTS["frontend_designer"], ctx)
    answer = next(m for m in values["messages"] if isinstance(m, ToolMessage))
    assert "briefing=.a0proj/handover/frontend-designer-" in answer.content
    assert ctx["project_root"] not in answer.content


def test_the_schemas_name_the_agents_describe_every_field_and_bound_the_context():
    graph = build_graph()
    output = graph.get_output_jsonschema()["properties"]
    assert output["active_agent"]["enum"][0] == "orchestrator"
    assert "frontend_designer" in output["active_agent"]["enum"]
    for schema in (graph.get_input_jsonschema(), graph.get_output_jsonschema()):
        for name, prop in schema["properties"].items():
            assert prop.get("description"), name
    context = graph.get_context_jsonschema()["properties"]
    bounds = {name: (prop.get("minimum"), prop.get("maximum")) for name, prop in context.items()}
    assert bounds["max_turns"] == (1, 100)
    assert bounds["max_handovers_per_turn"] == (1, 20)
    assert bounds["model_attempts"] == (1, 10)
    assert bounds["include_recent_turns"] == (0, None)
    assert bounds["max_input_tokens"] == (4000, None)
    numbers = [
        f.name for f in dataclasses.fields(HandoverContext) if context[f.name]["type"] == "integer"
    ]
    assert all(bounds[name][0] is not None for name in numbers), bounds
