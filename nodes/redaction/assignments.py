"""Secrets known by their name: the value of `password=`, `"token": "..."`, `pass: ...`.

One pattern reads `key=value`, `key: value`, `"key": "value"`, `KEY="value"`,
`key => value`, `key: str = "value"`, `config["key"] = "value"` and `--key value`; the
judge keeps the name and replaces the value unless it is empty, a placeholder, a
reference to a secret manager, a public token, a code reference or prose.
"""

from __future__ import annotations

import re

from .engine import (
    SECRETISH_CHAR,
    SMALL_NUMBER,
    Rule,
    Span,
    before_marker,
    has_inner_capital,
    is_code_reference,
    is_placeholder,
    is_public_token,
    looks_random,
    trim_unquoted,
)

# A name is a whole word that ends in a secret's word: matched whole (possessively) and
# its ending checked by fixed-width look-behinds, so each word is read once. Names it also
# takes that are no secret's (`bypass`, `signing_key_id`) are turned down by the judge, and
# any other name ending in `key` (`AZURE_STORAGE_KEY`, `sort_key`) needs a value that looks
# generated. `secret_key_base` is Rails'; a name ending in `_pat` holds a personal access
# token (`AZURE_DEVOPS_EXT_PAT`).
_KEY_ENDINGS = (
    "pass password passwd passphrase pwd token secret credential credentials key "
    "key_id key-id keyid key_data key-data keydata key_base key-base _pat -pat"
).split()
_KEY_END = "|".join(f"(?<={ending})" for ending in _KEY_ENDINGS)
_TYPE_WORDS = (
    r"str|bytes|int|float|bool|Optional|Union|Any|SecretStr|SecretBytes|None|string|String|number"
)
_ASSIGNMENT = re.compile(
    rf"""
    (?<![A-Za-z0-9_.\-])
    (?P<key>[A-Za-z0-9_.\-]++)(?:{_KEY_END})
    (?P<kq>\\?["'`]|\*\*|["']\](?=[ \t]*+=(?![=~>])))?
    (?P<sep>
        [ \t]*+
        (?: =>
          | =(?![=~>])
          | :(?![:=])(?:[ \t]*+(?:{_TYPE_WORDS})\b[\w.\[\]|, ]{{0,80}}+=(?![=~>]))?\*{{0,2}}
        )
        [ \t]*+
      | [ \t]++
    )
    (?=
        \\["'](?P<ev>(?:[^\\\n]|\\(?!["'])){{0,2048}}+)
      | "(?P<dq>(?:[^"\\\n]|\\.){{0,2048}}+)"
      | '(?P<sq>(?:[^'\\\n]|\\.){{0,2048}}+)'
      | ["'](?P<uq>[^\s"'`]{{1,512}}+)
      | (?P<uv>[^\s"'`]{{1,512}}+)
    )
    """,
    re.IGNORECASE | re.VERBOSE,
)
_LINE_END = re.compile(r"[ \t]{0,64}+(?:[\r\n#]|//|\Z)")
_LINE_HEAD = re.compile(r"[ \t]*+(?:-[ \t]++|export[ \t]++)?")
_UNQUOTED_RUN = re.compile(r"[^\s\"'`]*+")
_MAX_VALUE = 512
_TALLY = re.compile(r"[\d/.,:%()]+")
_KEY_FILE = re.compile(r"(?:~|\.\.?)/\S*|/[\w.\-/]*\.(?:pem|key|der|p12|pfx|json|jks)")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")
_KIND_BY_ENDING = re.compile(
    r"(?P<password>pass(?:word|wd|phrase)|pwd)$|(?P<pass>pass)$|(?P<token>token)$"
    r"|(?P<azure>account[_\-]?key|sharedaccesskey)$|(?P<keydata>key[_\-]?data)$"
    r"|(?P<keyid>private[_\-]?key[_\-]?id)$|(?P<pat>[_\-]pat)$"
    r"|(?P<api>api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|app(?:lication)?[_\-]?key)$",
    re.IGNORECASE,
)
_NAMED_KEY = re.compile(r"(?:private|secret|signing|encryption|master|client)[_\-]?key$", re.I)
_NOT_PASS = tuple("bypass compass overpass underpass trespass surpass sshpass pgpass".split())
"""Names ending in `pass` that are words or tools, not a password (`dbpass` is one)."""
_KIND_BY_GROUP = {
    "password": "password",
    "pass": "password",
    "token": "token",
    "azure": "azure-key",
    "keydata": "private-key",
    "keyid": "gcp-key-id",
    "pat": "token",
    "api": "api-key",
}
# a plain lower-case word is no generated token or key (`id-token: write`, `app_key: myapp`)
_PLAIN_WORD = re.compile(r"[a-z]{1,12}(?:-[a-z]{1,12})?")
_SPACE = re.compile(r"\s")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.]{20,512}")


