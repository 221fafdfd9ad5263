"""The node that knows decides each hop (`Command(goto=...)`), and Studio draws the same graph.

An agent's node says where its turn goes (the handover or consult node, back to the
orchestrator, or the end), the handover node goes to whoever holds the conversation (or
ends the turn it ended), the consult node sends its tasks; the only conditional edge left
is where a run starts. Each declares its destinations, so `get_graph()` draws every edge.
"""

from __future__ import annotations

import pytest
from langgraph.graph import END, START

from specialist_handover import build_graph
from specialist_handover.specialists import builtin_profiles
from specialist_handover.state.schema import after_reply

PROFILES = builtin_profiles()
SPECIALISTS = list(PROFILES.specialists)
MEMBERS = ["orchestrator", *SPECIALISTS]


def expected_edges() -> set[tuple[str, str, bool]]:
    edges = {(START, m, True) for m in MEMBERS}
    edges |= {("orchestrator", t, True) for t in ("handover", "consult", END)}
    for name in SPECIALISTS:
        edges |= {(name, t, True) for t in ("handover", "orchestrator", END)}
    # the handover node goes to itself too: a reviewer's edit that did not validate is
    # answered and made again as a new call, reviewed again
    edges |= {("handover", t, True) for t in [*MEMBERS, "handover", END]}
    edges |= {("consult", t, True) for t in ("consultant", "orchestrator", "consult", END)}
    edges |= {("consultant", "consult_answers", False), ("consult_answers", "orchestrator", False)}
    return edges


def test_studio_draws_every_hop_the_nodes_can_take():
    drawn = build_graph().get_graph()
    assert {(e.source, e.target, e.conditional) for e in drawn.edges} == expected_edges()


def test_the_only_conditional_edge_is_where_a_run_starts():
    builder_edges = build_graph().builder.branches
    assert list(builder_edges) == [START]
    assert list(builder_edges[START]) == ["route_by_active_agent"]


@pytest.mark.parametrize(
    ("condition", "failed", "then"),
    [
        ("user_request", False, "keep"),
        (None, False, "keep"),
        ("after_reply", False, "hand_back"),
        ("task_complete", False, "hand_back_and_answer"),
        ("user_request", True, "hand_back_and_answer"),
        ("after_reply", True, "hand_back_and_answer"),
    ],
)
def test_the_return_condition_rule_lives_in_one_function(condition, failed, then):
    assert after_reply(condition, failed=failed) == then
