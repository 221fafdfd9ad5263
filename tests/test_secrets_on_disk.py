"""Nothing secret is written to a briefing file, nor shown in the package a specialist reads."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from specialist_handover import build_graph
from specialist_handover.nodes import handover_to_specialist
from tests.support.graphs import say, state_of

OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3x1fakefakefakefake\n"
    "c2VjcmV0c2VjcmV0c2VjcmV0\n-----END RSA PRIVATE KEY-----"
)
SECRETS = [OPENAI_KEY, AWS_ID, AWS_SECRET, "hunter2-Secret!", "MIIEowIBAAKCAQEA3x1fake"]


def briefing_text(root: str) -> str:
    return "".join(p.read_text() for p in Path(root, ".a0proj", "handover").glob("*.md"))


def test_the_tool_redacts_every_text_argument_before_the_write(handover_args, handover_dir):
    handover_args.update(
        summary=f"Deploy with key {OPENAI_KEY}.",
        handover_reason=f"aws_secret_access_key = {AWS_SECRET}",
        recent_turns=["user: the db is postgres://app:hunter2-Secret!@db.internal/prod"],
        decisions=[f"Use access key id {AWS_ID}"],
        artifacts=[PEM],
    )
    answer = handover_to_specialist.invoke(handover_args)
    text = briefing_text(str(handover_dir.parents[1]))
    for secret in SECRETS:
        assert secret not in text and secret not in answer
    for kind in (
        "openai-key",
        "aws-secret-key",
        "url-password",
        "aws-access-key-id",
        "private-key",
    ):
        assert f"[REDACTED:{kind}]" in text
    assert "- **Secrets redacted:** 5 (" in text
    assert "NOTE: 5 secrets redacted from the package and the briefing" in answer
    result = json.loads(answer.splitlines()[0])
    assert result["status"] == "ok"
    path = Path(result["briefing"]["path"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_entry_without_secrets_says_none_were_redacted(handover_args, handover_dir):
    handover_to_specialist.invoke(handover_args)
    assert "- **Secrets redacted:** none\n" in briefing_text(str(handover_dir.parents[1]))


def test_a_secret_in_the_topic_never_becomes_a_file_name(handover_args, handover_dir):
    handover_args["topic"] = f"rotate {OPENAI_KEY}"
    result = json.loads(handover_to_specialist.invoke(handover_args).splitlines()[0])
    name = Path(result["briefing"]["path"]).name
    assert "ab3def6hij9klm2nop5qrs8tuv1wxy4z" not in name.lower()
    assert "redacted-openai-key" in name


def test_secrets_pasted_by_a_user_stay_out_of_the_briefing_and_the_package(ctx):
    graph = build_graph(checkpointer=InMemorySaver())
    say(graph, f"Our staging key is {OPENAI_KEY} and password=hunter2-Secret! for the db.", ctx)
    say(graph, "Please design the landing page hero with bold typography.", ctx)
    state = state_of(graph)
    assert state["active_agent"] == "frontend_designer"
    package = state["handover"]["rendered"]
    text = briefing_text(ctx["project_root"])
    for secret in (OPENAI_KEY, "hunter2-Secret!"):
        assert secret not in package and secret not in text
    assert "[REDACTED:openai-key]" in package + text
