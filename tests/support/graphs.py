"""Driving the graph in tests: natural requests per specialist, a recorded build, turns."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover.graph import build_graph
from tests.support.models import RecordingOfflineModel

REQUESTS = {
    "codebase_explorer": "I'm new to this repo: where is the entry point of the server?",
    "frontend_designer": "Please design the landing page hero with bold typography.",
    "hacker": "Run a pentest against our login form and try sql injection.",
    "implementation_engineer": "Implement a new feature: an export endpoint for invoices.",
    "quality_reviewer": "Can you do a code review of my pull request?",
    "release_auditor": "Prepare the changelog and release notes for the version bump.",
    "requirements_analyst": "Write user stories with acceptance criteria for the signup.",
    "runtime_devops_engineer": "Write a Dockerfile and deploy it to kubernetes.",
    "security_data_engineer": "Add JWT authentication and password hashing to the service.",
    "solution_architect": "Which architecture should we pick: microservices or a monolith?",
    "test_debug_engineer": "The unit test crashes with a stack trace in pytest.",
    "ui_design_specialist": "Check the accessibility of the user flow against WCAG.",
}


def make(model=None):
    model = model if model is not None else RecordingOfflineModel()
    return build_graph(checkpointer=InMemorySaver(), model=model), model


def say(graph, text, ctx, thread="t"):
    return graph.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
        durability="sync",
    )


def state_of(graph, thread="t"):
    return graph.get_state({"configurable": {"thread_id": thread}}).values


def replies(values, name):
    return [
        m
        for m in values["messages"]
        if isinstance(m, AIMessage) and m.name == name and str(m.content).strip()
    ]
