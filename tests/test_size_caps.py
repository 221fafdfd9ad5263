"""What one agent's run may store, and how much counting a request's fitting costs.

- `fit_messages` is linear: every message is counted once (a cut one once more), the turns
  left out come off running totals. 20,000 messages: about 20,000 count calls, not 100
  million; and for any history it keeps exactly what the quadratic version kept (its code is
  copied below as the reference).
- Before an agent's messages are stored (`replies.stored_replies`, the one place every
  agent's output passes), each is cut to `max_message_tokens` with a visible marker, and the
  run's messages in all are bounded to `max_reply_tokens` and `MAX_REPLY_MESSAGES`: the
  oldest whole turns are left out, one note says how many, the tool-call history stays
  valid and the last reply stays.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from specialist_handover import build_graph
from specialist_handover.nodes.agents.replies import (
    GRAPH_MADE,
    REPLY_CUT,
    capped_message,
    stored_replies,
)
from specialist_handover.nodes.history.budget import (
    CUT_NOTE,
    MIN_SHARE,
    RequestTooLargeError,
    fit_messages,
)
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, builtin_profiles
from specialist_handover.state import TokenCounter, coerce_context, message_text
from specialist_handover.state.defaults import (
    MAX_MESSAGE_TOKENS,
    MAX_REPLY_MESSAGES,
    MAX_REPLY_TOKENS,
)
from specialist_handover.state.tokens import REPLY_PRIMING
from tests.support.graphs import say, state_of
from tests.support.models import ScriptedChatModel, ai_call, check_tool_history

COUNTER = TokenCounter()
PROFILE = builtin_profiles()["frontend_designer"]
ORCHESTRATOR = "a0_software_orchestrator"
assert ORCHESTRATOR == ORCHESTRATOR_PROFILE


class CountingCounter(TokenCounter):
    """A token counter that counts how often it is asked: every `count_message` (also those
    `count_messages` makes), and every other count, probe or cut asked from outside it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self._depth = 0

    def _asked(self, method: Any, *args: Any) -> Any:
        if self._depth == 0:
            self.calls += 1
        self._depth += 1
        try:
            return method(*args)
        finally:
            self._depth -= 1

    def count_message(self, message: Any) -> int:
        self.calls += self._depth > 0  # asked by count_messages: one message, one count
        return self._asked(super().count_message, message)

    def count_text(self, text: str) -> int:
        return self._asked(super().count_text, text)

    def exceeds(self, text: str, limit: int) -> bool:
        return self._asked(super().exceeds, text, limit)

    def prefix(self, text: str, tokens: int) -> str:
        return self._asked(super().prefix, text, tokens)

    def truncate(self, text: str, limit: int) -> str:
        return self._asked(super().truncate, text, limit)


# --- the quadratic fit_messages, as it was: the reference ----------------------------------


def old_cut_message(message: BaseMessage, tokens: int, counter: TokenCounter) -> BaseMessage:
    if counter.count_message(message) <= tokens:
        return message
    update: dict[str, object] = {}
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = []
        for call in message.tool_calls:
            if counter.count_text(str(call.get("args"))) > tokens // 2:
                call = {**call, "args": {"note": "arguments cut to fit max_input_tokens"}}
            calls.append(call)
        update["tool_calls"] = calls
    text = message_text(message)
    total = counter.count_text(text)
    if total > tokens:
        head = counter.prefix(text, max(tokens - 16, 0))
        update["content"] = head + CUT_NOTE.format(tokens=total - counter.count_text(head))
    return message.model_copy(update=update) if update else message


def old_units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    units: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and units and old_calls(units[-1][0]):
            units[-1].append(message)
        else:
            units.append([message])
    return units


