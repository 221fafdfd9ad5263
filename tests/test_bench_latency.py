"""bench/bench_vs_peers.py's figures a user feels: the latency model, the cost, the block
means and the goal judgements (pure functions), and where a model call runs (parallel
consult tasks overlap).

The benchmark itself needs the bench extra (the peers); these functions do not: the
module imports without langgraph-swarm and langgraph-supervisor (CI installs `.[test]`).
"""

from __future__ import annotations

import math
import sys
import tempfile
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

try:
    import bench_vs_peers as bvp
    import peers_workloads as pw
except (ImportError, SystemExit) as exc:  # pragma: no cover - the package's own deps missing
    pytest.skip(f"bench code does not import here: {exc}", allow_module_level=True)


# --- the latency model ----------------------------------------------------------------------------


def test_a_call_costs_its_base_plus_its_input_tokens() -> None:
    assert bvp.call_seconds(10_000, 0.3, 0.00005) == pytest.approx(0.8)
    assert bvp.call_seconds(0, 0.3, 0.00005) == pytest.approx(0.3)
    assert bvp.call_seconds(10_000, 0, 0) == 0


def test_calls_one_after_another_are_summed() -> None:
    calls = [[1_000, 0, 0], [2_000, 1, 1]]  # two root steps
    assert bvp.model_seconds(calls, 0.3, 0.00005) == pytest.approx(0.35 + 0.40)
    same_task = [[1_000, 0, 0], [1_000, 0, 0]]  # an agent's loop: one task, two calls
    assert bvp.model_seconds(same_task, 0.3, 0.00005) == pytest.approx(0.70)
    assert bvp.model_seconds([], 0.3, 0.00005) == 0


def test_calls_in_parallel_tasks_cost_the_slowest_task() -> None:
    calls = [
        [1_000, 0, 0],  # the orchestrator asks
        [4_000, 1, 1],  # three consultants in one step; the first calls twice
        [1_000, 1, 1],
        [2_000, 1, 2],
        [6_000, 1, 3],
        [500, 2, 4],  # the orchestrator answers
    ]
    lanes = max(0.5 + 0.35, 0.4, 0.6)
    assert bvp.model_seconds(calls, 0.3, 0.00005) == pytest.approx(0.35 + lanes + 0.325)


def test_a_turns_modelled_time_is_its_framework_time_plus_its_calls() -> None:
    calls = [[2_000, 0, 0], [3_000, 1, 1]]
    assert bvp.modelled_seconds(25.0, calls, 0.3, 0.00005) == pytest.approx(0.025 + 0.4 + 0.45)
    # no latency: the zero-latency figure, the framework time alone
    assert bvp.modelled_seconds(25.0, calls, 0, 0) == pytest.approx(0.025)


def test_input_cost() -> None:
    assert bvp.input_cost(1_000_000, 2.50) == pytest.approx(2.50)
    assert bvp.input_cost(3_400, 2.50) == pytest.approx(0.0085)
    assert bvp.input_cost(3_400, 0) == 0


# --- where a call runs ----------------------------------------------------------------------------


def test_call_rows_number_the_root_steps_and_their_tasks() -> None:
    places = [
        ("step-a", "orchestrator:1"),
        ("step-b", "consultant:x"),
        ("step-b", "consultant:y"),
        ("step-b", "consultant:x"),
        ("step-c", "orchestrator:2"),
    ]
    rows = pw.call_rows(places, [10, 20, 30, 40, 50])
    assert rows == [[10, 0, 0], [20, 1, 1], [30, 1, 2], [40, 1, 1], [50, 2, 3]]
    # outside a graph run: each call a stage of its own
    assert pw.call_rows([("", ""), ("", "")], [1, 2]) == [[1, 0, 0], [2, 1, 1]]
    series = {"calls": [rows, pw.call_rows([("", ""), ("", "")], [1, 2])]}
    assert bvp.parallel_calls(series) == 3


