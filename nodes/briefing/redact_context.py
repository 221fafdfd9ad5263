"""Secrets known by the sentence they are in, or by a neighbour.

"the db password is X", "root pw on the NAS: X", "mot de passe : X", "the login is
admin / X", "use the credentials admin:X", a key passed to an SDK client
(`cohere.ClientV2("<key>")`) and a bare 40-character AWS secret key next to its key id.
Every pattern is bounded, so a scan stays linear.
"""

from __future__ import annotations

import re

from .redact_engine import (
    QUOTED_OR_WORD,
    SECRETISH_CHAR,
    ContextRule,
    Rule,
    Seen,
    Span,
    has_inner_capital,
    is_code_reference,
    is_mixed,
    is_path,
    is_placeholder,
    looks_random,
    value_span,
)

# --- passwords in sentences ---------------------------------------------------------------

# the word for a password, also in French, German, Spanish, Portuguese and Dutch
_PASSWORD_WORD = (
    r"pass(?:word|wd|phrase|code)|pwd|pw|mot[ \t]+de[ \t]+passe|passwort|kennwort"
    r"|contrase(?:ñ|n)a|senha|wachtwoord"
)
_PROSE_PASSWORD = re.compile(
    rf"""
    \b(?P<word>{_PASSWORD_WORD})\b
    (?:
        (?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s]{{1,64}}){{1,4}})?
        [ \t]+(?:
            (?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to
          | (?:is|was|est|ist|es)(?:[ \t]+(?:now|still|just|currently|temporarily))?
        )
        [ \t]*+:?[ \t]*+
      | (?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s.,;:!?]{{1,64}}){{1,4}})?[ \t]*+(?P<colon>:)[ \t]*+
      | (?P<bare>[ \t]+)
    )
    {QUOTED_OR_WORD}
    """,
    re.IGNORECASE | re.VERBOSE,
)
_PROSE_CREDENTIALS = re.compile(
    r"\b(?:credentials?|creds)(?:[ \t]+(?:are|is|were|was))?(?:[ \t]*+:)?[ \t]++"
    r"[^\s:/@\[\]\"'`]{1,64}+:(?P<uv>[^\s\"'`]{1,256}+)",
    re.IGNORECASE,
)
# "the login is admin / X", "creds: admin / X"
_PROSE_LOGIN = re.compile(
    r"\b(?:logins?|log-?in|credentials?|creds)(?:[ \t]+(?:is|are|was|were)|[ \t]*+:)[ \t]++"
    rf"[^\s/:\[\]\"'`]{{1,64}}+[ \t]*+/[ \t]*+{QUOTED_OR_WORD}",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.,;:?)\]]+$")
_WITH_BEFORE = re.compile(r"\b(?:with|using)[ \t]+(?:the[ \t]+)?\Z", re.IGNORECASE)
_UNIT_AFTER = re.compile(
    r"[ \t]+(?:characters?|chars?|digits?|letters?|symbols?|long|or|to|and|min(?:imum)?"
    r"|max(?:imum)?|days?|hours?|months?|times?|attempts?)\b",
    re.IGNORECASE,
)


def _judge_prose_password(match: re.Match[str]) -> Span | None:
    """Accept the password in "the db password is X", "log in with password X", "root pw
    on the NAS: X", "use the credentials admin:X", "the login is admin / X" if X looks
    like one.

    A quoted value counts unless it is a placeholder or starts or ends with a space (then
    the quote closes a string: `getpass("password for %s: " % user)`); an unquoted one
    must have a digit, a symbol or (not after a colon, where it reads as a type) an inner
    capital (`hunter2`, `Tr0ub4dor&3`, `CorrectHorse`), and not be a path, a code
    reference or a length (`is 12 characters`).
    """
    text = match.string
    bare = "bare" in match.re.groupindex and match["bare"] is not None
    colon = "colon" in match.re.groupindex and match["colon"] is not None
    if bare and not _WITH_BEFORE.search(text, max(0, match.start("word") - 16), match.start()):
        return None  # "password X" counts only as "with/using (the) password X"
    value, start, end = value_span(match)
    if value != value.strip():
        return None  # a string's closing quote: `getpass("password for %s: " % user)`
    if match["uv"] is not None:
        value = _SENTENCE_END.sub("", value)
        end = start + len(value)
        if not value or is_code_reference(value) or is_path(value):
            return None
        if not (SECRETISH_CHAR.search(value) or (has_inner_capital(value) and not colon)):
            return None  # after a colon, `CamelCase` is a type (`pwd: ModuleType | None`)
        if not re.search("[A-Za-z]", value) and _UNIT_AFTER.match(text, end):
            return None
    return None if is_placeholder(value) else ("password", start, end)


# --- a key passed to an SDK client ------------------------------------------------------

# `cohere.ClientV2("<key>")`, `AsyncClient('<key>')`: a random quoted literal as a client's
# first argument (`Client` first, so a scan for it is fast)
_CLIENT_KEY = re.compile(
    r"Client(?:V[0-9])?\([ \t]*+(?P<q>[\"'])(?P<v>[A-Za-z0-9]{32,128}+)(?P=q)[ \t]*+[,)]"
)


def _judge_client_key(match: re.Match[str]) -> Span | None:
    """Accept a client's first argument when it mixes digits and both cases (a key, not a
    project name, a hex digest or a URL)."""
    return ("api-key", *match.span("v")) if looks_random(match["v"], 3) else None


# --- a bare AWS secret key next to its key id --------------------------------------------

# a whole word: never the start of a name such as `<40 chars>_secret`, which the
# assignments (applied before) have judged whole
_AWS_SECRET_BARE = re.compile(
    r"(?<![A-Za-z0-9/+=_.\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-]|\.[A-Za-z0-9_])"
)
_AWS_CONTEXT = re.compile(
    r"(?:AKIA|ASIA)[A-Z0-9]{16}|\[REDACTED:aws-access-key-id\]|aws|secret", re.IGNORECASE
)


def _judge_bare_aws_secret(match: re.Match[str], seen: Seen) -> Span | None:
    """Accept 40 mixed base64 characters with an AWS key id, `aws` or `secret` on their
    line or the line before or after."""
    if not is_mixed(match[0]) or not seen(_AWS_CONTEXT).around(*match.span(), lines=1):
        return None
    return ("aws-secret-key", *match.span())


PROSE_RULES = (
    Rule(
        _PROSE_PASSWORD,
        _judge_prose_password,
        ("pass", "pw", "kennwort", "contrase", "senha", "wachtwoord"),
    ),
    Rule(_PROSE_CREDENTIALS, _judge_prose_password, ("cred",)),
    Rule(_PROSE_LOGIN, _judge_prose_password, ("login", "log-in", "cred")),
    Rule(_CLIENT_KEY, _judge_client_key, ("client",)),
    ContextRule(
        _AWS_SECRET_BARE,
        _judge_bare_aws_secret,
        ("akia", "asia", "aws", "secret"),
        keep="aws-access-key-id",
    ),
)
"""Secrets in sentences, applied after the assignments."""
