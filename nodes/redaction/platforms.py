"""More providers' tokens and capability URLs, found by our patterns (see `redact.py`).

Square, New Relic, Sentry, Meta (Facebook, Instagram), Firebase and Google OAuth, Alibaba
Cloud (and DingTalk), Tencent Cloud (and WeCom, WeChat AppSecrets), Postman, Microsoft (Teams webhooks and
workflows, Entra ID client secrets, Azure DevOps PATs) and Atlassian. Each format is a
documented prefix and shape; a body must look random (`looks_random`), so a mask, a
ticket id (`PMAK-12`, `NRAK-1234`) or a prefix named in prose (`AKID`, `LTAI`) stays.
Secrets without a prefix of their own (an Alibaba AccessKey secret, a Tencent SecretKey,
a Facebook app secret in an app token) count only next to their key id or their
provider's name, as a bare AWS secret key does.

Every pattern starts with a literal or a short bounded class, uses possessive or bounded
quantifiers and never crosses a line break, so a scan is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .engine import (
    ContextRule,
    Judge,
    Rule,
    Seen,
    Span,
    group_if,
    has_digit,
    looks_random,
)

_W = "A-Za-z0-9_"

# Each pattern opens with a literal and checks what comes before it with a look-behind
# placed after the literal (`LTAI(?<![...]LTAI)`): a scan for a literal is fast. Where a
# token's fixed-length head has no literal (an Entra ID secret's `xxx9` before `Q~`, a
# license key's hex before `NRAL`), the judge checks it backwards.

# --- Square ------------------------------------------------------------------------------

# personal access tokens (`sq0atp-`, 22), application secrets (`sq0csp-`, 43) and their
# sandbox forms (`sandbox-sq0atb-`, `sandbox-sq0csb-`); application ids (`sq0idp-`) are public
_SQUARE = re.compile(rf"sq0(?:at|cs)[pb]-(?P<body>[{_W}\-]{{22,64}}+)(?![{_W}\-]|\[REDACTED:)")
# OAuth and personal access tokens: `EAAA` + 60 base64url characters (a Facebook token
# is longer and has no `-` or `_`)
_SQUARE_EAAA = re.compile(
    rf"EAAA(?<![\]{_W}\-+/]EAAA)(?P<body>[{_W}\-]{{56,68}}+)(?![{_W}\-+/=]|\[REDACTED:)"
)

# --- New Relic ---------------------------------------------------------------------------

# user (NRAK) and admin (NRAA) keys, Insights insert and query keys (NRII, NRIQ), browser
# keys (NRJS) and REST API keys (NRRA)
_NEWRELIC = re.compile(
    rf"NR(?<![\]{_W}\-]NR)(?:A[AK]-(?P<a>[A-Za-z0-9]{{27}})|I[IQ]-(?P<b>[{_W}\-]{{32}})"
    rf"|JS-(?P<c>[0-9a-f]{{19}})|RA-(?P<d>[0-9a-f]{{42}}))(?![{_W}\-]|\[REDACTED:)"
)
# license (ingest) keys: 36 hex (`eu01xx` + 30 in the EU) + `NRAL`
_NEWRELIC_LICENSE = re.compile(rf"NRAL(?![{_W}\-]|\[REDACTED:)")
_NEWRELIC_LICENSE_HEAD = re.compile(r"eu01xx[0-9a-f]{30}|[0-9a-f]{36}")

# --- Sentry ------------------------------------------------------------------------------

# the key of a DSN (`https://<32 hex>@o1.ingest.sentry.io/2`), also before a legacy DSN's
# secret (replaced before as a URL's password)
_SENTRY_DSN = re.compile(
    r"http(?<![\]A-Za-z0-9+.\-]http)s?://(?P<body>[0-9a-f]{32})"
    r"(?::(?:[0-9a-f]{32}|\[REDACTED:url-password\]))?@[A-Za-z0-9]"
)
# the same key as the `sentry_key` of an `X-Sentry-Auth` header or a security-report URL
_SENTRY_KEY = re.compile(
    r"sentry_key=(?<![\]\w\-]sentry_key=)(?P<body>[0-9a-f]{32})(?![\w\-]|\[REDACTED:)"
)
# organization tokens (`sntrys_` + base64 JSON + `_` + 43) and user tokens (`sntryu_` + 64 hex)
_SENTRY_TOKEN = re.compile(
    r"sntry(?<![\]\w\-]sntry)(?:s_(?P<a>eyJ[A-Za-z0-9+/]{10,1024}+={0,2}_[A-Za-z0-9+/]{43})"
    r"(?![A-Za-z0-9+/=]|\[REDACTED:)|u_(?P<b>[0-9a-f]{64})(?![\w\-]|\[REDACTED:))"
)

# --- Meta --------------------------------------------------------------------------------

# user, page and system-user access tokens (`EAAB...`, `EAAG...`, Graph Explorer's
# `EAACEdEose0cBA...`): long base62
_FACEBOOK = re.compile(
    rf"EAA(?<![\]{_W}\-+/]EAA)[A-Za-z0-9]{{40,1024}}+(?![{_W}\-+/=]|\[REDACTED:)"
)
# an app access token: `<app id>|<app secret>` (`%7C` in a URL), found by its separator
_FACEBOOK_APP = re.compile(r"(?:\||%7[Cc])(?P<body>[0-9a-f]{32})(?![\w\-]|\[REDACTED:)")
_FACEBOOK_WORD = re.compile(
    r"facebook|graph|\bfb|access_token|app[ _\-]?(?:token|secret)|debug_token", re.IGNORECASE
)
# Instagram user tokens (Basic Display, Graph API): `IGQV` + base64url
_INSTAGRAM = re.compile(rf"IGQV(?<![\]{_W}\-]IGQV)[{_W}\-]{{100,1024}}+(?![{_W}\-]|\[REDACTED:)")

# --- Firebase and Google OAuth -----------------------------------------------------------

# a legacy FCM server key: `AAAA` + 7 + `:APA91b` + ~134
_FCM = re.compile(
    rf"AAAA(?<![\]{_W}\-]AAAA)[{_W}\-]{{7}}:APA91b(?P<body>[{_W}\-]{{100,512}}+)(?![{_W}\-]|\[REDACTED:)"
)
# OAuth client secrets (`GOCSPX-` + 28), access tokens (`ya29.`) and refresh tokens (`1//0`)
_GOOGLE_SECRET = re.compile(
    rf"GOCSPX-(?<![\]{_W}\-./:]GOCSPX-)(?P<body>[{_W}\-]{{28}})(?![{_W}\-]|\[REDACTED:)"
)
_GOOGLE_ACCESS = re.compile(
    rf"ya29\.(?<![\]{_W}\-./:]ya29\.)(?P<body>[{_W}\-]{{20,2048}}+)(?![{_W}\-]|\[REDACTED:)"
)
_GOOGLE_REFRESH = re.compile(
    rf"1//0(?<![\]{_W}\-./:]1//0)(?P<body>[{_W}\-]{{40,512}}+)(?![{_W}\-]|\[REDACTED:)"
)

# --- Alibaba Cloud -----------------------------------------------------------------------

# AccessKey ids (`LTAI` + 12 to 20) and STS temporary ones (`STS.` + 16 to 40)
_ALIBABA_ID = re.compile(
    rf"LTAI(?<![\]{_W}\-+/]LTAI)(?P<body>[A-Za-z0-9]{{12,20}})(?![{_W}\-+/]|\[REDACTED:)"
)
_ALIBABA_STS_ID = re.compile(
    rf"STS\.(?<![\]{_W}.\-]STS\.)(?P<body>[A-Za-z0-9]{{16,40}})(?![{_W}\-]|\.[{_W}]|\[REDACTED:)"
)
# an AccessKey secret: 30 letters and digits, next to its id or Alibaba's name
_ALIBABA_SECRET = re.compile(
    rf"(?<![\]{_W}/+=.\-])[A-Za-z0-9]{{30}}(?![{_W}/+=\-]|\.[{_W}]|\[REDACTED:)"
)
_ALIBABA_CONTEXT = re.compile(
    r"LTAI[A-Za-z0-9]{12,20}|\[REDACTED:alibaba-key\]|alibaba|aliyun|access[ _\-]?key[ _\-]?secret",
    re.IGNORECASE,
)

# --- Tencent Cloud -----------------------------------------------------------------------

# a SecretId: `AKID` + 32 (temporary ones are longer)
_TENCENT_ID = re.compile(
    rf"AKID(?<![\]{_W}\-+/]AKID)(?P<body>[A-Za-z0-9]{{32,100}}+)(?![{_W}\-+/]|\[REDACTED:)"
)
# a SecretKey: 32 letters and digits, next to its SecretId or Tencent's name
_TENCENT_SECRET = re.compile(
    rf"(?<![\]{_W}/+=.\-])[A-Za-z0-9]{{32}}(?![{_W}/+=\-]|\.[{_W}]|\[REDACTED:)"
)
_TENCENT_CONTEXT = re.compile(
    r"AKID[A-Za-z0-9]{32,100}|\[REDACTED:tencent-key\]|tencent|qcloud|tccli", re.IGNORECASE
)
# a WeChat (Official Account, Mini Program) AppSecret: 32 hex, next to its AppID (`wx` + 16
# hex) or an AppSecret named on its line or a neighbour (a hex digest has neither)
_WECHAT_SECRET = re.compile(
    rf"(?<![\]{_W}/+=.\-])[0-9a-f]{{32}}(?![{_W}/+=\-]|\.[{_W}]|\[REDACTED:)"
)
_WECHAT_CONTEXT = re.compile(r"\bwx[0-9a-f]{16}\b|app[ _\-]?secret", re.IGNORECASE)
# a WeCom (WeChat Work) group bot's webhook key
_WECOM_WEBHOOK = re.compile(
    r"qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key="
    r"(?P<v>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![\w\-]|\[REDACTED:)"
)

# --- Postman -----------------------------------------------------------------------------

# API keys (`PMAK-` + 24 + `-` + 34) and collection access keys (`PMAT-` + a ULID)
_POSTMAN = re.compile(
    rf"PMA(?<![\]{_W}\-]PMA)(?:K-(?P<a>[A-Za-z0-9]{{24}}-[A-Za-z0-9]{{34}})"
    rf"|T-(?P<b>[0-9A-Z]{{26}}))(?![{_W}\-]|\[REDACTED:)"
)

# --- Microsoft ---------------------------------------------------------------------------

# Teams incoming webhooks (`<tenant>.webhook.office.com/webhookb2/...`, the older
# `outlook.office.com/webhook/...`): the path is the secret, the host stays
_TEAMS_PATH = r"(?P<v>(?:[A-Za-z0-9_\-@/]|%[0-9A-Fa-f]{2})++)"
_TEAMS_WEBHOOK = re.compile(rf"\.webhook\.office\.com/webhookb2/{_TEAMS_PATH}")
_TEAMS_LEGACY_WEBHOOK = re.compile(rf"outlook\.office(?:365)?\.com/webhook/{_TEAMS_PATH}")
# Teams workflows (Power Automate, Logic Apps): a trigger URL with its `sig`, from
# `workflows/` on (also JSON-escaped, `\u0026sig=`)
_WORKFLOW_PATH = r"(?P<v>workflows/(?:[^\s\"'`<>\[\]\\]|\\u0026)++)"
_LOGIC_APP_WORKFLOW = re.compile(rf"\.logic\.azure\.com(?::[0-9]{{1,5}}+)?/{_WORKFLOW_PATH}")
_POWER_AUTOMATE_WORKFLOW = re.compile(
    rf"\.api\.powerplatform\.com(?::[0-9]{{1,5}}+)?/powerautomate/automations/direct/{_WORKFLOW_PATH}"
)
_URL_TAIL = re.compile(r"[.,;:!?)]+$")
# Microsoft Entra ID (Azure AD) client secrets: 3 + a digit + `Q~` + 31 to 34
_AZURE_AD_SECRET = re.compile(r"Q~(?P<body>[A-Za-z0-9_~.\-]{31,34}+)(?![\w~.\-]|\[REDACTED:)")
_AZURE_AD_SECRET_HEAD = re.compile(r"[A-Za-z0-9_~.]{3}[0-9]")
# Azure DevOps PATs in the 2024 format: 76 + `AZDO` + 4
_AZURE_DEVOPS = re.compile(r"AZDO[A-Za-z0-9]{4}(?![\w\-+/]|\[REDACTED:)")
_AZURE_DEVOPS_HEAD = re.compile(r"[A-Za-z0-9]{76}")

# --- Atlassian ---------------------------------------------------------------------------

# API tokens (`ATATT3xFfGF0...=<8 hex>`) and Bitbucket app passwords (`ATBB` + 32)
_ATLASSIAN = re.compile(
    rf"AT(?<![\]{_W}\-]AT)(?:ATT3(?P<a>[{_W}\-]{{20,1024}}+=[0-9A-F]{{8}})"
    rf"|BB(?P<b>[A-Za-z0-9]{{32,40}}))(?![{_W}\-=]|\[REDACTED:)"
)

# --- judges ------------------------------------------------------------------------------

_BASE64_LINE = re.compile(r"[A-Za-z0-9+/=]{40,}")
_WORD_CHAR = re.compile(r"[\w\-\]]")
_LETTER = re.compile("[A-Za-z]")


def _token(kind: str, classes: int = 2) -> Judge:
    """A judge that replaces the whole match when its body (the first group that took
    part) looks random."""

    def judge(match: re.Match[str]) -> Span | None:
        body = next((part for part in match.groups() if part), match[0])
        return (kind, *match.span()) if looks_random(body, classes) else None

    return judge


def _key_id(kind: str) -> Judge:
    """A judge for a cloud key id whose body has digits and letters (`LTAIExampleKeyId`
    names one, it is none)."""

    def judge(match: re.Match[str]) -> Span | None:
        body = match["body"]
        ok = looks_random(body) and has_digit(body) and _LETTER.search(body) is not None
        return (kind, *match.span()) if ok else None

    return judge


def _with_head(
    kind: str, head: re.Pattern[str], size: int, body_classes: int = 2, stop: str = r"[\w\-\]]"
) -> Judge:
    """A judge for a token found by its literal middle or end (`Q~`, `NRAL`, `AZDO`):
    the `size` characters before the match must be `head`, not preceded by a `stop`
    character, and the token must look random."""
    boundary = re.compile(stop)

    def judge(match: re.Match[str]) -> Span | None:
        text, start = match.string, match.start() - size
        if start < 0 or head.fullmatch(text, start, match.start()) is None:
            return None
        if start > 0 and boundary.match(text, start - 1):
            return None
        if not looks_random(text[start : match.end()], body_classes):
            return None
        return kind, start, match.end()

    return judge


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


def _judge_square(match: re.Match[str]) -> Span | None:
    """Accept a Square token or secret (with `sandbox-` before it, if it is there) whose
    body looks random."""
    text, start = match.string, match.start()
    if text[max(0, start - 8) : start] == "sandbox-":
        start -= 8
    if start > 0 and _WORD_CHAR.match(text, start - 1):
        return None
    return ("square-key", start, match.end()) if looks_random(match["body"]) else None


def _judge_square_eaaa(match: re.Match[str]) -> Span | None:
    """Accept a Square `EAAA` token whose body mixes digits and both cases, not a line of a
    base64 block."""
    start, end = match.span()
    if not looks_random(match["body"], 3) or _in_base64_block(match.string, start, end):
        return None
    return ("square-key", start, end)


def _judge_facebook(match: re.Match[str]) -> Span | None:
    """Accept a long `EAA...` token of digits and both cases, not a line of a base64 block."""
    start, end = match.span()
    if not looks_random(match[0][3:], 3) or _in_base64_block(match.string, start, end):
        return None
    return ("facebook-token", start, end)


def _judge_facebook_app(match: re.Match[str], seen: Seen) -> Span | None:
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
    return ("facebook-token", start - digits, match.end())


def _judge_url_path(kind: str, needle: str = "") -> Judge:
    """A judge that replaces a capability URL's secret part (group `v`, 40+ characters with
    a digit, holding `needle`), less the punctuation that ends a sentence."""

    def judge(match: re.Match[str]) -> Span | None:
        value = _URL_TAIL.sub("", match["v"])
        if len(value) < 40 or not has_digit(value):
            return None
        if needle and needle not in value.lower():
            return None
        start = match.start("v")
        return kind, start, start + len(value)

    return judge


def _judge_sts_id(match: re.Match[str]) -> Span | None:
    """Accept an STS AccessKey id: `STS.` + digits and both cases (`STS.GetCallerIdentity`
    is an API call)."""
    return ("alibaba-key", *match.span()) if looks_random(match["body"], 3) else None


def _secret_near(
    kind: str, context: re.Pattern[str], classes: int = 3
) -> Callable[[re.Match[str], Seen], Span | None]:
    """A judge for a bare secret of `kind` (mixing `classes` of digits, upper and lower
    case) that counts only with `context` on its line or a neighbour."""

    def judge(match: re.Match[str], seen: Seen) -> Span | None:
        if not looks_random(match[0], classes) or not seen(context).around(*match.span(), lines=1):
            return None
        return (kind, *match.span())

    return judge


PLATFORM_RULES = (
    Rule(_TEAMS_WEBHOOK, _judge_url_path("teams-webhook"), (".webhook.office.com/",)),
    Rule(_TEAMS_LEGACY_WEBHOOK, _judge_url_path("teams-webhook"), ("outlook.office",)),
    Rule(_LOGIC_APP_WORKFLOW, _judge_url_path("teams-webhook", "sig"), (".logic.azure.com",)),
    Rule(
        _POWER_AUTOMATE_WORKFLOW,
        _judge_url_path("teams-webhook", "sig"),
        (".api.powerplatform.com",),
    ),
    Rule(_WECOM_WEBHOOK, group_if("wecom-webhook", looks_random, "v"), ("qyapi.weixin",)),
    Rule(_SENTRY_DSN, group_if("sentry-dsn", looks_random, "body"), ("http",)),
    Rule(_SENTRY_KEY, group_if("sentry-dsn", looks_random, "body"), ("sentry_key=",)),
    Rule(_SENTRY_TOKEN, _token("sentry-token"), ("sntrys_", "sntryu_")),
    Rule(_SQUARE, _judge_square, ("sq0at", "sq0cs")),
    Rule(_SQUARE_EAAA, _judge_square_eaaa, ("EAAA",), exact=True),
    Rule(_FACEBOOK, _judge_facebook, ("EAA",), exact=True),
    ContextRule(_FACEBOOK_APP, _judge_facebook_app, ("|", "%7c")),
    Rule(_INSTAGRAM, _token("facebook-token", 3), ("IGQV",), exact=True),
    Rule(_NEWRELIC, _token("newrelic-key"), ("NRA", "NRI", "NRJS-", "NRRA-"), exact=True),
    Rule(
        _NEWRELIC_LICENSE,
        _with_head("newrelic-key", _NEWRELIC_LICENSE_HEAD, 36),
        ("NRAL",),
        exact=True,
    ),
    Rule(_FCM, _token("firebase-key", 3), (":APA91b",), exact=True),
    Rule(_GOOGLE_SECRET, _token("google-oauth"), ("GOCSPX-",), exact=True),
    Rule(_GOOGLE_ACCESS, _token("google-oauth"), ("ya29.",), exact=True),
    Rule(_GOOGLE_REFRESH, _token("google-oauth", 3), ("1//0",), exact=True),
    Rule(_ALIBABA_ID, _key_id("alibaba-key"), ("LTAI",), exact=True),
    Rule(_ALIBABA_STS_ID, _judge_sts_id, ("STS.",), exact=True),
    Rule(_TENCENT_ID, _key_id("tencent-key"), ("AKID",), exact=True),
    Rule(_POSTMAN, _token("postman-key"), ("PMAK-", "PMAT-"), exact=True),
    Rule(
        _AZURE_AD_SECRET,
        _with_head("azure-ad-secret", _AZURE_AD_SECRET_HEAD, 4, 3, r"[\w~.\-\]]"),
        ("Q~",),
        exact=True,
    ),
    Rule(
        _AZURE_DEVOPS,
        _with_head("azure-devops-pat", _AZURE_DEVOPS_HEAD, 76, 3, r"[\w\-+/\]]"),
        ("AZDO",),
        exact=True,
    ),
    Rule(_ATLASSIAN, _token("atlassian-token", 3), ("ATATT3", "ATBB"), exact=True),
)
"""Tokens and capability URLs of these providers, applied after the well-known shapes."""

PLATFORM_SECRET_RULES = (
    ContextRule(
        _ALIBABA_SECRET,
        _secret_near("alibaba-secret", _ALIBABA_CONTEXT),
        ("ltai", "alibaba", "aliyun", "[redacted:alibaba-key]", "secret"),
        keep="alibaba-key",
    ),
    ContextRule(
        _TENCENT_SECRET,
        _secret_near("tencent-secret", _TENCENT_CONTEXT),
        ("akid", "tencent", "qcloud", "tccli", "[redacted:tencent-key]"),
        keep="tencent-key",
    ),
    ContextRule(
        _WECHAT_SECRET,
        _secret_near("wechat-secret", _WECHAT_CONTEXT, classes=2),
        ("appsecret", "app_secret", "app secret", "app-secret", "wx"),
    ),
)
"""Bare secrets known by their key id or provider nearby, applied after the assignments."""
