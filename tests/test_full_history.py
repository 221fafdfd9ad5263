"""Stage 2: `build_full_history` — the conversation so far, capped exactly, compacted oldest first."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from specialist_handover.nodes.history.full_history import FullHistory, build_full_history
from specialist_handover.state import TokenCounter
from tests.support.histories import WORDS, make_history, sentence, tool_output

HEADER = re.compile(
    r"^FULL HISTORY \(stage 2\): ([\d,]+) verbatim, ([\d,]+) compacted, "
    r"([\d,]+) tokens \(cap ([\d,]+)\)\n"
)
PACKAGE = (
    "🖌️ HANDOVER PACKAGE (stage 1)\nTopic: landing-page-hero\n\n## Summary\n"
    "The user wants a bold landing page for a coffee subscription.\n"
    "## Decisions so far\n- Use Tailwind\n- Hero has one call-to-action"
)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def header_numbers(result: FullHistory) -> tuple[int, int, int, int]:
    match = HEADER.match(result.text)
    assert match, result.text[:200]
    verbatim, compacted, tokens, cap = (int(g.replace(",", "")) for g in match.groups())
    return verbatim, compacted, tokens, cap


def recent_section(result: FullHistory) -> str:
    return result.text[result.text.index("\n## Last ") :]


def snapshot(messages: list[BaseMessage]) -> list[tuple[int, str, dict]]:
    return [(id(m), type(m).__name__, m.model_dump()) for m in messages]


# --- the cap and the header ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "cap"),
    [(10, 50_000), (10, 600), (1_000, 50_000), (1_000, 5_000), (10_000, 50_000)],
)
def test_result_never_exceeds_the_cap_and_its_token_count_is_exact(counter, size, cap):
    history = make_history(size, seed=size)
    result = build_full_history(history, package_text=PACKAGE, max_tokens=cap, counter=counter)
    assert result.tokens == counter.count_text(result.text) <= cap
    assert result.total_messages == size


@pytest.mark.parametrize("size", [10, 1_000, 10_000])
def test_header_states_verbatim_and_compacted_counts_and_the_exact_token_count(counter, size):
    history = make_history(size, seed=size + 1)
    result = build_full_history(history, package_text=PACKAGE, counter=counter)
    verbatim, compacted, tokens, cap = header_numbers(result)
    assert (verbatim, compacted, tokens, cap) == (
        result.turns_verbatim,
        result.turns_compacted,
        result.tokens,
        50_000,
    )
    assert verbatim + compacted == size
    assert tokens == counter.count_text(result.text)


@pytest.mark.parametrize("size", [10, 1_000, 10_000])
def test_package_and_last_keep_recent_messages_are_verbatim(counter, size):
    history = make_history(size, seed=size + 2)
    result = build_full_history(history, package_text=PACKAGE, counter=counter, keep_recent=10)
    assert PACKAGE in result.text
    recent = recent_section(result)
    for index, message in enumerate(history[-10:], start=size - 9):
        assert f"[#{index}] " in recent
        assert message.content in recent
    assert result.turns_verbatim >= 10


def test_a_history_within_the_cap_is_entirely_verbatim(counter):
    history = make_history(30, seed=7)
    result = build_full_history(history, package_text=PACKAGE, counter=counter)
    assert (result.turns_verbatim, result.turns_compacted) == (30, 0)
    assert all(message.content in result.text for message in history)
    assert "omitted:" not in result.text and "omitted]" not in result.text


def test_tool_calls_render_their_name_and_arguments_and_results_their_tool(counter):
    history = [
        HumanMessage("Find the hero component."),
        AIMessage(
            "",
            name="frontend_designer",
            tool_calls=[{"name": "search", "args": {"query": "Hero"}, "id": "call_1"}],
        ),
        ToolMessage("src/Hero.tsx", name="search", tool_call_id="call_1"),
        AIMessage("It is in src/Hero.tsx.", name="frontend_designer"),
    ]
    text = build_full_history(history, package_text=PACKAGE, counter=counter).text
    assert "[#1] Human: Find the hero component." in text
    assert '[#2] AI (frontend_designer):\n  → tool call search {"query": "Hero"}' in text
    assert "[#3] Tool (search): src/Hero.tsx" in text
    assert "[#4] AI (frontend_designer): It is in src/Hero.tsx." in text


def test_dict_messages_are_accepted_like_langchain_accepts_them(counter):
    history = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    result = build_full_history(history, package_text=PACKAGE, counter=counter)  # type: ignore[arg-type]
    assert "[#1] Human: hello" in result.text and "[#2] AI: hi" in result.text


def test_empty_history_gives_the_package_and_a_zero_header(counter):
    result = build_full_history([], package_text=PACKAGE, counter=counter)
    assert header_numbers(result)[:2] == (0, 0)
    assert PACKAGE in result.text
    assert result.tokens == counter.count_text(result.text)


# --- compaction order ----------------------------------------------------------------------


def _tool_heavy_history(rng: random.Random, pairs: int) -> list[BaseMessage]:
    history: list[BaseMessage] = []
    for i in range(pairs):
        history.append(HumanMessage(f"Question {i}: " + sentence(rng)))
        call = {"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"c{i}"}
        history.append(AIMessage(f"Reading f{i}.py.", tool_calls=[call]))
        history.append(ToolMessage(tool_output(rng, 200), name="read_file", tool_call_id=f"c{i}"))
        history.append(AIMessage(f"Answer {i}: " + sentence(rng)))
    return history


def test_long_tool_outputs_are_shortened_first_oldest_first(counter):
    history = _tool_heavy_history(random.Random(1), 12)
    cap = 12_000  # the turns fit; the 12 tool outputs (~3,900 tokens each) do not
    result = build_full_history(
        history, package_text=PACKAGE, max_tokens=cap, counter=counter, keep_recent=2
    )
    assert result.tokens == counter.count_text(result.text) <= cap
    shortened = [i for i, m in enumerate(history) if isinstance(m, ToolMessage)]
    shortened = [i for i in shortened if f"[#{i + 1}] Tool (read_file): " in result.text]
    cut = [i for i in shortened if history[i].content not in result.text]
    whole = [i for i in shortened if history[i].content in result.text]
    assert cut and whole and max(cut) < min(whole)  # oldest shortened, newest kept whole
    assert "more characters omitted]" in result.text
    for message in history:  # no turn was condensed: only tool outputs were shortened
        if not isinstance(message, ToolMessage):
            assert message.content in result.text
    assert result.turns_compacted == len(cut)


def test_turns_are_condensed_then_the_oldest_omitted_into_a_count(counter):
    history = make_history(2_000, seed=5)
    result = build_full_history(history, package_text=PACKAGE, max_tokens=20_000, counter=counter)
    match = re.search(r"\n\[([\d,]+) older messages omitted: #1–#(\d+)\]\n", result.text)
    assert match
    omitted = int(match.group(1).replace(",", ""))
    assert omitted == int(match.group(2)) > 0
    assert f"[#{omitted + 1}] " in result.text and f"[#{omitted}] " not in result.text
    first_kept = history[omitted]
    assert isinstance(first_kept.content, str)
    # the oldest kept message is condensed to one line (its first sentence)
    line = result.text.split(f"[#{omitted + 1}] ", 1)[1].split("\n", 1)[0]
    assert len(line.split()) <= 40
    assert result.turns_compacted >= omitted


# --- the input is only read ----------------------------------------------------------------


def test_input_list_and_messages_are_not_mutated(counter):
    history = make_history(500, seed=9)
    before_list, before = list(history), snapshot(history)
    build_full_history(history, package_text=PACKAGE, max_tokens=3_000, counter=counter)
    build_full_history(
        history, package_text=PACKAGE, max_tokens=3_000, counter=counter, summarize=lambda m, b: "s"
    )
    assert history == before_list and all(a is b for a, b in zip(history, before_list, strict=True))
    assert snapshot(history) == before


# --- the summarize callback ----------------------------------------------------------------


def test_summarize_is_called_once_with_the_oldest_messages_and_a_positive_budget(counter):
    history = make_history(400, seed=11)
    calls: list[tuple[list[BaseMessage], int]] = []

    def summarize(messages: list[BaseMessage], budget: int) -> str:
        calls.append((messages, budget))
        return "The user and the designer agreed on espresso brown and a single CTA."

    result = build_full_history(
        history, package_text=PACKAGE, max_tokens=8_000, counter=counter, summarize=summarize
    )
    assert len(calls) == 1
    messages, budget = calls[0]
    assert 0 < budget < 8_000
    assert all(a is b for a, b in zip(messages, history, strict=False))  # a prefix, oldest first
    assert f"[Summary of messages #1–#{len(messages)} by the summarizer]" in result.text
    assert "agreed on espresso brown and a single CTA." in result.text
    assert f"[#{len(messages) + 1}] " in result.text
    assert result.tokens == counter.count_text(result.text) <= 8_000
    assert result.turns_compacted >= len(messages)


def test_summary_longer_than_its_budget_is_clipped_to_it(counter):
    history = make_history(400, seed=12)
    budgets: list[int] = []

    def verbose(messages: list[BaseMessage], budget: int) -> str:
        budgets.append(budget)
        return "blah " * 50_000

    result = build_full_history(
        history, package_text=PACKAGE, max_tokens=6_000, counter=counter, summarize=verbose
    )
    assert result.tokens == counter.count_text(result.text) <= 6_000
    section = result.text.split("by the summarizer]\n", 1)[1].split("\n[#", 1)[0]
    assert section.endswith("… [summary clipped to its budget]")
    assert counter.count_text(section) <= budgets[0]


def test_failing_summarizer_falls_back_to_extractive_condensing(counter):
    history = make_history(400, seed=13)

    def broken(messages: list[BaseMessage], budget: int) -> str:
        raise RuntimeError("model unavailable")

    result = build_full_history(
        history,
        package_text=PACKAGE,
        max_tokens=6_000,
        counter=counter,
        keep_recent=3,
        summarize=broken,
    )
    assert "NOTE: the summarizer failed (RuntimeError: model unavailable)" in result.text
    assert "by the summarizer]" not in result.text
    assert result.tokens == counter.count_text(result.text) <= 6_000


def test_summarize_is_not_called_when_everything_fits(counter):
    def never(messages: list[BaseMessage], budget: int) -> str:
        raise AssertionError("called")

    result = build_full_history(
        make_history(20), package_text=PACKAGE, counter=counter, summarize=never
    )
    assert result.turns_compacted == 0


# --- when the package and the recent turns alone are too big -------------------------------


def test_recent_turns_over_the_cap_keep_the_package_and_truncate_the_oldest_recent(counter):
    rng = random.Random(3)
    history = [HumanMessage(f"Turn {i}: " + tool_output(rng, 60)) for i in range(12)]
    cap = 4_000  # each turn is ~1,200 tokens: the last 10 need ~12,000
    result = build_full_history(history, package_text=PACKAGE, max_tokens=cap, counter=counter)
    assert result.tokens == counter.count_text(result.text) <= cap
    assert PACKAGE in result.text
    assert history[-1].content in result.text  # the newest stays verbatim
    assert "NOTE: the package and the last 10 messages exceed the 4,000-token cap" in result.text
    assert "[truncated to fit the cap:" in result.text
    kept = [m for m in history if m.content in result.text]
    assert result.turns_verbatim == len(kept) >= 1
    assert kept == history[len(history) - len(kept) :]  # newest first


def test_package_over_the_cap_is_cut_by_tokens(counter):
    package = "Package line with details. " * 5_000
    result = build_full_history(
        make_history(50), package_text=package, max_tokens=1_000, counter=counter
    )
    assert result.tokens == counter.count_text(result.text) <= 1_000
    assert "NOTE: the handover package leaves no room in the 1,000-token cap." in result.text
    assert "Package line with details. Package line" in result.text
    assert result.turns_verbatim == 0 and result.turns_compacted == 50


@pytest.mark.parametrize("cap", [1, 2, 5, 10, 20, 30, 45, 80, 150])
def test_tiny_caps_are_never_exceeded(counter, cap):
    result = build_full_history(
        make_history(60), package_text=PACKAGE, max_tokens=cap, counter=counter
    )
    assert result.tokens == counter.count_text(result.text) <= cap
    assert result.turns_verbatim + result.turns_compacted == 60


@pytest.mark.parametrize(
    "kwargs", [{"max_tokens": 0}, {"max_tokens": -5}, {"keep_recent": -1}, {"max_tokens": 1.5}]
)
def test_invalid_arguments_are_programming_errors(counter, kwargs):
    with pytest.raises(ValueError):
        build_full_history([], package_text="", counter=counter, **kwargs)


# --- property: never over the cap, package and recent verbatim whenever they fit -----------

SIZES = [0, 1, 3, 8, 20, 60, 200, 200, 1_500, 12_000]  # words; a few huge ones


def _content(index: int, words: int, salt: str) -> str:
    rng = random.Random(index * 7919 + words)
    body = " ".join(rng.choice(WORDS) for _ in range(words))
    if words > 40:  # some structure: lines, punctuation, unicode
        body = body.replace(" the ", ".\n  The ", 3).replace(" and ", " & ünd ", 2)
    return f"{salt}{body}"


SALTS = ["", "", "ünïcødé ", "  spaced  ", "<|endoftext|> ", "🖌️ ", "\n\n", "a/b/", "   \n"]


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    size = draw(st.integers(0, 300))
    kinds = st.sampled_from(["human", "ai", "call", "tool", "system"])
    specs = draw(
        st.lists(
            st.tuples(kinds, st.sampled_from(SIZES), st.sampled_from(SALTS)),
            min_size=size,
            max_size=size,
        )
    )
    messages: list[BaseMessage] = []
    for i, (kind, words, salt) in enumerate(specs):
        text = _content(i, words, salt)
        if kind == "human":
            messages.append(HumanMessage(text))
        elif kind == "ai":
            messages.append(AIMessage(text, name="frontend_designer" if i % 2 else None))
        elif kind == "call":
            call = {"name": "search", "args": {"q": text[:200]}, "id": f"c{i}"}
            messages.append(AIMessage(text[:100], tool_calls=[call]))
        elif kind == "tool":
            messages.append(ToolMessage(text, name="search", tool_call_id=f"c{i}"))
        else:
            messages.append(SystemMessage(text))
    return messages


@settings(max_examples=60, deadline=None)
@given(
    history=histories(),
    package_words=st.sampled_from(SIZES),
    package_salt=st.text(max_size=20),
    cap=st.one_of(st.integers(1, 120), st.integers(120, 6_000), st.integers(6_000, 200_000)),
    keep_recent=st.integers(0, 12),
)
def test_property_never_over_cap_and_package_and_recent_verbatim_when_they_fit(
    history, package_words, package_salt, cap, keep_recent
):
    counter = _COUNTER
    package = _content(-1, package_words, f"PKG {package_salt}")
    result = build_full_history(
        history, package_text=package, max_tokens=cap, counter=counter, keep_recent=keep_recent
    )
    assert result.tokens == counter.count_text(result.text) <= cap
    assert result.turns_verbatim + result.turns_compacted == result.total_messages == len(history)
    recent = history[len(history) - min(keep_recent, len(history)) :]
    need = counter.count_text(package) + 200 + 24 * len(recent)
    for message in recent:
        need += counter.count_text(str(message.content))
        for call in getattr(message, "tool_calls", None) or []:
            need += counter.count_text(json.dumps(call["args"], ensure_ascii=False)) + 10
    event(f"{len(history) // 100 * 100}+ messages")
    event("compacted" if result.turns_compacted else "all verbatim")
    event("package and recent fit" if need <= cap else "package and recent over the cap")
    if need <= cap:
        assert package in result.text
        assert all(str(message.content) in result.text for message in recent)
        assert result.turns_verbatim >= len(recent)
        assert header_numbers(result)[2] == result.tokens


_COUNTER = TokenCounter()