def test_consultants_calls_run_in_one_step_in_parallel_tasks() -> None:
    """A real consult of two specialists: their calls share the orchestrator's root step
    (LangGraph Send tasks) in two lanes, so the latency model takes the slower one."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.checkpoint.memory import InMemorySaver

    from specialist_handover import build_graph
    from specialist_handover.nodes.tools.names import CONSULT
    from specialist_handover.specialists import ORCHESTRATOR_PROFILE

    places: list[tuple[str, str, str]] = []

    class Placed(BaseChatModel):
        agent: str

        @property
        def _llm_type(self) -> str:
            return "placed"

        def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
            places.append((self.agent, *pw.call_place()))
            asked = isinstance(messages[-1], ToolMessage)
            if self.agent == "orchestrator" and not asked:
                entries = [
                    {"specialist_profile": p, "question": "should the hero render on the server?"}
                    for p in ("frontend_designer", "solution_architect")
                ]
                message = AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": CONSULT,
                            "id": "c1",
                            "args": {"consults": entries, "topic": "hero"},
                        }
                    ],
                )
            else:
                message = AIMessage(content=f"{self.agent} answers.")
            return ChatResult(generations=[ChatGeneration(message=message)])

    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={ORCHESTRATOR_PROFILE: Placed(agent="orchestrator"), "default": Placed(agent="s")},
    )
    with tempfile.TemporaryDirectory() as root:
        graph.invoke(
            {"messages": [HumanMessage("Ask the architect and the designer about the hero.")]},
            {"configurable": {"thread_id": "t"}},
            context={"project_root": root, "model": "offline"},
            durability="sync",
        )
    assert [a for a, _, _ in places] == ["orchestrator", "s", "s", "orchestrator"]
    rows = pw.call_rows([(step, task) for _, step, task in places], [1_000, 2_000, 4_000, 500])
    (_, first_stage, _), (_, s1, l1), (_, s2, l2), (_, last_stage, _) = rows
    assert s1 == s2 and l1 != l2  # one step, two tasks
    assert len({first_stage, s1, last_stage}) == 3
    assert places[1][2].startswith("consultant:")
    assert bvp.model_seconds(rows, 0.3, 0.00005) == pytest.approx(0.35 + 0.5 + 0.325)
    assert bvp.parallel_calls({"calls": [rows]}) == 2


# --- blocks of turns -------------------------------------------------------------------------------


def test_block_mean_is_the_mean_of_its_turns() -> None:
    values = [float(v) for v in range(1, 21)]  # turn n took n
    assert bvp.block_mean(values, 1, 10) == pytest.approx(5.5)
    assert bvp.block_mean(values, 11, 20) == pytest.approx(15.5)
    assert bvp.block_mean(values, 20, 20) == pytest.approx(20)
    assert math.isnan(bvp.block_mean(values, 21, 30))
    assert math.isnan(bvp.block_mean(values, 0, 5))


def test_the_blocks_reported_are_those_within_the_run_and_its_last_ten() -> None:
    assert bvp.latency_blocks(300) == [(1, 10), (51, 60), (291, 300)]
    assert bvp.latency_blocks(1000) == [(1, 10), (51, 60), (291, 300), (991, 1000)]
    assert bvp.latency_blocks(230) == [(1, 10), (51, 60), (221, 230)]
    assert bvp.latency_blocks(12) == [(1, 10), (3, 12)]
    assert bvp.latency_blocks(10) == [(1, 10)]
    assert bvp.latency_blocks(4) == [(1, 4)]


def test_the_limits_per_block() -> None:
    assert bvp.block_limit(1) == 1.0
    assert bvp.block_limit(3) is None
    assert bvp.block_limit(41) is None
    assert bvp.block_limit(51) == 0.5
    assert bvp.block_limit(291) == 0.5
    assert bvp.block_limit(991) == 0.5


# --- the goals --------------------------------------------------------------------------------------


def fake_series(turns: int, ms: float, tokens: int, calls_a_turn: int) -> dict[str, list[Any]]:
    """A system's run: every turn `calls_a_turn` sequential calls of `tokens` tokens each."""
    return {
        "turn": list(range(1, turns + 1)),
        "ms": [ms] * turns,
        "input_tokens": [tokens * calls_a_turn] * turns,
        "calls": [[[tokens, i, i] for i in range(calls_a_turn)] for _ in range(turns)],
    }


