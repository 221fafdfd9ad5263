"""Secrets known by what surrounds them: a command-line flag, a sentence, a neighbour.

`curl -u user:pass`, `mysql -pPASS`, `docker login -p PASS`, a docker config's
`"auth": "<base64 user:pass>"`, "the db password is X", and a bare 40-character AWS
secret key next to its key id. Every pattern is bounded, so a scan stays linear.
"""

from __future__ import annotations

import base64
import binascii
import re

from .redact_engine import (
    SECRETISH_CHAR,
    ContextRule,
    Rule,
    Seen,
    Span,
    before_marker,
    has_inner_capital,
    is_code_reference,
    is_mixed,
    is_placeholder,
    looks_random,
)

_QUOTED = r"\"(?P<dq>[^\"\n]{1,256}+)\"|'(?P<sq>[^'\n]{1,256}+)'|`(?P<bq>[^`\n]{1,256}+)`"
_QUOTED_OR_WORD = rf"(?:{_QUOTED}|(?P<uv>[^\s\"'`]{{1,256}}+))"
# a shell argument ends at `;`, `|` and `&` too, so redacting one never joins two commands
_QUOTED_OR_ARG = rf"(?:{_QUOTED}|(?P<uv>[^\s\"'`;|&]{{1,256}}+))"

# --- command lines -----------------------------------------------------------------------

# Up to 40 more words of the same command (a command ends at a line break, `;`, `|`, `&`
# and at a marker, which may stand where a separator was). Counted in words, not
# characters: a replaced secret is still one word, so a second pass reaches no flag the
# first pass did not.
_ARGS = r"(?:[ \t]++(?:[^\s|;&\[]|\[(?!REDACTED:))++){0,40}?[ \t]++"
_CURL_USER = re.compile(
    rf"\b(?:curl|http|https|xh){_ARGS}(?:-u|--user|-a|--auth)(?:[ \t]++|=)?"
    r"[\"']?[^\s:\"'\[\]]{0,256}+:(?P<uv>[^\s\"';|&]{1,256}+)"
)
_MYSQL_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlpump|mysqlsh"
    rf"|mariadb(?:-dump|-admin)?){_ARGS}-p{_QUOTED_OR_ARG}"
)
_MYSQLADMIN_PASSWORD = re.compile(rf"\bmysqladmin{_ARGS}password[ \t]++{_QUOTED_OR_ARG}")
_LOGIN_PASSWORD = re.compile(
    rf"\b(?:docker|podman|nerdctl|buildah|skopeo|oras|registry)[ \t]+login{_ARGS}-p[ \t]++"
    rf"{_QUOTED_OR_ARG}"
)
_CLIENT_PASSWORD = re.compile(rf"\b(?:sshpass[ \t]+-p|redis-cli{_ARGS}-a)[ \t]++{_QUOTED_OR_ARG}")


def _value_span(match: re.Match[str]) -> tuple[str, int, int]:
    """The value of a `_QUOTED_OR_WORD` (or `uv`-only) match and its span; an unquoted
    value ends at a marker."""
    name = next(g for g in ("dq", "sq", "bq", "uv") if g in match.re.groupindex and match[g])
    value, start = match[name], match.start(name)
    if name == "uv":
        value = before_marker(value)
    return value, start, start + len(value)


def _judge_flag_password(match: re.Match[str]) -> Span | None:
    """Accept a password given on a command line unless it is a variable or placeholder."""
    value, start, end = _value_span(match)
    return None if is_placeholder(value) else ("password", start, end)


# --- docker config ------------------------------------------------------------------------

_DOCKER_AUTH = re.compile(
    r"(?<![\w\-])auth[\"']?[ \t]*+:[ \t]*+(?P<vq>[\"']?)"
    r"(?P<v>[A-Za-z0-9+/]{8,2048}+(?:=++(?![A-Za-z0-9_+/=\[]))?)(?P=vq)(?![A-Za-z0-9+/])"
)


