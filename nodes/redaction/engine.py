"""The rule engine and the value tests every redaction rule shares (see `redact.py`).

A rule is a pattern, a judge that turns a match into a span to replace (or `None`) and
needles that must occur in the text for the rule to run at all; the patterns and needles
live in `rules.toml` (`load_rules`), the judges beside the rules. Judges lean on the
value tests here to keep look-alikes: placeholders, references to a secret manager,
code references, small numbers, public tokens and tokens that do not look random
(`sk_live_xxxxxxxx`).
"""

from __future__ import annotations

import re
import tomllib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

Span = tuple[str, int, int]
"""A verdict: (kind, start, end) of the text to replace."""

MARKER_PREFIX = "[REDACTED:"


def marker(kind: str) -> str:
    """The text a secret of `kind` is replaced with."""
    return f"{MARKER_PREFIX}{kind}]"


# --- value tests -------------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined redacted hidden masked omitted removed "
    "todo tbd tba fixme changeme change_me change-me replaceme example sample placeholder "
    "str bytes int float bool string number any object secretstr secretbytes".split()
)
# where a secret is kept, not the secret: 1Password, Vault, vals, AWS Secrets Manager and
# Parameter Store, Google Secret Manager, Azure Key Vault references
_SECRET_REFERENCE = re.compile(
    r"op://|vault:|ref\+[a-z0-9]{1,16}+://|arn:aws[a-z\-]{0,16}+:(?:secretsmanager|ssm):"
    r"|projects/[^/\s]{1,128}+/secrets/|@Microsoft\.KeyVault\(",
    re.IGNORECASE,
)
# public by design: Mapbox public tokens, Stripe publishable keys
_PUBLIC_TOKEN = re.compile(r"pk\.eyJ|pk_(?:live|test)_")
_PLACEHOLDER = re.compile(
    r"""
      [<\[]                           # <your password>, [your token], [REDACTED:...]
    | \$\{ | \$\( | \{\{ | %\(        # ${VAR}, $(cmd), {{ secrets.X }}, %(pw)s
    | \$[A-Za-z_]\w*\}?$              # $VAR
    | %[A-Za-z_]\w*%$                 # %VAR%
    | \{[\w.\-]*\}$                   # {token}
    | [*xX\u2022.\-_#]+$              # ***, xxxx, ..., ####
    | [|>][+\-]?\d?$                  # YAML block scalar indicators
    | [{(]$                           # the opening of a literal: `secret = {`
    | (?:your|insert|enter|replace)[\s_\-.]
    | .*[_\-]here$                    # paste-token-here
    """,
    re.IGNORECASE | re.VERBOSE,
)
_MASKED_TOKEN = re.compile(
    r"[A-Za-z0-9]{1,16}(?:[_\-.][A-Za-z0-9]{1,16}){0,3}[_\-.]?"
    r"(?:([xX*\u2022#])\1{5,}|\.\.\.|\u2026)"
)
_SECRET_WORD = re.compile(
    r"pass(?:word|wd|phrase)|pwd|token|secret|(?:api|auth|app)[_\-]?key|credential", re.I
)
# a lowerCamelCase variable that ends in a secret's word: `accessToken`, `scopeAuthKey`
_CAMEL_SECRET_NAME = re.compile(
    r"[a-z][A-Za-z]*?(?:Pass(?:word|wd|phrase)|Token|Secret|(?:Api|Auth|App)Key|Credentials?)"
)
_CODE_CALL = re.compile(r"[A-Za-z_][\w.]*[\[(]")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CLASS_CHANGE = re.compile("[a-z](?=[A-Z0-9])|[A-Z](?=[a-z0-9])|[0-9](?=[A-Za-z])")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PATH = re.compile(r"(?:~|\.\.?)?/|[A-Za-z]:\\")
_NEXT_FIELD = re.compile(r"[,;&](?=[ \t]*+[\w.\-]++[ \t]*+[=:])|[,;&]++$")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_DIGIT = re.compile("[0-9]")
_UPPER = re.compile("[A-Z]")
_LOWER = re.compile("[a-z]")
_CAMEL = re.compile("[a-z][A-Z]")

