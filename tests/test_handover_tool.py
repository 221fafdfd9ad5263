"""The handover_to_specialist tool and its stage-1 package (its documented contract)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

import specialist_handover.nodes.handover.handover_to_specialist
from specialist_handover.nodes import handover_to_specialist, perform_handover
from specialist_handover.nodes.handover.handover_to_specialist import render_package
from specialist_handover.state import TokenCounter

ARGUMENTS = [
    "specialist_profile",
    "topic",
    "summary",
    "recent_turns",
    "decisions",
    "artifacts",
    "return_condition",
    "handover_reason",
    "project_root",
    "max_context_tokens",
    "include_recent_turns",
]
DOCUMENTED_PACKAGE_KEYS = {
    "specialist": str,
    "topic": str,
    "summary": str,
    "briefing_file": str,
    "estimated_tokens": int,
    "max_context_tokens": int,
    "oversize_warning": bool,
}
DOCUMENTED_BRIEFING_KEYS = {
    "path": str,
    "existed_before": bool,
    "newly_created": bool,
    "size_bytes": int,
}
TURNS = [
    f"turn {i}: {'user' if i % 2 else 'assistant'} says something about the hero" for i in range(8)
]


def invoke(**args) -> str:
    answer = handover_to_specialist.invoke(args)
    assert isinstance(answer, str)
    return answer


def split_answer(answer: str) -> tuple[dict, list[str]]:
    """The JSON object (first line) and the WARNING:/NOTE: lines after it."""
    assert not answer.startswith("ERROR"), answer
    first, *rest = answer.split("\n")
    return json.loads(first), rest


def required(project_root, **extra) -> dict:
    return {
        "specialist_profile": "frontend_designer",
        "topic": "landing-page-hero",
        "project_root": str(project_root),
        **extra,
    }


def test_tool_is_a_langchain_tool_named_handover_to_specialist():
    assert isinstance(handover_to_specialist, BaseTool)
    assert handover_to_specialist.name == "handover_to_specialist"
    schema = convert_to_openai_tool(handover_to_specialist)["function"]
    assert schema["name"] == "handover_to_specialist"
    assert list(schema["parameters"]["properties"]) == ARGUMENTS
    assert sorted(schema["parameters"]["required"]) == [
        "project_root",
        "specialist_profile",
        "topic",
    ]
    enum = schema["parameters"]["properties"]["return_condition"]["enum"]
    assert enum == ["user_request", "task_complete", "after_reply"]


def test_tool_accepts_all_eleven_arguments(handover_args, handover_dir):
    assert sorted(handover_args) == sorted(ARGUMENTS)
    result, extra = split_answer(invoke(**handover_args))
    assert result["status"] == "ok"
    assert extra == []
    text = (handover_dir / os.path.basename(result["briefing"]["path"])).read_text("utf-8")
    for value in [
        handover_args["summary"],
        handover_args["handover_reason"],
        *handover_args["recent_turns"],
        *handover_args["decisions"],
        *handover_args["artifacts"],
    ]:
        assert value in text


LABEL = "🖌️ [frontend designer]"


def test_defaults_are_3000_tokens_5_recent_turns_and_user_request(project_root):
    outcome = perform_handover(required(project_root, recent_turns=TURNS))
    assert not isinstance(outcome, str), outcome
    assert outcome.result["package"]["max_context_tokens"] == 3000
    assert outcome.package["recent_turns"] == TURNS[-5:]
    assert outcome.package["return_condition"] == "user_request"
    text = open(outcome.result["briefing"]["path"], encoding="utf-8").read()
    assert "- **Return condition:** user_request\n" in text
    assert "- **Package tokens:** " in text and " / 3000\n" in text


@pytest.mark.parametrize("keep", [0, 1, 3, 8, 50])
def test_recent_turns_are_trimmed_to_the_last_n(project_root, keep):
    outcome = perform_handover(
        required(project_root, recent_turns=TURNS, include_recent_turns=keep)
    )
    assert not isinstance(outcome, str), outcome
    kept = TURNS[-keep:] if keep else []
    assert outcome.package["recent_turns"] == kept
    rendered = render_package(outcome.package, LABEL)
    for turn in TURNS:
        assert (turn in rendered) == (turn in kept)
    briefing = open(outcome.result["briefing"]["path"], encoding="utf-8").read()
    for turn in TURNS:
        assert (turn in briefing) == (turn in kept)


def test_estimated_tokens_equals_the_count_of_the_rendered_package(handover_args):
    handover_args["recent_turns"] = TURNS
    handover_args["include_recent_turns"] = 4
    outcome = perform_handover(handover_args)
    assert not isinstance(outcome, str), outcome
    estimated = outcome.result["package"]["estimated_tokens"]
    assert estimated == TokenCounter().count_text(render_package(outcome.package, LABEL))
    assert outcome.package["rendered"] == render_package(outcome.package, LABEL)

    # the tool's JSON gives the same figure, recomputed from the inputs alone
    result, _ = split_answer(invoke(**{**handover_args, "topic": "second-topic"}))
    package = {
        "specialist": "frontend_designer",
        "topic": "second-topic",
        "summary": handover_args["summary"],
        "briefing_file": result["package"]["briefing_file"],
        "return_condition": "user_request",
        "reason": handover_args["handover_reason"],
        "from_agent": "",
        "recent_turns": TURNS[-4:],
        "decisions": handover_args["decisions"],
        "artifacts": handover_args["artifacts"],
    }
    assert result["package"]["estimated_tokens"] == TokenCounter().count_text(
        render_package(package, LABEL)  # type: ignore[arg-type]
    )


def test_oversize_warning_and_a_warning_line_when_over_budget(project_root):
    fits = perform_handover(required(project_root, recent_turns=TURNS))
    assert not isinstance(fits, str), fits
    tokens = fits.result["package"]["estimated_tokens"]

    # exactly at the budget: no warning
    result, extra = split_answer(
        invoke(**required(project_root, recent_turns=TURNS, max_context_tokens=tokens))
    )
    assert result["package"]["estimated_tokens"] == tokens
    assert result["package"]["oversize_warning"] is False
    assert not any(line.startswith("WARNING:") for line in extra)

    # one token over: flag and a WARNING: line naming both figures
    result, extra = split_answer(
        invoke(**required(project_root, recent_turns=TURNS, max_context_tokens=tokens - 1))
    )
    assert result["package"]["oversize_warning"] is True
    assert result["package"]["max_context_tokens"] == tokens - 1
    warnings = [line for line in extra if line.startswith("WARNING:")]
    assert len(warnings) == 1
    assert f"{tokens} tokens" in warnings[0]
    assert f"max_context_tokens={tokens - 1}" in warnings[0]


def words(n: int) -> str:
    text = " ".join(["cat"] * n)
    assert TokenCounter().count_text(text) == n  # precondition of the NOTE tests
    return text


def test_note_when_summary_is_over_300_tokens(project_root):
    result, extra = split_answer(invoke(**required(project_root, summary=words(301))))
    assert extra == ["NOTE: the summary is 301 tokens; at most 300 are recommended."]
    assert result["status"] == "ok"


def test_no_note_when_summary_is_300_tokens(project_root):
    result, extra = split_answer(invoke(**required(project_root, summary=words(300))))
    assert extra == []
    assert "notes" not in result


def test_return_json_has_the_documented_keys_and_nesting(handover_args):
    result, _ = split_answer(invoke(**handover_args))
    assert {"status", "persona_marker", "package", "briefing", "next_step"} <= set(result)
    assert result["status"] == "ok"
    assert isinstance(result["persona_marker"], str)
    assert isinstance(result["next_step"], str) and result["next_step"]
    for key, kind in DOCUMENTED_PACKAGE_KEYS.items():
        assert type(result["package"][key]) is kind, key
    for key, kind in DOCUMENTED_BRIEFING_KEYS.items():
        assert type(result["briefing"][key]) is kind, key
    assert result["package"]["briefing_file"] == result["briefing"]["path"]


def test_seed_example_frontend_designer_landing_page_hero(project_root, handover_dir, pin_now):
    # 00:30 on 6 June in UTC+3 is still 5 June in UTC: the file name uses the UTC date
    pin_now(datetime(2026, 6, 6, 0, 30, tzinfo=timezone(timedelta(hours=3))))
    answer = invoke(
        specialist_profile="frontend_designer",
        topic="landing-page-hero",
        summary="...",
        project_root=str(project_root),
    )
    result, extra = split_answer(answer)
    path = str(handover_dir / "frontend-designer-landing-page-hero-2026-06-05.md")
    assert os.listdir(handover_dir) == [os.path.basename(path)]
    assert result["status"] == "ok"
    assert result["persona_marker"] == "[frontend designer]"
    package = result["package"]
    assert package["specialist"] == "frontend_designer"
    assert package["topic"] == "landing-page-hero"
    assert package["summary"] == "..."
    assert package["briefing_file"] == path
    assert 0 < package["estimated_tokens"] <= 3000
    assert package["max_context_tokens"] == 3000
    assert package["oversize_warning"] is False
    assert result["briefing"]["path"] == path
    assert result["briefing"]["existed_before"] is False
    assert result["briefing"]["newly_created"] is True
    assert result["briefing"]["size_bytes"] == os.path.getsize(path)
    assert "frontend_designer" in result["next_step"]
    assert extra == []

    # a second handover on the same topic and day goes to the same, now existing, file
    result2, _ = split_answer(
        invoke(
            specialist_profile="frontend_designer",
            topic="Landing Page Hero",
            summary="a later, different handover",
            project_root=str(project_root),
        )
    )
    assert result2["briefing"]["path"] == path
    assert result2["briefing"]["existed_before"] is True
    assert result2["briefing"]["newly_created"] is False
    assert result2["briefing"]["size_bytes"] == os.path.getsize(path)
    assert result2["briefing"]["size_bytes"] > result["briefing"]["size_bytes"]


def test_briefing_file_name_uses_the_current_utc_date(project_root):
    before = datetime.now(UTC).date()
    result, _ = split_answer(invoke(**required(project_root)))
    after = datetime.now(UTC).date()
    name = os.path.basename(result["briefing"]["path"])
    assert name in {
        f"frontend-designer-landing-page-hero-{day:%Y-%m-%d}.md" for day in (before, after)
    }


@pytest.mark.parametrize("condition", ["user_request", "task_complete", "after_reply"])
def test_valid_return_conditions_are_accepted_and_logged(project_root, condition):
    outcome = perform_handover(required(project_root, return_condition=condition))
    assert not isinstance(outcome, str), outcome
    assert outcome.result["package"]["return_condition"] == condition
    text = open(outcome.result["briefing"]["path"], encoding="utf-8").read()
    assert f"- **Return condition:** {condition}\n" in text


def test_invalid_return_condition_is_an_error_listing_the_valid_ones(project_root):
    answer = invoke(**required(project_root, return_condition="when_done"))
    assert answer == (
        "ERROR: invalid return_condition 'when_done'; "
        "valid conditions: user_request, task_complete, after_reply"
    )
    assert list(project_root.iterdir()) == []


def test_tool_call_gets_a_tool_message_answer(project_root):
    call = {
        "type": "tool_call",
        "id": "call_42",
        "name": "handover_to_specialist",
        "args": required(project_root),
    }
    message = handover_to_specialist.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_42"
    assert json.loads(message.content)["status"] == "ok"

    refused = handover_to_specialist.invoke({**call, "args": {"topic": "x"}})
    assert isinstance(refused, ToolMessage)
    assert refused.content == "ERROR: specialist_profile is required"


def test_tool_never_raises_on_an_unexpected_failure(project_root, monkeypatch):
    def explode(**_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(
        specialist_handover.nodes.handover.handover_to_specialist, "build_stage1_package", explode
    )
    answer = invoke(**required(project_root))
    assert answer == "ERROR: handover failed unexpectedly: RuntimeError: boom"
    assert list(project_root.iterdir()) == []


def test_tool_function_refuses_positional_arguments():
    answer = handover_to_specialist.func("frontend_designer", "topic")
    assert answer == "ERROR: handover_to_specialist takes keyword arguments (a JSON object)"


def test_empty_return_condition_means_the_default(handover_args):
    result = handover_to_specialist.invoke({**handover_args, "return_condition": ""})
    assert json.loads(result.splitlines()[0])["package"]["return_condition"] == "user_request"
