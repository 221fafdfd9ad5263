"""Secrets on command lines and in credential files.

`curl -u user:pass`, `mysql -pPASS`, `docker login -p PASS`, `az login -p PASS`,
`htpasswd -b file user PASS`, `echo PASS | docker login --password-stdin`,
`wg set wg0 private-key <(echo KEY)`, a `.netrc` entry, a `.pgpass` line and a docker
config's `"auth": "<base64 user:pass>"`. Every pattern is bounded, so a scan stays linear.
"""

from __future__ import annotations

import base64
import binascii
import re

from .engine import (
    MARKER_PREFIX,
    QUOTED_OR_ARG,
    QUOTED_OR_WORD,
    ContextRule,
    Rule,
    Seen,
    Span,
    before_marker,
    is_path,
    is_placeholder,
    looks_random,
    value_span,
)

# --- flags ------------------------------------------------------------------------------

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
    rf"|mariadb(?:-dump|-admin)?){_ARGS}-p{QUOTED_OR_ARG}"
)
_MYSQLADMIN_PASSWORD = re.compile(rf"\bmysqladmin{_ARGS}password[ \t]++{QUOTED_OR_ARG}")
_LOGIN_PASSWORD = re.compile(
    rf"\b(?:docker|podman|nerdctl|buildah|skopeo|oras|registry|az)[ \t]+login{_ARGS}-p[ \t]++"
    rf"{QUOTED_OR_ARG}"
)
_CLIENT_PASSWORD = re.compile(rf"\b(?:sshpass[ \t]+-p|redis-cli{_ARGS}-a)[ \t]++{QUOTED_OR_ARG}")


def _judge_flag_password(match: re.Match[str]) -> Span | None:
    """Accept a password given on a command line unless it is a variable, a placeholder or
    a path (`az login -p ~/cert.pem` names a certificate)."""
    value, start, end = value_span(match)
    return None if is_placeholder(value) or is_path(value) else ("password", start, end)


# --- htpasswd -b: the password is the last argument -------------------------------------

_ARG = r"(?:\"[^\"\n]{0,256}+\"|'[^'\n]{0,256}+'|[^\s\"'`;|&<>]{1,256}+)"
_HTPASSWD = re.compile(
    r"\bhtpasswd(?P<flags>(?:[ \t]++-[A-Za-z]{1,8}+(?:[ \t]++[0-9]{1,3}+(?=[ \t]))?){1,6}+)"
    rf"[ \t]++(?P<a1>{_ARG})[ \t]++(?P<a2>{_ARG})(?:[ \t]++(?P<a3>{_ARG}))?"
)


def _judge_htpasswd(match: re.Match[str]) -> Span | None:
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
    return "password", start, start + len(value)


# --- a secret piped or substituted into a command ---------------------------------------

