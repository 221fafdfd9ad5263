"""The built-in offline model: deterministic routing, handover arguments and specialist moves."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from specialist_handover.nodes.handover.handover_to_specialist import package_message
from specialist_handover.nodes.history.extractive import extract_artifacts, extract_decisions
from specialist_handover.nodes.models.offline import OfflineChatModel, choose_specialist
from specialist_handover.state import HandoverPackage
from tests.support.models import orchestrator_tools, specialist_tools

MODEL = OfflineChatModel()


def orchestrate(*texts: str) -> AIMessage:
    messages = [HumanMessage(t) for t in texts]
    return MODEL.bind_tools(orchestrator_tools()).invoke(messages)


def act_as(profile: str, *messages, package: HandoverPackage | None = None) -> AIMessage:
    system = SystemMessage("prompt: no role in here")
    opening = [package_message(package)] if package else []
    return MODEL.bind_tools(specialist_tools(profile)).invoke([system, *opening, *messages])


PACKAGE = HandoverPackage(
    handover_id="call_1",
    specialist="frontend_designer",
    topic="landing-page-hero",
    summary="The user wants a bold hero.",
    recent_turns=["user: Please design the hero."],
    decisions=["Use Tailwind"],
    artifacts=["src/Hero.tsx"],
    reason="visual design",
    return_condition="user_request",
    from_agent="orchestrator",
    briefing_file="/p/.a0proj/handover/frontend-designer-landing-page-hero-2026-06-05.md",
    estimated_tokens=120,
    max_context_tokens=3000,
    oversize_warning=False,
    rendered="(the rendered package: the offline model reads the data, not this text)",
)


def test_same_conversation_gives_the_same_handover_arguments():
    first = orchestrate("We decided to use React.", "Please design the landing page hero.")
    second = orchestrate("We decided to use React.", "Please design the landing page hero.")
    assert first.tool_calls[0]["args"] == second.tool_calls[0]["args"]
    assert first.name == "orchestrator"


def test_handover_arguments_come_from_the_conversation():
    call = orchestrate(
        "We decided to use React with Vite. The app lives in src/App.tsx.",
        "Please design the landing page hero for web/index.html.",
    ).tool_calls[0]
    args = call["args"]
    assert call["name"] == "handover_to_specialist"
    assert args["specialist_profile"] == "frontend_designer"
    assert args["topic"] == "landing-page-hero"
    assert "We decided to use React with Vite." in args["summary"]
    assert args["decisions"] == ["We decided to use React with Vite."]
    assert args["artifacts"] == ["src/App.tsx", "web/index.html"]
    assert args["return_condition"] == "user_request"
    assert "landing page" in args["handover_reason"]


@pytest.mark.parametrize(
    "text, condition",
    [
        ("The unit test crashes in pytest, fix it and report back.", "task_complete"),
        ("Quick question: which css unit for the hero layout?", "after_reply"),
        ("Please design the landing page hero.", "user_request"),
    ],
)
def test_return_condition_is_read_from_the_wording(text, condition):
    assert orchestrate(text).tool_calls[0]["args"]["return_condition"] == condition


def test_naming_a_profile_outright_wins_over_keywords():
    assert choose_specialist("ask the hacker about the landing page")[0] == "hacker"
    assert choose_specialist("the weather is nice") is None


def test_no_matching_specialist_means_a_direct_answer():
    reply = orchestrate("Hello there!")
    assert not reply.tool_calls and "orchestrator" in reply.content


def test_extractors():
    texts = ["Edit src/a.py and docs/b.md; we'll keep tests/test_a.py.", "Let's use Postgres."]
    assert extract_artifacts(texts) == ["src/a.py", "docs/b.md", "tests/test_a.py"]
    assert extract_decisions(texts) == [
        "Edit src/a.py and docs/b.md; we'll keep tests/test_a.py.",
        "Let's use Postgres.",
    ]


def test_specialist_answers_from_the_package_in_its_voice():
    reply = act_as("frontend_designer", package=PACKAGE)
    assert reply.name == "frontend_designer" and not reply.tool_calls
    assert "I'm the frontend designer, taking over 'landing-page-hero'" in reply.content
    assert "Please design the hero." in reply.content
    assert "Use Tailwind" in reply.content and "src/Hero.tsx" in reply.content


@pytest.mark.parametrize(
    "text, tool",
    [
        ("Thanks, go back to the orchestrator.", "return_to_orchestrator"),
        ("Please read the full history first.", "request_full_history"),
        ("What did we decide before? Check your briefing.", "read_briefing"),
        ("Please ask the solution architect about this.", "handover_to_specialist"),
    ],
)
def test_specialist_tool_moves(text, tool):
    reply = act_as("frontend_designer", HumanMessage(text), package=PACKAGE)
    assert [c["name"] for c in reply.tool_calls] == [tool]
    if tool == "handover_to_specialist":
        assert reply.tool_calls[0]["args"]["specialist_profile"] == "solution_architect"
        assert reply.tool_calls[0]["args"]["topic"] == "landing-page-hero"


def test_specialist_explains_a_refused_handover_and_carries_on():
    call = act_as(
        "frontend_designer",
        HumanMessage("Please ask the solution architect about this."),
        package=PACKAGE,
    )
    refused = ToolMessage(
        "ERROR: handover depth limit reached",
        tool_call_id=call.tool_calls[0]["id"],
        name="handover_to_specialist",
    )
    reply = act_as("frontend_designer", HumanMessage("x"), call, refused, package=PACKAGE)
    assert not reply.tool_calls
    assert "could not do that: handover depth limit reached" in reply.content
