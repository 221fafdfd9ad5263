"""Secrets known by their shape alone: private keys, common provider tokens, URLs, headers.

Each pattern is anchored by a look-behind and uses possessive or bounded quantifiers,
so a scan is linear in the text; the PEM scan remembers where each END line is.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter

from .engine import (
    Rule,
    Span,
    group,
    group_if,
    has_digit,
    is_code_reference,
    is_mixed,
    is_placeholder,
    looks_random,
    marker,
)

# --- private keys ------------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN (?P<label>(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?)-----")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
# base64 of "-----BEGIN " (kubeconfig client-key-data, a Kubernetes Secret's tls.key)
_B64_PEM = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}+={0,2}")


def redact_pem(text: str, lowered: str, counts: Counter[str]) -> str:
    """Replace each PEM private-key block (to its END line, else the next blank line)."""
    if "-----begin " not in lowered:
        return text
    parts: list[str] = []
    cursor = 0
    next_end: dict[str, int] = {}
    for match in _PEM_BEGIN.finditer(text):
        if match.start() < cursor:
            continue
        end_line = f"-----END {match['label']}-----"
        found = next_end.get(end_line)
        if found is None or (found != -1 and found < match.end()):
            found = text.find(end_line, match.end())
            next_end[end_line] = found
        if found != -1:
            end = found + len(end_line)
        else:
            blank = _BLANK_LINE.search(text, match.end())
            end = blank.start() if blank else len(text)
        parts += [text[cursor : match.start()], marker("private-key")]
        cursor = end
        counts["private-key"] += 1
    if not parts:
        return text
    parts.append(text[cursor:])
    return "".join(parts)


def _is_encoded_private_key(value: str) -> bool:
    """True if base64 `value` opens with a PEM private-key line (not a certificate)."""
    head = value[:80]
    try:
        decoded = base64.b64decode(head[: len(head) - len(head) % 4]).decode("latin-1")
    except (binascii.Error, ValueError):
        return False
    return _PEM_BEGIN.match(decoded) is not None


# --- prefixed tokens, URLs and headers ---------------------------------------------------

_SLACK_WEBHOOK = re.compile(
    r"(?<![\w.\-])(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"(?P<v>[A-Za-z0-9_/\-]++)"
)
_DISCORD_WEBHOOK = re.compile(
    r"(?<![\w.\-])(?:https?://)?(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?"
    r"webhooks/(?P<v>\d{5,30}/(?P<token>[A-Za-z0-9_\-]{20,}+))"
)
_URL_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}+://"
    r"[^\s:/@?#\[\]\"'`<>]{0,256}+:(?P<v>[^\s/?#\"'`<>]{1,256})@"
)
_ANTHROPIC = re.compile(r"(?<![\w\-])sk-ant-[A-Za-z0-9_\-]{20,}+")
_OPENAI = re.compile(
    r"(?<![\w\-])sk-(?:(?:proj|svcacct|admin|None)-(?P<a>[A-Za-z0-9_\-]{20,}+)"
    r"|(?P<b>[A-Za-z0-9]{32,}+)(?![\w\-]))"
)
_GITHUB = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{22,}+)"
    r"(?![A-Za-z0-9_])"
)
_SLACK_TOKEN = re.compile(r"(?<![\w\-])(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}+")
_GOOGLE = re.compile(r"(?<![\w\-+/])AIza[0-9A-Za-z_\-]{35}(?![\w\-+/])")
_AWS_KEY_ID = re.compile(r"(?<![A-Za-z0-9+/])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9+/])")
_JWT = re.compile(
    r"(?<![\w\-.])eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]*+(?![\w\-])"
)
# A bare `Bearer` (or Okta's `SSWS`) takes only a digit-bearing token, so `Bearer
# Authorization: Bearer x` leaves the header to be read whole. Without a colon the header
# needs a quoted scheme (nginx's `proxy_set_header Authorization "Basic ..."`).
_AUTH = re.compile(
    r"(?:(?P<hdr>\bauthorization\\?[\"']?(?:[ \t]*+[:=][ \t]*+\\?[\"']?"
    r"|[ \t]++[\"'](?=(?:bearer|token|basic|ssws)[ \t])))(?P<scheme>bearer|token|basic|ssws)"
    r"|\b(?:bearer|ssws)(?=[ \t]++[A-Za-z\-._~+/]*+[0-9]))[ \t]++(?P<v>[A-Za-z0-9\-._~+/]++=*+)",
    re.IGNORECASE,
)
_MORE_WORDS = re.compile(r"[ \t]++[A-Za-z]")
# `Authorization: <token>` with no scheme (Linear, some internal APIs); a marker right
# after it stands for the rest of a longer word, as a second pass must see it
_AUTH_TOKEN = re.compile(
    r"\bauthorization\\?[\"']?[ \t]*+[:=][ \t]*+\\?[\"']?"
    r"(?P<v>[A-Za-z0-9\-._~+/]{20,1024}+=*+)(?![\w\-.~+/=]|\[REDACTED:)",
    re.IGNORECASE,
)


def _judge_url_password(match: re.Match[str]) -> Span | None:
    """Accept a URL password unless it is a placeholder."""
    return None if is_placeholder(match["v"]) else ("url-password", *match.span("v"))


def _judge_openai(match: re.Match[str]) -> Span | None:
    """Accept an `sk-` key whose body mixes digits and both letter cases."""
    return ("openai-key", *match.span()) if is_mixed(match["a"] or match["b"]) else None


def _judge_auth(match: re.Match[str]) -> Span | None:
    """Accept header credentials (not placeholders) or a long, digit-bearing bearer token.

    A bearer token in a header that reads like an identifier (`FAKEtoken0123_x`) still
    counts when it would as a bare bearer: both readings give one verdict. A plain word
    with more words after it is a sentence (`Authorization: Bearer tokens expire ...`).
    """
    value = match["v"]
    long_token = len(value) >= 20 and has_digit(value) and re.search("[A-Za-z]", value) is not None
    if match["hdr"] is None:
        ok = long_token
    elif value.isalpha() and _MORE_WORDS.match(match.string, match.end("v")):
        ok = False
    else:
        ok = (not is_placeholder(value) and not is_code_reference(value)) or (
            match["scheme"].lower() == "bearer" and long_token
        )
    return ("auth-header", *match.span("v")) if ok else None


def _judge_auth_token(match: re.Match[str]) -> Span | None:
    """Accept a generated token standing alone after `Authorization:` (20+ characters,
    digits and letters, not a dotted name)."""
    value = match["v"]
    if not (looks_random(value) and has_digit(value) and re.search("[A-Za-z]", value)):
        return None
    if is_placeholder(value) or is_code_reference(value):
        return None
    return ("auth-header", *match.span("v"))


def _judge_discord_webhook(match: re.Match[str]) -> Span | None:
    """Accept a Discord webhook's id and token unless the token is a mask."""
    return ("discord-webhook", *match.span("v")) if looks_random(match["token"]) else None