def fake_runs(turns: int, **systems: tuple[float, int, int]) -> list[dict[str, dict[str, Any]]]:
    return [
        {
            name: {"series": fake_series(turns, *spec), "finish": {}}
            for name, spec in systems.items()
        }
        for _ in range(3)
    ]


def test_user_figures_per_turn() -> None:
    runs = fake_runs(2, ours=(20.0, 3_000, 1))
    bvp.add_user_figures(runs, 0.3, 0.00005, 2.50)
    series = runs[0]["ours"]["series"]
    assert series["modelled_s"] == pytest.approx([0.02 + 0.3 + 0.15] * 2)
    assert series["cost_usd"] == pytest.approx([0.0075] * 2)


def test_user_goals_met_and_missed() -> None:
    systems = ["ours", "swarm", "swarm-trim"]
    # ours: one call of 3,000 tokens; swarm: one of 20,000; swarm-trim: one of 2,500
    runs = fake_runs(
        60, ours=(30.0, 3_000, 1), swarm=(20.0, 20_000, 1), **{"swarm-trim": (25.0, 2_500, 1)}
    )
    bvp.add_user_figures(runs, 0.3, 0.00005, 2.50)
    rows = bvp.user_goal_rows(runs, systems, bvp.latency_blocks(60))
    assert [r["limit"] for r in rows] == [1.0, 0.5, 1.0]
    early, late, tokens = rows
    ours_s, swarm_s = 0.03 + 0.45, 0.02 + 1.3
    assert early["median"] == pytest.approx(ours_s / swarm_s)
    assert bvp.verdict(early).startswith("met (")
    assert late["median"] == pytest.approx(ours_s / swarm_s)  # 0.364: met
    assert bvp.verdict(late) == "met (27% under the limit)"
    assert tokens["median"] == pytest.approx(3_000 / 2_500)
    assert bvp.verdict(tokens) == "MISSED by 1.20x the limit"
    assert tokens["others"] == {"swarm": pytest.approx(3_000 / 20_000)}
    assert all(r["role"] == "goal" for r in rows)


def test_the_tokens_goal_needs_swarm_trim() -> None:
    runs = fake_runs(10, ours=(30.0, 3_000, 1), swarm=(20.0, 2_000, 1))
    bvp.add_user_figures(runs, 0.3, 0.00005, 2.50)
    rows = bvp.user_goal_rows(runs, ["ours", "swarm"], bvp.latency_blocks(10))
    assert rows[-1]["note"] == "needs swarm-trim in --systems"
    assert bvp.verdict(rows[-1]) == "n/a"
    assert bvp.user_goal_rows(runs, ["swarm"], bvp.latency_blocks(10)) == []


def test_zero_latency_gives_the_framework_ratio() -> None:
    runs = fake_runs(10, ours=(30.0, 3_000, 2), swarm=(20.0, 2_000, 1))
    bvp.add_user_figures(runs, 0, 0, 2.50)
    (early, _) = bvp.user_goal_rows(runs, ["ours", "swarm"], bvp.latency_blocks(10))
    assert early["median"] == pytest.approx(1.5)
    assert bvp.verdict(early) == "MISSED by 1.50x the limit"


def test_verdicts() -> None:
    def row(median: float, limit: float, unit: str = "ratio") -> dict[str, Any]:
        return {"median": median, "limit": limit, "unit": unit}

    assert bvp.verdict(row(0.25, 0.5)) == "met (50% under the limit)"
    assert bvp.verdict(row(0.5, 0.5)) == "met (0% under the limit)"
    assert bvp.verdict(row(0.6, 0.5)) == "MISSED by 1.20x the limit"
    assert bvp.verdict(row(17.3, 20.0, "ms")) == "met (2.7 ms to spare)"
    assert bvp.verdict(row(27.4, 20.0, "ms")) == "MISSED by 7.4 ms"
    assert bvp.verdict(row(float("nan"), 1.0)) == "n/a"


def test_the_latency_line_names_the_model() -> None:
    options = Namespace(latency_base=0.3, latency_per_token=0.00005, price_per_mtok=2.5)
    line = bvp.latency_line(options)
    assert "0.3 s + 0.05 ms x its input tokens" in line
    assert "2.5 USD per million" in line
