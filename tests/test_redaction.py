"""Secret redaction before a briefing write: `redact`, `redact_all`, `REDACTION_KINDS`.

Every secret below is fake: realistic in shape, obviously not a live credential
(AWS's documented example key pair, `FAKE` in the body or `deadbeef`/`fa4e` where a
format allows only hex, Slack's documented webhook placeholder).
"""

from __future__ import annotations

import base64
import subprocess
import sys
import time

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specialist_handover.nodes.redaction.redact import (
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


def fill(n: int, alphabet: str = "FAKEfake0123456789abcdefGHIJKLmnopqrSTUVwxyz") -> str:
    """`n` characters of a fake token body drawn from `alphabet`, repeated."""
    return (alphabet * (n // len(alphabet) + 1))[:n]


HEX = "deadbeef0123456789abcdeffa4e"
STRIPE_LIVE = "sk_live_51" + fill(97)
STRIPE_TEST = "sk_test_51" + fill(40)
STRIPE_RESTRICTED = "rk_live_51" + fill(60)
STRIPE_WEBHOOK = "whsec_" + fill(32)
AZURE_ACCOUNT_KEY = fill(86, "FAKEfake0123456789+/abcdefGHIJKL") + "=="
AZURE_BUS_KEY = fill(43, "FAKEfake0123456789+/abcdef") + "="
AZURE_SIG = "FAKE0123abcdEFGH%2Bijkl%2FMNOP4567qrstUVwx%3D"
SENDGRID = "SG." + fill(22) + "." + fill(43, "fakeFAKE_-0123456789abcdefXYZ")
TWILIO_SID = "AC" + fill(32, "fake0123456789abcdef")
TWILIO_KEY_SID = "SK" + fill(32, "fake9876543210fedcba")
TWILIO_AUTH = fill(32, HEX)
DISCORD_BOT = "MTAxFAKEfakeFAKEfake01234." + "GhIjKl." + fill(38)
DISCORD_HOOK_TOKEN = fill(68, "FAKEfake0123456789abcdef_-GHIJ")
GITLAB_PAT = "glpat-" + fill(20)
GITLAB_RUNNER = "glrt-" + fill(20, "fakeFAKE0123456789_-")
GITLAB_ROUTABLE = "glpat-" + fill(60) + ".01fake9z1"
TELEGRAM = "123456789:AA" + fill(33, "FAKEfake0123456789_-abcdefGHIJ")
PYPI = "pypi-AgEIcHlwaS5vcmc" + fill(150, "FAKEfake0123456789-_abcdefGHIJ")
SQUARE = "sq0csp-" + fill(43, "FAKEfake0123456789-_abcdefGHIJ")
MAILCHIMP = fill(32, HEX) + "-us21"
NPM = "npm_" + fill(36)
HUGGINGFACE = "hf_" + fill(34, "FAKEfakeABCDEFGHIJKLMNOPqrstuvwxyz")
MAILGUN = "key-" + fill(32, "fake0123456789abcdefghij")
MAILGUN_SIGNING = fill(32, HEX) + "-" + fill(8, HEX[::-1]) + "-" + fill(8, "0123fa4e")
DIGITALOCEAN = "dop_v1_" + fill(64, HEX)
DATABRICKS = "dapi" + fill(32, HEX)
VAULT = "hvs.CAESI" + fill(86, "FAKEfake0123456789_-abcdefGHIJ")
SHOPIFY = "shpat_" + fill(32, HEX)
SHOPIFY_SHARED = "shpss_" + fill(32, HEX[::-1])
AGE_KEY = "AGE-SECRET-KEY-1" + fill(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
AGE_PUBLIC = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
DOCKER_AUTH = base64.b64encode(b"fakeuser:FakePassw0rd").decode()
GCP_KEY_ID = fill(40, HEX)
LANGSMITH = "lsv2_pt_" + fill(32, HEX) + "_" + fill(10, HEX[::-1])
LINEAR = "lin_api_" + fill(40)
NOTION_SECRET = "secret_" + fill(43)
NOTION = "ntn_" + fill(46, "0123456789FAKEfakeGHIJKLmnop")
AIRTABLE = "pat" + fill(14) + "." + fill(64, HEX)
GRAFANA = "glsa_" + fill(32) + "_" + fill(8, HEX)
GRAFANA_CLOUD = "glc_eyJ" + fill(80, "FAKEfake0123456789+/abcdefGHIJ") + "="
MAPBOX_TOKEN_BODY = "eyJ1IjoiZmFrZSIsImEiOiJGQUtFZmFrZTAxMjMifQ." + fill(22)
MAPBOX_SECRET = "sk." + MAPBOX_TOKEN_BODY
MAPBOX_PUBLIC = "pk." + MAPBOX_TOKEN_BODY
PULUMI = "pul-" + fill(40, HEX)
DOPPLER_SERVICE = "dp.st.dev." + fill(40)
DOPPLER_CLI = "dp.ct." + fill(43, "FAKEfake0123456789abcdefGHIJKL")
TERRAFORM = fill(14) + ".atlasv1." + fill(67, "FAKEfake0123456789_-abcdefGHIJ")
OKTA = "00" + fill(40, "FAKEfake0123456789-_abcdefGHIJ")
VAULT_LEGACY = "s." + fill(24, "FAKEfake0123456789abcdefGHIJ")
UNSEAL_KEY = fill(43, "FAKEfake0123456789+/abcdefGHIJ") + "="
UNSEAL_KEY_2 = fill(44, "0123456789FAKEfake+/GHIJabcdef")
WG_KEY = fill(43, "FAKEfake0123456789+/abcdefGHIJKL") + "="
DATADOG_APP_KEY = fill(40, HEX)
AUTH_TOKEN = fill(40, "FAKEfake0123456789abcdefGHIJ")
RAILS_SECRET = fill(128, HEX)
AZURE_DEVOPS_PAT = fill(52, "fake0123456789abcdefghijklmnopqrstuvwxyz")
# the red team's ten kinds and more formats of their vendors
B64URL = "FAKEfake0123456789-_abcdefGHIJ"
UUID_A, UUID_B, UUID_C = (
    "fa4e0123-dead-beef-0123-456789abcdef",
    "deadbeef-fa4e-4567-89ab-cdef01234567",
    "01234567-89ab-cdef-fa4e-deadbeef0123",
)
SQUARE_TOKEN = "sq0atp-" + fill(22, B64URL)
SQUARE_SANDBOX = "sandbox-sq0atb-" + fill(22, B64URL[::-1])
SQUARE_EAAA = "EAAA" + fill(60, B64URL)
NEWRELIC_USER = "NRAK-" + fill(27, "FAKE0123456789ABCDGHIJKLMN")
NEWRELIC_INSERT = "NRII-" + fill(32, B64URL)
NEWRELIC_LICENSE = fill(36, HEX) + "NRAL"
SENTRY_KEY = fill(32, HEX)
SENTRY_DSN = f"https://{SENTRY_KEY}@o123456.ingest.sentry.io/456"
SENTRY_ORG = "sntrys_eyJpYXQiOjE3MTcwMDAwMDB9_" + fill(43, "FAKEfake0123456789+/abcdef")
SENTRY_USER = "sntryu_" + fill(64, HEX)
FACEBOOK = "EAAB" + fill(180, "FAKEfake0123456789abcdefGHIJKLmnop")
FACEBOOK_GRAPH = "EAAG" + fill(150, "0123456789FAKEfakeGHIJKLmnopqr")
FACEBOOK_APP_SECRET = fill(32, HEX[::-1])
INSTAGRAM = "IGQVJ" + fill(150, B64URL)
FCM = "AAAA" + fill(7, "FAKEfk0") + ":APA91b" + fill(134, B64URL)
GOOGLE_CLIENT_SECRET = "GOCSPX-" + fill(28, B64URL)
GOOGLE_ACCESS = "ya29.a0" + fill(120, B64URL)
GOOGLE_REFRESH = "1//0" + fill(99, B64URL)
ALIBABA_ID = "LTAI" + fill(20, "FAKEfake0123456789")
ALIBABA_SECRET = fill(30, "FAKEfake0123456789abcdefGHIJ")
ALIBABA_STS = "STS.N" + fill(24, "FAKEfake0123456789abcdef")
TENCENT_ID = "AKID" + fill(32, "FAKEfake0123456789abcdefGHIJ")
TENCENT_SECRET = fill(32, "0123456789FAKEfakeGHIJklmn")
POSTMAN = "PMAK-" + fill(24, HEX) + "-" + fill(34, HEX[::-1])
POSTMAN_COLLECTION = "PMAT-01" + fill(24, "FAKE0123456789ABCDGHJKMN")
TEAMS_PATH = f"{UUID_A}@{UUID_B}/IncomingWebhook/{fill(32, HEX)}/{UUID_C}/V2{fill(40)}"
WORKFLOW_SIG = fill(43, B64URL)
WORKFLOW_URL = (
    f"https://prod-12.westeurope.logic.azure.com:443/workflows/{fill(32, HEX)}/triggers/manual"
    f"/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={WORKFLOW_SIG}"
)
AZURE_AD_SECRET = "FaK8Q~" + fill(34, "FAKEfake0123456789_~.-abcdef")
AZURE_DEVOPS_PAT_2024 = fill(76) + "AZDO" + "Fk01"
ATLASSIAN = "ATATT3xFfGF0" + fill(180, B64URL) + "=0FA4E0B1"
BITBUCKET = "ATBB" + fill(32, "FAKEfake0123456789abcdefGHIJ")
PROSE_TOKEN = "abc123FAKE789xyz"


def pem(label: str) -> str:
    """A fake PEM block with the given label."""
    return f"-----BEGIN {label}-----\n{PEM_BODY}\n{PEM_BODY[::-1]}\n-----END {label}-----"


B64_PEM_KEY = base64.b64encode(pem("RSA PRIVATE KEY").encode()).decode()
B64_PEM_CERT = base64.b64encode(pem("CERTIFICATE").encode()).decode()


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
    # provider tokens, found by detect-secrets' plugins or by our own patterns
    (
        "stripe-live-prose",
        f"charge it with {STRIPE_LIVE} then refund",
        {"stripe-key": 1},
        [STRIPE_LIVE],
    ),
    (
        "stripe-test-curl",
        f"curl https://api.stripe.com/v1/charges -u {STRIPE_TEST}: -d amount=2000",
        {"stripe-key": 1},
        [STRIPE_TEST],
    ),
    (
        "stripe-restricted",
        f'stripe.api_key = "{STRIPE_RESTRICTED}"',
        {"stripe-key": 1},
        [STRIPE_RESTRICTED],
    ),
    (
        "stripe-webhook-env",
        f"STRIPE_WEBHOOK_SECRET={STRIPE_WEBHOOK}",
        {"webhook-secret": 1},
        [STRIPE_WEBHOOK],
    ),
    (
        "stripe-webhook-prose",
        f"the endpoint's signing secret is {STRIPE_WEBHOOK}.",
        {"webhook-secret": 1},
        [STRIPE_WEBHOOK],
    ),
    (
        "azure-connection-string",
        "DefaultEndpointsProtocol=https;AccountName=fakeacct;"
        f"AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
        {"azure-key": 1},
        [AZURE_ACCOUNT_KEY],
    ),
    (
        "azure-cli-account-key",
        f'az storage blob upload --account-name fakeacct --account-key "{AZURE_ACCOUNT_KEY}" -f a.txt',
        {"azure-key": 1},
        [AZURE_ACCOUNT_KEY],
    ),
    (
        "azure-service-bus",
        "Endpoint=sb://fake.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={AZURE_BUS_KEY}",
        {"azure-key": 1},
        [AZURE_BUS_KEY],
    ),
    (
        "azure-storage-key-env",
        f"AZURE_STORAGE_KEY={AZURE_ACCOUNT_KEY}",
        {"azure-key": 1},
        [AZURE_ACCOUNT_KEY],
    ),
    (
        "azure-key-in-prose",
        f"the storage account key is {AZURE_ACCOUNT_KEY} (key1)",
        {"azure-key": 1},
        [AZURE_ACCOUNT_KEY],
    ),
    (
        "azure-sas-url",
        "https://fakeacct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2026-01-01T00:00:00Z&spr=https&sig={AZURE_SIG}",
        {"azure-sas": 1},
        [AZURE_SIG],
    ),
    (
        "azure-sas-connection-string",
        "BlobEndpoint=https://fakeacct.blob.core.windows.net/;"
        f"SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-01-01T00:00:00Z&sig={AZURE_SIG}",
        {"azure-sas": 1},
        [AZURE_SIG],
    ),
    ("sendgrid-code", f"sg = SendGridAPIClient('{SENDGRID}')", {"sendgrid-key": 1}, [SENDGRID]),
    ("sendgrid-env", f"SENDGRID_API_KEY={SENDGRID}", {"sendgrid-key": 1}, [SENDGRID]),
    (
        "twilio-client",
        f'client = Client("{TWILIO_SID}", "{TWILIO_AUTH}")',
        {"twilio-key": 2},
        [TWILIO_SID, TWILIO_AUTH],
    ),
    ("twilio-api-key", f"TWILIO_API_KEY={TWILIO_KEY_SID}", {"twilio-key": 1}, [TWILIO_KEY_SID]),
    (
        "twilio-auth-prose",
        f"the Twilio auth token is {TWILIO_AUTH}",
        {"twilio-key": 1},
        [TWILIO_AUTH],
    ),
    ("discord-bot-run", f"bot.run('{DISCORD_BOT}')", {"discord-token": 1}, [DISCORD_BOT]),
    ("discord-bot-env", f"DISCORD_TOKEN={DISCORD_BOT}", {"discord-token": 1}, [DISCORD_BOT]),
    (
        "discord-webhook",
        f"post alerts to https://discord.com/api/webhooks/123456789012345678/{DISCORD_HOOK_TOKEN}",
        {"discord-webhook": 1},
        [DISCORD_HOOK_TOKEN],
    ),
    (
        "discord-webhook-legacy-host",
        f'WEBHOOK = "https://discordapp.com/api/webhooks/987654321098765432/{DISCORD_HOOK_TOKEN}"',
        {"discord-webhook": 1},
        [DISCORD_HOOK_TOKEN],
    ),
    ("gitlab-pat", f"rotate {GITLAB_PAT} today", {"gitlab-token": 1}, [GITLAB_PAT]),
    (
        "gitlab-runner",
        f"gitlab-runner register --token {GITLAB_RUNNER}",
        {"gitlab-token": 1},
        [GITLAB_RUNNER],
    ),
    ("gitlab-routable", f"GITLAB_TOKEN={GITLAB_ROUTABLE}", {"gitlab-token": 1}, [GITLAB_ROUTABLE]),
    (
        "telegram-url",
        f"https://api.telegram.org/bot{TELEGRAM}/sendMessage?chat_id=42",
        {"telegram-token": 1},
        [TELEGRAM],
    ),
    ("telegram-env", f"TELEGRAM_BOT_TOKEN={TELEGRAM}", {"telegram-token": 1}, [TELEGRAM]),
    (
        "pypi-pypirc",
        f"[pypi]\nusername = __token__\npassword = {PYPI}\n",
        {"pypi-token": 1},
        [PYPI],
    ),
    ("pypi-twine", f"TWINE_PASSWORD={PYPI} twine upload dist/*", {"pypi-token": 1}, [PYPI]),
    ("square-secret", f"square application secret {SQUARE}", {"square-key": 1}, [SQUARE]),
    ("square-env", f'SQUARE_OAUTH_SECRET="{SQUARE}"', {"square-key": 1}, [SQUARE]),
    (
        "mailchimp",
        f"mailchimp.set_config({{'api_key': '{MAILCHIMP}'}})",
        {"mailchimp-key": 1},
        [MAILCHIMP],
    ),
    ("mailchimp-prose", f"the list key is {MAILCHIMP} for us21", {"mailchimp-key": 1}, [MAILCHIMP]),
    (
        "npm-npmrc",
        f"//registry.npmjs.org/:_authToken={NPM}\nalways-auth=true",
        {"npm-token": 1},
        [NPM],
    ),
    ("npm-prose", f"publish with {NPM} from CI", {"npm-token": 1}, [NPM]),
    (
        "huggingface-login",
        f"from huggingface_hub import login; login('{HUGGINGFACE}')",
        {"huggingface-token": 1},
        [HUGGINGFACE],
    ),
    ("huggingface-env", f"export HF_TOKEN={HUGGINGFACE}", {"huggingface-token": 1}, [HUGGINGFACE]),
    (
        "mailgun-requests",
        f"requests.post(url, auth=('api', '{MAILGUN}'), data=msg)",
        {"mailgun-key": 1},
        [MAILGUN],
    ),
    (
        "mailgun-signing",
        f"Mailgun webhook signing key {MAILGUN_SIGNING}",
        {"mailgun-key": 1},
        [MAILGUN_SIGNING],
    ),
    (
        "digitalocean-cli",
        f"doctl auth init -t {DIGITALOCEAN}",
        {"digitalocean-token": 1},
        [DIGITALOCEAN],
    ),
    (
        "digitalocean-env",
        f"DIGITALOCEAN_ACCESS_TOKEN={DIGITALOCEAN}",
        {"digitalocean-token": 1},
        [DIGITALOCEAN],
    ),
    (
        "databricks-prose",
        f"host https://fake.cloud.databricks.com with {DATABRICKS}",
        {"databricks-token": 1},
        [DATABRICKS],
    ),
    ("databricks-env", f"DATABRICKS_TOKEN={DATABRICKS}-2", {"databricks-token": 1}, [DATABRICKS]),
    ("vault-login", f"vault login {VAULT}", {"vault-token": 1}, [VAULT]),
    ("vault-env", f"export VAULT_TOKEN={VAULT}", {"vault-token": 1}, [VAULT]),
    (
        "shopify-header",
        f"X-Shopify-Access-Token: {SHOPIFY}",
        {"shopify-token": 1},
        [SHOPIFY],
    ),
    (
        "shopify-shared-secret",
        f"app secret {SHOPIFY_SHARED} (rotate)",
        {"shopify-token": 1},
        [SHOPIFY_SHARED],
    ),
    (
        "age-keys-file",
        f"# created: 2026-01-01T00:00:00Z\n# public key: {AGE_PUBLIC}\n{AGE_KEY}\n",
        {"age-key": 1},
        [AGE_KEY],
    ),
    ("age-prose", f"decrypt with {AGE_KEY} please", {"age-key": 1}, [AGE_KEY]),
    (
        "docker-config",
        f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{DOCKER_AUTH}"}}}}}}',
        {"docker-auth": 1},
        [DOCKER_AUTH],
    ),
    (
        "docker-config-pretty",
        f'{{\n  "auths": {{\n    "ghcr.io": {{\n      "auth": "{DOCKER_AUTH}"\n    }}\n  }}\n}}',
        {"docker-auth": 1},
        [DOCKER_AUTH],
    ),
    (
        "gcp-service-account",
        '{"type": "service_account", "project_id": "fake-project", '
        f'"private_key_id": "{GCP_KEY_ID}", '
        '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEFAKE\\n-----END PRIVATE KEY-----\\n"}',
        {"gcp-key-id": 1, "private-key": 1},
        [GCP_KEY_ID, "MIIEFAKE"],
    ),
    (
        "gcp-key-id-python",
        f"creds = {{'private_key_id': '{GCP_KEY_ID}'}}",
        {"gcp-key-id": 1},
        [GCP_KEY_ID],
    ),
    # secrets known by their context
    (
        "kubeconfig-client-key-data",
        "users:\n- name: admin\n  user:\n"
        f"    client-certificate-data: {B64_PEM_CERT}\n    client-key-data: {B64_PEM_KEY}\n",
        {"private-key": 1},
        [B64_PEM_KEY],
    ),
    (
        "k8s-secret-tls-key",
        f"data:\n  tls.key: {B64_PEM_KEY}\n",
        {"private-key": 1},
        [B64_PEM_KEY],
    ),
    (
        "curl-user",
        "curl -u admin:FakeP4ss https://api.internal/health",
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "curl-user-quoted",
        "curl --user 'deploy:Fake-Pass_9' -X POST https://ci.internal/job",
        {"password": 1},
        ["Fake-Pass_9"],
    ),
    ("mysql-p", "mysql -uroot -pFakeP4ss -h db.internal app", {"password": 1}, ["FakeP4ss"]),
    (
        "mysqldump-p-quoted",
        "mysqldump -u app -p'Fake P4ss' app > dump.sql",
        {"password": 1},
        ["Fake P4ss"],
    ),
    (
        "docker-login",
        "docker login -u bob -p FakeRegistry9 registry.example.com",
        {"password": 1},
        ["FakeRegistry9"],
    ),
    ("redis-cli", "redis-cli -h cache -a FakeRedis9 ping", {"password": 1}, ["FakeRedis9"]),
    ("mysqladmin", "mysqladmin -u root password FakeNew9", {"password": 1}, ["FakeNew9"]),
    ("sshpass", "sshpass -p 'FakeSsh9!' ssh deploy@host", {"password": 1}, ["FakeSsh9!"]),
    (
        "yaml-pass",
        "smtp:\n  user: mailer\n  pass: FakeMailPass\n",
        {"password": 1},
        ["FakeMailPass"],
    ),
    ("env-db-pass", "DB_PASS=letmein\nDB_USER=app", {"password": 1}, ["letmein"]),
    (
        "openssl-pass",
        "openssl rsa -in k.pem -passin pass:FakeP4ss -out k2.pem",
        {"password": 1},
        ["FakeP4ss"],
    ),
    ("prose-password", "the db password is Tr0ub4dor&3 for now", {"password": 1}, ["Tr0ub4dor&3"]),
    (
        "prose-password-for",
        "The password for the admin account is hunter2.",
        {"password": 1},
        ["hunter2"],
    ),
    ("prose-with-password", "log in as admin with password hunter2.", {"password": 1}, ["hunter2"]),
    (
        "prose-credentials",
        "Use credentials admin:FakeP4ss for the staging dashboard",
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "prose-password-changed",
        'I changed it: the password was changed to "CorrectHorse"',
        {"password": 1},
        ["CorrectHorse"],
    ),
    (
        "aws-secret-bare-prose",
        f"AWS key {AWS_ID} with secret {AWS_SECRET}",
        {"aws-access-key-id": 1, "aws-secret-key": 1},
        [AWS_ID, AWS_SECRET],
    ),
    (
        "aws-credentials-csv",
        f"User name,Password,Access key ID,Secret access key\nbob,,{AWS_ID},{AWS_SECRET}\n",
        {"aws-access-key-id": 1, "aws-secret-key": 1},
        [AWS_ID, AWS_SECRET],
    ),
    # providers known by their prefix
    (
        "langsmith-env",
        f"LANGSMITH_API_KEY={LANGSMITH}\nLANGSMITH_TRACING=true",
        {"langsmith-key": 1},
        [LANGSMITH],
    ),
    (
        "langsmith-client",
        f'client = langsmith.Client(api_key="{LANGSMITH}")',
        {"langsmith-key": 1},
        [LANGSMITH],
    ),
    ("linear-env", f"LINEAR_API_KEY={LINEAR}", {"linear-key": 1}, [LINEAR]),
    ("linear-prose", f"my Linear key is {LINEAR}, scope read", {"linear-key": 1}, [LINEAR]),
    (
        "notion-secret-env",
        f"NOTION_TOKEN={NOTION_SECRET}",
        {"notion-token": 1},
        [NOTION_SECRET],
    ),
    (
        "notion-ntn-js",
        f"const notion = new Client({{ auth: '{NOTION}' }})",
        {"notion-token": 1},
        [NOTION],
    ),
    (
        "notion-secret-prose",
        f"integration secret {NOTION_SECRET} (internal)",
        {"notion-token": 1},
        [NOTION_SECRET],
    ),
    (
        "airtable-js",
        f"const base = new Airtable({{ apiKey: '{AIRTABLE}' }}).base('appFAKE')",
        {"airtable-token": 1},
        [AIRTABLE],
    ),
    ("airtable-prose", f"airtable PAT is {AIRTABLE}.", {"airtable-token": 1}, [AIRTABLE]),
    ("grafana-env", f"GRAFANA_SA_TOKEN={GRAFANA}", {"grafana-token": 1}, [GRAFANA]),
    (
        "grafana-cloud",
        f"grafana_cloud_access_policy_token: {GRAFANA_CLOUD}",
        {"grafana-token": 1},
        [GRAFANA_CLOUD],
    ),
    (
        "mapbox-secret-env",
        f"export MAPBOX_ACCESS_TOKEN={MAPBOX_SECRET}",
        {"mapbox-token": 1},
        [MAPBOX_SECRET],
    ),
    (
        "mapbox-secret-gradle",
        f"MAPBOX_DOWNLOADS_TOKEN: '{MAPBOX_SECRET}'",
        {"mapbox-token": 1},
        [MAPBOX_SECRET],
    ),
    ("pulumi-env", f"export PULUMI_ACCESS_TOKEN={PULUMI}", {"pulumi-token": 1}, [PULUMI]),
    (
        "pulumi-yaml",
        f"env:\n  PULUMI_ACCESS_TOKEN: {PULUMI}\n",
        {"pulumi-token": 1},
        [PULUMI],
    ),
    (
        "doppler-service-yaml",
        f"doppler:\n  service_token: {DOPPLER_SERVICE}\n",
        {"doppler-token": 1},
        [DOPPLER_SERVICE],
    ),
    (
        "doppler-cli-prose",
        f"doppler login gave me {DOPPLER_CLI}",
        {"doppler-token": 1},
        [DOPPLER_CLI],
    ),
    (
        "terraform-credentials-block",
        f'credentials "app.terraform.io" {{\n  token = "{TERRAFORM}"\n}}',
        {"terraform-token": 1},
        [TERRAFORM],
    ),
    ("terraform-env", f"TFE_TOKEN={TERRAFORM} terraform plan", {"terraform-token": 1}, [TERRAFORM]),
    # headers and key names
    (
        "okta-ssws-dict",
        f'headers = {{"Authorization": "SSWS {OKTA}"}}',
        {"auth-header": 1},
        [OKTA],
    ),
    ("okta-ssws-bare", f"call it with SSWS {OKTA} as the header", {"auth-header": 1}, [OKTA]),
    (
        "auth-header-no-scheme",
        f"Authorization: {AUTH_TOKEN}\nContent-Type: application/json",
        {"auth-header": 1},
        [AUTH_TOKEN],
    ),
    (
        "auth-header-no-scheme-js",
        f'fetch(url, {{ headers: {{ "Authorization": "{AUTH_TOKEN}" }} }})',
        {"auth-header": 1},
        [AUTH_TOKEN],
    ),
    (
        "auth-header-apache-quoted",
        'RequestHeader set Authorization "Bearer FAKEtoken0123"',
        {"auth-header": 1},
        ["FAKEtoken0123"],
    ),
    (
        "auth-header-nginx-single-quoted",
        "proxy_set_header Authorization 'Basic ZmFrZTpmYWtlcGFzcw==';",
        {"auth-header": 1},
        ["ZmFrZTpmYWtlcGFzcw=="],
    ),
    (
        "x-auth-key-dict",
        f'requests.get(url, headers={{"X-Auth-Key": "{DATADOG_APP_KEY}"}})',
        {"api-key": 1},
        [DATADOG_APP_KEY],
    ),
    (
        "dd-api-key-header",
        f"DD-API-KEY: {DATADOG_APP_KEY}\nDD-APPLICATION-KEY: {DATADOG_APP_KEY[::-1]}",
        {"api-key": 2},
        [DATADOG_APP_KEY, DATADOG_APP_KEY[::-1]],
    ),
    ("dd-app-key-env", f"DD_APP_KEY={DATADOG_APP_KEY}", {"api-key": 1}, [DATADOG_APP_KEY]),
    (
        "application-key-yaml",
        f"datadog:\n  application_key: {DATADOG_APP_KEY}\n",
        {"api-key": 1},
        [DATADOG_APP_KEY],
    ),
    (
        "client-positional-key",
        f'co = cohere.AsyncClientV2("{AUTH_TOKEN}", timeout=30)',
        {"api-key": 1},
        [AUTH_TOKEN],
    ),
    (
        "client-positional-key-js",
        f"const client = new CohereClient('{AUTH_TOKEN}');",
        {"api-key": 1},
        [AUTH_TOKEN],
    ),
    # assignments
    (
        "rails-secret-key-base-ruby",
        f'config.secret_key_base = "{RAILS_SECRET}"',
        {"secret": 1},
        [RAILS_SECRET],
    ),
    (
        "rails-secret-key-base-compose",
        f"environment:\n  SECRET_KEY_BASE: {RAILS_SECRET}\n",
        {"secret": 1},
        [RAILS_SECRET],
    ),
    (
        "subscript-python",
        "settings['DB_PASSWORD'] = 'FakeP4ss'",
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "subscript-php",
        '$config["secret_key"] = "FAKEs3cretFAKE";',
        {"secret": 1},
        ["FAKEs3cretFAKE"],
    ),
    (
        "pat-env",
        f"export ADO_PAT={AZURE_DEVOPS_PAT}",
        {"token": 1},
        [AZURE_DEVOPS_PAT],
    ),
    (
        "pat-yaml",
        f"secrets:\n  bitbucket-pat: {AZURE_DEVOPS_PAT}\n",
        {"token": 1},
        [AZURE_DEVOPS_PAT],
    ),
    (
        "dotted-generated-value",
        "API_TOKEN=v1.FAKE0a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1",
        {"token": 1},
        ["v1.FAKE0a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1"],
    ),
    # command lines and credential files
    (
        "netrc-one-line-prose",
        "my netrc has machine ci.example.com login bot password FakeN3trc! in it",
        {"password": 1},
        ["FakeN3trc!"],
    ),
    (
        "netrc-default-entry",
        "machine a.example.com login x password FakeA9\ndefault\n  login anon\n  password FakeB9\n",
        {"password": 2},
        ["FakeA9", "FakeB9"],
    ),
    (
        "pgpass-wildcards",
        "*:*:*:replicator:FakeRepl9",
        {"password": 1},
        ["FakeRepl9"],
    ),
    (
        "pgpass-file-mentioned",
        "PGPASSFILE=~/.pgpass.ci\ncat ~/.pgpass.ci\ndb.internal:15432:app:app:FakeP4ss",
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "htpasswd-print",
        "htpasswd -nbB admin 'FakeP4ss!' >> users",
        {"password": 1},
        ["FakeP4ss!"],
    ),
    (
        "htpasswd-separate-flags",
        "sudo htpasswd -b -c /etc/apache2/.htpasswd bob Fake9pass",
        {"password": 1},
        ["Fake9pass"],
    ),
    (
        "password-stdin-printf",
        "printf 'FakeP4ss' | podman login quay.io -u bob --password-stdin",
        {"password": 1},
        ["FakeP4ss"],
    ),
    (
        "password-stdin-passwd",
        'echo "FakeRoot9" | passwd --stdin root',
        {"password": 1},
        ["FakeRoot9"],
    ),
    (
        "token-stdin-gh",
        "echo FAKEtok3n0123456789 | gh auth login --with-token",
        {"token": 1},
        ["FAKEtok3n0123456789"],
    ),
    (
        "az-login-user",
        "az login -u bob@fake.onmicrosoft.com -p FakeAz9pass",
        {"password": 1},
        ["FakeAz9pass"],
    ),
    (
        "az-login-quoted",
        'az login --service-principal --username app -p "Fake~Secret.9" --tenant t',
        {"password": 1},
        ["Fake~Secret.9"],
    ),
    (
        "wg-preshared-key",
        f"wg set wg0 peer {WG_KEY[::-1]} preshared-key <(echo {WG_KEY})",
        {"secret": 1},
        [WG_KEY],
    ),
    (
        "password-process-substitution",
        "tool --password <(printf 'FakeP4ss9') --user bob",
        {"password": 1},
        ["FakeP4ss9"],
    ),
    (
        "vault-recovery-keys",
        f"Recovery Key 1: {UNSEAL_KEY}\nRecovery Key 2: {UNSEAL_KEY_2}",
        {"vault-unseal-key": 2},
        [UNSEAL_KEY, UNSEAL_KEY_2],
    ),
    (
        "vault-unseal-with-flags",
        f"vault operator unseal -address=https://vault.internal:8200 {UNSEAL_KEY}",
        {"vault-unseal-key": 1},
        [UNSEAL_KEY],
    ),
    (
        "vault-legacy-header",
        f"X-Vault-Token: {VAULT_LEGACY}",
        {"vault-token": 1},
        [VAULT_LEGACY],
    ),
    (
        "vault-legacy-prose",
        f"vault root token was {VAULT_LEGACY} before the upgrade",
        {"vault-token": 1},
        [VAULT_LEGACY],
    ),
    (
        "azure-key-in-command-output",
        f"$ az storage account keys list -n fakeacct -o tsv\n{AZURE_ACCOUNT_KEY}\n",
        {"azure-key": 1},
        [AZURE_ACCOUNT_KEY],
    ),
    # sentences
    ("prose-pw-colon", "wifi pw: Gu3st!Net for visitors", {"password": 1}, ["Gu3st!Net"]),
    (
        "prose-password-for-colon",
        "password for the staging db: FakeP4ss9 (rotate monthly)",
        {"password": 1},
        ["FakeP4ss9"],
    ),
    ("prose-french-est", "le mot de passe est Fake9pass.", {"password": 1}, ["Fake9pass"]),
    ("prose-german", "Passwort: FakeP4ss! bitte ändern", {"password": 1}, ["FakeP4ss!"]),
    (
        "prose-login-slash",
        "the wifi login is guest / Gu3stPass for now",
        {"password": 1},
        ["Gu3stPass"],
    ),
    ("prose-creds-slash", "creds: deploy / Fake9Deploy!", {"password": 1}, ["Fake9Deploy!"]),
    # the red team's ten kinds (each leaked before) and more formats of their vendors
    (
        "square-access-token",
        f"use {SQUARE_TOKEN} for the refund job",
        {"square-key": 1},
        [SQUARE_TOKEN],
    ),
    (
        "square-secret-any-length",
        "app secret sq0csp-" + fill(40, B64URL) + " (rotated)",
        {"square-key": 1},
        ["sq0csp-" + fill(40, B64URL)],
    ),
    ("square-sandbox", f"sandbox: {SQUARE_SANDBOX}", {"square-key": 1}, [SQUARE_SANDBOX]),
    ("square-eaaa", f"DEBUG square-sdk token {SQUARE_EAAA} ok", {"square-key": 1}, [SQUARE_EAAA]),
    (
        "newrelic-user-key",
        f"my user key {NEWRELIC_USER} works",
        {"newrelic-key": 1},
        [NEWRELIC_USER],
    ),
    (
        "newrelic-insert-key",
        f"-H 'X-Insert-Key: {NEWRELIC_INSERT}'",
        {"newrelic-key": 1},
        [NEWRELIC_INSERT],
    ),
    (
        "newrelic-license-key",
        f"license {NEWRELIC_LICENSE} accepted",
        {"newrelic-key": 1},
        [NEWRELIC_LICENSE],
    ),
    (
        "sentry-dsn-key",
        f"Sentry.init({{ dsn: '{SENTRY_DSN}' }})",
        {"sentry-dsn": 1},
        [SENTRY_KEY],
    ),
    (
        "sentry-key-header",
        f"X-Sentry-Auth: Sentry sentry_version=7, sentry_key={SENTRY_KEY}",
        {"sentry-dsn": 1},
        [SENTRY_KEY],
    ),
    (
        "sentry-tokens",
        f"sentry-cli --auth-token {SENTRY_ORG}; user token {SENTRY_USER}",
        {"sentry-token": 2},
        [SENTRY_ORG, SENTRY_USER],
    ),
    (
        "facebook-access-tokens",
        f"page token {FACEBOOK} and GET /me?access_token={FACEBOOK_GRAPH}",
        {"facebook-token": 2},
        [FACEBOOK, FACEBOOK_GRAPH],
    ),
    (
        "facebook-app-token",
        f"graph debug_token with access_token=1234567890123456|{FACEBOOK_APP_SECRET}",
        {"facebook-token": 1},
        [FACEBOOK_APP_SECRET],
    ),
    (
        "instagram-token",
        f"ig token={INSTAGRAM} expires_in=5183944",
        {"facebook-token": 1},
        [INSTAGRAM],
    ),
    ("fcm-server-key", f"fcm send failed, key {FCM} rejected", {"firebase-key": 1}, [FCM]),
    (
        "google-oauth-bare",
        f"secret {GOOGLE_CLIENT_SECRET}, access {GOOGLE_ACCESS}, refresh {GOOGLE_REFRESH}",
        {"google-oauth": 3},
        [GOOGLE_CLIENT_SECRET, GOOGLE_ACCESS, GOOGLE_REFRESH],
    ),
    (
        "alibaba-key-and-secret",
        f"ak {ALIBABA_ID} / sk {ALIBABA_SECRET} for the aliyun OSS bucket",
        {"alibaba-key": 1, "alibaba-secret": 1},
        [ALIBABA_ID, ALIBABA_SECRET],
    ),
    ("alibaba-sts-id", f"sts ak={ALIBABA_STS} expired", {"alibaba-key": 1}, [ALIBABA_STS]),
    (
        "tencent-secret-id-and-key",
        f"SecretId: {TENCENT_ID}\nkey next to it: {TENCENT_SECRET}",
        {"tencent-key": 1, "tencent-secret": 1},
        [TENCENT_ID, TENCENT_SECRET],
    ),
    (
        "wechat-app-secret",
        "appid wx3f9a2c1d8e7b6a50 appsecret 9b1f0c2ad4e85f3a7c6d2e1b0a9f8e7d",
        {"wechat-secret": 1},
        ["9b1f0c2ad4e85f3a7c6d2e1b0a9f8e7d"],
    ),
    (
        "wecom-webhook",
        f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={UUID_A}",
        {"wecom-webhook": 1},
        [UUID_A],
    ),
    (
        "postman-keys",
        f"my postman key {POSTMAN} works; the collection one too: {POSTMAN_COLLECTION}",
        {"postman-key": 2},
        [POSTMAN, POSTMAN_COLLECTION],
    ),
    (
        "teams-incoming-webhook",
        f"post to https://acme.webhook.office.com/webhookb2/{TEAMS_PATH} please",
        {"teams-webhook": 1},
        [TEAMS_PATH],
    ),
    (
        "teams-legacy-webhook",
        f"Invoke-RestMethod -Uri 'https://outlook.office.com/webhook/{TEAMS_PATH}'",
        {"teams-webhook": 1},
        [TEAMS_PATH],
    ),
    (
        "teams-workflow",
        f"the Teams workflow is {WORKFLOW_URL}.",
        {"teams-webhook": 1},
        [WORKFLOW_SIG, WORKFLOW_URL.split("/workflows/")[1]],
    ),
    (
        "teams-workflow-json-escaped",
        '{"url": "' + WORKFLOW_URL.replace("&", "\\u0026") + '"}',
        {"teams-webhook": 1},
        [WORKFLOW_SIG],
    ),
    (
        "azure-ad-client-secret",
        f"the app registration secret {AZURE_AD_SECRET} expires in June",
        {"azure-ad-secret": 1},
        [AZURE_AD_SECRET],
    ),
    (
        "azure-devops-pat-2024",
        f"git clone https://pat:{AZURE_DEVOPS_PAT_2024}@dev.azure.com/acme/_git/api",
        {"url-password": 1},
        [AZURE_DEVOPS_PAT_2024],
    ),
    (
        "azure-devops-pat-2024-bare",
        f"new PAT for the pipeline: {AZURE_DEVOPS_PAT_2024}",
        {"azure-devops-pat": 1},
        [AZURE_DEVOPS_PAT_2024],
    ),
    (
        "atlassian-tokens",
        f"jira token {ATLASSIAN}, bitbucket app password {BITBUCKET}",
        {"atlassian-token": 2},
        [ATLASSIAN, BITBUCKET],
    ),
    # a credential named in a sentence
    ("prose-my-token-is", f"my token is {PROSE_TOKEN}, is it wrong?", {"token": 1}, [PROSE_TOKEN]),
    (
        "prose-the-api-key-is",
        "the API key is 9f8e7d6c5b4a3f2e1d0c.",
        {"api-key": 1},
        ["9f8e7d6c5b4a3f2e1d0c"],
    ),
    (
        "prose-secret-was",
        "our webhook signing secret was q0PiFAKEcHZMmzG1LsEB before the rotation",
        {"secret": 1},
        ["q0PiFAKEcHZMmzG1LsEB"],
    ),
    (
        "prose-heres-the-token",
        f"here's the access token {PROSE_TOKEN}",
        {"token": 1},
        [PROSE_TOKEN],
    ),
    ("prose-password-dash", "Password - hunter2x!FAKE", {"password": 1}, ["hunter2x!FAKE"]),
    ("prose-password-colon", "password: hunter2x!FAKE (admin)", {"password": 1}, ["hunter2x!FAKE"]),
    (
        "prose-license-key",
        "the license key is FAK3E-17ISU-P9QQE-VJCV4-4HYX7",
        {"api-key": 1},
        ["FAK3E-17ISU-P9QQE-VJCV4-4HYX7"],
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
    # public by design, placeholders in a token's shape, and text that only resembles one
    "const stripe = Stripe('pk_live_51" + fill(97) + "');",
    "STRIPE_PUBLISHABLE_KEY=pk_test_51" + fill(40),
    "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "stripe.api_key = 'sk_test_XXXXXXXXXXXXXXXXXXXXXXXX'",
    "STRIPE_KEY=sk_live_...",
    "Stripe keys start with sk_live_ or sk_test_; restricted ones with rk_live_.",
    "export HF_TOKEN=<YOUR_TOKEN>",
    "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GITLAB_TOKEN=glpat-xxxxxxxxxxxxxxxxxxxx",
    "NPM_TOKEN=npm_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "AccountKey=<your storage account key>",
    "AccountName=fakeacct;EndpointSuffix=core.windows.net",
    f"# public key: {AGE_PUBLIC}",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFAKEfakeFAKEfake0123456789abcdefghijklmn bob@laptop",
    f"client-certificate-data: {B64_PEM_CERT}",
    "client-key: /etc/kubernetes/pki/admin.key",
    "mailgun public key pubkey-" + fill(32, HEX),
    "the md5 is 9e107d9d372bb6826bd81d3542a419d6",
    "the twilio webhook returned 4f8c1e0a9b7d4c3e2f1a0b9c8d7e6f5a in 20 ms",
    "NotificationServiceHandle.config.settings_for_the_production_env",
    "HashiCorp Vault tokens start with hvs. and Databricks tokens with dapi.",
    "https://discord.com/channels/123456789012345678/987654321098765432",
    "time 12:34:56, ticket 123456789: see the log",
    "Secrets Manager ARN arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    "the AWS region is us-east-1 and the secret rotates every 30 days",
    '"integrity": "sha512-' + AZURE_ACCOUNT_KEY + '"',
    "sort_key: createdAt",
    "signing_key_id: 2f1c",
    'public_key: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfakeFAKE0123456789"',
    '{"auth": "required", "auths": {}}',
    # prose and command lines without a password
    "The password is required and must be at least 12 characters long.",
    "the password is 12 characters long",
    "the password is hashed with bcrypt before it is stored",
    "the password is ${DB_PASSWORD}",
    "the password field is optional; see password_policy.md",
    "credentials: see vault:kv/app and ~/.aws/credentials",
    "log in with password authentication",
    "your password was changed to a stronger one",
    "PASS: 12, FAIL: 0",
    "pass: 12/12 tests",
    "first pass: done",
    "bypass: true",
    'curl -u "$API_USER:$API_PASS" https://api.example.com',
    "curl --user-agent 'Mozilla/5.0 (X11; Linux x86_64)' https://example.com",
    "mysql -u root -p -h db app",
    "mysql -uroot -p$MYSQL_ROOT_PASSWORD app",
    "docker login -u bob -p $REGISTRY_PASSWORD registry.example.com",
    "openssl req -passout pass: -new",
    # placeholders, references to a secret manager, public tokens, permissions
    "client_secret: CHANGEME",
    "token = FIXME",
    "api_key: example\npassword: TBD",
    "API_KEY=op://Private/stripe/credential",
    "password: vault:secret/data/db#password",
    "DB_PASSWORD=arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf",
    "token: projects/acme/secrets/gh-token/versions/3",
    "DB_PASSWORD=@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/db/)",
    f"export MAPBOX_PUBLIC_TOKEN={MAPBOX_PUBLIC}",
    f"mapbox_token: '{MAPBOX_PUBLIC}'",
    "permissions:\n  id-token: write\n  pull-requests: read\n  packages: write-all",
    "app_key: storefront",
    "token=settings.GithubToken",
    # shapes near the new rules that are not secrets
    "IGNORE_PAT=*.pyc",
    "link/ether 3c:22:fb:9a:11:0e brd ff:ff:ff:ff:ff:ff",
    "uptime 10:22:31:12:59 since boot",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "cat ~/pw.txt | docker login -u bob --password-stdin",
    "az login --service-principal -u app -p ~/certs/sp.pem --tenant t",
    "wg set wg0 private-key /etc/wireguard/private.key",
    "machine learning models need a login password policy",
    "tokens = s.accessTokenForCurrentUsr",
    "the vault token lives at s.example.com",
    "password for reset: see the wiki",
    "Le mot de passe: voir le coffre",
    "the login is SSO / SAML only",
    "Authorization: required for every call",
    "Authorization: Bearer tokens expire after 3600 seconds",
    "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
    "vault operator unseal -migrate",
    'client = bigquery.Client("acme-analytics-prod-2024")',
    "this.authKey = authKey",
    "token = accessToken",
    'store = SecretsClient("9e107d9d372bb6826bd81d3542a419d6")',
    # near the red team's ten kinds: ids, prefixes, tickets and words
    "PMAK-12 is blocked on the API review, PMAT-802 is done",
    "NRAK-1234 and LTAI-7 are duplicates of AKID-42; AZDO-5521 flakes",
    "AKID is the prefix of a Tencent SecretId, LTAI of an Alibaba AccessKey ID",
    "Facebook tokens start with EAA, Square ones with EAAA or sq0atp-",
    "New Relic user keys start with NRAK- and license keys end in NRAL",
    "FCM server keys look like AAAA...:APA91b...; GOCSPX- marks a Google client secret",
    "example.com.  300  IN  AAAA  2001:db8:85a3::8a2e:370:7334",
    "applicationId: 'sq0idp-r34HdSnJVWaCesH3dnJrGA'",
    "Sentry captured event 9b95f60a014db3ab29c94c98dd7306c4",
    'dsn: "https://examplePublicKey@o0.ingest.sentry.io/0"',
    "call STS.AssumeRole then STS.GetCallerIdentity",
    "pages = (total + 99)//100; rest = total//3",
    "request 01HVVZR13FE21Q9HVWQT97NRE0 done; see https://app.example.com/p/"
    + UUID_A
    + "/settings",
    "ts=1717000000000000|9b95f60a014db3ab29c94c98dd7306c4 trace sampled",
    "https://teams.microsoft.com/l/channel/19%3a4a95f7d8db4c4e7fae857bcebe0623e6%40thread.tacv2/"
    f"General?groupId={UUID_A}&tenantId={UUID_B}",
    f"the flow is https://prod-12.westeurope.logic.azure.com/workflows/{fill(32, HEX)} (no sig)",
    "-----BEGIN CERTIFICATE-----\n"
    + fill(64, "MIIBfake0123+/")
    + "\nEAAB"
    + fill(60, "FAKEfake0123456789")
    + "\n"
    + fill(64, "0123+/fakeMIIB")
    + "\n-----END CERTIFICATE-----",
    "my token is expired, how do I get a new one?",
    "the token is valid for 3600 seconds",
    "the password is wrong, I get 401 every time",
    "the key is to test early and often",
    "the secret is out: we ship on Friday",
    "the API key is in 1Password under 'geocoder'",
    "the access token is 32 characters long and starts with a letter",
    "the token is e2e-tested and python3.11-based",
    "Settings saved. API key: ************************a91f",
    "my token is ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the docs example",
    "the token is user_id2 in the old schema",
    "my GPG key is 0x3AA5C34371567BD2",
    "the next page token is CiAKGjBpNDd2Nmp2Mk12",
    f"idempotency key: {UUID_A}",
    "the partition key is tenant_id2",
    "Password - Reset",
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
        assert len(secret) < 24 or secret[-12:] not in result.text  # no tail left behind
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


def test_a_token_the_detector_cuts_short_is_replaced_whole() -> None:
    # detect-secrets' Stripe pattern reports only the first 24 characters of the body
    assert redact(f"key {STRIPE_LIVE}.").text == "key [REDACTED:stripe-key]."
    assert redact(f"GITLAB_TOKEN={GITLAB_PAT}").text == "GITLAB_TOKEN=[REDACTED:gitlab-token]"


def test_a_connection_string_keeps_its_other_fields() -> None:
    text = f"AccountName=fakeacct;AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net"
    assert redact(text).text == (
        "AccountName=fakeacct;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net"
    )


def test_a_command_line_keeps_the_user_and_replaces_only_the_password() -> None:
    assert redact("curl -u admin:FakeP4ss https://x").text == (
        "curl -u admin:[REDACTED:password] https://x"
    )
    assert redact("mysql -uroot -pFakeP4ss app").text == "mysql -uroot -p[REDACTED:password] app"


def test_redaction_never_asks_a_provider_whether_a_secret_is_live(monkeypatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("redact() must not use the network")

    monkeypatch.setattr(requests.Session, "request", refuse)
    for _, text, kinds, _ in MUST_REDACT:
        assert redact(text).counts == kinds


def test_loading_the_detector_leaves_the_warning_display_alone() -> None:
    # importing detect-secrets calls logging.captureWarnings(True); the redactor undoes it.
    # A fresh process, since pytest swaps the warning display around every test.
    code = (
        "import warnings\n"
        "from specialist_handover.nodes.redaction.redact import redact\n"
        "print(warnings.showwarning.__module__)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "warnings"


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
    "sk_live_",
    "sk_test_",
    STRIPE_LIVE[8:30],
    "whsec_",
    "AccountKey=",
    AZURE_ACCOUNT_KEY[:44],
    "sig=",
    "SG.",
    "AC",
    TWILIO_AUTH,
    "twilio",
    "glpat-",
    "hf_",
    "npm_",
    ":AA",
    "123456789",
    "-us1",
    "key-",
    "curl -u ",
    "mysql -p",
    "docker login -p ",
    "password is ",
    "pass: ",
    '"auth": "',
    DOCKER_AUTH,
    "LS0tLS1CRUdJTi",
    "[REDACTED:twilio-key]",
    "\t",
    "machine h ",
    "login ",
    "password ",
    "default",
    "<(echo ",
    ")",
    "echo ",
    " | docker login --password-stdin",
    "htpasswd -b ",
    "az login -p ",
    ":5432:",
    "db:5432:app:u:",
    "s.",
    VAULT_LEGACY,
    "vault",
    "Unseal Key 1: ",
    UNSEAL_KEY,
    "SSWS ",
    "['token']",
    " = ",
    "_PAT=",
    AZURE_DEVOPS_PAT,
    "pk.",
    "sk.",
    MAPBOX_TOKEN_BODY,
    "dp.st.",
    ".atlasv1.",
    "pat",
    "op://",
    "TODO",
    "pw: ",
    "mot de passe ",
    "login is admin / ",
    'Client("',
    AUTH_TOKEN,
    "sq0atp-",
    "sandbox-",
    SQUARE_TOKEN,
    "EAAA",
    "EAAB",
    FACEBOOK[:60],
    "NRAK-",
    NEWRELIC_LICENSE,
    "NRAL",
    "https://",
    SENTRY_KEY,
    "@o1.ingest.sentry.io/2",
    "sentry_key=",
    "sntrys_eyJ",
    "1234567890123456|",
    "facebook",
    "AAAA",
    ":APA91b",
    "GOCSPX-",
    "ya29.",
    "1//0",
    ALIBABA_ID,
    ALIBABA_SECRET,
    "aliyun",
    TENCENT_ID,
    TENCENT_SECRET,
    "STS.",
    "PMAK-",
    POSTMAN,
    ".webhook.office.com/webhookb2/",
    TEAMS_PATH,
    ".logic.azure.com/workflows/",
    "&sig=",
    "\\u0026",
    "Q~",
    AZURE_AD_SECRET,
    "AZDO",
    fill(76),
    "ATATT3",
    "my token is ",
    "the api key is ",
    "here's the token ",
    PROSE_TOKEN,
    "password - ",
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
    result = redact(text)  # its time: bench/bench_redaction.py
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
    "gitlab-prefixes": "glpat-" * 40_000 + " " + GITLAB_PAT,
    "stripe-prefixes": "sk_live_" * 30_000 + STRIPE_LIVE,
    "discord-like-dots": "MTAxFAKEfakeFAKEfake01234." * 10_000 + DISCORD_BOT,
    "curl-without-user": "curl " * 40_000 + " -u",
    "mysql-without-password": "mysql " * 40_000 + " -p",
    "password-clauses": "password for " * 30_000 + "is x",
    "password-is-repeated": "the password is " * 30_000,
    "auth-keys": '"auth": "' * 30_000,
    "hex-near-twilio": (TWILIO_AUTH + " ") * 20_000 + "twilio token",
    "base64-near-aws": (AWS_SECRET + " ") * 20_000 + AWS_ID,
    "bot-id-colons": "12345678:" * 30_000,
    "netrc-logins": "machine h" + " login u" * 12_000 + " password",
    "htpasswd-arguments": "htpasswd -b a b " * 6_000,
    "echo-pipes": 'echo "x" | ' * 9_000 + "--password-stdin",
    "process-substitutions": "private-key <(echo " * 5_000,
    "pgpass-fields": " h:5432:d:u:" * 8_000,
    "unseal-flags": "vault operator unseal" + " -a=b" * 20_000,
    "password-colon-clauses": "password for a b c " * 5_000 + ":",
    "login-slashes": "login is a / " * 7_000,
    "terraform-prefix": "A" * 100_000 + ".atlasv1." + "b" * 70,
    "doppler-configs": "dp.st." + "a." * 50_000,
    "vault-legacy-bodies": ("s." + "aB3" * 8 + " ") * 3_700 + "vault",
    "auth-without-scheme": "Authorization: " + "a1" * 50_000,
    "pat-names": "A_PAT=" * 16_000,
    "subscript-keys": "x['token']" * 10_000 + " = 1",
    "facebook-prefixes": "EAA" * 60_000 + FACEBOOK,
    "square-prefixes": "sq0atp-" * 30_000 + SQUARE_TOKEN,
    "newrelic-license-hex": (HEX * 2)[:36] * 5_000 + "NRAL",
    "sentry-schemes": "https://" * 30_000 + SENTRY_KEY + "@",
    "app-token-separators": "1234567890123456|" * 10_000 + " facebook",
    "fcm-colons": "AAAAfake012:APA91b" * 10_000,
    "google-refresh-slashes": "1//0" * 50_000,
    "cloud-id-prefixes": "LTAI" * 25_000 + "AKID" * 25_000 + "STS." * 25_000,
    "bare-cloud-secrets": (ALIBABA_SECRET + " " + TENCENT_SECRET + " ") * 3_000 + "aliyun tencent",
    "teams-paths": ".webhook.office.com/webhookb2/" + "%40" * 60_000,
    "workflow-escapes": ".logic.azure.com/workflows/" + "\\u0026" * 30_000 + "sig=",
    "entra-separators": "abc1Q~" * 30_000,
    "azdo-signatures": "AZDOfake " * 20_000,
    "atlassian-prefixes": "ATATT3" + "a" * 100_000 + "=",
    "credential-nouns": "my token is " * 15_000,
    "credential-for-clauses": "the api key for a b c d " * 7_000 + "is x",
    "bare-credential-nouns": "here's my token " * 12_000,
}


def realistic_text(size: int) -> str:
    """`size` characters of chat, log and config lines with a few secrets among them."""
    lines = [
        "hey, can you look at the deploy? my token is expired and the build is red",
        "2026-06-02T09:14:07Z INFO api request=GET /v2/locations status=200 took=38ms",
        "the key is to test early; the password is wrong again, I'll reset it",
        "url: https://app.example.com/projects/123e4567-e89b-12d3-a456-426614174000/settings",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixes NRAK-1234 and PMAK-12",
        "max_tokens: 4096, temperature: 0.2, api_key: ${OPENAI_API_KEY}",
        f"SQUARE_TOKEN={SQUARE_TOKEN}",
        f"Sentry.init({{ dsn: '{SENTRY_DSN}' }})",
        f"my token is {PROSE_TOKEN}",
        f"post to https://acme.webhook.office.com/webhookb2/{TEAMS_PATH}",
    ]
    text = "\n".join(lines[index % len(lines)] for index in range(size // 40))
    return text[:size]


def test_a_100_kb_realistic_text_keeps_what_is_not_a_secret() -> None:
    text = realistic_text(100_000)
    assert len(text) == 100_000
    result = redact(text)
    for secret in (SQUARE_TOKEN, SENTRY_KEY, PROSE_TOKEN, TEAMS_PATH):
        assert secret not in result.text
    assert "my token is expired" in result.text and "NRAK-1234" in result.text


def quarter_of(text: str) -> str:
    """The same input a quarter as long: its start, and its last 200 characters (the piece a
    pattern may be waiting for)."""
    return text[: len(text) // 4 - 200] + text[-200:]


def _seconds(text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return time.perf_counter() - started


@pytest.mark.parametrize("text", list(PATHOLOGICAL.values()), ids=list(PATHOLOGICAL))
def test_inputs_built_to_backtrack_take_time_linear_in_their_length(text: str) -> None:
    """Four times the text takes about four times as long; a pattern that backtracks takes 16
    times or more. Compared in one run, so a busy machine slows both sides (the times
    themselves: bench/bench_redaction.py)."""
    quarter = quarter_of(text)
    rounds = [(_seconds(text), _seconds(quarter)) for _ in range(3)]  # side by side: same load
    whole_time, quarter_time = min(w for w, _ in rounds), min(q for _, q in rounds)
    floor = 0.002  # below 2 ms the clock and the interpreter's noise dominate
    ratio = whole_time / max(quarter_time, floor)
    assert ratio < 10, (
        f"{whole_time * 1000:.1f} ms for the whole, {quarter_time * 1000:.1f} ms a quarter"
    )
