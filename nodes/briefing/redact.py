"""Secret redaction for every text field before it reaches a briefing file or package.

`redact(text)` replaces each secret with `[REDACTED:<kind>]` and counts what it
replaced. It is pure (stdlib `re` only), never raises on a `str` (lone
surrogates and NUL included), is idempotent (a marker is never matched or
counted again) and runs in linear time: every pattern is anchored by a
look-behind and uses possessive or bounded quantifiers, and the PEM scan
remembers where each END line is.

Kinds (`REDACTION_KINDS`, in the order they are applied):

- `private-key`: a PEM `-----BEGIN ... PRIVATE KEY-----` block through its END line
  (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK); without an END line, up to
  the next blank line.
- `slack-webhook`: the path of `https://hooks.slack.com/services/...` (host kept).
- `url-password`: the password of `scheme://user:pass@host` (scheme, user, host kept).
- `anthropic-key`: `sk-ant-...` (applied before `openai-key`, so it wins).
- `openai-key`: `sk-proj-`, `sk-svcacct-`, `sk-admin-` keys and legacy `sk-` + 32 alnum.
- `github-token`: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and `github_pat_` tokens.
- `slack-token`: `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxe-`, `xoxs-`, `xoxo-` and `xapp-` tokens.
- `google-api-key`: `AIza` + 35 characters.
- `aws-access-key-id`: `AKIA` / `ASIA` + 16 upper-case letters or digits.
- `jwt`: `eyJ...` + two more base64url segments.
- `auth-header`: the credentials of `Authorization: Bearer|Token|Basic ...`, and a
  long digit-bearing token after a bare `Bearer`.
- `aws-secret-key`: a 40-character base64 value assigned to a name mentioning aws/secret.
- `password`, `token`, `api-key`, `secret`: the VALUE of an assignment whose name ends
  in password/passwd/passphrase/pwd, token, api_key/apikey/access_key, or
  secret/client_secret/private_key/credentials/... in `key=value`, `key: value`,
  `"key": "value"`, `KEY="value"`, `key => value`, `key: str = "value"` and
  `--key value` forms. The name stays: `password=[REDACTED:password]`.

Deliberately NOT redacted:

- hex digests (git hashes, sha256), UUIDs, base64 data (e.g. `data:image/png;base64,...`),
  email addresses, file paths, ordinary words and identifiers (`sk_learn`, `task-123`);
- URLs without a password (`https://github.com/org/repo`, `postgres://localhost/db`);
- prose about passwords/tokens: no assignment (`reset your password in settings`), or a
  `key: value` whose unquoted value has no digit or symbol and is followed by more words
  (`Token: the budget is 3000`); names that merely contain a word (`token_count=42`,
  `max_context_tokens=3000`, `password_reset_url=...`);
- small numbers (up to 7 digits) for any kind except `password` (`token=42`, `tokens: 3000`);
- empty values and placeholders: `password=`, `""`, `<your password>`, `${DB_PASSWORD}`,
  `$TOKEN`, `{token}`, `{{ secrets.X }}`, `%(pw)s`, `***`, `xxxx`, `your-api-key`,
  `null`/`None`/`true`, type names (`token: str`), anything starting with `[`;
- unquoted code references: calls and subscripts (`os.environ["API_KEY"]`, `getpass()`),
  dotted names (`settings.API_KEY`), and bare identifiers that themselves name a secret
  (`token=access_token`, `password=db_password`). Other bare identifiers (`password=pw`)
  ARE redacted: they cannot be told apart from a password;
- `pwd=/some/path` (a working directory, not a password).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

REDACTION_KINDS: tuple[str, ...] = (
    "private-key",
    "slack-webhook",
    "url-password",
    "anthropic-key",
    "openai-key",
    "github-token",
    "slack-token",
    "google-api-key",
    "aws-access-key-id",
    "jwt",
    "auth-header",
    "aws-secret-key",
    "password",
    "token",
    "api-key",
    "secret",
)
"""Every kind name a marker can carry; see the module docstring for what each covers."""

_MARKER_PREFIX = "[REDACTED:"

Span = tuple[str, int, int]
"""A verdict: (kind, start, end) of the text to replace."""


@dataclass(frozen=True)
class Redaction:
    """The redacted text and how many secrets of each kind were replaced."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """How many secrets were replaced in all."""
        return sum(self.counts.values())


def marker(kind: str) -> str:
    """The text a secret of `kind` is replaced with."""
    return f"{_MARKER_PREFIX}{kind}]"


# --- shared value tests ------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined redacted hidden masked omitted removed "
    "str bytes int float bool string number any object secretstr secretbytes".split()
)
_PLACEHOLDER = re.compile(
    r"""
      [<\[]                           # <your password>, [your token], [REDACTED:...]
    | \$\{ | \$\( | \{\{ | %\(        # ${VAR}, $(cmd), {{ secrets.X }}, %(pw)s
    | \$[A-Za-z_]\w*\}?$              # $VAR
    | %[A-Za-z_]\w*%$                 # %VAR%
    | \{[\w.\-]*\}$                   # {token}
    | [*xX\u2022.\-_#]+$              # ***, xxxx, ..., ####
    | [|>][+\-]?\d?$                  # YAML block scalar indicators
    | (?:your|insert|enter|replace)[\s_\-.]
    | .*[_\-]here$                    # paste-token-here
    """,
    re.IGNORECASE | re.VERBOSE,
)
_SECRET_WORD = re.compile(r"pass(?:word|wd|phrase)|pwd|token|secret|api[_\-]?key|credential", re.I)
_CODE_CALL = re.compile(r"[A-Za-z_][\w.]*[\[(]")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_SMALL_NUMBER = re.compile(r"\d{1,7}(?:\.\d+)?")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")
_SECRETISH_CHAR = re.compile(r"[\d!@#$%^&*+=/\\~]")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _is_placeholder(value: str) -> bool:
    """True for an empty value, a template/variable placeholder, a mask or a type name."""
    stripped = value.strip()
    return (
        not stripped
        or stripped.lower() in _PLACEHOLDER_WORDS
        or _PLACEHOLDER.match(stripped) is not None
    )


def _is_code_reference(value: str) -> bool:
    """True for a call, subscript, dotted name or secret-named variable (`db_password`)."""
    if _CODE_CALL.match(value) or _DOTTED_NAME.fullmatch(value):
        return True
    if _IDENTIFIER.fullmatch(value) is None or _SECRET_WORD.search(value) is None:
        return False
    return "_" in value or _SECRET_WORD.fullmatch(value) is not None


def _trim_unquoted(value: str) -> str:
    """Cut an unquoted value at the next `,`/`;`/`&` field and drop unbalanced closing brackets."""
    next_field = _NEXT_FIELD.search(value)
    if next_field is not None:
        value = value[: next_field.start()]
    for _ in range(8):
        last = value[-1:]
        if last not in _CLOSERS or value.count(last) <= value.count(_CLOSERS[last]):
            break
        value = value[:-1]
    return value


def _has_digit(value: str) -> bool:
    """True if `value` contains an ASCII digit."""
    return any("0" <= ch <= "9" for ch in value)


def _is_mixed(value: str) -> bool:
    """True if `value` has a digit, an upper-case and a lower-case ASCII letter."""
    return _has_digit(value) and bool(re.search("[A-Z]", value)) and bool(re.search("[a-z]", value))


# --- the rule engine ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    """A pattern, a judge turning a match into a span to replace (or None), and needles.

    The rule is skipped unless one of its lower-case `needles` occurs in the lower-cased
    input. After an accepted span the search resumes at its end, after a rejected match
    at the match's end (a judged value may sit in a look-ahead, so a rejection never
    hides the text after the separator).
    """

    pattern: re.Pattern[str]
    judge: Callable[[re.Match[str]], Span | None]
    needles: tuple[str, ...]

    def apply(self, text: str, lowered: str, counts: Counter[str]) -> str:
        """Replace every accepted, non-overlapping span of `text`; count it."""
        if not any(needle in lowered for needle in self.needles):
            return text
        parts: list[str] = []
        cursor = position = 0
        while (match := self.pattern.search(text, position)) is not None:
            verdict = self.judge(match)
            position = max(match.end(), match.start() + 1)
            if verdict is None:
                continue
            kind, start, end = verdict
            parts += [text[cursor:start], marker(kind)]
            cursor, position = end, max(end, position)
            counts[kind] += 1
        if not parts:
            return text
        parts.append(text[cursor:])
        return "".join(parts)


def _group(kind: str, name: str | int = 0) -> Callable[[re.Match[str]], Span | None]:
    """A judge that always accepts, replacing group `name`."""

    def judge(match: re.Match[str]) -> Span | None:
        return (kind, *match.span(name))

    return judge


def _group_if(
    kind: str, test: Callable[[str], bool], name: str | int = 0
) -> Callable[[re.Match[str]], Span | None]:
    """A judge that accepts when `test(group text)` holds, replacing group `name`."""

    def judge(match: re.Match[str]) -> Span | None:
        return (kind, *match.span(name)) if test(match.group(name)) else None

    return judge


# --- PEM private keys --------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN (?P<label>(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?)-----")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


def _redact_pem(text: str, counts: Counter[str]) -> str:
    """Replace each PEM private-key block (to its END line, else the next blank line)."""
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


# --- prefixed tokens ---------------------------------------------------------------------

_SLACK_WEBHOOK = re.compile(
    r"(?<![\w.\-])(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"(?P<v>[A-Za-z0-9_/\-]++)"
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
_AUTH = re.compile(
    r"(?:(?P<hdr>\bauthorization\\?[\"']?[ \t]*+[:=][ \t]*+\\?[\"']?)(?:bearer|token|basic)"
    r"|\bbearer)[ \t]++(?P<v>[A-Za-z0-9\-._~+/]++=*+)",
    re.IGNORECASE,
)


def _judge_url_password(match: re.Match[str]) -> Span | None:
    """Accept a URL password unless it is a placeholder."""
    return None if _is_placeholder(match["v"]) else ("url-password", *match.span("v"))


def _judge_openai(match: re.Match[str]) -> Span | None:
    """Accept an `sk-` key whose body mixes digits and both letter cases."""
    return ("openai-key", *match.span()) if _is_mixed(match["a"] or match["b"]) else None


def _judge_auth(match: re.Match[str]) -> Span | None:
    """Accept header credentials (not placeholders) or a long, digit-bearing bare bearer."""
    value = match["v"]
    if match["hdr"] is not None:
        ok = not _is_placeholder(value) and not _is_code_reference(value)
    else:
        ok = len(value) >= 20 and _has_digit(value) and re.search("[A-Za-z]", value) is not None
    return ("auth-header", *match.span("v")) if ok else None


# --- key/value assignments ---------------------------------------------------------------

_KEY_WORDS = (
    r"pass(?:word|wd|phrase)|pwd|token|secret|api[_\-]?key|apikey|access[_\-]?key"
    r"|(?:private|secret|signing|encryption|master)[_\-]?key|credentials?"
)
_TYPE_WORDS = (
    r"str|bytes|int|float|bool|Optional|Union|Any|SecretStr|SecretBytes|None|string|String|number"
)
_ASSIGNMENT = re.compile(
    rf"""
    (?<![A-Za-z0-9_.\-])
    (?P<key>[A-Za-z0-9_.\-]*?(?:{_KEY_WORDS}))(?![A-Za-z0-9_.\-])
    (?P<kq>\\?["'`]|\*\*)?
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
_UNQUOTED_RUN = re.compile(r"[^\s\"'`]*+")
_NEXT_FIELD = re.compile(r"[,;&](?=[ \t]*+[\w.\-]++[ \t]*+[=:])|[,;&]++$")
_MAX_VALUE = 512
_KIND_BY_ENDING = re.compile(
    r"(?P<password>pass(?:word|wd|phrase)|pwd)$|(?P<token>token)$"
    r"|(?P<api>api[_\-]?key|apikey|access[_\-]?key)$",
    re.IGNORECASE,
)


def _assignment_kind(key: str, value: str) -> str:
    """The kind of an assigned secret, from its name (and, for AWS, its shape)."""
    lowered = key.lower()
    if ("aws" in lowered or "secret" in lowered) and _AWS_SECRET_VALUE.fullmatch(value):
        return "aws-secret-key"
    ending = _KIND_BY_ENDING.search(key)
    if ending is None:
        return "secret"
    return {"password": "password", "token": "token", "api": "api-key"}[ending.lastgroup or ""]


def _looks_like_prose(match: re.Match[str], value: str, end: int) -> bool:
    """True if an unquoted `key: value` reads as a sentence: a plain word with more words after."""
    if match["kq"] or match["sep"] == "=" or _SECRETISH_CHAR.search(value):
        return False
    return _LINE_END.match(match.string, end) is None


def _judge_assignment(match: re.Match[str]) -> Span | None:
    """Accept the value of a secret-named assignment unless it is empty, a placeholder or prose."""
    name = next(g for g in ("ev", "dq", "sq", "uq", "uv") if match[g] is not None)
    start, end = match.span(name)
    value = match[name]
    quoted = name in ("ev", "dq", "sq")
    if not quoted and len(value) < _MAX_VALUE:
        value = _trim_unquoted(value)
        end = start + len(value)
    key = match["key"]
    if match["sep"].strip() == "" and not key.startswith("--"):
        return None
    if _is_placeholder(value):
        return None
    kind = _assignment_kind(key, value)
    if kind != "password" and _SMALL_NUMBER.fullmatch(value):
        return None
    if not quoted:
        if _is_code_reference(value):
            return None
        if key.lower().endswith("pwd") and value.startswith(("/", "~")):
            return None
        if _looks_like_prose(match, value, end):
            return None
        run = _UNQUOTED_RUN.match(match.string, end) if len(value) >= _MAX_VALUE else None
        end = run.end() if run else end
    return kind, start, end


_RULES = (
    _Rule(_SLACK_WEBHOOK, _group_if("slack-webhook", lambda v: len(v) >= 8, "v"), ("hooks.slack",)),
    _Rule(_URL_PASSWORD, _judge_url_password, ("://",)),
    _Rule(_ANTHROPIC, _group_if("anthropic-key", _has_digit), ("sk-ant-",)),
    _Rule(_OPENAI, _judge_openai, ("sk-",)),
    _Rule(_GITHUB, _group("github-token"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _Rule(_SLACK_TOKEN, _group_if("slack-token", _has_digit), ("xox", "xapp-")),
    _Rule(_GOOGLE, _group("google-api-key"), ("aiza",)),
    _Rule(_AWS_KEY_ID, _group("aws-access-key-id"), ("akia", "asia")),
    _Rule(_JWT, _group("jwt"), ("eyj",)),
    _Rule(_AUTH, _judge_auth, ("bearer", "authorization")),
    _Rule(_ASSIGNMENT, _judge_assignment, ("pass", "pwd", "token", "secret", "key", "credential")),
)


# --- public API --------------------------------------------------------------------------


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with `[REDACTED:<kind>]` and count them by kind."""
    counts: Counter[str] = Counter()
    lowered = text.lower()
    if "-----begin " in lowered:
        text = _redact_pem(text, counts)
    for rule in _RULES:
        text = rule.apply(text, lowered, counts)
    return Redaction(text, dict(counts))


def redact_all(texts: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    """Redact each text; return the redacted texts and the counts summed over all of them."""
    total: Counter[str] = Counter()
    redacted: list[str] = []
    for text in texts:
        result = redact(text)
        redacted.append(result.text)
        total.update(result.counts)
    return redacted, dict(total)
