"""Secrets on command lines and in credential files.

`curl -u user:pass`, `mysql -pPASS`, `docker login -p PASS`, `az login -p PASS`,
`htpasswd -b file user PASS`, `echo PASS | docker login --password-stdin`,
`wg set wg0 private-key <(echo KEY)`, a `.netrc` entry, a `.pgpass` line and a docker
config's `"auth": "<base64 user:pass>"`: the `commands` rules of `rules.toml`, with their
judges here. Every pattern is bounded, so a scan stays linear.
"""

from __future__ import annotations

import base64
import binascii
import re

from .engine import (
    MARKER_PREFIX,
    Seen,
    Span,
    before_marker,
    is_path,
    is_placeholder,
    load_rules,
    looks_random,
    value_span,
)

_SUBSTITUTED_KIND = re.compile(
    r"(?P<private>private[_\-]?key)$|(?P<password>pass(?:word|wd|phrase)?)$"
    r"|(?P<token>token)$|(?P<secret>key|secret|psk)$",
    re.IGNORECASE,
)
_KIND_BY_GROUP = {
    "private": "private-key",
    "key": "private-key",
    "password": "password",
    "token": "token",
    "secret": "secret",
}
_NETRC_LOGIN = re.compile(r"\slogin\s")
_SECRET_WORD = re.compile("pass(?:word|wd)?|secret|token", re.IGNORECASE)
_PGPASS_WORD = re.compile("pgpass", re.IGNORECASE)
_POSTGRES_PORTS = ("5432", "6432", "*")


def _judge_flag_password(kind: str, match: re.Match[str]) -> Span | None:
    """Accept a password given on a command line unless it is a variable, a placeholder or
    a path (`az login -p ~/cert.pem` names a certificate)."""
    value, start, end = value_span(match)
    return None if is_placeholder(value) or is_path(value) else (kind, start, end)


def _judge_htpasswd(kind: str, match: re.Match[str]) -> Span | None:
    """Accept the password of `htpasswd -b[c] file user PASS` (`-nb user PASS`: no file)."""
    flags = match["flags"]
    if "b" not in flags:
        return None
    name = "a2" if "n" in flags else "a3"
    if match[name] is None:
        return None
    value, start, end = match[name], *match.span(name)
    if value[0] in "\"'":
        value, start, end = value[1:-1], start + 1, end - 1
    if before_marker(value) != value:
        return None  # part of a word a first pass replaced: it judged the whole word
    if not any(char.isalnum() for char in value):
        return None  # `=`, `-`: a separator a first pass may have left between two markers
    if is_placeholder(value):
        return None
    return kind, start, start + len(value)


def _judge_piped_secret(kind: str, match: re.Match[str]) -> Span | None:
    """Accept what `echo` pipes into a command that reads a secret from stdin."""
    value, start, end = value_span(match)
    if is_placeholder(value):
        return None
    return _KIND_BY_GROUP.get(match.lastgroup or "", kind), start, end


def _judge_substituted_secret(kind: str, match: re.Match[str]) -> Span | None:
    """Accept what `<(echo ...)` hands to a secret-named option (`private-key`, `--password`)."""
    name = _SUBSTITUTED_KIND.search(match["name"])
    value, start, end = value_span(match)
    if name is None or is_placeholder(value):
        return None
    return _KIND_BY_GROUP.get(name.lastgroup or "", kind), start, end


def _judge_netrc(kind: str, match: re.Match[str]) -> Span | None:
    """Accept the password of a `.netrc` entry with a login, unless it is a placeholder or
    names itself (`password PASSWORD`)."""
    value, start, end = value_span(match)
    if _NETRC_LOGIN.search(match[0]) is None or is_placeholder(value):
        return None
    return None if _SECRET_WORD.fullmatch(value) else (kind, start, end)


def _judge_pgpass(kind: str, match: re.Match[str], seen: Seen) -> Span | None:
    """Accept a `.pgpass` line's password when its port is PostgreSQL's (5432, 6432 for
    PgBouncer, `*`) or `pgpass` is near (a MAC address or a time has neither)."""
    if MARKER_PREFIX in match[0]:
        return None  # a marker's colon is no field separator: the first pass saw no field
    value, start, end = value_span(match)
    if is_placeholder(value):
        return None
    if match["port"] in _POSTGRES_PORTS or seen(_PGPASS_WORD).around(start, end, lines=2):
        return kind, start, end
    return None


def _is_encoded_credentials(value: str) -> bool:
    """True if base64 `value` decodes to printable `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = text.partition(":")
    return bool(colon and user and password and text.isprintable())


def _judge_docker_auth(kind: str, match: re.Match[str]) -> Span | None:
    """Accept a registry `auth` value that is base64 `user:password` or a random token."""
    value = match["v"]
    ok = _is_encoded_credentials(value) or (len(value) >= 16 and looks_random(value, 3))
    return (kind, *match.span("v")) if ok else None


COMMAND_RULES = load_rules(
    "commands",
    {
        "flag_password": _judge_flag_password,
        "htpasswd": _judge_htpasswd,
        "piped_secret": _judge_piped_secret,
        "substituted_secret": _judge_substituted_secret,
        "netrc": _judge_netrc,
        "pgpass": _judge_pgpass,
        "docker_auth": _judge_docker_auth,
    },
)
"""Passwords on command lines and in credential files, in the order they are applied."""