def old_calls(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and bool(message.tool_calls or message.invalid_tool_calls)


def old_opening(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name == "handover"


def old_fit_messages(
    messages: Sequence[BaseMessage], *, budget: int, counter: TokenCounter, fixed: int = 0
) -> list[BaseMessage]:
    room = budget - fixed - REPLY_PRIMING
    if room <= MIN_SHARE:
        raise RequestTooLargeError("no room")
    out = list(messages)
    if counter.count_messages(out) <= budget - fixed or not out:
        return out
    heads = 0
    while heads < len(out) - 1 and old_opening(out[heads]):
        heads += 1
    cost = counter.count_message
    head = [old_cut_message(m, room // 3, counter) for m in out[:heads]]
    share = max(room // 4, MIN_SHARE)
    rest = [old_cut_message(m, share, counter) for m in out[heads:-1]] + out[-1:]
    units = old_units(rest)
    left = room - sum(cost(m) for m in head)
    while len(units) > 1 and sum(cost(m) for unit in units for m in unit) > left:
        units.pop(0)
    kept = [m for unit in units for m in unit]
    over = sum(cost(m) for m in kept) - left
    if over > 0:
        for i in sorted(range(len(kept)), key=lambda i: -cost(kept[i])):
            if over <= 0:
                break
            size = cost(kept[i])
            kept[i] = old_cut_message(kept[i], max(size - over - 8, 0), counter)
            over -= size - cost(kept[i])
    return [*head, *kept]


# --- fit_messages: linear, and the same result -----------------------------------------------

LOG_LINE = "GET /checkout 200 12ms "


def tool_loop(n: int, *, big_every: int = 0) -> list[BaseMessage]:
    """A specialist's view after its agent ran a long tool loop: the package, the user's
    request, calls and results (every `big_every`-th result ~12,000 tokens), a final reply."""
    out: list[BaseMessage] = [
        HumanMessage("The package. " * 300, name="handover", id="package"),
        HumanMessage("Please read every log.", id="ask"),
    ]
    i = 0
    while len(out) + 2 < n:
        call = {"name": "read_log", "args": {"path": f"logs/{i}.log"}, "id": f"c{i}"}
        out.append(AIMessage("", tool_calls=[call], id=f"a{i}"))
        big = big_every and i % big_every == big_every - 1
        text = f"log {i}: " + LOG_LINE * (2000 if big else 8)
        out.append(ToolMessage(text, tool_call_id=f"c{i}", id=f"t{i}"))
        i += 1
    if len(out) < n - 1:
        out.append(HumanMessage("Go on.", id="go-on"))
    out.append(AIMessage("Done: the checkout is slow.", id="final"))
    return out


def test_fitting_20000_messages_counts_each_about_once():
    messages = tool_loop(20_000, big_every=500)
    counter = CountingCounter()
    fitted = fit_messages(messages, budget=32_000, counter=counter)
    n = len(messages)
    assert counter.calls <= 3 * n, counter.calls  # the quadratic version: ~100 million
    assert counter.calls <= n + 200  # once each, a few more for the 20 cut messages
    assert COUNTER.count_messages(fitted) <= 32_000
    assert fitted[0].id == "package" and fitted[-1].id == "final"
    check_tool_history(fitted)


def test_fitting_a_long_loop_keeps_what_the_quadratic_version_kept():
    for n, budget, fixed in [(600, 32_000, 0), (900, 8_000, 2_500), (301, 4_000, 300)]:
        messages = tool_loop(n, big_every=37)
        new = fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
        old = old_fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
        assert [m.model_dump() for m in new] == [m.model_dump() for m in old]


sizes = st.sampled_from([1, 5, 40, 300, 1500, 4000])


@st.composite
def histories(draw):  # type: ignore[no-untyped-def]
    """Random views: 0-2 opening messages, user turns with tool loops (1-3 calls a reply,
    long arguments too), texts from a few words to ~4,000 tokens, the last message of any
    kind."""
    rng = random.Random(draw(st.integers(0, 2**32)))

    def text(words: int) -> str:
        return " ".join(
            rng.choice(["alpha", "beta.", "gamma", "δέλτα", "42"]) for _ in range(words)
        )

    messages: list[BaseMessage] = []
    for k in range(draw(st.integers(0, 2))):
        messages.append(HumanMessage(text(draw(sizes)), name="handover", id=f"open{k}"))
    for i in range(draw(st.integers(1, 10))):
        messages.append(HumanMessage(text(draw(sizes)), id=f"h{i}"))
        for j in range(draw(st.integers(0, 3))):
            calls = [
                {"name": "t", "args": {"q": text(draw(sizes))}, "id": f"c{i}-{j}-{c}"}
                for c in range(draw(st.integers(1, 3)))
            ]
            messages.append(AIMessage(text(draw(sizes) // 5), tool_calls=calls, id=f"a{i}{j}"))
            for call in calls:
                content = text(draw(sizes))
                messages.append(ToolMessage(content, tool_call_id=call["id"], id=f"t{call['id']}"))
        if draw(st.booleans()):
            messages.append(AIMessage(text(draw(sizes)), id=f"r{i}"))
    return messages


@settings(max_examples=60, deadline=None)
@given(histories(), st.integers(300, 9000), st.integers(0, 250))
def test_fit_messages_keeps_exactly_what_the_quadratic_version_kept(messages, budget, fixed):
    try:
        old = old_fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
    except RequestTooLargeError:
        with pytest.raises(RequestTooLargeError):
            fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
        return
    new = fit_messages(messages, budget=budget, counter=COUNTER, fixed=fixed)
    assert [m.model_dump() for m in new] == [m.model_dump() for m in old]


# --- one message: max_message_tokens --------------------------------------------------------


def test_a_message_within_the_limit_is_stored_as_it_is():
    message = AIMessage("A short answer.", id="a")
    kept, size = capped_message(message, 1000, COUNTER)
    assert kept is message and size == COUNTER.count_message(message)


def test_a_long_message_is_cut_with_a_marker_naming_its_size_and_the_bound():
    message = AIMessage("The hero section, again and in detail. " * 400, id="a")
    total = COUNTER.count_message(message)
    kept, size = capped_message(message, 1000, COUNTER)
    assert size == COUNTER.count_message(kept) <= 1000
    assert kept.content.startswith("The hero section, again and in detail. ")
    assert kept.content.endswith(
        f"… [cut: the message was {total:,} tokens, over max_message_tokens=1,000; "
        "the rest is left out]"
    )
    assert kept.id == "a"


def test_a_script_of_four_tokens_a_character_is_cut_although_it_has_fewer_characters():
    message = ToolMessage("𒀀" * 900, tool_call_id="c1", id="t")  # 900 characters, 3,600 tokens
    assert len(message.content) < 1000 < COUNTER.count_message(message)
    kept, size = capped_message(message, 1000, COUNTER)
    assert size <= 1000 and "[cut: the message was 3,6" in kept.content


def test_a_call_with_huge_arguments_keeps_its_id_and_a_note_in_place_of_them():
    call = {"name": "write_file", "args": {"path": "a.txt", "text": "x" * 400_000}, "id": "c1"}
    message = AIMessage("Writing it.", tool_calls=[call], id="a")
    kept, size = capped_message(message, 2000, COUNTER)
    assert size <= 2000
    (short,) = kept.tool_calls
    assert short["id"] == "c1" and short["name"] == "write_file"
    assert short["args"]["note"].startswith("… [cut: the arguments were about 5")
    assert kept.content == "Writing it."


def test_a_transfers_huge_summary_is_cut_but_its_arguments_keep_their_shape():
    args = {"specialist_profile": "frontend_designer", "summary": "The hero. " * 20_000}
    call = {"name": "handover_to_specialist", "args": args, "id": "c1"}
    kept, size = capped_message(AIMessage("", tool_calls=[call], id="a"), 4000, COUNTER)
    (short,) = kept.tool_calls
    assert short["args"]["specialist_profile"] == "frontend_designer"  # the handover can run
    summary = short["args"]["summary"]
    assert summary.startswith("The hero. ") and "[cut: the summary was 60,001 tokens" in summary
    assert size <= 4000


def test_stored_only_values_and_blocks_over_the_limit_are_replaced_by_notes():
    message = AIMessage(
        [{"type": "text", "text": "Here is the chart."}, {"type": "image", "data": "A" * 300_000}],
        additional_kwargs={"reasoning_content": "thinking... " * 50_000, "refusal": None},
        id="a",
    )
    kept, size = capped_message(message, 2000, COUNTER)
    assert size <= 2000
    assert kept.additional_kwargs["reasoning_content"].startswith("… [cut: the reasoning_content")
    assert kept.additional_kwargs["refusal"] is None
    assert "Here is the chart." in message_text(
        kept
    ) and "[cut: the image block was" in message_text(kept)
    result = ToolMessage("ok", artifact={"rows": ["r"] * 100_000}, tool_call_id="c", id="t")
    kept, _ = capped_message(result, 2000, COUNTER)
    assert kept.content == "ok" and str(kept.artifact).startswith("… [cut: the artifact")


def test_cutting_a_20_mb_message_counts_only_its_head():
    counter = CountingCounter()
    huge = "The hero section, again and in detail. " * 540_000  # 21 MB
    kept, size = capped_message(AIMessage(huge, id="a"), MAX_MESSAGE_TOKENS, counter)
    assert size <= MAX_MESSAGE_TOKENS
    assert "[cut: the message was about 4,860,000 tokens, over max_message_tokens=16,000" in (
        kept.content
    )
    assert counter.calls <= 12


# --- one run: max_reply_tokens and MAX_REPLY_MESSAGES --------------------------------------


def loop_messages(units: int, *, calls: int = 1, result_words: int = 8) -> list[BaseMessage]:
    """A run of `units` assistant messages with `calls` calls each and their results, then
    a final reply."""
    out: list[BaseMessage] = []
    for i in range(units):
        ids = [f"c{i}-{k}" for k in range(calls)]
        out.append(
            AIMessage(
                f"step {i}",
                tool_calls=[{"name": "read_log", "args": {"n": i}, "id": c} for c in ids],
                id=f"a{i}",
                usage_metadata={"input_tokens": 100, "output_tokens": 10, "total_tokens": 110},
            )
        )
        for c in ids:
            out.append(ToolMessage(f"{c}: " + "ok " * result_words, tool_call_id=c, id=f"t{c}"))
    out.append(AIMessage("All logs read: nothing odd.", id="final"))
    return out


def store(added: list[BaseMessage], **limits: Any) -> list[BaseMessage]:
    return stored_replies(added, agent="frontend_designer", profile=PROFILE, taken=set(), **limits)


def test_a_run_of_thousands_of_messages_keeps_its_newest_whole_turns_and_says_how_many_left():
    added = loop_messages(1_000, calls=3)  # 4,001 messages
    stored = store(added)
    assert len(stored) <= MAX_REPLY_MESSAGES
    note, *kept = stored
    assert note.response_metadata[REPLY_CUT] and note.response_metadata[GRAPH_MADE]
    left_out = note.response_metadata["left_out_messages"]
    assert left_out + len(kept) == len(added)
    assert f"{left_out:,} earlier messages of this reply were left out" in note.content
    assert note.response_metadata["left_out_model_replies"] == (left_out // 4)
    assert note.response_metadata["left_out_usage"]["input_tokens"] == 100 * (left_out // 4)
    assert [m.id for m in kept] == [m.id for m in added[left_out:]]  # the newest, as they were
    check_tool_history(stored)
    assert isinstance(kept[0], AIMessage)  # a whole turn: the call with its results


def test_a_run_over_max_reply_tokens_keeps_what_fits():
    added = loop_messages(30, result_words=3000)  # 30 results of ~3,000 tokens
    stored = store(added, max_reply_tokens=20_000)
    assert sum(map(COUNTER.count_message, stored)) <= 20_000
    assert stored[0].response_metadata.get(REPLY_CUT) and stored[-1].id == "final"
    check_tool_history(stored)


def test_a_run_within_the_bounds_is_stored_whole_without_a_note():
    added = loop_messages(50, calls=2)  # 151 messages
    stored = store(added)
    assert [m.id for m in stored] == [m.id for m in added]
    assert not any(m.response_metadata.get(REPLY_CUT) for m in stored if isinstance(m, AIMessage))


def test_a_newest_turn_alone_over_max_reply_tokens_is_kept_and_cut_to_fit():
    calls = [{"name": "read_log", "args": {"n": k}, "id": f"c{k}"} for k in range(10)]
    added: list[BaseMessage] = [AIMessage("Reading ten logs.", tool_calls=calls, id="a")]
    added += [
        ToolMessage(f"log {k}: " + LOG_LINE * 2500, tool_call_id=f"c{k}", id=f"t{k}")
        for k in range(10)
    ]  # ~15,000 tokens each
    stored = store(added, max_reply_tokens=20_000)
    assert [m.id for m in stored] == [m.id for m in added]  # nothing to leave out: one turn
    assert sum(map(COUNTER.count_message, stored)) <= 20_000
    assert stored[0].content == "Reading ten logs."
    assert all("of max_reply_tokens=20,000" in m.content for m in stored[1:])
    check_tool_history(stored)


def test_bounding_a_run_of_20000_messages_counts_only_what_it_keeps():
    counter = CountingCounter()
    stored = store(loop_messages(10_000), counter=counter)
    assert len(stored) == MAX_REPLY_MESSAGES
    assert counter.calls <= 3 * MAX_REPLY_MESSAGES, counter.calls


# --- through the graph ---------------------------------------------------------------------


def values_size(values: dict[str, Any]) -> int:
    return len(json.dumps([m.model_dump() for m in values["messages"]], default=str))


def test_a_20_mb_reply_is_stored_cut_and_the_next_turn_stays_small(ctx):
    huge = "The hero section, again and in detail. " * 540_000  # 21 MB
    model = ScriptedChatModel(script=[AIMessage(huge), AIMessage("Short again.")])
    graph = build_graph(checkpointer=InMemorySaver(), model=model)
    values = say(graph, "Describe the hero section.", ctx)
    reply = values["messages"][-1]
    assert reply.name == "orchestrator" and reply.content.startswith("The hero section, again")
    assert "… [cut: the message was about 4,860,000 tokens, over max_message_tokens=16,000" in (
        reply.content
    )
    assert COUNTER.count_message(reply) <= MAX_MESSAGE_TOKENS
    assert values_size(values) < 200_000  # not 21 MB
    values = say(graph, "Thanks. Shorter, please.", ctx)
    assert values["messages"][-1].content == "Short again."
    assert values_size(state_of(graph)) < 200_000
    assert len(json.dumps([m.model_dump() for m in model.requests[-1]], default=str)) < 200_000
    check_tool_history(values["messages"])


def test_a_tool_returning_a_huge_result_is_stored_cut(ctx):
    @tool
    def dump_logs(service: str) -> str:
        """Dump the logs of a service."""
        return f"{service}: " + LOG_LINE * 250_000  # 6 MB, 2 million tokens

    specialist = ScriptedChatModel(
        script=[ai_call("dump_logs", service="checkout"), AIMessage("The checkout is slow.")]
    )
    orchestrator = ScriptedChatModel(
        script=[
            ai_call(
                "handover_to_specialist",
                specialist_profile="runtime_devops_engineer",
                topic="latency",
                summary="s",
                handover_reason="r",
            )
        ]
    )
    graph = build_graph(
        checkpointer=InMemorySaver(),
        model={"default": orchestrator, "runtime_devops_engineer": specialist},
        tools={"runtime_devops_engineer": [dump_logs]},
    )
    values = say(graph, "Why is checkout slow?", {**ctx, "max_message_tokens": 4_000})
    assert values["messages"][-1].content == "The checkout is slow."
    (result,) = [
        m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "dump_logs"
    ]
    assert result.content.startswith("checkout: GET /checkout 200 12ms")
    assert "[cut: the message was about 2,000,000 tokens, over max_message_tokens=4,000" in (
        result.content
    )
    assert COUNTER.count_message(result) <= 4_000
    check_tool_history(values["messages"])


def test_an_agent_returning_thousands_of_messages_stores_a_bounded_valid_turn(ctx):
    def flood(state: MessagesState) -> dict:
        return {"messages": loop_messages(700, calls=2, result_words=40)}  # 2,101 messages

    agent = StateGraph(MessagesState)
    agent.add_node("flood", flood)
    agent.add_edge(START, "flood")
    agent.add_edge("flood", END)
    graph = build_graph(checkpointer=InMemorySaver(), agents={ORCHESTRATOR: agent.compile()})
    values = say(graph, "Read every log.", {**ctx, "max_reply_tokens": 10_000})
    turn = values["messages"][1:]  # after the user's message
    assert len(turn) <= MAX_REPLY_MESSAGES
    assert sum(map(COUNTER.count_message, turn)) <= 10_000
    note = turn[0]
    assert note.name == "orchestrator" and note.response_metadata[REPLY_CUT]
    assert note.response_metadata["left_out_messages"] + len(turn) - 1 == 2_101
    assert turn[-1].content == "All logs read: nothing odd." and turn[-1].name == "orchestrator"
    check_tool_history(values["messages"])
    values = say(graph, "And again.", ctx)  # the stored turn is a valid history to go on from
    check_tool_history(values["messages"])


# --- the context ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_message_tokens", 999, "max_message_tokens must be at least 1,000"),
        ("max_message_tokens", 200_001, "max_message_tokens must be at most 200000"),
        ("max_message_tokens", 0, "max_message_tokens must be a positive integer"),
        ("max_message_tokens", True, "max_message_tokens must be a positive integer"),
        ("max_message_tokens", "16000", "max_message_tokens must be a positive integer"),
        ("max_reply_tokens", 3_999, "max_reply_tokens must be at least 4,000"),
        ("max_reply_tokens", 400_001, "max_reply_tokens must be at most 400000"),
        ("max_reply_tokens", -5, "max_reply_tokens must be a positive integer"),
    ],
)
def test_a_context_with_a_cap_out_of_bounds_is_refused(tmp_path, field, value, message):
    with pytest.raises(ValueError, match=message):
        coerce_context({"project_root": str(tmp_path), field: value})


def test_the_caps_default_and_take_their_bounds(tmp_path):
    ctx = coerce_context({"project_root": str(tmp_path)})
    assert (ctx.max_message_tokens, ctx.max_reply_tokens) == (MAX_MESSAGE_TOKENS, MAX_REPLY_TOKENS)
    for low, high in [(1_000, 4_000), (200_000, 400_000)]:
        ctx = coerce_context(
            {"project_root": str(tmp_path), "max_message_tokens": low, "max_reply_tokens": high}
        )
        assert (ctx.max_message_tokens, ctx.max_reply_tokens) == (low, high)


def test_a_run_with_a_cap_out_of_bounds_fails_by_name(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    with pytest.raises(ValueError, match="max_message_tokens must be at least 1,000"):
        say(graph, "hi", {**ctx, "max_message_tokens": 10})
