"""Secret redaction before a briefing write: `redact`, `redact_all`, `REDACTION_KINDS`.

Every secret below is fake: realistic in shape, obviously not a live credential
(AWS's documented example key pair, `FAKE` in the body, Slack's documented
webhook placeholder).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specialist_handover.nodes.briefing.redact import (
    REDACTION_KINDS,
    Redaction,
    redact,
    redact_all,
)

OPENAI_PROJ = "sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrSTUVwxyz_-0123456789"
OPENAI_LEGACY = "sk-FAKE0123456789abcdefghijKLMNOPQRSTuvwx"
OPENAI_SVC = "sk-svcacct-FAKE0123456789abcdefGHIJKLmnopqr"
ANTHROPIC = "sk-ant-api03-FAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEF-_0123456789AA"
GOOGLE = "AIzaSy" + "FAKE" + "0123456789" * 2 + "abcdefghi"
GITHUB_PAT = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
GITHUB_OAUTH = "gho_FAKE0123456789abcdefghijklmnopqrstuv"
GITHUB_APP = "ghs_FAKE0123456789abcdefghijklmnopqrstuv"
GITHUB_FINE = "github_pat_11FAKE0123_abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789"
SLACK_BOT = "xoxb-0000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake"
SLACK_USER = "xoxp-0000000000-0000000000-0000000000000-FAKEfake0123456789abcdef"
SLACK_APP = "xapp-1-A0000000000-0000000000000-fake0123456789abcdef"
SLACK_HOOK_PATH = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SESSION_ID = "ASIAFAKE0123456789AB"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJGQUtFIiwibmFtZSI6IkZha2UgVXNlciJ9"
    ".FAKEsignature0123456789abcdefghijklmnopq_-"
)
PEM_BODY = "MIIEFAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"


def pem(label: str) -> str:
    """A fake PEM block with the given label."""
    return f"-----BEGIN {label}-----\n{PEM_BODY}\n{PEM_BODY[::-1]}\n-----END {label}-----"


def mark(kind: str) -> str:
    """The marker a secret of `kind` becomes."""
    return f"[REDACTED:{kind}]"


# (id, text, {kind: count}, secret substrings that must disappear)
MUST_REDACT = [
    ("openai-project", f"OPENAI_API_KEY={OPENAI_PROJ}", {"openai-key": 1}, [OPENAI_PROJ]),
    ("openai-legacy", f"old key {OPENAI_LEGACY} (rotated)", {"openai-key": 1}, [OPENAI_LEGACY]),
    ("openai-service", f'client = OpenAI(api_key="{OPENAI_SVC}")', {"openai-key": 1}, [OPENAI_SVC]),
    ("anthropic-wins", f"ANTHROPIC_API_KEY={ANTHROPIC}", {"anthropic-key": 1}, [ANTHROPIC]),
    ("anthropic-prose", f"here is my key {ANTHROPIC} thanks", {"anthropic-key": 1}, [ANTHROPIC]),
    ("google", f"maps key={GOOGLE}&v=3", {"google-api-key": 1}, [GOOGLE]),
    (
        "github-classic",
        f"git clone https://{GITHUB_PAT}@github.com/o/r",
        {"github-token": 1},
        [GITHUB_PAT],
    ),
    ("github-oauth", f"GH_TOKEN: {GITHUB_OAUTH}", {"github-token": 1}, [GITHUB_OAUTH]),
    ("github-app", f"installation token {GITHUB_APP}", {"github-token": 1}, [GITHUB_APP]),
    ("github-fine-grained", f"token = '{GITHUB_FINE}'", {"github-token": 1}, [GITHUB_FINE]),
    ("slack-bot", f"SLACK_BOT_TOKEN={SLACK_BOT}", {"slack-token": 1}, [SLACK_BOT]),
    ("slack-user", f"use {SLACK_USER} for the export", {"slack-token": 1}, [SLACK_USER]),
    ("slack-app", f"app-level token: {SLACK_APP}", {"slack-token": 1}, [SLACK_APP]),
    (
        "slack-webhook",
        f"curl -X POST https://hooks.slack.com/services/{SLACK_HOOK_PATH} -d @msg.json",
        {"slack-webhook": 1},
        [SLACK_HOOK_PATH],
    ),
    ("aws-key-id", f"the key id is {AWS_ID}.", {"aws-access-key-id": 1}, [AWS_ID]),
    (
        "aws-session-key-id",
        f'"AccessKeyId": "{AWS_SESSION_ID}"',
        {"aws-access-key-id": 1},
        [AWS_SESSION_ID],
    ),
    (
        "aws-secret-ini",
        f"aws_secret_access_key = {AWS_SECRET}",
        {"aws-secret-key": 1},
        [AWS_SECRET],
    ),
    (
        "aws-secret-env",
        f'export AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"',
        {"aws-secret-key": 1},
        [AWS_SECRET],
    ),
    (
        "aws-credentials-file",
        f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n",
        {"aws-access-key-id": 1, "aws-secret-key": 1},
        [AWS_ID, AWS_SECRET],
    ),
    ("jwt", f"id_token={JWT}", {"jwt": 1}, [JWT]),
    ("pem-rsa", f"key:\n{pem('RSA PRIVATE KEY')}\nend", {"private-key": 1}, [PEM_BODY]),
    ("pem-openssh", pem("OPENSSH PRIVATE KEY"), {"private-key": 1}, [PEM_BODY]),
    ("pem-ec", pem("EC PRIVATE KEY"), {"private-key": 1}, [PEM_BODY]),
    ("pem-encrypted", pem("ENCRYPTED PRIVATE KEY"), {"private-key": 1}, [PEM_BODY]),
    ("pem-pkcs8", pem("PRIVATE KEY"), {"private-key": 1}, [PEM_BODY]),
    ("password-eq", "password=hunter2", {"password": 1}, ["hunter2"]),
    ("passwd-colon", "passwd: s3cr3t!", {"password": 1}, ["s3cr3t!"]),
    ("pwd-eq", "pwd=Tr0ub4dor&3", {"password": 1}, ["Tr0ub4dor&3", "Tr0ub4dor"]),
    (
        "password-json",
        '{"user": "bob", "password": "FakeP4ss word"}',
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "password-env-quoted",
        'DB_PASSWORD="correct horse battery staple"',
        {"password": 1},
        ["horse"],
    ),
    ("password-php", "'password' => 'FakeP4ss'", {"password": 1}, ["FakeP4ss"]),
    ("password-yaml-word", "database:\n  password: letmein\n", {"password": 1}, ["letmein"]),
    ("password-number", "password = 123456", {"password": 1}, ["123456"]),
    ("password-adonet", "Server=db;User Id=sa;Password=FakeP4ss;", {"password": 1}, ["FakeP4ss"]),
    ("password-cli-flag", "mysql --password FakeP4ss -h db", {"password": 1}, ["FakeP4ss"]),
    ("password-markdown", "**Password:** FakeP4ss", {"password": 1}, ["FakeP4ss"]),
    ("password-escaped-json", r"{\"password\": \"FakeP4ss\"}", {"password": 1}, ["FakeP4ss"]),
    ("secret-yaml", "SECRET: FAKE9secret", {"secret": 1}, ["FAKE9secret"]),
    ("client-secret", "client_secret=FAKEcl13nt", {"secret": 1}, ["FAKEcl13nt"]),
    ("token-eq", "token=FAKEtok123456789", {"token": 1}, ["FAKEtok123456789"]),
    ("token-annotated", 'token: str = "FAKEtok123"', {"token": 1}, ["FAKEtok123"]),
    ("token-query", "cb?code=1&access_token=FAKEtok9&expires_in=3600", {"token": 1}, ["FAKEtok9"]),
    ("api-key-quoted", 'api_key: "FAKE-abc123def456"', {"api-key": 1}, ["FAKE-abc123def456"]),
    ("apikey-colon", "apikey: FAKEabc123", {"api-key": 1}, ["FAKEabc123"]),
    ("api-key-header", "X-Api-Key: FAKE0123abcd", {"api-key": 1}, ["FAKE0123abcd"]),
    (
        "url-postgres",
        "postgres://admin:FakeS3cret@db.example.com:5432/app",
        {"url-password": 1},
        ["FakeS3cret"],
    ),
    ("url-https", "https://bob:FakePass123@example.com/path", {"url-password": 1}, ["FakePass123"]),
    (
        "url-redis-no-user",
        "redis://:FakePass123@cache:6379/0",
        {"url-password": 1},
        ["FakePass123"],
    ),
    ("bearer-header", "Authorization: Bearer FAKEtoken0123", {"auth-header": 1}, ["FAKEtoken0123"]),
    (
        "basic-header",
        'curl -H "Authorization: Basic ZmFrZTpmYWtlcGFzcw==" https://api.example.com',
        {"auth-header": 1},
        ["ZmFrZTpmYWtlcGFzcw=="],
    ),
    (
        "bare-bearer",
        "send Bearer FAKE0123456789abcdefghij",
        {"auth-header": 1},
        ["FAKE0123456789abcdefghij"],
    ),
]

MUST_KEEP = [
    "git checkout 3f786850e387550fdab836ed7e6dc881de23001b",
    'sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    "commit_sha: 9fceb02d0ae598e95dc970b74767f19372d61af8",
    'id = "123e4567-e89b-12d3-a456-426614174000"',
    "Please reset your password in settings.",
    "the token budget is 3000",
    "max_context_tokens=3000",
    "token_count=42",
    "tokens: 3000",
    "token=42",
    "max_tokens: 4096, temperature: 0.2",
    "password=",
    'PASSWORD=""',
    '{"password": ""}',
    "password=<your password>",
    "password: ${DB_PASSWORD}",
    "DB_PASSWORD=$DB_PASSWORD",
    'api_key = os.environ["API_KEY"]',
    'token = os.getenv("GITHUB_TOKEN")',
    "client = OpenAI(api_key=api_key)",
    "connect(password=settings.DB_PASSWORD)",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'api_key: "your-api-key"',
    'password: "***"',
    "password: null",
    "def login(user: str, password: str) -> bool:",
    "api_key: Optional[str] = None",
    'if password == "":',
    "has_token: false",
    "password_reset_url=https://example.com/reset",
    "pwd=/home/user/project",
    "Token: the budget is 3000 per turn",
    "the secret: we ship on Friday",
    "passwordless login is enabled",
    "Bearer tokens are described in RFC 6750",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    '"token_type": "Bearer", "expires_in": 3600',
    "https://github.com/org/repo",
    "postgres://localhost/db",
    "postgres://app@db.example.com:5432/app",
    "http://localhost:8080/health?ready=1",
    "mail alice@example.com about the password policy",
    "keys live in /home/user/.ssh/id_rsa and ~/.aws/credentials",
    "import sklearn as sk_learn",
    "see task-123 and risk-assessment-framework-document-v2",
    "internationalization and counterrevolutionaries",
    "AKIA is the prefix of an AWS access key id",
    "pi is 3.14159 and 1234567890 is a number",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg==",
    "already clean: password=[REDACTED:password] and [REDACTED:openai-key]",
]


@pytest.mark.parametrize(
    ("text", "kinds", "secrets"),
    [pytest.param(text, kinds, secrets, id=name) for name, text, kinds, secrets in MUST_REDACT],
)
def test_secrets_are_replaced_by_a_marker_of_their_kind(
    text: str, kinds: dict[str, int], secrets: list[str]
) -> None:
    result = redact(text)
    for secret in secrets:
        assert secret not in result.text
    for kind in kinds:
        assert mark(kind) in result.text
    assert result.counts == kinds


@pytest.mark.parametrize("text", MUST_KEEP)
def test_ordinary_text_comes_back_unchanged(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.counts == {}
    assert result.total == 0


def test_the_corpora_are_big_enough_and_cover_every_kind() -> None:
    assert len(MUST_REDACT) >= 30
    assert len(MUST_KEEP) >= 30
    covered = {kind for _, _, kinds, _ in MUST_REDACT for kind in kinds}
    assert covered == set(REDACTION_KINDS)


def test_kind_names_are_short_lower_case_and_unique() -> None:
    assert len(set(REDACTION_KINDS)) == len(REDACTION_KINDS)
    for kind in REDACTION_KINDS:
        assert kind == kind.lower() and " " not in kind and len(kind) <= 20


def test_an_assignment_keeps_its_key_name_and_replaces_only_the_value() -> None:
    assert redact("password=hunter2").text == "password=[REDACTED:password]"
    assert redact('"password": "hunter2"').text == '"password": "[REDACTED:password]"'
    assert redact("DB_PASSWORD='x1y2'").text == "DB_PASSWORD='[REDACTED:password]'"


def test_a_url_keeps_scheme_user_and_host() -> None:
    result = redact("DATABASE_URL=postgres://app:FakeS3cret@db.internal:5432/app?sslmode=require")
    assert result.text == (
        "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app?sslmode=require"
    )


def test_anthropic_wins_over_the_generic_openai_pattern() -> None:
    assert redact(ANTHROPIC).counts == {"anthropic-key": 1}


def test_counts_are_per_kind_and_total_sums_them() -> None:
    text = f"password=hunter2\nPASSWORD: FakeP4ss\n{GITHUB_PAT}\n{AWS_ID}"
    result = redact(text)
    assert result.counts == {"password": 2, "github-token": 1, "aws-access-key-id": 1}
    assert result.total == 4


def test_several_secrets_in_one_text_are_all_replaced() -> None:
    text = (
        f"Deploy notes: set OPENAI_API_KEY={OPENAI_PROJ} and use {SLACK_BOT} for alerts; "
        f"db is postgres://app:FakeS3cret@db:5432/app, jwt {JWT}, and {pem('RSA PRIVATE KEY')} "
        "then run the migration."
    )
    result = redact(text)
    for secret in (OPENAI_PROJ, SLACK_BOT, "FakeS3cret", JWT, PEM_BODY):
        assert secret not in result.text
    assert result.total == 5
    assert result.text.startswith("Deploy notes: set OPENAI_API_KEY=[REDACTED:openai-key]")
    assert result.text.endswith("then run the migration.")


def test_a_multi_line_pem_block_is_replaced_whole_and_the_text_around_it_stays() -> None:
    text = f"before\n{pem('RSA PRIVATE KEY')}\nafter"
    assert redact(text).text == "before\n[REDACTED:private-key]\nafter"


def test_a_pem_block_without_an_end_line_is_replaced_up_to_the_next_blank_line() -> None:
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\n\nthe rest"
    result = redact(text)
    assert PEM_BODY not in result.text
    assert result.text == "[REDACTED:private-key]\n\nthe rest"


def test_a_public_key_or_certificate_is_not_redacted() -> None:
    text = f"-----BEGIN PUBLIC KEY-----\n{PEM_BODY}\n-----END PUBLIC KEY-----"
    assert redact(text).text == text


@pytest.mark.parametrize(
    "text", [pytest.param(text, id=name) for name, text, _, _ in MUST_REDACT] + MUST_KEEP
)
def test_redaction_is_idempotent_and_markers_are_not_counted_again(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


def test_redact_all_redacts_each_text_in_order_and_sums_the_counts() -> None:
    texts, counts = redact_all(["password=hunter2", "nothing here", f"token={GITHUB_PAT} pwd=x1"])
    assert texts == [
        "password=[REDACTED:password]",
        "nothing here",
        "token=[REDACTED:github-token] pwd=[REDACTED:password]",
    ]
    assert counts == {"password": 2, "github-token": 1}
    assert redact_all([]) == ([], {})
    assert redact_all(iter(["a", "b"])) == (["a", "b"], {})


def test_a_redaction_is_a_frozen_value() -> None:
    result = redact("password=hunter2")
    assert isinstance(result, Redaction)
    with pytest.raises(AttributeError):
        result.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00",
        "\ud800",
        "\udfff password=hunter2 \x00",
        "password=\ud800\udc00x1",
        "\x00" * 1000,
        "-----BEGIN RSA PRIVATE KEY-----",
        'password="unterminated',
        "Authorization: Bearer",
        "postgres://:@",
        "sk-" * 50,
    ],
)
def test_surrogates_nul_and_fragments_never_raise(text: str) -> None:
    result = redact(text)
    assert isinstance(result.text, str)
    assert redact(result.text).text == result.text


def test_secrets_next_to_surrogates_and_nul_are_still_redacted() -> None:
    result = redact(f"\ud800\x00password=hunter2\x00{AWS_ID}\udfff")
    assert "hunter2" not in result.text and AWS_ID not in result.text
    assert result.counts == {"password": 1, "aws-access-key-id": 1}


FRAGMENTS = [
    "password",
    "token",
    "secret",
    "api_key",
    "=",
    ": ",
    '"',
    "'",
    "\\",
    " ",
    "\n",
    "sk-proj-",
    "sk-ant-",
    "Ab3dEfGh1jKlMnOpQrStUvWx0123456789",
    AWS_ID,
    AWS_SECRET,
    "ghp_",
    "eyJ",
    ".",
    "Bearer ",
    "Authorization: ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "postgres://u:",
    "@host",
    "[REDACTED:password]",
    "${",
    "}",
    "(",
    ")",
    "&",
    ";",
    "--",
    "hunter2",
    "42",
    "\ud800",
    "\x00",
]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=20))
def test_any_mix_of_secret_fragments_never_raises_and_redacts_idempotently(
    parts: list[str],
) -> None:
    once = redact("".join(parts))
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


def test_a_one_megabyte_text_with_scattered_secrets_is_fully_redacted() -> None:
    secrets = [OPENAI_PROJ, ANTHROPIC, GITHUB_PAT, SLACK_BOT, AWS_ID, JWT, GOOGLE]
    filler = "The quick brown fox: jumps over the lazy dog, token budget 3000. " * 260
    chunks = []
    for index in range(60):
        chunks.append(filler)
        chunks.append(f"\nitem {index}: {secrets[index % len(secrets)]} password=FakeP4ss{index}\n")
    text = "".join(chunks)
    assert len(text) >= 1_000_000
    started = time.perf_counter()
    result = redact(text)
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0  # generous: the real figure is a fraction of a second
    for secret in secrets:
        assert secret not in result.text
    assert "FakeP4ss" not in result.text
    assert result.total == 120
    assert result.counts["password"] == 60


PATHOLOGICAL = {
    "one-long-word": "a" * 200_000,
    "repeated-assignments": "password=" * 20_000,
    "repeated-placeholders": "password=${" * 20_000,
    "unterminated-quotes": 'password="' * 20_000,
    "repeated-scheme-user": "a://b:" * 30_000,
    "pem-begins-without-end": "-----BEGIN RSA PRIVATE KEY-----\n\n" * 6_000,
    "long-pem-label": "-----BEGIN " + "A " * 100_000,
    "sk-prefixes": "sk-" * 60_000,
    "bare-bearers": "Bearer " * 30_000,
    "backslashes-and-quotes": '\\"' * 100_000,
    "annotation-spaces": "token: str" + " " * 200_000,
}


@pytest.mark.parametrize("text", list(PATHOLOGICAL.values()), ids=list(PATHOLOGICAL))
def test_inputs_built_to_backtrack_still_finish_quickly(text: str) -> None:
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 5.0  # generous; linear patterns take milliseconds
