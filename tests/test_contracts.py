"""Contracts kept once: one package record, one module of defaults, one message-to-text helper.

The package a handover builds is one `HandoverPackage`: the state keeps it, the
tool's answer shows its public fields, the briefing entry and the review are
written from it, and the specialist receives it as data. Every default lives
in `state/defaults.py`; every message's text comes from `message_text`.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateUpdate

from specialist_handover import HandoverContext
from specialist_handover.nodes.handover.arguments import default_of
from specialist_handover.nodes.handover.handover_to_specialist import (
    PACKAGE_DATA_KEY,
    prepare_handover,
)
from specialist_handover.nodes.handover.review import review_payload
from specialist_handover.state import PUBLIC_PACKAGE_FIELDS, HandoverPackage, defaults, message_text
from tests.support.graphs import REQUESTS, make, say, state_of

REPO = Path(__file__).resolve().parents[1]
PRODUCTION = [
    p
    for folder in ("graph", "nodes", "specialists", "state")
    for p in (REPO / folder).rglob("*.py")
]


def test_the_state_the_answer_the_package_message_and_the_briefing_share_one_package(ctx):
    graph, model = make()
    say(graph, REQUESTS["frontend_designer"], ctx)
    state = state_of(graph)
    handover = state["handover"]
    package = {key: handover[key] for key in HandoverPackage.__annotations__}
    # the specialist received exactly that package, as data, beside its rendering
    specialist_request = model.requests[-1]
    opening = next(m for m in specialist_request if isinstance(m, HumanMessage))
    assert opening.additional_kwargs[PACKAGE_DATA_KEY] == package
    assert opening.content == package["rendered"]
    # the tool's answer shows the package's public fields
    answer = next(m for m in state["messages"] if m.type == "tool").content
    for key in ("specialist", "handover_id", "estimated_tokens", "max_context_tokens"):
        assert str(package[key]) in answer
    # the briefing entry is written from it
    entry = Path(package["briefing_file"]).read_text(encoding="utf-8")
    assert f"`{package['handover_id']}`" in entry and package["summary"] in entry
    assert set(PUBLIC_PACKAGE_FIELDS) <= set(HandoverPackage.__annotations__)


def test_the_review_shows_the_package_it_would_hand_over(handover_args):
    prepared = prepare_handover(handover_args)
    assert not isinstance(prepared, str)
    shown = review_payload(prepared, "orchestrator", None)
    package = prepared.package
    names = {"specialist_profile": "specialist", "handover_reason": "reason"}
    for field, value in shown.items():
        if field in ("warnings", "from_agent", "action_requests", "review_configs"):
            continue
        assert value == package[names.get(field, field)], field  # type: ignore[literal-required]


def test_every_default_is_written_once_in_the_defaults_module():
    context = {f.name: f.default for f in fields(HandoverContext)}
    assert context["max_context_tokens"] == defaults.MAX_CONTEXT_TOKENS == 3000
    assert context["include_recent_turns"] == defaults.INCLUDE_RECENT_TURNS == 5
    assert context["full_history_max_tokens"] == defaults.FULL_HISTORY_MAX_TOKENS == 50_000
    assert context["max_turns"] == defaults.MAX_TURNS == 10
    assert default_of("max_context_tokens") == defaults.MAX_CONTEXT_TOKENS
    assert default_of("include_recent_turns") == defaults.INCLUDE_RECENT_TURNS
    numbers = re.compile(r"(?<![\w.])(3000|3_000|50000|50_000|4000|4_000|32000|32_000)(?![\w.])")
    written = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in PRODUCTION
        if path.name != "defaults.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if numbers.search(line.split("#")[0])
        and not line.strip().startswith(("-", "(", "`"))
        and '"""' not in line
    ]
    # the deep demo's own smaller stage-2 cap, and a line's characters (not tokens) in read_file
    allowed = ("DEEP_FULL_HISTORY_CAP", "MAX_LINE_CHARS")
    assert [w for w in written if not any(name in w for name in allowed)] == [], written


def test_one_message_to_text_helper_reads_strings_blocks_and_chunks():
    assert message_text(HumanMessage("plain")) == "plain"
    blocks = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, "b"]
    assert message_text(AIMessage(content=blocks)) == "ab"
    assert message_text(AIMessageChunk(content="tok")) == "tok"
    joins = [
        str(path.relative_to(REPO))
        for path in PRODUCTION
        if re.search(r"get\(\"type\"\) == \"text\"", path.read_text(encoding="utf-8"))
    ]
    # no second helper joining a message's text blocks; token counting reads OpenAI's wire form
    # (each text block and each function call counted on its own), a different job
    assert joins == ["state/tokens.py"], joins


def test_a_profile_agent_state_stores_its_view_once():
    from specialist_handover.nodes.agents.profile_agent import build_profile_agent
    from specialist_handover.specialists import builtin_profiles

    profile = builtin_profiles()["hacker"]
    agent = build_profile_agent(agent="hacker", profile=profile, model_for=None, tools=[])  # type: ignore[arg-type]
    assert type(agent.channels["messages"]).__name__ == "DeltaChannel"
    assert InMemorySaver  # the graph's checkpointer stores the writes, see test_storage.py


def test_a_handover_stored_by_the_previous_version_still_opens_its_specialists_view(ctx):
    graph, model = make()
    say(graph, REQUESTS["frontend_designer"], ctx)
    config = {"configurable": {"thread_id": "t"}}
    old = dict(state_of(graph)["handover"])
    for key in ("recent_turns", "decisions", "artifacts"):  # fields the old record lacked
        old.pop(key)
    # as the previous version stored it (today's update_state would refuse the short record)
    CompiledStateGraph.bulk_update_state(
        graph, config, [[StateUpdate({"handover": old}, None, None)]]
    )
    values = say(graph, "Make the button bigger.", ctx)
    assert values["messages"][-1].name == "frontend_designer"
    data = model.requests[-1][1].additional_kwargs[PACKAGE_DATA_KEY]
    assert "recent_turns" not in data and data["topic"] == old["topic"]