def _is_encoded_credentials(value: str) -> bool:
    """True if base64 `value` decodes to printable `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = text.partition(":")
    return bool(colon and user and password and text.isprintable())


def _judge_docker_auth(match: re.Match[str]) -> Span | None:
    """Accept a registry `auth` value that is base64 `user:password` or a random token."""
    value = match["v"]
    ok = _is_encoded_credentials(value) or (len(value) >= 16 and looks_random(value, 3))
    return ("docker-auth", *match.span("v")) if ok else None


# --- passwords in sentences ---------------------------------------------------------------

_PROSE_PASSWORD = re.compile(
    rf"""
    \b(?P<word>pass(?:word|wd|phrase|code)|pwd|pw)\b
    (?:
        (?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s]{{1,64}}){{1,4}})?
        [ \t]+(?:
            (?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to
          | (?:is|was)(?:[ \t]+(?:now|still|just|currently|temporarily))?
        )
        [ \t]*+:?[ \t]*+
      | (?P<bare>[ \t]+)
    )
    {_QUOTED_OR_WORD}
    """,
    re.IGNORECASE | re.VERBOSE,
)
_PROSE_CREDENTIALS = re.compile(
    r"\b(?:credentials?|creds)(?:[ \t]+(?:are|is|were|was))?(?:[ \t]*+:)?[ \t]++"
    r"[^\s:/@\[\]\"'`]{1,64}+:(?P<uv>[^\s\"'`]{1,256}+)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.,;:?)\]]+$")
_WITH_BEFORE = re.compile(r"\b(?:with|using)[ \t]+(?:the[ \t]+)?\Z", re.IGNORECASE)
_PATH = re.compile(r"(?:~|\.\.?)?/|[A-Za-z]:\\")
_UNIT_AFTER = re.compile(
    r"[ \t]+(?:characters?|chars?|digits?|letters?|symbols?|long|or|to|and|min(?:imum)?"
    r"|max(?:imum)?|days?|hours?|months?|times?|attempts?)\b",
    re.IGNORECASE,
)


def _judge_prose_password(match: re.Match[str]) -> Span | None:
    """Accept the password in "the db password is X", "log in with password X", "use the
    credentials admin:X" if X looks like one.

    A quoted value counts unless it is a placeholder; an unquoted one must have a digit,
    a symbol or an inner capital (`hunter2`, `Tr0ub4dor&3`, `CorrectHorse`), and not be
    a path, a code reference or a length (`is 12 characters`).
    """
    text = match.string
    bare = "bare" in match.re.groupindex and match["bare"] is not None
    if bare and not _WITH_BEFORE.search(text, max(0, match.start("word") - 16), match.start()):
        return None  # "password X" counts only as "with/using (the) password X"
    value, start, end = _value_span(match)
    if match["uv"] is not None:
        value = _SENTENCE_END.sub("", value)
        end = start + len(value)
        if not value or is_code_reference(value) or _PATH.match(value):
            return None
        if not (SECRETISH_CHAR.search(value) or has_inner_capital(value)):
            return None
        if not re.search("[A-Za-z]", value) and _UNIT_AFTER.match(text, end):
            return None
    return None if is_placeholder(value) else ("password", start, end)


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


COMMAND_RULES = (
    Rule(_CURL_USER, _judge_flag_password, ("curl", "http ", "https ", "xh ")),
    Rule(_MYSQL_PASSWORD, _judge_flag_password, ("mysql", "mariadb")),
    Rule(_MYSQLADMIN_PASSWORD, _judge_flag_password, ("mysqladmin",)),
    Rule(_LOGIN_PASSWORD, _judge_flag_password, ("r login", "n login", "h login", "s login")),
    Rule(_CLIENT_PASSWORD, _judge_flag_password, ("sshpass", "redis-cli")),
    Rule(_DOCKER_AUTH, _judge_docker_auth, ('auth"', "auth'", "auth:")),
)
"""Passwords on command lines and in a docker config, in the order they are applied."""

PROSE_RULES = (
    Rule(_PROSE_PASSWORD, _judge_prose_password, ("pass", "pwd", "pw")),
    Rule(_PROSE_CREDENTIALS, _judge_prose_password, ("cred",)),
    ContextRule(
        _AWS_SECRET_BARE,
        _judge_bare_aws_secret,
        ("akia", "asia", "aws", "secret"),
        keep="aws-access-key-id",
    ),
)
"""Secrets in sentences, applied after the assignments."""
