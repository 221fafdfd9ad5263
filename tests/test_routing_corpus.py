"""Offline routing: corpora of natural requests, the stemmer, the synonyms, user profiles.

Each corpus (`tests/data/routing_*.json`) pairs each request with the specialists that could
plausibly take it, and lists chit-chat the orchestrator answers itself. The lines a corpus
misses are the router's honest limits (`pytest tests/test_routing_corpus.py -s` prints them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from specialist_handover import Profile
from specialist_handover.nodes.handover.transfer import handover_tools
from specialist_handover.nodes.models.offline import OfflineChatModel
from specialist_handover.nodes.models.offline.cues import choose_specialist
from specialist_handover.nodes.models.offline.index import index_for
from specialist_handover.nodes.models.offline.lexicon import (
    STOP_WORDS,
    SYNONYMS,
    is_ask,
    stem,
    synonyms_of,
)
from specialist_handover.nodes.models.offline.scorer import is_chit_chat, score_profiles
from specialist_handover.nodes.models.offline.weights import THRESHOLD
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, builtin_profiles
from specialist_handover.specialists.registry import resolve_profiles
from tests.support.graphs import REQUESTS
from tests.support.models import orchestrator_tools

DATA = Path(__file__).parent / "data"
CORPORA = {
    name: json.loads((DATA / f"routing_{name}.json").read_text("utf-8"))
    for name in ("first", "second", "third", "blind", "blind2", "blind3")
}
"""Six corpora, each written by a different hand. The first three guided the lexical scorer's
rules and word lists. The fourth (`blind`) was written without seeing the scorer or the others
and measured once (65.0%, with the lexical scorer alone); it has been development data since,
for the example-based routing too. `blind2` and `blind3` were each written by a helper who saw
only the one-line descriptions, and measured once: `blind2` when example-based routing was
finished, `blind3` after the orchestrator's examples grew (each corpus's `about` says more)."""
DEVELOPMENT = ("first", "second", "third", "blind")
BLIND = ("blind2", "blind3")
GOAL = 0.90
"""The share of requests routed plausibly, for the development corpora together (measured:
224 of 237, 94.5%) and for each blind corpus."""
DEVELOPMENT_FLOOR = 0.85
"""No development corpus alone may fall below this (measured: 98.6%, 97.5%, 95.5%, 86.7%)."""
BLIND_CHIT_CHAT = {"blind2": 2, "blind3": 2}
"""Chit-chat lines a blind corpus saw handed over when it was measured: a regression bound,
short of the goal of none ("sorry for the late reply, was stuck in a meeting" went to the
test/debug engineer on `stuck`)."""


def _keyword_in(text: str) -> list[str]:
    lowered = text.lower()
    return [
        k
        for p in builtin_profiles().values()
        for k in p.keywords
        if re.search(r"(?<![a-z0-9])" + re.escape(k) + r"(?![a-z0-9])", lowered)
    ]


def _route(corpus: dict) -> tuple[list[tuple[str, str | None, list[str]]], list[str]]:
    """(misses, chit-chat handed over) for a corpus; staying counts as the orchestrator."""
    misses = []
    for text, plausible in corpus["requests"]:
        choice = choose_specialist(text)
        chosen = choice[0] if choice else ORCHESTRATOR_PROFILE  # staying is a choice too
        if chosen not in plausible:
            misses.append((text, choice[0] if choice else None, plausible))
    handed = [t for t in corpus["chit_chat"] if choose_specialist(t) is not None]
    return misses, handed


def _report(name: str, corpus: dict) -> tuple[int, int, list[str]]:
    misses, handed = _route(corpus)
    total = len(corpus["requests"])
    good = total - len(misses)
    print(
        f"\nrouting corpus {name}: {good}/{total} plausible ({100 * good / total:.1f}%), "
        f"{len(handed)}/{len(corpus['chit_chat'])} chit-chat handed over"
    )
    for text, chosen, plausible in misses:
        print(f"  miss: {text!r} -> {chosen or 'orchestrator'} (plausible: {', '.join(plausible)})")
    for text in handed:
        print(f"  chit-chat handed over: {text!r}")
    return good, total, handed


# -- the corpora ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CORPORA))
def test_each_corpus_is_large_varied_and_not_made_of_keywords(name):
    corpus = CORPORA[name]
    requests, chat = corpus["requests"], corpus["chit_chat"]
    names = set(builtin_profiles())
    assert len(requests) >= 40 and len(chat) >= 8 and corpus["about"]
    assert len({t for t, _ in requests}) == len(requests)
    assert len(set(chat)) == len(chat)
    keywords = {k for p in builtin_profiles().values() for k in p.keywords}
    for text, plausible in requests:
        assert plausible and set(plausible) <= names, text
        assert plausible != [ORCHESTRATOR_PROFILE], text  # some specialist could take each
        assert text.lower().strip(" ?.!") not in keywords, text
    # natural wording: in the corpora written by hands that knew the keyword lists, an exact
    # keyword phrase turns up in very few lines (the second corpus, 11 of 40, says so in its
    # `about`); blind writers never saw the lists, and used "docker" or "crash" as people do
    if name in BLIND:
        return
    limit = 11 if name == "second" else len(requests) // 10
    assert sum(bool(_keyword_in(t)) for t, _ in requests) <= limit


def test_the_corpora_have_sixty_requests_or_more_and_cover_every_specialist():
    every = [p for c in CORPORA.values() for _, plausible in c["requests"] for p in plausible]
    assert len(CORPORA["first"]["requests"]) >= 60 and len(CORPORA["blind"]["requests"]) >= 60
    assert all(len(CORPORA[name]["requests"]) >= 100 for name in BLIND)
    assert set(builtin_profiles()) - {ORCHESTRATOR_PROFILE} <= set(every)


def test_development_corpora_reach_the_goal_and_no_chit_chat_is_handed_over():
    good = total = 0
    for name in DEVELOPMENT:
        g, t, handed = _report(name, CORPORA[name])
        assert not handed, name
        assert g / t >= DEVELOPMENT_FLOOR, name
        good, total = good + g, total + t
    print(f"development corpora: {good}/{total} ({100 * good / total:.1f}%)")
    assert good / total >= GOAL


@pytest.mark.parametrize("name", BLIND)
def test_blind_corpora_reach_the_goal_and_hand_over_no_more_chit_chat_than_measured(name):
    good, total, handed = _report(name, CORPORA[name])
    assert good / total >= GOAL
    assert len(handed) <= BLIND_CHIT_CHAT[name]


@pytest.mark.parametrize(
    "text, plausible",
    [
        ("Review the security of the login flow", {"security_data_engineer", "hacker"}),
        (
            "Our API is slow under load, can you profile it?",
            {"solution_architect", "runtime_devops_engineer", "test_debug_engineer"},
        ),
        ("The tests fail with a KeyError in parse_order", {"test_debug_engineer"}),
    ],
)
def test_requests_without_keywords_are_handed_over(text, plausible):
    name, words = choose_specialist(text)
    assert name in plausible
    assert words and all(w in text.lower() for w in words)  # topics read like the request


@pytest.mark.parametrize("name, text", sorted(REQUESTS.items()))
def test_keyword_requests_still_route_to_their_specialist(name, text):
    assert choose_specialist(text)[0] == name


@pytest.mark.parametrize(
    "text", ["hi", "thanks!", "how are you?", "what can you do?", "good morning", "", "  ?! "]
)
def test_chit_chat_stays_with_the_orchestrator(text):
    assert is_chit_chat(text)
    assert choose_specialist(text) is None
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([("user", text or "?")])
    assert not reply.tool_calls


@pytest.mark.parametrize(
    "text",
    [
        "We are building a billing service in Go with Postgres. What can you do?",
        "Our shop runs on Laravel and MySQL. How can your team help us?",
        "we use Go and Postgres, what kind of things can you do for us?",
    ],
)
def test_a_question_about_what_the_team_can_do_stays_whatever_the_stack(text):
    assert choose_specialist(text) is None
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([("user", text)])
    assert not reply.tool_calls and "orchestrator" in reply.content


@pytest.mark.parametrize(
    "text, expected",
    [
        ("what can you do about the memory leak in our Go service?", "test_debug_engineer"),
        (
            "We use Go. Can you fix the flaky tests, and what else can you do?",
            "test_debug_engineer",
        ),
    ],
)
def test_a_capability_question_that_also_asks_for_work_hands_over(text, expected):
    assert choose_specialist(text)[0] == expected


def test_off_topic_text_and_context_alone_do_not_hand_over():
    assert choose_specialist("the weather is nice") is None
    assert choose_specialist("My manager says hello") is None
    # a decision and a file name describe the situation: they help choose, the ask decides
    opening = (
        "Hi! We're starting the marketing site for our app. We decided to use React, and the "
        "first page lives in src/pages/Landing.tsx."
    )
    assert choose_specialist(opening) is None
    assert choose_specialist("Please design the landing page hero.")[0] == "frontend_designer"


@pytest.mark.parametrize(
    "text",
    [
        "Our staging key is sk-test-123 and password=hunter2 for the db.",
        "Background note 3: the service handles 3 requests.",
        "General note 5: we keep talking about the product vision and the team plan.",
        "We decided to use React with Vite. The app lives in src/App.tsx.",
    ],
)
def test_statements_of_facts_do_not_hand_over_without_a_keyword(text):
    assert not is_ask(text)
    assert choose_specialist(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Can you profile the API?",
        "please tidy this module",
        "We need an audit trail",
        "The tests fail on CI",
        "the build trows an eror",  # a typo'd problem word still reads as a report
        "Write tests for the parser",
        "Containerise the app",
        "Now write the migrations for the orders table",  # a follow-up: lead-ins, then the verb
        "OK, next containerise it",
    ],
)
def test_asks_read_as_asks(text):
    keys = score_profiles(text, builtin_profiles())[0].keys  # the request's words, typos fixed
    assert is_ask(text, keys)
    assert not is_ask("the build trows an eror")  # without the corrected words, no report


def test_a_statement_with_a_keyword_still_hands_over():
    # exact keyword phrases keep the old behaviour, statement or not
    assert choose_specialist("The unit test crashes with a stack trace in pytest.")[0] == (
        "test_debug_engineer"
    )


def test_keyword_phrases_score_highest_and_give_the_topic_words():
    call = (
        OfflineChatModel()
        .bind_tools(orchestrator_tools())
        .invoke([("user", "Please design the landing page hero for web/index.html.")])
    )
    assert call.tool_calls[0]["args"]["topic"] == "landing-page-hero"
    top = score_profiles("Please design the landing page hero.", builtin_profiles())[0]
    assert top.name == "frontend_designer" and top.matched() == ["landing page", "hero"]


def test_naming_a_profile_outright_still_wins():
    assert choose_specialist("ask the hacker about the landing page")[0] == "hacker"
    assert choose_specialist("the security data engineer, please: the hero layout")[0] == (
        "security_data_engineer"
    )


def test_exclude_leaves_a_profile_out():
    text = "The tests fail with a KeyError in parse_order"
    assert choose_specialist(text, exclude=["test_debug_engineer"])[0] != "test_debug_engineer"


def test_routing_is_deterministic_and_the_index_is_built_once_per_profile_set():
    profiles = builtin_profiles()
    assert index_for(profiles) is index_for(builtin_profiles())
    text = "Could you scan our staging server for known CVEs?"
    assert {repr(choose_specialist(text)) for _ in range(5)} == {repr(choose_specialist(text))}


# -- the stemmer ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "words, common",
    [
        (["test", "tests", "testing", "tested", "tester"], "test"),
        (["crash", "crashes", "crashed", "crashing"], "crash"),
        (["deploy", "deploys", "deployed", "deploying", "deployment", "deployments"], "deploy"),
        (["story", "stories"], "story"),
        (["dependency", "dependencies"], "dependency"),
        (["implement", "implements", "implementation", "implementations"], "impl"),
        (["secure", "secures", "security"], "secur"),
        (["release", "releases", "released", "releasing"], "releas"),
        (["debug", "debugging", "debugged"], "debug"),
        (["encrypt", "encryption", "encrypted"], "encrypt"),
        (["architect", "architecture"], "architect"),
        (["design", "designs", "designer", "designed"], "design"),
        (["quick", "quickly"], "quick"),
        (["profile", "profiling", "profiles"], "profil"),
    ],
)
def test_stemmer_maps_word_forms_together(words, common):
    assert {stem(w) for w in words} == {common}


@pytest.mark.parametrize(
    "word, expected",
    [
        ("css", "css"),  # short words stay
        ("ux", "ux"),
        ("access", "access"),  # -ss is not a plural
        ("status", "status"),  # nor is -us
        ("analysis", "analysis"),  # nor -is
        ("string", "string"),  # 'str' has no vowel: -ing stays
        ("speed", "speed"),  # -eed is not a past tense
        ("fixes", "fix"),  # -es after x
        ("pages", "page"),  # -s, not -es, after g
        ("Tests", "test"),  # case does not matter
    ],
)
def test_stemmer_leaves_what_is_not_a_suffix(word, expected):
    assert stem(word) == expected


def test_stemmer_is_deterministic_and_idempotent_enough():
    sample = "testing deployments vulnerabilities authentication stories releases".split()
    assert [stem(w) for w in sample] == [stem(w) for w in sample]
    assert all(stem(stem(w)) == stem(stem(stem(w))) for w in sample)


# -- the synonym table ----------------------------------------------------------------------
def test_synonym_table_is_plain_data():
    assert isinstance(SYNONYMS, tuple) and len(SYNONYMS) >= 10
    for group in SYNONYMS:
        assert isinstance(group, tuple) and len(group) >= 2
        assert all(isinstance(e, str) and e == e.lower().strip() and e for e in group)
        assert len(set(group)) == len(group), group
        assert not any(e in STOP_WORDS for e in group), group


@pytest.mark.parametrize(
    "word, other",
    [
        ("slow", "latency"),
        ("slow", "profile"),
        ("bug", "traceback"),
        ("error", "exception"),
        ("secure", "vulnerability"),
        ("deploy", "ship"),
        ("ui", "screen"),
        ("testing", "coverage"),
    ],
)
def test_synonyms_stand_for_each_other(word, other):
    assert stem(other) in synonyms_of(word)
    assert stem(word) in synonyms_of(other)


def test_synonym_phrases_and_homonyms():
    assert stem("review") in synonyms_of("look over")
    assert "look over" in synonyms_of("feedback")
    assert synonyms_of("weather") == frozenset()
    # a homonym stays out of the table: design tokens are not secrets
    assert stem("token") not in synonyms_of("secret")


def test_a_synonym_routes_where_the_word_itself_does_not():
    assert choose_specialist("Our checkout has a nasty glitch")[0] == "test_debug_engineer"


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "A patient asked us to erase everything we hold about them. How do we do that "
            "properly across all systems?",
            "security_data_engineer",
        ),
        ("Could the anti-cheat be fooled by tampering with the client?", "hacker"),
        ("Is this leaderboard code too convoluted? Make it easier to follow.", "quality_reviewer"),
        ("Which file decides the shipping cost? I can't spot it.", "codebase_explorer"),
        ("Should thousands of sensors use polling or MQTT?", "solution_architect"),
        ("Our gateway's RAM usage keeps climbing until it dies", "test_debug_engineer"),
    ],
)
def test_everyday_wording_routes_through_the_thesaurus(text, expected):
    assert not _keyword_in(text)  # no keyword phrase helps
    assert choose_specialist(text)[0] == expected


PLANNING = (
    "We want to build a food delivery app from scratch. "
    "What's the order of work and which expert does what?"
)


def test_the_orchestrators_own_work_stays_with_it():
    # scored against the specialists alone, planning words would pick someone
    specialists = {n: p for n, p in builtin_profiles().items() if n != ORCHESTRATOR_PROFILE}
    assert choose_specialist(PLANNING, profiles=specialists) is not None
    assert choose_specialist(PLANNING) is None
    assert choose_specialist("Plan the next three sprints for the mobile launch") is None
    reply = OfflineChatModel().bind_tools(orchestrator_tools()).invoke([("user", PLANNING)])
    assert not reply.tool_calls


def test_the_orchestrator_stays_on_its_keywords_not_its_description():
    # its description ("understands the request ... routes it") would claim explanations
    text = "I just joined the team and have no idea how this project is organised."
    assert choose_specialist(text)[0] == "codebase_explorer"


@pytest.mark.parametrize(
    "text",
    [
        "Let staff sign in to the payroll portal with their Google work accounts.",
        "Only managers should see salaries; every employee can open that page.",
        "Something's wrong: the totals are off by one cent after the last change",
        "I have no idea how this project is organised.",
    ],
)
def test_wishes_rules_and_indirect_problems_read_as_asks(text):
    assert is_ask(text)
    assert choose_specialist(text) is not None


def test_a_bare_wrong_is_not_a_problem_report():
    assert not is_ask("sorry, wrong window")
    assert choose_specialist("sorry, wrong window") is None
    assert is_ask("the totals went wrong")


# -- a user's profile -----------------------------------------------------------------------
DATA_SCIENTIST = Profile(
    name="data_scientist",
    emoji="📊",
    description="Analyses data sets: statistical models, forecasts, correlations and charts.",
    keywords=("statistics", "dataset", "data analysis", "regression model"),
    prompt="You are the Data Scientist. You explore data, fit models and explain uncertainty.",
)


def test_a_user_profile_is_routed_by_its_description_and_stemmed_words():
    registry = resolve_profiles([DATA_SCIENTIST])
    text = "Can you forecast next quarter's revenue and chart the trend?"
    # none of the exact keywords of any profile is in the request
    assert not [k for p in registry.values() for k in p.keywords if k in text.lower()]
    assert choose_specialist(text) is None or choose_specialist(text)[0] != "data_scientist"
    name, words = choose_specialist(text, profiles=registry)
    assert name == "data_scientist"
    assert words == ["forecast", "chart"]  # `forecasts`, `charts` in the description
    assert (
        choose_specialist("Is there a correlation between churn and refunds?", profiles=registry)[0]
        == "data_scientist"
    )
    # a new profile set gets its own index; the built-in one is kept
    assert index_for(registry) is not index_for(builtin_profiles())
    assert choose_specialist("hi", profiles=registry) is None


def test_the_offline_orchestrator_hands_over_to_a_user_profile():
    registry = resolve_profiles([DATA_SCIENTIST])
    tools = handover_tools(ORCHESTRATOR_PROFILE, registry)
    reply = (
        OfflineChatModel(profiles=registry)
        .bind_tools(tools)
        .invoke([("user", "Please forecast the churn for next year.")])
    )
    args = reply.tool_calls[0]["args"]
    assert args["specialist_profile"] == "data_scientist"
    assert args["topic"] == "forecast"
    assert "forecast" in args["handover_reason"]


def test_threshold_is_a_score_not_a_name():
    # the threshold holds for any profile set, e.g. one user profile alone
    alone = {"data_scientist": DATA_SCIENTIST}
    assert choose_specialist("forecast the revenue", profiles=alone)[0] == "data_scientist"
    assert choose_specialist("the weather is nice", profiles=alone) is None
    assert THRESHOLD > 0
