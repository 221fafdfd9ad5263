"""The redactor against two corpora, and everything written outside the checkpoint redacted.

`tests/data/secrets_corpus.json` was written by a hand that never saw the
redactor: realistic fake secrets of many kinds in the contexts people paste them
in, and look-alikes that must come through unchanged. Every secret must be gone
from the redacted text; every look-alike must be left exactly as it was.

Measured blind, once, before the redactor was tuned on it: 220 of 259 secrets
redacted, 123 of 127 look-alikes kept. Since then it is development data: 256 of
259 and 127 of 127. The three left are told apart from harmless text only by
what a person knows (`KNOWN_MISSES`); the test fails if one of them starts
passing, so the list stays true.

`tests/data/secrets_corpus2.json` answers a red team's blind corpus (94 secrets,
40 look-alikes: 84 redacted, 40 kept), whose ten leaking kinds were Square, New
Relic, Sentry DSN keys, Facebook tokens, FCM server keys, Alibaba and Tencent key
ids, Postman keys, Teams webhooks and credentials named in a sentence ("my token
is ..."). It holds those kinds and at least three more formats per vendor
family (107 secrets of 40 kinds, each in a chat message, a log line or a config
line) and 47 look-alikes near the new rules (ULIDs, git SHAs, MD5 digests, UUIDs
in URLs, ticket ids such as `PMAK-12`, prefixes named in prose, "my token is
expired"). It was written with the new rules in mind, so it is development data
from the start; before them, 32 of its first 104 secrets were redacted and 44 of
its first 45 look-alikes kept (a masked `ghp_xxxx...` was taken for a token);
now all 107 and all 47.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from specialist_handover import build_graph
from specialist_handover.nodes.redaction import redact
from tests.support.graphs import REQUESTS, say, state_of
from tests.support.models import ScriptedChatModel, ai_call

DATA = Path(__file__).parent / "data"
CORPUS = json.loads((DATA / "secrets_corpus.json").read_text(encoding="utf-8"))
SECRETS = CORPUS["secrets"]
LOOKALIKES = CORPUS["lookalikes"]
CORPUS2 = json.loads((DATA / "secrets_corpus2.json").read_text(encoding="utf-8"))
SECRETS2 = CORPUS2["secrets"]
LOOKALIKES2 = CORPUS2["lookalikes"]
RED_TEAM_KINDS = {
    "square-access-token",
    "square-oauth-secret",
    "newrelic-user-api-key",
    "sentry-dsn",
    "facebook-access-token",
    "fcm-server-key",
    "alibaba-access-key-id",
    "tencent-secret-id",
    "postman-api-key",
    "teams-incoming-webhook",
    "teams-workflow-url",
    "token-in-prose",
}
KNOWN_MISSES = {
    "fciq oaje jpwp whrb": "four lowercase words, like any short phrase",
    "a6519600e5f7c06bf7568779fc966aba": "an Algolia admin key has the public search key's shape",
    "ce427fff61f5ee4446f2e5cf411ee32ceadca733": "a bare key id in prose has a git hash's shape",
}


def _secret_cases() -> list:  # type: ignore[type-arg]
    return [
        pytest.param(
            case,
            id=case["kind"],
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[case["secret"]])]
            if case["secret"] in KNOWN_MISSES
            else [],
        )
        for case in SECRETS
    ]


def test_the_corpus_is_big_and_varied_enough():
    assert len(SECRETS) >= 120 and len({s["kind"] for s in SECRETS}) >= 40
    assert len(LOOKALIKES) >= 60
    assert all(s["secret"] in s["text"] for s in SECRETS)


@pytest.mark.parametrize("case", _secret_cases())
def test_every_secret_of_the_blind_corpus_is_redacted(case):
    assert case["secret"] not in redact(case["text"]).text


@pytest.mark.parametrize("case", LOOKALIKES, ids=lambda c: c["kind"])
def test_every_lookalike_of_the_blind_corpus_is_left_alone(case):
    assert redact(case["text"]).text == case["text"]


def test_the_second_corpus_holds_the_red_teams_kinds_and_more():
    kinds = {s["kind"] for s in SECRETS2}
    assert RED_TEAM_KINDS <= kinds and len(kinds) >= 35
    assert len(SECRETS2) >= 100 and len(LOOKALIKES2) >= 40
    assert all(s["secret"] in s["text"] for s in SECRETS2)
    assert all(sum(s["kind"] == kind for s in SECRETS2) >= 2 for kind in RED_TEAM_KINDS)


@pytest.mark.parametrize("case", SECRETS2, ids=lambda c: c["kind"])
def test_every_secret_of_the_second_corpus_is_redacted_once_and_for_all(case):
    once = redact(case["text"])
    assert case["secret"] not in once.text
    twice = redact(once.text)
    assert twice.text == once.text and twice.counts == {}


@pytest.mark.parametrize("case", LOOKALIKES2, ids=lambda c: c["kind"])
def test_every_lookalike_of_the_second_corpus_is_left_alone(case):
    result = redact(case["text"])
    assert result.text == case["text"] and result.counts == {}


@pytest.mark.parametrize(
    "case",
    [next(s for s in SECRETS2 if s["kind"] == kind) for kind in sorted(RED_TEAM_KINDS)],
    ids=sorted(RED_TEAM_KINDS),
)
def test_a_red_team_kind_reaches_the_trail_redacted(case, ctx):
    leaky = ai_call(
        "handover_to_specialist",
        specialist_profile="no_such_profile",
        topic="deploy",
        summary="s",
        handover_reason=case["text"],
    )
    graph = build_graph(checkpointer=InMemorySaver(), model=ScriptedChatModel(script=[leaky]))
    say(graph, "Deploy it.", ctx)
    (record,) = state_of(graph)["handovers"]
    stored = json.dumps(record)
    assert case["secret"] not in stored and "[REDACTED:" in stored


STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dcXNAPbdSGm1iQ7x3yB6dfrq8o"


def test_a_refused_handovers_topic_and_reason_reach_the_trail_redacted(ctx):
    leaky = ai_call(
        "handover_to_specialist",
        specialist_profile="no_such_profile",
        topic=f"deploy-{STRIPE}",
        summary="s",
        handover_reason=f"the key is {STRIPE}",
    )
    graph = build_graph(checkpointer=InMemorySaver(), model=ScriptedChatModel(script=[leaky]))
    say(graph, "Deploy it.", ctx)
    (record,) = state_of(graph)["handovers"]
    assert record["kind"] == "refused"
    assert STRIPE not in json.dumps(record)


def test_a_reviewers_edit_is_stored_redacted(ctx):
    saver = InMemorySaver()
    graph = build_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    review = {**ctx, "review_handovers": True}
    out = graph.invoke(
        {"messages": [("user", REQUESTS["frontend_designer"])]}, config, context=review
    )
    (request,) = [i.value for i in out["__interrupt__"]]
    args = {
        **request["action_requests"][0]["args"],
        "summary": f"Use the key {STRIPE} for payments.",
    }
    action = {"name": "handover_to_specialist", "args": args}
    graph.invoke(
        Command(resume={"decisions": [{"type": "edit", "edited_action": action}]}),
        config,
        context=review,
    )
    stored = json.dumps([repr(w) for w in saver.writes.values()], default=str)
    assert STRIPE not in stored and "[REDACTED:" in stored
    # the edited call (made again with the edit) is answered by the handover
    answer = [m for m in state_of(graph)["messages"] if isinstance(m, ToolMessage)][-1]
    assert answer.content.startswith("Handed over to frontend_designer")
    remade = [m for m in state_of(graph)["messages"] if getattr(m, "tool_calls", None)][-1]
    assert "[REDACTED:" in remade.tool_calls[0]["args"]["summary"]