def _key_ending(key: str) -> str | None:
    """Which known ending a secret's name has (`password`, `pass`, `token`, ...), '' for
    another secret's name, `generic` for any other `...key`, None for a name that is no
    secret's (`bypass`, `signing_key_id`)."""
    ending = _KIND_BY_ENDING.search(key)
    if ending is None:
        lowered = key.lower()
        if lowered.endswith("id"):
            return None
        return "generic" if lowered.endswith("key") and not _NAMED_KEY.search(key) else ""
    if ending.lastgroup == "pass" and key.lower().endswith(_NOT_PASS):
        return None
    return ending.lastgroup or ""


def _assignment_kind(key: str, ending: str, value: str) -> str:
    """The kind of an assigned secret, from its name (and, for AWS, its shape)."""
    lowered = key.lower()
    if ("aws" in lowered or "secret" in lowered) and _AWS_SECRET_VALUE.fullmatch(value):
        return "aws-secret-key"
    if ending == "generic" and "azure" in lowered:
        return "azure-key"
    return _KIND_BY_GROUP.get(ending, "secret")


def _is_generated(key: str, value: str) -> bool:
    """True for a value that looks generated (20+ characters, digits and both cases), held
    by a name that is not a public key's (`public_key`, `publishable_key`)."""
    return (
        "pub" not in key.lower()
        and len(value) >= 20
        and _SPACE.search(value) is None
        and looks_random(value, 3)
    )


def _looks_like_prose(match: re.Match[str], value: str, end: int) -> bool:
    """True if an unquoted `key: value` reads as a sentence: a plain word with more words after."""
    if match["kq"] or match["sep"] == "=" or SECRETISH_CHAR.search(value):
        return False
    return _LINE_END.match(match.string, end) is None


def _starts_line(text: str, position: int) -> bool:
    """True if only indentation, a list dash or `export` comes before `position` on its line."""
    line_start = text.rfind("\n", max(0, position - 80), position) + 1
    if line_start == 0 and position > 80:
        return False
    return _LINE_HEAD.fullmatch(text, line_start, position) is not None


def _keeps_pass_value(match: re.Match[str], value: str, quoted: bool) -> bool:
    """True if the value of a bare `pass` name is not clearly a password.

    `pass: letmein` on a config line, `DB_PASS=letmein` and openssl's `pass:secret` are
    passwords; a tally (`PASS: 12`, `pass: 12/12`) and a plain word in a sentence (`first
    pass: done`) are not.
    """
    if _TALLY.fullmatch(value):
        return True
    if quoted or SECRETISH_CHAR.search(value) or has_inner_capital(value):
        return False
    return not (_starts_line(match.string, match.start("key")) or match["sep"] in (":", "="))


def _judge_assignment(match: re.Match[str]) -> Span | None:
    """Accept the value of a secret-named assignment unless it is empty, a placeholder or prose."""
    name = next(g for g in ("ev", "dq", "sq", "uq", "uv") if match[g] is not None)
    start, end = match.span(name)
    value = match[name]
    quoted = name in ("ev", "dq", "sq")
    if not quoted and len(value) < _MAX_VALUE:
        value = trim_unquoted(before_marker(value))
        end = start + len(value)
    key = match["key"]
    if match["sep"].strip() == "" and not key.startswith("--"):
        return None
    if match.string[match.start("key") - 1 : match.start("key")] == ":":
        return None  # a segment of a colon path: `arn:aws:...:secret:prod/db`
    if is_placeholder(value) or is_public_token(value):
        return None
    ending = _key_ending(key)
    if ending is None:
        return None
    kind = _assignment_kind(key, ending, value)
    if kind != "password" and SMALL_NUMBER.fullmatch(value):
        return None
    if kind in ("token", "api-key") and not quoted and _PLAIN_WORD.fullmatch(value):
        return None
    if ending == "pat" and not (_TOKEN_CHARS.fullmatch(value) and looks_random(value)):
        return None  # `..._PAT` may name a pattern (`HEX_PAT = "[0-9a-f]+"`)
    if ending == "pass" and _keeps_pass_value(match, value, quoted):
        return None
    if ending == "generic" and not _is_generated(key, value):
        return None
    if not quoted:
        if is_code_reference(value):
            return None
        if key.lower().endswith("pwd") and value.startswith(("/", "~")):
            return None  # a working directory
        if key.lower().endswith("key") and _KEY_FILE.fullmatch(value):
            return None  # a key file's path (`client-key: /etc/kubernetes/admin.key`)
        if _looks_like_prose(match, value, end):
            return None
        run = _UNQUOTED_RUN.match(match.string, end) if len(value) >= _MAX_VALUE else None
        end = run.end() if run else end
    return kind, start, end


ASSIGNMENT_RULE = Rule(
    _ASSIGNMENT,
    _judge_assignment,
    ("pass", "pwd", "token", "secret", "key", "credential", "_pat", "-pat"),
)
"""The value of a secret-named assignment, in any of the forms above."""
