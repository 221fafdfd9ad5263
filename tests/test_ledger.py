"""The thread ledger's parts: the extractor, entries from each source, the reducer, retrieval and
the package's budget (tests/test_ledger_graph.py drives them through the graph)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from specialist_handover.nodes.handover.handover_to_specialist import build_stage1_package
from specialist_handover.nodes.ledger.entries import (
    entry_id,
    make_entries,
    stated_entries,
    user_entries,
)
from specialist_handover.nodes.ledger.extract import analyse, extract_facts
from specialist_handover.nodes.ledger.memory import ThreadMemory, ledger_appendix
from specialist_handover.nodes.ledger.recall import TurnText, rank, recall_cards, turn_texts
from specialist_handover.state import token_counter
from specialist_handover.state.defaults import LEDGER_MAX_ENTRIES, LEDGER_MAX_TOKENS
from specialist_handover.state.ledger import current_entries, merge_ledger, merge_recall

COUNTER = token_counter()

SETTLED = [
    ("Let's go with Postgres for the main database.", "decision", "postgres"),
    ("We decided to use Auth0 for login.", "decision", "auth0"),
    ("Hard requirement: p99 latency under 200 ms on the invoice API.", "constraint", "200ms"),
    ("Money is stored as integer cents, never floats.", "constraint", "integer cents"),
    ("IDs are ULIDs.", "decision", "ulids"),
    ("Region: eu-west-1.", "decision", "eu-west-1"),
    ("The spec lives in docs/spec/billing.md", "artifact", "docs/spec/billing.md"),
    (".github/workflows/ci.yml", "artifact", ".github/workflows/ci.yml"),
    ("Keep raw events for 30 days, then purge them.", "constraint", "30days"),
    ("No more than 3 retries with exponential backoff.", "constraint", "3retries"),
    ("Kafka it is.", "decision", "kafka"),
    ("Use Python 3.12 everywhere.", "decision", "python 3.12"),
]

NOT_SETTLED = [
    "ok thanks",
    "Should we use Redis for caching?",
    "maybe we should try Svelte",
    "Not decided yet whether we use GraphQL.",
    "the build took 5 minutes today",
    "I looked at src/util.go yesterday and it's a mess",
    "can you explain how the retry logic works?",
    "I must say, great work on that PR.",
    "Let's take a look at the logs",
    "lol that meeting was long",
    "Logs show the webhook arriving roughly 800 ms after the redirect.",
    "Following up on that: the fix is in a branch, but I want the regression test first.",
    "This part needs the frontend designer: please bring them in on the hero.",
    "getting this locally: `TypeError: Cannot read properties of undefined`",
    "the coverage report says 79% but I don't trust it much",
    "my local checkout is 9 GB now, need to clean it",
    "what's the difference between a rebase and a squash merge",
]


@pytest.mark.parametrize(("text", "kind", "value"), SETTLED)
def test_the_extractor_finds_what_a_user_settles_in_many_wordings(text, kind, value):
    (fact,) = extract_facts(text)
    assert fact.kind == kind
    assert value in fact.values


@pytest.mark.parametrize("text", NOT_SETTLED)
def test_questions_maybes_and_stories_settle_nothing(text):
    assert extract_facts(text) == []


def test_a_changed_mind_names_what_it_replaces():
    (fact,) = extract_facts("Actually, scratch Postgres, we'll use MySQL instead.")
    assert fact.slot == "database" and fact.values == ("mysql",)
    assert fact.replaced == ("postgres",) and fact.change


def test_code_blocks_and_long_pastes_are_not_read_as_decisions():
    text = "Here is the log:\n```\nwe decided to use postgres\nmust never fail\n```\nthanks"
    assert extract_facts(text) == []
    many = " ".join(f"We decided to use tool{i}.py for step {i}." for i in range(50))
    assert len(extract_facts(many)) == 8  # LEDGER_ENTRIES_PER_MESSAGE


def _entries(texts: list[str], ledger: list | None = None) -> list:
    facts = [f for t in texts for f in extract_facts(t)]
    return make_entries(
        facts, source="user", by="user", turn=1, ledger=ledger or [], counter=COUNTER
    )


def test_a_statement_made_twice_is_one_entry():
    first = _entries(["Let's go with Postgres for the main database."])
    again = _entries(["let's go with postgres for the main database!"], first)
    near = _entries(["OK, let's go with Postgres for the main database then."], first)
    assert again == [] and near == []
    ledger = merge_ledger([], [first, first])
    assert len(ledger) == 1


def test_entries_are_redacted_before_they_are_stored():
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    made = _entries([f"We decided to use the key {key} for the OpenAI client."])
    assert made and key not in str(made)


def test_a_newer_decision_supersedes_the_older_one_of_its_slot():
    ledger = merge_ledger([], _entries(["Let's go with Postgres for the main database."]))
    ledger = merge_ledger(ledger, _entries(["We'll use Redis for the cache."], ledger))
    changed = _entries(["Actually, scratch Postgres, we'll use MySQL instead."], ledger)
    ledger = merge_ledger(ledger, changed)
    current = [e["text"] for e in current_entries(ledger)]
    assert any("MySQL" in t for t in current) and any("Redis" in t for t in current)
    assert not any("go with Postgres" in t for t in current)
    (old,) = [e for e in ledger if e["status"] == "superseded"]
    assert old["superseded_by"] == changed[0]["id"]


def test_two_values_of_one_slot_without_a_change_word_both_stay_current():
    ledger = merge_ledger([], _entries(["We use Postgres for billing."]))
    ledger = merge_ledger(ledger, _entries(["We use SQLite for the CLI's local cache."], ledger))
    assert len(current_entries(ledger)) == 2


def test_a_relaxed_number_supersedes_the_old_one():
    ledger = merge_ledger([], _entries(["p99 latency must stay under 200 ms."]))
    ledger = merge_ledger(
        ledger, _entries(["Let's relax the p99 latency budget to 300 ms."], ledger)
    )
    (current,) = current_entries(ledger)
    assert "300 ms" in current["text"]


def test_handover_and_return_lists_become_entries_with_their_source():
    made = stated_entries(
        decisions=["Cursor pagination for every list endpoint"],
        artifacts=["api/openapi/invoices.yaml"],
        source="return",
        by="solution_architect",
        turn=7,
        ledger=[],
        counter=COUNTER,
    )
    assert [(e["kind"], e["source"], e["by"], e["turn"]) for e in made] == [
        ("decision", "return", "solution_architect", 7),
        ("artifact", "return", "solution_architect", 7),
    ]


def test_user_entries_read_each_user_message_once_and_number_the_turns():
    messages = [
        HumanMessage("Let's go with Postgres for the database.", id="u1"),
        AIMessage("Noted.", id="a1"),
        HumanMessage("IDs are ULIDs.", id="u2"),
    ]
    made, mark = user_entries(messages, mark=None, ledger=[], counter=COUNTER)
    assert [e["turn"] for e in made] == [1, 2] and mark == {"upto": "u2", "turns": 2}
    again, new_mark = user_entries(messages, mark=mark, ledger=made, counter=COUNTER)
    assert again == [] and new_mark is None
    messages += [AIMessage("ok", id="a2"), HumanMessage("Region: eu-west-1.", id="u3")]
    made, mark = user_entries(messages, mark=mark, ledger=made, counter=COUNTER)
    assert [e["turn"] for e in made] == [3] and mark == {"upto": "u3", "turns": 3}


def _entry(i: int, status: str = "current", words: int = 6) -> dict:
    text = " ".join(f"w{i}x{k}" for k in range(words))
    return {
        "id": entry_id("decision", text),
        "kind": "decision",
        "text": text,
        "source": "user",
        "by": "user",
        "turn": i,
        "time": "2026-12-02T00:00:00Z",
        "status": status,
        "tokens": COUNTER.count_text(text),
    }


def test_the_ledger_is_bounded_by_entries_and_tokens_and_superseded_entries_leave_first():
    many = [_entry(i) for i in range(LEDGER_MAX_ENTRIES + 25)]
    ledger = merge_ledger([], [many])
    assert len(ledger) == LEDGER_MAX_ENTRIES
    assert ledger[-1]["turn"] == LEDGER_MAX_ENTRIES + 24  # the newest stay
    big = [_entry(i, words=40) for i in range(40)]
    ledger = merge_ledger([], [big])
    assert sum(e["tokens"] for e in ledger) <= LEDGER_MAX_TOKENS
    old = {**_entry(999), "status": "current"}
    replacing = {**_entry(1000), "supersedes": [old["id"]]}
    full = merge_ledger([], [[old, replacing, *[_entry(i) for i in range(LEDGER_MAX_ENTRIES - 1)]]])
    assert old["id"] not in {e["id"] for e in full}  # superseded: the first to leave
    assert replacing["id"] in {e["id"] for e in full}


entries_st = st.lists(
    st.builds(
        lambda i, status, words, sup: {
            **_entry(i, status, words),
            **({"supersedes": [entry_id("decision", " ".join(f"w{sup}x{k}" for k in range(6)))]}),
        },
        st.integers(0, 90),
        st.sampled_from(["current", "superseded"]),
        st.integers(1, 30),
        st.integers(0, 90),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(entries_st, max_size=6), st.integers(0, 6))
def test_the_ledger_reducer_gives_the_same_ledger_however_its_writes_are_batched(writes, cut):
    cut = min(cut, len(writes))
    once = merge_ledger([], writes)
    twice = merge_ledger(merge_ledger([], writes[:cut]), writes[cut:])
    assert once == twice


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 500), max_size=30), max_size=6), st.integers(0, 6))
def test_the_recall_reducer_gives_the_same_cards_however_its_writes_are_batched(turns, cut):
    writes = [[{"turn": t, "text": f"turn {t}"} for t in batch] for batch in turns]
    cut = min(cut, len(writes))
    assert merge_recall([], writes) == merge_recall(merge_recall([], writes[:cut]), writes[cut:])


def test_recall_cards_number_the_archived_turns_and_keep_the_user_words():
    window = []
    for i in range(1, 6):
        window += [
            HumanMessage(f"message {i} about kafka topics", id=f"u{i}"),
            AIMessage(f"reply {i}", id=f"a{i}"),
        ]
    cards = recall_cards(window[:4], window, last_turn=5)
    assert [c["turn"] for c in cards] == [1, 2]
    assert cards[0]["text"].startswith("user: message 1 about kafka topics")


def test_retrieval_picks_the_relevant_turn_over_recent_irrelevant_ones():
    docs = [TurnText(3, "user: the invoices table keeps amounts in integer cents and a ULID key")]
    docs += [TurnText(n, f"user: chat about the weather and lunch plans {n}") for n in range(4, 40)]
    ranked = rank("invoices table schema", docs)
    assert ranked and ranked[0].turn == 3
    assert all(r.turn == 3 for r in ranked)


def test_a_summary_alone_does_not_make_a_turn_relevant():
    docs = [TurnText(1, "user: hello there, what can you do?")]
    assert rank("landing page hero", docs, context="hello there what can you do") == []


def package_for(memory: ThreadMemory, **fields: object) -> dict:
    """A package built with `memory`, every other field a plain default (overridable)."""
    args: dict = dict(
        handover_id="h",
        specialist="solution_architect",
        topic="t",
        summary="s",
        recent_turns=[],
        decisions=[],
        artifacts=[],
        return_condition="user_request",
        reason="r",
        from_agent="orchestrator",
        briefing_file="/p/.a0proj/handover/x.md",
        max_context_tokens=3000,
        include_recent_turns=5,
        counter=COUNTER,
        label="x",
    )
    args.update(fields)
    return build_stage1_package(**args, memory=memory)  # type: ignore[arg-type]


def _ledger_of(rng: random.Random, n: int) -> list:
    words = ["postgres", "invoice", "latency", "ulid", "cents", "region", "kafka", "retry", "spec"]
    entries = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(3, 50)))
        entries.append({**_entry(i), "text": text, "id": entry_id("decision", text + str(i))})
    return entries


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 70),
    st.integers(0, 60),
    st.integers(300, 4000),
    st.integers(0, 8),
)
def test_the_package_never_exceeds_its_budget_because_of_the_ledger_or_earlier_turns(
    seed, entries, turns, budget, recent
):
    rng = random.Random(seed)
    ledger = _ledger_of(rng, entries)
    texts = [
        TurnText(
            n,
            "user: "
            + " ".join(
                rng.choice(["invoice", "cents", "hello", "kafka"])
                for _ in range(rng.randint(1, 200))
            ),
        )
        for n in range(1, turns + 1)
    ]
    recent_turns = ["user: " + "invoice detail " * rng.randint(1, 400) for _ in range(recent)]
    memory = ThreadMemory(ledger=ledger, turns=texts, recent_from=turns + 1, request="invoice")
    args = dict(
        handover_id="h",
        specialist="solution_architect",
        topic="invoice-schema",
        summary="Design the invoice schema.",
        decisions=[],
        artifacts=[],
        return_condition="user_request",
        reason="design",
        from_agent="orchestrator",
        briefing_file="/p/.a0proj/handover/x.md",
        max_context_tokens=budget,
        include_recent_turns=recent,
        counter=COUNTER,
        label="🏛️ [solution architect]",
    )
    bare = build_stage1_package(**{**args, "recent_turns": []})
    package = build_stage1_package(**{**args, "recent_turns": recent_turns}, memory=memory)
    assert package["estimated_tokens"] == COUNTER.count_text(package["rendered"])
    if bare["estimated_tokens"] <= budget - 300:
        # what the graph adds (ledger, earlier turns, cut recent turns) keeps it within budget
        # whenever what the model wrote leaves room for the minimum of each recent turn
        shown = len(package["recent_turns"]) * 140
        if bare["estimated_tokens"] + shown <= budget:
            assert package["estimated_tokens"] <= budget, package["rendered"][-400:]
    assert len(package["ledger"]) + package["ledger_omitted"] <= len(ledger)


def test_the_package_names_what_did_not_fit_and_stage_2_has_the_whole_ledger():
    ledger = _ledger_of(random.Random(1), 60)
    memory = ThreadMemory(ledger=ledger, turns=[], recent_from=1, request="")
    package = package_for(memory, max_context_tokens=900)
    assert package["ledger_omitted"] > 0
    assert (
        f"({package['ledger_omitted']} more entries did not fit; request_full_history()"
        in (package["rendered"])
    )
    appendix = ledger_appendix(ledger)
    assert all(e["text"] in appendix for e in ledger)


def test_a_ledger_entry_already_in_the_recent_turns_is_not_repeated():
    made = _entries(["Let's go with Postgres for the main database."])
    memory = ThreadMemory(ledger=made, turns=[], recent_from=1, request="")
    package = package_for(
        memory, recent_turns=["user: Let's go with Postgres for the main database."]
    )
    assert package["ledger"] == [] and package["ledger_omitted"] == 0


def test_an_earlier_turn_that_repeats_a_recent_one_or_a_better_one_is_not_carried():
    ask = "We want the warehouse to hear about new orders without polling: Redis or a queue?"
    texts = [TurnText(n, f"user: Turn {n}. {ask}") for n in (10, 20, 30)]
    texts.append(TurnText(40, "user: the warehouse queue must keep orders for 7 days"))
    memory = ThreadMemory(ledger=[], turns=texts, recent_from=50, request=ask)
    package = package_for(memory, topic="order-events", recent_turns=[f"user: Turn 49. {ask}"])
    assert [t.split(")")[0] for t in package["earlier_turns"]] == ["(turn 40"]


def test_turn_texts_number_the_window_from_the_mark():
    messages = [HumanMessage("a", id="1"), AIMessage("b", id="2"), HumanMessage("c", id="3")]
    assert [t.turn for t in turn_texts(messages, last_turn=41)] == [40, 41]


def test_analyse_reads_a_handover_decision_like_a_user_turn():
    fact = analyse("Switch from eu-west-1 to eu-central-1", "decision")
    assert fact.slot == "region" and fact.replaced == ("eu-west-1",)


def test_an_artifact_the_package_names_and_a_turn_its_ledger_quotes_are_not_repeated():
    made = _entries(["The spec lives in docs/spec/billing.md", "IDs are ULIDs."])
    texts = [TurnText(3, "user: IDs are ULIDs. orchestrator: Noted, ULIDs everywhere.")]
    memory = ThreadMemory(ledger=made, turns=texts, recent_from=9, request="ulid ids")
    package = package_for(memory, topic="ids", artifacts=["docs/spec/billing.md"])
    assert [line.split("] ")[1] for line in package["ledger"]] == ["IDs are ULIDs."]
    assert package["earlier_turns"] == []  # turn 3 says what the ledger line quotes
