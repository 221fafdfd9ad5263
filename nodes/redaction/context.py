"""Secrets known by the sentence they are in, or by a neighbour.

"the db password is X", "root pw on the NAS: X", "mot de passe : X", "the login is
admin / X", "use the credentials admin:X", a key passed to an SDK client
(`cohere.ClientV2("<key>")`) and a bare 40-character AWS secret key next to its key id:
the `prose` rules of `rules.toml`, with their judges here. Every pattern is bounded, so a
scan stays linear.
"""

from __future__ import annotations

import re

from .engine import (
    SECRETISH_CHAR,
    Seen,
    Span,
    class_switches,
    has_digit,
    has_inner_capital,
    is_code_reference,
    is_mixed,
    is_path,
    is_placeholder,
    load_rules,
    looks_random,
    value_span,
)

# --- passwords in sentences ---------------------------------------------------------------

_SENTENCE_END = ".,;:?)]"
"""What ends a sentence after an unquoted value (never a space: the value has none)."""
_WITH_BEFORE = re.compile(r"\b(?:with|using)[ \t]+(?:the[ \t]+)?\Z", re.IGNORECASE)
_UNIT_AFTER = re.compile(
    r"[ \t]+(?:characters?|chars?|digits?|letters?|symbols?|long|or|to|and|min(?:imum)?"
    r"|max(?:imum)?|days?|hours?|months?|times?|attempts?)\b",
    re.IGNORECASE,
)


def _judge_prose_password(kind: str, match: re.Match[str]) -> Span | None:
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
        value = value.rstrip(_SENTENCE_END)
        end = start + len(value)
        if not value or is_code_reference(value) or is_path(value):
            return None
        if not (SECRETISH_CHAR.search(value) or (has_inner_capital(value) and not colon)):
            return None  # after a colon, `CamelCase` is a type (`pwd: ModuleType | None`)
        if not re.search("[A-Za-z]", value) and _UNIT_AFTER.match(text, end):
            return None
    return None if is_placeholder(value) else (kind, start, end)


# --- tokens, keys and secrets named in sentences -----------------------------------------

# a `key` is a credential's with a qualifier ("api key", "license key") or an owner ("my
# key", "our geocoder key"); "the key is to test early", "the primary key is id" are not
_KEY_QUALIFIER = re.compile(
    r"(?:\b(?:api|access|secret|private|auth|app|application|license|licence|product|signing"
    r"|encryption|master|admin|service|account|deploy|ingest|client|server|developer|dev|prod"
    r"|production|staging|sandbox|live|test|subscription|storage|activation|registration)"
    r"|\b(?:my|our|your|his|her|their)(?:[ \t]+[A-Za-z][\w.\-]{0,30})?)[ \t_\-]?\Z",
    re.IGNORECASE,
)
# what a word before `key` or `token` makes no credential: a public or SSH key, a database
# or cache key, a pagination or parser token
_NOT_A_CREDENTIAL = re.compile(
    r"\b(?:public|pub|gpg|pgp|ssh|host|primary|foreign|sort|partition|cache|idempotency"
    r"|routing|shard|hash|row|index|lookup|page|pagination|continuation|cursor|next|sync"
    r"|cancellation|lexer|parser|input|output|special|max|bos|eos)[ \t_\-]?\Z",
    re.IGNORECASE,
)
# "here's my token X", "log in with the api key X": a noun and its value with no verb
_BARE_BEFORE = re.compile(
    r"\b(?:here(?:'s|\u2019s|[ \t]+is)|using|with|use|try)[ \t]+"
    r"(?:(?:my|the|our|this|your|a|an|new)[ \t]+)?(?:[A-Za-z][\w.\-]{0,30}[ \t_\-])?\Z",
    re.IGNORECASE,
)
_NOUN_KIND = {"token": "token", "key": "api-key", "secret": "secret"}
_SNAKE_WORDS = re.compile(r"[a-z]+(?:[_\-][a-z]+)*[0-9]{0,3}")
_DATE_OR_TIME = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")
_EMAIL = re.compile(r"[^@\s]{1,64}@[A-Za-z0-9.\-]{1,253}\.[A-Za-z]{2,24}")
_LETTER = re.compile("[A-Za-z]")
_SYMBOL = re.compile(r"[!@#$%^&*+=/\\~?]")
_BASE64 = re.compile("[A-Za-z0-9+/]+={0,2}")
_MASK_RUN = re.compile("[*\u2022]{4}|[xX]{6}")
_UPPER = re.compile("[A-Z]")
_LOWER = re.compile("[a-z]")
_ALNUM_RUN = re.compile("[A-Za-z0-9]{6,}")