SMALL_NUMBER = re.compile(r"\d{1,7}(?:\.\d+)?")
"""Up to 7 digits: a count or a port, never a key (a password may still be one)."""

SECRETISH_CHAR = re.compile(r"[\d!@#$%^&*+=/\\~]")
"""A character that ordinary words do not have but passwords and keys do."""


def is_placeholder(value: str) -> bool:
    """True for an empty value, a template/variable placeholder, a mask, a type name, a
    to-do word (`TODO`, `CHANGEME`, `example`) or a reference to a secret manager
    (`op://vault/item/field`, `vault:kv/app`, `arn:aws:secretsmanager:...`).

    A token's prefix followed by a mask is one too: `sk_live_xxxxxxxx`, `glpat-XXXX...`,
    `hf_****`, `sk_live_...`.
    """
    stripped = value.strip()
    return (
        not stripped
        or stripped.lower() in _PLACEHOLDER_WORDS
        or _PLACEHOLDER.match(stripped) is not None
        or _MASKED_TOKEN.fullmatch(stripped) is not None
        or _SECRET_REFERENCE.match(stripped) is not None
    )


def is_public_token(value: str) -> bool:
    """True for a token that is public by design (`pk.eyJ...` for Mapbox, `pk_live_...`)."""
    return _PUBLIC_TOKEN.match(value) is not None


def before_marker(value: str) -> str:
    """An unquoted value up to the first marker in it: a marker ends a value, so a second
    pass judges what the first pass left as the first pass did."""
    cut = value.find(MARKER_PREFIX)
    return value if cut == -1 else value[:cut]


def is_code_reference(value: str) -> bool:
    """True for a call, subscript, dotted name or secret-named variable (`db_password`,
    `accessToken`).

    A dotted name with a generated part (`dp.st.prd.UnBME2Dz...`, `patMF8AvV0kn18v83.c69b...`)
    is a token, not a name.
    """
    if _CODE_CALL.match(value):
        return True
    if _DOTTED_NAME.fullmatch(value):
        return not any(_is_generated_part(part) for part in value.split("."))
    if _IDENTIFIER.fullmatch(value) is None or _SECRET_WORD.search(value) is None:
        return False
    if "_" in value or _SECRET_WORD.fullmatch(value) is not None:
        return True
    return _CAMEL_SECRET_NAME.fullmatch(value) is not None


def is_path(value: str) -> bool:
    """True if `value` starts like a file path (`/etc/x`, `~/x`, `./x`, `C:\\x`)."""
    return _PATH.match(value) is not None


def _is_generated_part(part: str) -> bool:
    """True for a part of a dotted value that no one would name: 16+ characters with
    digits and both cases that switch between digit, capital and small letter at nearly
    every other character (a random one does at 6 in 10, `MLKEM768X25519PrivateKey` at 3)."""
    if len(part) < 16 or not is_mixed(part):
        return False
    return class_switches(part) >= 0.45 * (len(part) - 1)


def trim_unquoted(value: str) -> str:
    """Cut an unquoted value at the next `,`/`;`/`&` field and drop unbalanced closing
    brackets (and the colon after one: `def f(api_key=None):`)."""
    next_field = _NEXT_FIELD.search(value)
    if next_field is not None:
        value = value[: next_field.start()]
    for _ in range(8):
        if value.endswith(":") and value[-2:-1] in _CLOSERS:
            value = value[:-1]
        last = value[-1:]
        if last not in _CLOSERS or value.count(last) <= value.count(_CLOSERS[last]):
            break
        value = value[:-1]
    return value


def class_switches(value: str) -> int:
    """How often `value` switches between small letters, capitals and digits."""
    return len(_CLASS_CHANGE.findall(value))


def has_digit(value: str) -> bool:
    """True if `value` contains an ASCII digit."""
    return _DIGIT.search(value) is not None


def is_mixed(value: str) -> bool:
    """True if `value` has a digit, an upper-case and a lower-case ASCII letter."""
    return has_digit(value) and bool(_UPPER.search(value)) and bool(_LOWER.search(value))