ENCODED_KEY_RULE = Rule(
    _B64_PEM, group_if("private-key", _is_encoded_private_key), ("ls0tls1crudjti",)
)
"""A base64-encoded PEM private key (`client-key-data: LS0tLS1CRUdJTi...`)."""

TOKEN_RULES = (
    Rule(_SLACK_WEBHOOK, group_if("slack-webhook", lambda v: len(v) >= 8, "v"), ("hooks.slack",)),
    Rule(_DISCORD_WEBHOOK, _judge_discord_webhook, ("discord",)),
    Rule(_URL_PASSWORD, _judge_url_password, ("://",)),
    Rule(_ANTHROPIC, group_if("anthropic-key", has_digit), ("sk-ant-",)),
    Rule(_OPENAI, _judge_openai, ("sk-",)),
    Rule(
        _GITHUB,
        group_if("github-token", looks_random),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(_SLACK_TOKEN, group_if("slack-token", has_digit), ("xox", "xapp-")),
    Rule(_GOOGLE, group("google-api-key"), ("aiza",)),
    Rule(_AWS_KEY_ID, group("aws-access-key-id"), ("akia", "asia")),
    Rule(_JWT, group("jwt"), ("eyj",)),
    Rule(_AUTH, _judge_auth, ("bearer", "authorization", "ssws")),
)
"""The rules for well-known token shapes, in the order they are applied."""

BARE_AUTH_RULE = Rule(_AUTH_TOKEN, _judge_auth_token, ("authorization",))
"""A token with no scheme in an `Authorization` header; applied after the providers' rules,
so a token whose provider is known is named by it."""