def looks_like_credential(value: str) -> bool:
    """True if a value named as a token, key or secret in a sentence looks like one.

    It has 8 to 1,024 characters with a letter, and is no placeholder, mask (`****a91f`),
    path, URL or host (a `/` only in base64), e-mail address, code reference, date or
    snake_case words (`user_id2`); and
    it has digits mixed in with letters (three switches between small letters, capitals
    and digits, or two in one run of 6+ letters and digits: `abc123xyz`, a hex digest, a
    UUID, a license key), or a symbol, a digit and a letter (`hunter2x!`), or 16+ letters
    switching case at nearly every other one. Plain words, numbers, lengths and words with
    a digit (`expired`, `3600`, `32-characters`, `e2e-tested`, `python3.11`) are not.
    """
    if not 8 <= len(value) <= 1024 or _LETTER.search(value) is None:
        return False
    if is_placeholder(value) or is_code_reference(value) or is_path(value) or "://" in value:
        return False
    if _EMAIL.fullmatch(value) or _SNAKE_WORDS.fullmatch(value) or _DATE_OR_TIME.search(value):
        return False
    if _MASK_RUN.search(value):
        return False  # a masked key showing its last characters: `************a91f`
    if "/" in value and _BASE64.fullmatch(value) is None:
        return False  # a host, a path or a fraction, not a key (base64 may have a `/`)
    if has_digit(value):
        if _SYMBOL.search(value):
            return True
        return class_switches(value) >= 3 or any(
            class_switches(run) >= 2 for run in _ALNUM_RUN.findall(value)
        )
    both_cases = _UPPER.search(value) is not None and _LOWER.search(value) is not None
    return len(value) >= 16 and both_cases and class_switches(value) >= 0.4 * len(value)


def _judge_prose_secret(kind: str, match: re.Match[str]) -> Span | None:
    """Accept the value after a phrase naming a credential ("my token is X", "the api key:
    X", "here's the access token X", "password - X") when it looks like one; the kind is
    the noun's (a token, an API key, a secret, else `kind`)."""
    value, start, end = value_span(match)
    if match["uv"] is not None:
        value = value.rstrip(_SENTENCE_END)
        end = start + len(value)
    if len(value) < 8 or value != value.strip() or (len(value) < 16 and not has_digit(value)):
        return None  # most candidates are words ("is expired"): judged without the context
    text = match.string
    noun = match["noun"].lower()
    before = text[max(0, match.start() - 48) : match.start()]
    if match["bare"] is not None and _BARE_BEFORE.search(before) is None:
        return None
    if noun == "key" and _KEY_QUALIFIER.search(before) is None:
        return None
    if _NOT_A_CREDENTIAL.search(before) or not looks_like_credential(value):
        return None
    return ("secret" if noun.startswith("cred") else _NOUN_KIND.get(noun, kind)), start, end


# --- a bare AWS secret key next to its key id --------------------------------------------

_AWS_CONTEXT = re.compile(
    r"(?:AKIA|ASIA)[A-Z0-9]{16}|\[REDACTED:aws-access-key-id\]|aws|secret", re.IGNORECASE
)


def _judge_bare_aws_secret(kind: str, match: re.Match[str], seen: Seen) -> Span | None:
    """Accept 40 mixed base64 characters with an AWS key id, `aws` or `secret` on their
    line or the line before or after."""
    if not is_mixed(match[0]) or not seen(_AWS_CONTEXT).around(*match.span(), lines=1):
        return None
    return (kind, *match.span())


PROSE_RULES = load_rules(
    "prose",
    {
        "prose_password": _judge_prose_password,
        # a client's first argument when it mixes digits and both cases (a key, not a
        # project name, a hex digest or a URL)
        "client_key": lambda kind, m: (kind, *m.span("v")) if looks_random(m["v"], 3) else None,
        "bare_aws_secret": _judge_bare_aws_secret,
        "prose_secret": _judge_prose_secret,
    },
)
"""Secrets in sentences, applied after the assignments."""