def has_inner_capital(value: str) -> bool:
    """True if a lower-case letter is followed by an upper-case one (`SuperSecret`, not `JSON`)."""
    return _CAMEL.search(value) is not None


def looks_random(body: str, classes: int = 2) -> bool:
    """True if a token's body mixes `classes` of digits, upper and lower case, 6+ distinct.

    Keeps masks and placeholders in a real token's shape (`xxxxxxxx`, `XXXX0000XXXX0000`,
    `0000000000000000`) while any generated key passes.
    """
    found = has_digit(body) + bool(_UPPER.search(body)) + bool(_LOWER.search(body))
    return found >= classes and len(set(body)) >= 6


_MARKER = re.compile(r"\[REDACTED:[a-z0-9\-]{1,40}\]")


class LineContext:
    """Where `pattern` occurs in `text`, by line: the context a judge may rely on.

    Occurrences inside a marker (but one of kind `keep`) do not count. So a secret
    replaced elsewhere neither adds context nor joins its neighbours into a word, and as
    replacing never adds or removes a line break outside a PEM block (replaced first), a
    second pass judges a candidate as the first did: redaction stays idempotent. Built
    once per text in linear time; each question is a binary search.
    """

    def __init__(self, text: str, pattern: re.Pattern[str], *, keep: str = "") -> None:
        kept = marker(keep) if keep else None
        blocked = [m.span() for m in _MARKER.finditer(text) if m[0] != kept]
        self._end = len(text)
        self._breaks = [m.start() for m in re.finditer("\n", text)]
        self._hits: list[tuple[int, int]] = []
        index = 0
        for hit in pattern.finditer(text):
            while index < len(blocked) and blocked[index][1] <= hit.start():
                index += 1
            if index == len(blocked) or hit.end() <= blocked[index][0]:
                self._hits.append(hit.span())
        self._starts = [start for start, _ in self._hits]

    def around(self, start: int, end: int, *, lines: int = 0) -> bool:
        """True if the pattern occurs outside `[start, end)` on its line (or `lines` more
        lines either side)."""
        first = bisect_left(self._breaks, start) - 1 - lines
        low = self._breaks[first] + 1 if first >= 0 else 0
        last = bisect_left(self._breaks, end) + lines
        high = self._breaks[last] if last < len(self._breaks) else self._end
        for hit_start, hit_end in self._hits[bisect_left(self._starts, low) :]:
            if hit_start >= high:
                return False
            if hit_end <= start or hit_start >= end:
                return True
        return False


# --- values in commands and sentences ---------------------------------------------------

_LONG_WORD_TAIL = re.compile(r"[^\s\"'`;|&()<>\[\]]*+")
"""What may follow an unquoted value its pattern cut at 256 characters (no separator, no
bracket, so never a marker)."""

_last_word: list[tuple[str, int, int]] = []
"""The last long word `word_end` measured: (text, from, end). Every cut value inside one long
word ends where it ends, so a text that is one long word is read once, not once per match."""


def word_end(text: str, position: int) -> int:
    """Where the unquoted word running through `position` ends (`_LONG_WORD_TAIL`)."""
    for known, start, end in _last_word[-1:]:
        if known is text and start <= position <= end:
            return end
    tail = _LONG_WORD_TAIL.match(text, position)
    end = tail.end() if tail else position
    _last_word[:] = [(text, position, end)]
    return end


def value_span(match: re.Match[str]) -> tuple[str, int, int]:
    """The value of a match of the `quoted_or_word`/`quoted_or_arg` fragments of `rules.toml`
    (a quoted value in group `dq`, `sq` or `bq`, an unquoted one in `uv`) and its span;
    an unquoted value ends at a marker. One cut at 256 characters runs on to the end of
    its word: replacing only its head would leave a tail that a second pass might read as
    a token of its own."""
    name = next(g for g in ("dq", "sq", "bq", "uv") if g in match.re.groupindex and match[g])
    value, start = match[name], match.start(name)
    if name == "uv":
        if len(value) == 256:
            value = match.string[start : word_end(match.string, match.end(name))]
        value = before_marker(value)
    return value, start, start + len(value)


# --- the rule engine ---------------------------------------------------------------------


