"""The orchestrator's first request stays lean, and each profile is described in it once.

The request is captured for real: a chat model passed to `build_graph` records the first
model call of a new thread (its messages, the system prompt first, and the tool schemas
it was bound to). It is counted as `bench/bench_vs_peers.py` counts "receiver tokens
with schemas": the messages with the project's own counter (o200k, gpt-4o's encoding),
plus the JSON of the tool schemas. Each profile is described once, in
`handover_to_specialist`'s description; `consult_specialists` refers to that list
(docs/GUIDE.md, "Who is described where").
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import Profile, build_graph
from specialist_handover.specialists import (
    ORCHESTRATOR_PROFILE,
    ProfileRegistry,
    builtin_profiles,
)
from specialist_handover.state import token_counter
from tests.support.models import ScriptedChatModel

BUILTINS = builtin_profiles()
REQUEST = "Please design the landing page hero"
BENCH_SPECIALISTS = ("frontend_designer", "solution_architect", "test_debug_engineer")
"""The specialists of bench/peers_workloads.py (`SPECIALISTS`)."""
DOCS_WRITER = Profile(
    name="docs_writer",
    emoji="📘",
    description="Writes user documentation: tutorials, how-to guides and READMEs.",
    keywords=("tutorial", "readme"),
    prompt="You are the Docs Writer.",
)


def first_request(ctx: dict[str, Any], profiles: Any = None) -> tuple[list[Any], list[dict]]:
    """The orchestrator's first model request of a new thread: its messages and tools."""
    model = ScriptedChatModel()  # answers in plain text: the orchestrator keeps the turn
    graph = build_graph(checkpointer=InMemorySaver(), model=model, profiles=profiles)
    graph.invoke(
        {"messages": [("user", REQUEST)]}, {"configurable": {"thread_id": "t"}}, context=ctx
    )
    assert model.bound_tools[0] == ["handover_to_specialist", "consult_specialists"]
    return model.requests[0], model.bound_tools_schemas[0]


def tokens(request: list[Any], tools: list[dict]) -> int:
    """System prompt and messages (with the chat format's framing) plus the tools' JSON."""
    counter = token_counter("o200k_base")
    return counter.count_messages(request) + counter.count_text(json.dumps(tools, sort_keys=True))


def texts(request: list[Any], tools: list[dict]) -> list[str]:
    """Every text the model reads: each message's, and every string in the tool schemas."""

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return []

    return [str(m.content) for m in request] + strings(tools)


def times_described(profile: Profile, request: list[Any], tools: list[dict]) -> int:
    return sum(text.count(profile.description) for text in texts(request, tools))


def test_the_first_request_with_the_built_in_specialists_fits_1650_tokens(ctx):
    """About 1,535 tokens (system 337, handover_to_specialist 786, consult_specialists 401);
    it was about 2,150 when both tools listed every profile."""
    request, tools = first_request(ctx)
    assert tokens(request, tools) <= 1650


def test_each_profile_is_described_once(ctx):
    request, tools = first_request(ctx)
    for name in BUILTINS.specialists:
        assert times_described(BUILTINS[name], request, tools) == 1, name
    # the orchestrator is no one's target: its own description is not listed
    assert times_described(BUILTINS[ORCHESTRATOR_PROFILE], request, tools) == 0
    handover, consult = (t["function"] for t in tools)
    assert all(
        f"{n}: {BUILTINS[n].description}" in handover["description"] for n in BUILTINS.specialists
    )
    assert "handover_to_specialist" in consult["description"]


def test_a_profile_the_user_adds_is_described_once_too(ctx):
    request, tools = first_request(ctx, profiles=[DOCS_WRITER])
    assert times_described(DOCS_WRITER, request, tools) == 1
    consult = tools[1]["function"]
    assert (
        "docs_writer"
        in consult["parameters"]["properties"]["consults"]["items"]["properties"][
            "specialist_profile"
        ]["enum"]
    )
    assert tokens(request, tools) <= 1650 + 50  # one more profile: its line and its enum entries


def test_with_the_benchmarks_three_specialists(ctx):
    """The orchestrator with the three specialists of bench/peers_workloads.py.

    Measured the same way (this request; langgraph-swarm 0.1 as bench/peers_workloads.py's
    `build_swarm` builds it, the orchestrator's prompt as its system prompt and one
    argument-free `transfer_to_<name>` tool per specialist): swarm's first request is 485
    tokens with this orchestrator prompt (661 with the longer prompt it had before). Ours is
    about 1,155 (it was 1,504): 2.4x swarm's, not the 1.2x (582) aimed at. The gap is
    structure, not prose: our two tools' JSON schemas (seven handover arguments, the consult's
    entries and shared context), without any description at all, cost about 360 tokens,
    swarm's three tools 192 in all. 1.2x would take a smaller model-facing contract (see
    docs/GUIDE.md, "Who is described where").
    """
    profiles = ProfileRegistry([BUILTINS[n] for n in (ORCHESTRATOR_PROFILE, *BENCH_SPECIALISTS)])
    request, tools = first_request(ctx, profiles=profiles)
    for name in BENCH_SPECIALISTS:
        assert times_described(BUILTINS[name], request, tools) == 1, name
    assert tokens(request, tools) <= 1250


def test_a_specialists_handover_tool_names_its_targets_without_describing_them() -> None:
    """Every model call of a specialist carries its tools: the profiles' descriptions are the
    orchestrator's to read; a specialist's handover tool names its targets in the enum only."""
    from specialist_handover.nodes.handover.transfer import handover_tools
    from specialist_handover.specialists import builtin_profiles

    profiles = builtin_profiles()
    (handover, *_) = handover_tools("solution_architect")
    schema = handover.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert handover.description.count(":") <= 1  # no "name: description" lines
    assert not any(p.description in handover.description for p in profiles.values())
    targets = schema["properties"]["specialist_profile"]["enum"]
    assert "solution_architect" not in targets and "a0_software_orchestrator" in targets
    assert set(targets) == set(profiles) - {"solution_architect"}