_ECHO = r"\b(?:echo|printf)(?:[ \t]++-[neE]{1,3}+)?[ \t]++"
_ECHO_VALUE = (
    r"(?:\"(?P<dq>[^\"\n]{1,256}+)\"|'(?P<sq>[^'\n]{1,256}+)'|(?P<uv>[^\s\"'`;|&()]{1,256}+))"
)
# the command reading stdin: a registry login, `gh auth login --with-token`, `passwd
# --stdin`, `wg pubkey` (which takes a private key)
_PIPED_SECRET = re.compile(
    rf"{_ECHO}{_ECHO_VALUE}[ \t]*+\|[ \t]*+(?:[^\n|;&]{{0,300}}?[ \t])?"
    r"(?:(?P<password>--password-stdin|passwd[ \t]++--stdin)|(?P<token>--with-token)"
    r"|(?P<key>wg[ \t]++pubkey))(?![\w\-])"
)
# `wg set wg0 private-key <(echo KEY)`, `--password <(printf PASS)`
_SUBSTITUTED_SECRET = re.compile(
    rf"(?<![\w\-])(?P<name>[\w\-]{{1,64}}+)[ \t]++<\([ \t]*+{_ECHO}{_ECHO_VALUE}[ \t]*+\)"
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


def _judge_piped_secret(match: re.Match[str]) -> Span | None:
    """Accept what `echo` pipes into a command that reads a secret from stdin."""
    value, start, end = value_span(match)
    if is_placeholder(value):
        return None
    return _KIND_BY_GROUP[match.lastgroup or "password"], start, end


def _judge_substituted_secret(match: re.Match[str]) -> Span | None:
    """Accept what `<(echo ...)` hands to a secret-named option (`private-key`, `--password`)."""
    kind = _SUBSTITUTED_KIND.search(match["name"])
    value, start, end = value_span(match)
    if kind is None or is_placeholder(value):
        return None
    return _KIND_BY_GROUP[kind.lastgroup or "secret"], start, end


# --- credential files ---------------------------------------------------------------------

# .netrc: `machine HOST [login USER] [account A] [port P] password PASS`, on one line or
# several (or `default` at a line's start in place of `machine HOST`, after the machines:
# the rule runs only where `machine` occurs). `machine` first, its look-behind after it:
# a scan for the literal is fast.
_NETRC = re.compile(
    r"(?:machine(?<![\w\-]machine)[ \t\r\n]++[^\s]{1,256}+|(?<![^\n])[ \t]*+default)"
    r"(?:[ \t\r\n]++(?:login|account|port)[ \t\r\n]++[^\s]{1,256}+){0,3}+"
    rf"[ \t\r\n]++password[ \t\r\n]++{QUOTED_OR_WORD}"
)
# .pgpass: `host:port:database:user:password`, a whole word (a `:` in a field is escaped
# as `\:`, so an `/etc/shadow` line, with nine fields, is none)
_PGPASS = re.compile(
    r"(?<![^\s'\"=])[A-Za-z0-9_.\-*]{1,253}+:(?P<port>[0-9]{1,5}+|\*):[^\s:'\"]{1,128}+:"
    r"[^\s:'\"]{1,128}+:(?P<uv>(?:[^\s:'\"\\]|\\[^\s]){1,256}+)(?![^\s'\"])"
)
_NETRC_LOGIN = re.compile(r"\slogin\s")
_SECRET_WORD = re.compile("pass(?:word|wd)?|secret|token", re.IGNORECASE)
_PGPASS_WORD = re.compile("pgpass", re.IGNORECASE)
_POSTGRES_PORTS = ("5432", "6432", "*")


def _judge_netrc(match: re.Match[str]) -> Span | None:
    """Accept the password of a `.netrc` entry with a login, unless it is a placeholder or
    names itself (`password PASSWORD`)."""
    value, start, end = value_span(match)
    if _NETRC_LOGIN.search(match[0]) is None or is_placeholder(value):
        return None
    return None if _SECRET_WORD.fullmatch(value) else ("password", start, end)


def _judge_pgpass(match: re.Match[str], seen: Seen) -> Span | None:
    """Accept a `.pgpass` line's password when its port is PostgreSQL's (5432, 6432 for
    PgBouncer, `*`) or `pgpass` is near (a MAC address or a time has neither)."""
    if MARKER_PREFIX in match[0]:
        return None  # a marker's colon is no field separator: the first pass saw no field
    value, start, end = value_span(match)
    if is_placeholder(value):
        return None
    if match["port"] in _POSTGRES_PORTS or seen(_PGPASS_WORD).around(start, end, lines=2):
        return "password", start, end
    return None


# --- docker config ------------------------------------------------------------------------

_DOCKER_AUTH = re.compile(
    r"(?<![\w\-])auth[\"']?[ \t]*+:[ \t]*+(?P<vq>[\"']?)"
    r"(?P<v>[A-Za-z0-9+/]{8,2048}+(?:=++(?![A-Za-z0-9_+/=\[]))?)(?P=vq)(?![A-Za-z0-9+/]|\[REDACTED:)"
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


COMMAND_RULES = (
    Rule(_CURL_USER, _judge_flag_password, ("curl", "http ", "https ", "xh ")),
    Rule(_MYSQL_PASSWORD, _judge_flag_password, ("mysql", "mariadb")),
    Rule(_MYSQLADMIN_PASSWORD, _judge_flag_password, ("mysqladmin",)),
    Rule(
        _LOGIN_PASSWORD,
        _judge_flag_password,
        (" login", "\tlogin"),
    ),
    Rule(_CLIENT_PASSWORD, _judge_flag_password, ("sshpass", "redis-cli")),
    Rule(_HTPASSWD, _judge_htpasswd, ("htpasswd",)),
    Rule(_PIPED_SECRET, _judge_piped_secret, ("-stdin", "--with-token", "pubkey")),
    Rule(_SUBSTITUTED_SECRET, _judge_substituted_secret, ("<(",)),
    Rule(_NETRC, _judge_netrc, ("machine",)),
    ContextRule(_PGPASS, _judge_pgpass, ("pgpass", "432:", ":*:")),
    Rule(_DOCKER_AUTH, _judge_docker_auth, ('auth"', "auth'", "auth:")),
)
"""Passwords on command lines and in credential files, in the order they are applied."""