def splice(text: str, spans: Iterable[Span], counts: Counter[str]) -> str:
    """Replace each span (sorted by start; overlapping ones skipped) with its marker; count it."""
    parts: list[str] = []
    cursor = 0
    for kind, start, end in spans:
        if start < cursor:
            continue
        parts += [text[cursor:start], marker(kind)]
        cursor = end
        counts[kind] += 1
    return "".join([*parts, text[cursor:]]) if parts else text


Seen = Callable[[re.Pattern[str]], LineContext]
"""For a context pattern, where it occurs in the text being judged (built once)."""


@dataclass(frozen=True)
class Rule:
    """A pattern, a judge turning a match into a span to replace (or None), and needles.

    The rule is skipped unless one of its lower-case `needles` occurs in the lower-cased
    input (with `exact`, one of its needles in the text as it is now, markers included).
    After an accepted span the search resumes at its end, after a rejected match at the
    match's end (a judged value may sit in a look-ahead, so a rejection never hides the
    text after the separator). With `context`, the judge also gets `seen`: `seen(pattern)`
    is that pattern's `LineContext` in the text (markers of kind `keep` count), built the
    first time it is asked for.
    """

    pattern: re.Pattern[str]
    judge: Callable[..., Span | None]
    needles: tuple[str, ...]
    exact: bool = False
    context: bool = False
    keep: str = ""

    def apply(self, text: str, lowered: str, counts: Counter[str]) -> str:
        """Replace every accepted, non-overlapping span of `text`; count it."""
        haystack = text if self.exact else lowered
        if not any(needle in haystack for needle in self.needles):
            return text
        judge = self.judge
        if self.context:
            seen = cache(lambda pattern: LineContext(text, pattern, keep=self.keep))
            judge = partial(judge, seen=seen)
        spans: list[Span] = []
        position = 0
        while (match := self.pattern.search(text, position)) is not None:
            verdict = judge(match)
            position = max(match.end(), match.start() + 1)
            if verdict is not None:
                spans.append(verdict)
                position = max(verdict[2], position)
        return splice(text, spans, counts)


def token(
    kind: str, match: re.Match[str], *, classes: int = 2, group: str | int = 0
) -> Span | None:
    """The default judge: replace `group` (the whole match) if the token's body, its first
    group that took part (else the match), mixes `classes` kinds of character (`looks_random`)."""
    body = next((part for part in match.groups() if part), match[0])
    return (kind, *match.span(group)) if looks_random(body, classes) else None


def secret_near(
    kind: str, match: re.Match[str], seen: Seen, *, context: re.Pattern[str], classes: int = 3
) -> Span | None:
    """A judge for a bare secret (mixing `classes` of digits, upper and lower case) with
    `context` on its line or a neighbour."""
    if not looks_random(match[0], classes) or not seen(context).around(*match.span(), lines=1):
        return None
    return (kind, *match.span())


TABLES = tomllib.loads(Path(__file__).with_name("rules.toml").read_text(encoding="utf-8"))
"""The pattern tables of `rules.toml`, by family."""

_FRAGMENT = re.compile(r"\{([a-z_]+)\}")


def _expand(pattern: str) -> str:
    """`pattern` with each `{name}` of a fragment of `rules.toml` written out."""
    return _FRAGMENT.sub(lambda found: _expand(TABLES["fragments"][found[1]]), pattern)


def load_rules(family: str, judges: Mapping[str, Callable[..., Span | None]]) -> tuple[Rule, ...]:
    """The rules of `family` in `rules.toml`, in order: each judged by `token` (with its
    `classes` and `group`), or by the judge it names in `judges`, given its kind first."""
    rules = []
    for spec in TABLES[family]:
        if "judge" in spec:
            judge = partial(judges[spec["judge"]], spec["kind"])
        else:
            options = {key: spec[key] for key in ("classes", "group") if key in spec}
            judge = partial(token, spec["kind"], **options)
        pattern = re.compile(_expand(spec["pattern"]))
        options = {key: spec[key] for key in ("exact", "context", "keep") if key in spec}
        rules.append(Rule(pattern, judge, tuple(spec["needles"]), **options))
    return tuple(rules)
