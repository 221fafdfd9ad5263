"""Prompts tell the truth: every tool and argument a profile's prompt names exists for that agent.

A real model follows its prompt. So each built-in profile's prompt is read
against the tools its agent is really bound to (`agent_tools`, what
`build_graph` gives it): every tool the graph knows that the prompt names
must be bound to that agent, and every identifier in backticks must be one of
its tools (with that tool's arguments when written as a call), an argument or
an allowed value of one of its tools, or a profile name.
"""

from __future__ import annotations

import re

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from specialist_handover.graph.builder import agent_tools
from specialist_handover.nodes.agents.profile_agent import system_prompt
from specialist_handover.nodes.models.resolve import ModelChoice
from specialist_handover.specialists import builtin_profiles

PROFILES = builtin_profiles()
MODELS = ModelChoice(None, PROFILES)
BOUND = {
    name: [convert_to_openai_tool(t)["function"] for t in agent_tools(PROFILES, name, MODELS, [])]
    for name in PROFILES
}
EVERY_TOOL = {tool["name"] for tools in BOUND.values() for tool in tools}
IDENTIFIER = re.compile(r"^([a-z][a-z0-9_]*)(?:\(([a-z0-9_, ]*)\))?$")


def vocabulary(tools: list[dict]) -> tuple[dict[str, set[str]], set[str]]:
    """{tool: its arguments}, and every argument name and allowed value of those tools."""
    arguments = {t["name"]: set((t.get("parameters") or {}).get("properties") or {}) for t in tools}
    words: set[str] = set()
    for tool in tools:
        for name, spec in ((tool.get("parameters") or {}).get("properties") or {}).items():
            words.add(name)
            words.update(str(v) for v in spec.get("enum") or [])
    return arguments, words


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_tool_and_argument_a_prompt_names_exists_for_that_agent(name):
    prompt = system_prompt(PROFILES[name])  # the profile's prompt as the agent is given it
    arguments, words = vocabulary(BOUND[name])
    named_tools = {tool for tool in EVERY_TOOL if re.search(rf"\b{tool}\b", prompt)}
    assert named_tools <= set(arguments), (
        f"{name} names tools it lacks: {named_tools - set(arguments)}"
    )
    wrong = []
    for quoted in re.findall(r"`([^`\n]+)`", prompt):
        match = IDENTIFIER.match(quoted.strip())
        if match is None:
            continue  # a path, a command, a slug: not a name of ours
        word, call_args = match.group(1), match.group(2)
        if word in arguments:
            given = {a.strip() for a in (call_args or "").split(",") if a.strip()}
            if not given <= arguments[word]:
                wrong.append(f"{quoted}: {word} takes {sorted(arguments[word])}")
        elif call_args is not None or (word not in words and word not in PROFILES):
            wrong.append(f"{quoted}: no tool, argument or value of {name}'s tools")
    assert not wrong, f"{name}'s prompt: {wrong}"


def test_the_check_catches_a_tool_the_agent_lacks_and_a_wrong_argument():
    arguments, words = vocabulary(BOUND["a0_software_orchestrator"])
    assert "read_briefing" in EVERY_TOOL and "read_briefing" not in arguments
    assert "reason" not in words and "handover_reason" in words
    assert "return_to_orchestrator" not in arguments  # the orchestrator has no one to return to
