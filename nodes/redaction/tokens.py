"""Secrets known by their shape alone: private keys, common provider tokens, URLs, headers.

The patterns are the `tokens` and `bare_auth` rules of `rules.toml`; their judges are here.
Each pattern is anchored by a look-behind and uses possessive or bounded quantifiers,
so a scan is linear in the text; the PEM scan remembers where each END line is.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter

from .engine import (
    Span,
    has_digit,
    is_code_reference,
    is_mixed,
    is_placeholder,
    load_rules,
    looks_random,
    splice,
)

_PEM_BEGIN = re.compile(r"-----BEGIN (?P<label>(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?)-----")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_MORE_WORDS = re.compile(r"[ \t]++[A-Za-z]")
_LETTER = re.compile("[A-Za-z]")


def redact_pem(text: str, lowered: str, counts: Counter[str]) -> str:
    """Replace each PEM private-key block (to its END line, else the next blank line)."""
    if "-----begin " not in lowered:
        return text
    spans: list[Span] = []
    next_end: dict[str, int] = {}
    for match in _PEM_BEGIN.finditer(text):
        if spans and match.start() < spans[-1][2]:
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
        spans.append(("private-key", match.start(), end))
    return splice(text, spans, counts)


def _judge_encoded_key(kind: str, match: re.Match[str]) -> Span | None:
    """Accept base64 that opens with a PEM private-key line (not a certificate)."""
    head = match[0][:80]
    try:
        decoded = base64.b64decode(head[: len(head) - len(head) % 4]).decode("latin-1")
    except (binascii.Error, ValueError):
        return None
    return (kind, *match.span()) if _PEM_BEGIN.match(decoded) else None


def _judge_auth(kind: str, match: re.Match[str]) -> Span | None:
    """Accept header credentials (not placeholders) or a long, digit-bearing bearer token.

    A bearer token in a header that reads like an identifier (`FAKEtoken0123_x`) still
    counts when it would as a bare bearer: both readings give one verdict. A plain word
    with more words after it is a sentence (`Authorization: Bearer tokens expire ...`).
    """
    value = match["v"]
    long_token = len(value) >= 20 and has_digit(value) and _LETTER.search(value) is not None
    if match["hdr"] is None:
        ok = long_token
    elif value.isalpha() and _MORE_WORDS.match(match.string, match.end("v")):
        ok = False
    else:
        ok = (not is_placeholder(value) and not is_code_reference(value)) or (
            match["scheme"].lower() == "bearer" and long_token
        )
    return (kind, *match.span("v")) if ok else None


def _judge_auth_token(kind: str, match: re.Match[str]) -> Span | None:
    """Accept a generated token standing alone after `Authorization:` (20+ characters,
    digits and letters, not a dotted name)."""
    value = match["v"]
    if not (looks_random(value) and has_digit(value) and _LETTER.search(value)):
        return None
    if is_placeholder(value) or is_code_reference(value):
        return None
    return (kind, *match.span("v"))


TOKEN_RULES = load_rules(
    "tokens",
    {
        "encoded_key": _judge_encoded_key,
        "slack_webhook": lambda kind, m: (kind, *m.span("v")) if len(m["v"]) >= 8 else None,
        "discord_webhook": lambda kind, m: (
            (kind, *m.span("v")) if looks_random(m["token"]) else None
        ),
        # a URL password unless it is a placeholder
        "url_password": lambda kind, m: None if is_placeholder(m["v"]) else (kind, *m.span("v")),
        "has_digit": lambda kind, m: (kind, *m.span()) if has_digit(m[0]) else None,
        # an `sk-` key whose body mixes digits and both letter cases
        "openai": lambda kind, m: (kind, *m.span()) if is_mixed(m["a"] or m["b"]) else None,
        "always": lambda kind, m: (kind, *m.span()),
        "auth": _judge_auth,
    },
)
"""The rules for well-known token shapes, in the order they are applied."""

BARE_AUTH_RULES = load_rules("bare_auth", {"auth_token": _judge_auth_token})
"""A token with no scheme in an `Authorization` header; applied after the providers' rules,
so a token whose provider is known is named by it."""
