"""More providers' tokens and capability URLs, found by our patterns (see `redact.py`).

Square, New Relic, Sentry, Meta (Facebook, Instagram), Firebase and Google OAuth, Alibaba
Cloud (and DingTalk), Tencent Cloud (and WeCom, WeChat AppSecrets), Postman, Microsoft (Teams webhooks and
workflows, Entra ID client secrets, Azure DevOps PATs) and Atlassian: the `platforms` and
`platform_secrets` rules of `rules.toml`, with their judges here. Each format is a
documented prefix and shape; a body must look random (`looks_random`), so a mask, a
ticket id (`PMAK-12`, `NRAK-1234`) or a prefix named in prose (`AKID`, `LTAI`) stays.
Secrets without a prefix of their own (an Alibaba AccessKey secret, a Tencent SecretKey,
a Facebook app secret in an app token) count only next to their key id or their
provider's name, as a bare AWS secret key does. Where a token's fixed-length head has no
literal (an Entra ID secret's `xxx9` before `Q~`, a license key's hex before `NRAL`), the
judge checks it backwards.
"""

from __future__ import annotations

import re
from functools import partial

from .engine import Seen, Span, has_digit, load_rules, looks_random, secret_near, token

_ALIBABA_CONTEXT = re.compile(
    r"LTAI[A-Za-z0-9]{12,20}|\[REDACTED:alibaba-key\]|alibaba|aliyun|access[ _\-]?key[ _\-]?secret",
    re.IGNORECASE,
)
_TENCENT_CONTEXT = re.compile(
    r"AKID[A-Za-z0-9]{32,100}|\[REDACTED:tencent-key\]|tencent|qcloud|tccli", re.IGNORECASE
)
_WECHAT_CONTEXT = re.compile(r"\bwx[0-9a-f]{16}\b|app[ _\-]?secret", re.IGNORECASE)
_FACEBOOK_WORD = re.compile(
    r"facebook|graph|\bfb|access_token|app[ _\-]?(?:token|secret)|debug_token", re.IGNORECASE
)
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/=]{40,}")
_WORD_CHAR = re.compile(r"[\w\-\]]")
_LETTER = re.compile("[A-Za-z]")
_URL_TAIL = re.compile(r"[.,;:!?)]+$")


def _key_id(kind: str, match: re.Match[str]) -> Span | None:
    """Accept a cloud key id whose body has digits and letters (`LTAIExampleKeyId` names
    one, it is none)."""
    body = match["body"]
    ok = looks_random(body) and has_digit(body) and _LETTER.search(body) is not None
    return (kind, *match.span()) if ok else None


def _with_head(
    kind: str, match: re.Match[str], *, head: str, size: int, stop: str, classes: int = 3
) -> Span | None:
    """Accept a token found by its literal middle or end (`Q~`, `NRAL`, `AZDO`): the `size`
    characters before the match must be `head`, not preceded by a `stop` character, and
    the token must mix `classes` of digits, upper and lower case (`looks_random`)."""
    text, start = match.string, match.start() - size
    if start < 0 or re.fullmatch(head, text[start : match.start()]) is None:
        return None
    if start > 0 and re.match(stop, text[start - 1]):
        return None
    return (kind, start, match.end()) if looks_random(text[start : match.end()], classes) else None


def _in_base64_block(text: str, start: int, end: int) -> bool:
    """True if `[start, end)` is a whole line next to a line of base64 (a PEM or MIME body,
    where a line may open with `EAA` by chance)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip():
        return False
    previous_end = max(line_start - 1, 0)
    previous = text[text.rfind("\n", 0, previous_end) + 1 : previous_end]
    next_end = text.find("\n", line_end + 1)
    following = text[line_end + 1 : len(text) if next_end == -1 else next_end]
    return any(_BASE64_LINE.fullmatch(line.strip()) for line in (previous, following) if line)


def _judge_square(kind: str, match: re.Match[str]) -> Span | None:
    """Accept a Square token or secret (with `sandbox-` before it, if it is there) whose
    body looks random."""
    text, start = match.string, match.start()
    if text[max(0, start - 8) : start] == "sandbox-":
        start -= 8
    if start > 0 and _WORD_CHAR.match(text, start - 1):
        return None
    return (kind, start, match.end()) if looks_random(match["body"]) else None


def _outside_base64(kind: str, match: re.Match[str]) -> Span | None:
    """Accept an `EAA...` token (Square's `EAAA`, Meta's) whose body mixes digits and both
    cases, not a line of a base64 block."""
    span = token(kind, match, classes=3)
    return None if span is None or _in_base64_block(match.string, *match.span()) else span


def _judge_facebook_app(kind: str, match: re.Match[str], seen: Seen) -> Span | None:
    """Accept an app token, `<app id>|<app secret>` (an app id has 15 or 16 digits), with
    Facebook, the Graph API or an app token named on its line or a neighbour (a
    timestamp and a trace id have none)."""
    text, start = match.string, match.start()
    digits = 0
    while digits < 17 and start - digits > 0 and text[start - digits - 1].isdigit():
        digits += 1
    if digits not in (15, 16):
        return None
    before = start - digits - 1
    if before >= 0 and (text[before] in "|%" or _WORD_CHAR.match(text, before)):
        return None
    if not looks_random(match["body"]) or not seen(_FACEBOOK_WORD).around(*match.span(), lines=1):
        return None
    return (kind, start - digits, match.end())


def _url_path(kind: str, match: re.Match[str], needle: str = "") -> Span | None:
    """Accept a capability URL's secret part (group `v`, 40+ characters with a digit,
    holding `needle`), less the punctuation that ends a sentence."""
    value = _URL_TAIL.sub("", match["v"])
    if len(value) < 40 or not has_digit(value) or needle not in value.lower():
        return None
    start = match.start("v")
    return kind, start, start + len(value)


PLATFORM_RULES = load_rules(
    "platforms",
    {
        "url_path": _url_path,
        "signed_url_path": partial(_url_path, needle="sig"),
        "square": _judge_square,
        "outside_base64": _outside_base64,
        "facebook_app": _judge_facebook_app,
        "newrelic_license": partial(
            _with_head, head="eu01xx[0-9a-f]{30}|[0-9a-f]{36}", size=36, stop=r"[\w\-\]]", classes=2
        ),
        "key_id": _key_id,
        "azure_ad_secret": partial(
            _with_head, head="[A-Za-z0-9_~.]{3}[0-9]", size=4, stop=r"[\w~.\-\]]"
        ),
        "azure_devops": partial(_with_head, head="[A-Za-z0-9]{76}", size=76, stop=r"[\w\-+/\]]"),
    },
)
"""Tokens and capability URLs of these providers, applied after the well-known shapes."""

PLATFORM_SECRET_RULES = load_rules(
    "platform_secrets",
    {
        "near_alibaba": partial(secret_near, context=_ALIBABA_CONTEXT),
        "near_tencent": partial(secret_near, context=_TENCENT_CONTEXT),
        "near_wechat": partial(secret_near, context=_WECHAT_CONTEXT, classes=2),
    },
)
"""Bare secrets known by their key id or provider nearby, applied after the assignments."""
