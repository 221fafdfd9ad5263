"""Provider API tokens: found by detect-secrets' plugins where it knows the provider, by our
own patterns where it does not; each replaced whole by our marker.

detect-secrets (Yelp) is a maintained catalogue of provider token formats. We use only
its plugins' `analyze_string`, which is plain regular-expression matching: never its
`verify` (which would send a found secret to the provider), its scan functions (which
change process-wide settings), its keyword plugin (our assignment rules, with their
look-alike guarantees, do that job) or its entropy plugins (they would take git hashes,
UUIDs and digests). Of its plugins we use those whose patterns scan in linear time and
never cross a line break, so running each once over the whole text finds exactly what a
line-by-line scan would (its npm, OpenAI and JWT patterns backtrack quadratically on
hostile input, and we have linear patterns of our own for those).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .engine import (
    ContextRule,
    Judge,
    Rule,
    Seen,
    Span,
    group_if,
    looks_random,
    splice,
)

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

# --- found by detect-secrets -------------------------------------------------------------


@dataclass(frozen=True)
class PluginRule:
    """A detect-secrets plugin, our kind for what it finds, and the shape of a whole token.

    The plugin finds secret values; each place a value occurs is then matched with
    `shape`, anchored there. The shape's look-behind says what may not come before a
    token, its possessive body widens a value the plugin cut short (the first 24
    characters of a 100-character Stripe key) to the whole token, its group `v` is what
    is replaced and its group `body` must look random (`sk_live_xxxxxxxx...` stays). The
    plugin runs only if one of the case-sensitive `needles` occurs, or (without needles)
    `probe` matches: a cheap pattern starting with a literal that every token contains.
    """

    kind: str
    plugin: RegexBasedDetector
    shape: re.Pattern[str]
    needles: tuple[str, ...] = ()
    probe: re.Pattern[str] | None = None
    classes: int = 2

    def apply(self, text: str, lowered: str, counts: Counter[str]) -> str:
        """Replace every whole token around a value the plugin finds in `text`; count it."""
        if self.needles and not any(needle in text for needle in self.needles):
            return text
        if self.probe is not None and self.probe.search(text) is None:
            return text
        spans: set[Span] = set()
        for value in set(self.plugin.analyze_string(text)):
            position = text.find(value) if value else -1
            while position != -1:
                match = self.shape.match(text, position)
                if match is not None and looks_random(match["body"], self.classes):
                    spans.add((self.kind, *match.span("v")))
                position = text.find(value, position + 1)
        return splice(text, sorted(spans, key=lambda s: (s[1], -s[2])), counts)


def _shape(pattern: str) -> re.Pattern[str]:
    """Compile a token shape; `pattern` must define the groups `v` and `body`."""
    compiled = re.compile(pattern)
    if not {"v", "body"} <= set(compiled.groupindex):
        raise ValueError(f"token shape {pattern!r} lacks the group v or body")
    return compiled


def _load_plugin_rules() -> tuple[PluginRule, ...]:
    """Import detect-secrets and build its plugins once per process.

    Importing it calls `logging.captureWarnings(True)`, which would send every warning
    of this process to logging; the warning display is put back as it was.
    """
    showwarning = warnings.showwarning
    try:
        from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
        from detect_secrets.plugins.discord import DiscordBotTokenDetector
        from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
        from detect_secrets.plugins.mailchimp import MailchimpDetector
        from detect_secrets.plugins.pypi_token import PypiTokenDetector
        from detect_secrets.plugins.sendgrid import SendGridDetector
        from detect_secrets.plugins.square_oauth import SquareOAuthDetector
        from detect_secrets.plugins.stripe import StripeDetector
        from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
        from detect_secrets.plugins.twilio import TwilioKeyDetector
    finally:
        warnings.showwarning = showwarning
    word = "A-Za-z0-9_"
    return (
        PluginRule(
            "stripe-key",  # sk_live_ and rk_live_ (its pattern: the first 24 characters)
            StripeDetector(),
            _shape(rf"(?<![{word}])(?P<v>[rs]k_live_(?P<body>[A-Za-z0-9]{{16,512}}+))(?![{word}])"),
            ("k_live_",),
        ),
        PluginRule(
            "azure-key",  # a storage account key in a connection string; the name stays
            AzureStorageKeyDetector(),
            _shape(
                r"AccountKey=(?P<v>(?P<body>[A-Za-z0-9+/]{20,1024}+)"
                r"(?:=++(?![A-Za-z0-9_+/=\[]))?)(?![A-Za-z0-9+/])"
            ),
            ("AccountKey=",),
        ),
        PluginRule(
            "sendgrid-key",
            SendGridDetector(),
            _shape(
                rf"(?<![{word}.\-])(?P<v>SG\.(?P<body>[{word}\-]{{16,256}}+\.[{word}\-]{{16,256}}+))"
                rf"(?![{word}\-])"
            ),
            ("SG.",),
        ),
        PluginRule(
            "twilio-key",  # account SIDs (AC...) and API key SIDs (SK...)
            TwilioKeyDetector(),
            _shape(rf"(?<![{word}+/])(?P<v>(?:AC|SK)(?P<body>[a-z0-9]{{32}}))(?![{word}+/])"),
            ("AC", "SK"),
        ),
        PluginRule(
            "discord-token",  # three dotted parts; all three character classes, unlike a dotted name
            DiscordBotTokenDetector(),
            _shape(
                rf"(?<![{word}\-])(?P<v>(?P<body>[MNO][{word}\-]{{23,25}}\.[{word}\-]{{6}}\."
                rf"[{word}\-]{{27,256}}+))(?![{word}\-])"
            ),
            probe=re.compile(rf"\.[{word}\-]{{6}}\."),
            classes=3,
        ),
        PluginRule(
            "gitlab-token",  # its patterns report only the prefix (glpat), or nothing past 50
            GitLabTokenDetector(),
            _shape(
                rf"(?<![{word}\-])(?P<v>(?:gl[a-z]{{2,6}}-|GR1348941)(?P<body>[{word}\-]{{20,512}}+)"
                rf"(?:\.[0-9a-z]{{9}})?)(?![{word}\-])"
            ),
            ("gl", "GR1348941"),
        ),
        PluginRule(
            "telegram-token",  # <bot id>:<35 characters>, also after `bot` in an API URL
            TelegramBotTokenDetector(),
            _shape(
                r"(?<![0-9])(?P<v>[0-9]{8,10}:(?P<body>[A-Za-z0-9_\-]{35,64}+))(?![A-Za-z0-9_\-])"
            ),
            probe=re.compile(r":[A-Za-z0-9_\-]{35}"),
        ),
        PluginRule(
            "pypi-token",
            PypiTokenDetector(),
            _shape(rf"(?<![{word}\-])(?P<v>pypi-(?P<body>[{word}\-]{{70,512}}+))(?![{word}\-])"),
            ("pypi-",),
        ),
        PluginRule(
            "square-key",
            SquareOAuthDetector(),
            _shape(rf"(?<![{word}\-])(?P<v>sq0csp-(?P<body>[{word}\-]{{43}}))(?![{word}\-])"),
            ("sq0csp-",),
        ),
        PluginRule(
            "mailchimp-key",
            MailchimpDetector(),
            _shape(rf"(?<![{word}\-])(?P<v>(?P<body>[0-9a-z]{{32}})-us[0-9]{{1,2}})(?![{word}\-])"),
            ("-us",),
        ),
    )


PLUGIN_RULES = _load_plugin_rules()
"""detect-secrets' plugins with our kinds, in the order they are applied."""

# --- found by our patterns ---------------------------------------------------------------

_W = "A-Za-z0-9_"
# base64 padding, taken only where the token plainly ends: `...==` before a space, quote
# or `;`, never before a word or a marker (`whsec_...password=hunter2` is a name and a value)
_PADDING = r"(?:=++(?![A-Za-z0-9_+/=\[]))?"
_STRIPE_TEST = re.compile(rf"(?<![{_W}])[rs]k_test_(?P<body>[A-Za-z0-9]{{16,512}}+)(?![{_W}])")
_WEBHOOK_SECRET = re.compile(
    rf"(?<![{_W}])whsec_(?P<body>[A-Za-z0-9+/]{{20,512}}+){_PADDING}(?![{_W}+/])"
)
_AZURE_SAS = re.compile(rf"(?<![{_W}])sig=(?P<body>[A-Za-z0-9%+/=_\-]{{16,512}}+)")
_NPM = re.compile(rf"(?<![{_W}])npm_(?P<body>[A-Za-z0-9]{{36,64}}+)(?![{_W}])")
_HUGGINGFACE = re.compile(rf"(?<![{_W}])(?:hf|api_org)_(?P<body>[A-Za-z0-9]{{30,64}}+)(?![{_W}])")
_GITLAB = re.compile(
    rf"(?<![{_W}\-])gl(?:pat|dt|ft|soat|rt|rtr|cbt|imt|ptt|agent|oas|ffct|wt)-"
    rf"(?:[0-9a-fA-F]{{2}}_)?(?P<body>[{_W}\-]{{20,512}}+)(?:\.[0-9a-z]{{9}})?(?![{_W}\-])"
)
_MAILGUN_KEY = re.compile(rf"(?<![{_W}\-])key-(?P<body>[a-z0-9]{{32}})(?![{_W}\-])")
_MAILGUN_SIGNING = re.compile(
    rf"(?<![{_W}\-])(?P<body>[0-9a-f]{{32}})-[0-9a-f]{{8}}-[0-9a-f]{{8}}(?![{_W}\-])"
)
_DIGITALOCEAN = re.compile(rf"(?<![{_W}])do[opr]_v1_(?P<body>[A-Za-z0-9]{{64}})(?![{_W}])")
_DATABRICKS = re.compile(
    rf"(?<![{_W}])dapi(?P<body>[A-Za-z0-9]{{32}})(?:-[0-9]{{1,2}})?(?![{_W}\-])"
)
_VAULT = re.compile(rf"(?<![{_W}.])hv[sbr]\.(?P<body>[{_W}\-]{{20,512}}+)(?![{_W}\-])")
_SHOPIFY = re.compile(rf"(?<![{_W}])shp(?:at|ca|pa|ss)_(?P<body>[A-Za-z0-9]{{32}})(?![{_W}])")
_AGE = re.compile(rf"(?<![{_W}\-])AGE-SECRET-KEY-1(?P<body>[0-9A-Z]{{50,64}})(?![{_W}])")
_LANGSMITH = re.compile(
    rf"(?<![{_W}])lsv2_(?:sk|pt)_(?P<body>[A-Za-z0-9]{{20,64}}+(?:_[A-Za-z0-9]{{6,32}}+)?)(?![{_W}])"
)
_LINEAR = re.compile(rf"(?<![{_W}])lin_(?:api|oauth)_(?P<body>[A-Za-z0-9]{{32,64}}+)(?![{_W}])")
# a literal first, its look-behind after it: a scan for the literal is fast (the words
# `secret_`, `pat` and `s.` are common in code)
_NOTION_SECRET = re.compile(rf"secret_(?<![{_W}]secret_)(?P<body>[A-Za-z0-9]{{43}})(?![{_W}])")
_NOTION = re.compile(rf"(?<![{_W}])ntn_(?P<body>[A-Za-z0-9]{{40,64}}+)(?![{_W}])")
_AIRTABLE = re.compile(
    rf"pat(?<![{_W}.\-]pat)(?P<body>[A-Za-z0-9]{{14}}\.[0-9a-f]{{64}})(?![{_W}\-]|\.[{_W}])"
)
_GRAFANA = re.compile(
    rf"(?<![{_W}])(?:glsa_(?P<body>[A-Za-z0-9]{{32}}_[0-9a-f]{{8}})(?![{_W}])"
    rf"|glc_(?P<cloud>eyJ[A-Za-z0-9+/]{{30,1024}}+={{0,2}})(?![{_W}+/=]))"
)
_MAPBOX = re.compile(
    rf"(?<![{_W}.\-])sk\.(?P<body>eyJ[{_W}\-]{{10,1024}}+\.[{_W}\-]{{10,256}}+)(?![{_W}\-])"
)
_PULUMI = re.compile(rf"(?<![{_W}\-])pul-(?P<body>[0-9a-f]{{40}})(?![{_W}\-])")
_DOPPLER = re.compile(
    rf"(?<![{_W}.\-])dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[{_W}\-]{{1,64}}+\.)?"
    rf"(?P<body>[A-Za-z0-9]{{40,64}}+)(?![{_W}\-])"
)
_TERRAFORM = re.compile(
    rf"(?<![{_W}.\-])[A-Za-z0-9]{{14}}\.atlasv1\.(?P<body>[{_W}\-]{{60,128}}+)(?![{_W}\-])"
)
# a Vault token from before 1.10: `s.` + 24 characters, told from a name by the words near it
_VAULT_LEGACY = re.compile(rf"s(?<![{_W}.\-/]s)\.(?P<body>[A-Za-z0-9]{{24}})(?![{_W}\-]|\.[{_W}])")
_VAULT_WORD = re.compile("vault|token", re.IGNORECASE)
_UNSEAL_KEY = re.compile(
    r"\b(?:unseal|recovery)[ \t]++key(?:[ \t]++[0-9]{1,2}+)?[ \t]*+:[ \t]*+"
    r"(?P<body>[A-Za-z0-9+/]{20,256}+={0,2})(?![A-Za-z0-9_+/=]|\[REDACTED:)",
    re.IGNORECASE,
)
_UNSEAL_COMMAND = re.compile(
    r"\bvault[ \t]++operator[ \t]++unseal(?:[ \t]++-{1,2}[A-Za-z\-]{1,32}+(?:=[^\s]{0,256}+)?)*+"
    r"[ \t]++(?P<body>[A-Za-z0-9+/]{20,256}+={0,2})(?![A-Za-z0-9_+/=]|\[REDACTED:)"
)
_AZURE_BARE_KEY = re.compile(r"(?<![A-Za-z0-9+/=\-])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])")
_AZURE_WORD = re.compile(r"azure|storage|account|windows\.net", re.IGNORECASE)
_TWILIO_SECRET = re.compile(rf"(?<![{_W}])(?P<body>[A-Za-z0-9]{{32}})(?![{_W}])")
_TWILIO_SID = re.compile(r"(?:AC|SK)[a-z0-9]{32}")
_TWILIO_WORD = re.compile("twilio", re.IGNORECASE)
_UPPER = re.compile("[A-Z]")
_LOWER = re.compile("[a-z]")
_SECRET_WORD = re.compile("token|secret|auth", re.IGNORECASE)


def _token(kind: str) -> Judge:
    """A judge that replaces the whole match when its `body` looks random."""

    def judge(match: re.Match[str]) -> Span | None:
        return (kind, *match.span()) if looks_random(match["body"]) else None

    return judge


def _body(kind: str) -> Judge:
    """A judge that replaces only the `body` when it looks random (the label stays)."""

    def judge(match: re.Match[str]) -> Span | None:
        return (kind, *match.span("body")) if looks_random(match["body"]) else None

    return judge


def _judge_grafana(match: re.Match[str]) -> Span | None:
    """Accept a Grafana service-account token (`glsa_`) or Cloud token (`glc_`)."""
    return (
        ("grafana-token", *match.span()) if looks_random(match["body"] or match["cloud"]) else None
    )


def _judge_vault_legacy(match: re.Match[str], seen: Seen) -> Span | None:
    """Accept `s.` + 24 random characters with `vault` or `token` on its line or a neighbour.

    Random means digits and both cases, or six of each case (a legacy token may lack
    digits; a camel-case name has a few capitals, a token about half).
    """
    body = match["body"]
    uppers, lowers = len(_UPPER.findall(body)), len(_LOWER.findall(body))
    if not (looks_random(body, 3) or (uppers >= 6 and lowers >= 6)):
        return None
    if not seen(_VAULT_WORD).around(*match.span(), lines=1):
        return None
    return ("vault-token", *match.span())


def _judge_azure_sas(match: re.Match[str]) -> Span | None:
    """Accept a SAS signature (`sig=...`) that looks random; the `sig=` stays."""
    return ("azure-sas", *match.span("body")) if looks_random(match["body"]) else None


def _judge_azure_bare_key(match: re.Match[str], seen: Seen) -> Span | None:
    """Accept a bare 88-character storage key on a line that mentions Azure or a storage
    account, or next to one (`az storage account keys list` and its output); an `sha512-`
    digest, also 88 characters, has its dash and stays."""
    if not looks_random(match[0], 3) or not seen(_AZURE_WORD).around(*match.span(), lines=1):
        return None
    return ("azure-key", *match.span())


def _judge_twilio_token(match: re.Match[str], seen: Seen) -> Span | None:
    """Accept 32 random letters and digits (an auth token or API key secret) on a line with
    a Twilio SID, or with both `twilio` and `token`/`secret`/`auth`; not elsewhere (an md5
    digest stays). Applied before the SIDs themselves are replaced."""
    span = match.span()
    if not looks_random(match["body"]):
        return None
    if seen(_TWILIO_SID).around(*span) or (
        seen(_TWILIO_WORD).around(*span) and seen(_SECRET_WORD).around(*span)
    ):
        return ("twilio-key", *span)
    return None


TWILIO_SECRET_RULE = ContextRule(
    _TWILIO_SECRET, _judge_twilio_token, ("twilio", "Twilio", "TWILIO", "AC", "SK"), exact=True
)
"""A Twilio auth token or API key secret, known by the SID or the words on its line."""

OWN_RULES = (
    Rule(_STRIPE_TEST, _token("stripe-key"), ("k_test_",)),
    Rule(_WEBHOOK_SECRET, _token("webhook-secret"), ("whsec_",)),
    Rule(_AZURE_SAS, _judge_azure_sas, ("sig=",)),
    ContextRule(_AZURE_BARE_KEY, _judge_azure_bare_key, ("==",)),
    Rule(_NPM, _token("npm-token"), ("npm_",)),
    Rule(_HUGGINGFACE, _token("huggingface-token"), ("hf_", "api_org_")),
    Rule(_GITLAB, _token("gitlab-token"), ("gl",)),
    Rule(_MAILGUN_KEY, _token("mailgun-key"), ("key-",)),
    Rule(_MAILGUN_SIGNING, _token("mailgun-key"), ("mailgun",)),
    Rule(_DIGITALOCEAN, _token("digitalocean-token"), ("_v1_",)),
    Rule(_DATABRICKS, _token("databricks-token"), ("dapi",)),
    Rule(_VAULT, _token("vault-token"), ("hvs.", "hvb.", "hvr.")),
    Rule(_SHOPIFY, _token("shopify-token"), ("shpat_", "shpca_", "shppa_", "shpss_")),
    Rule(_AGE, _token("age-key"), ("age-secret-key-1",)),
    Rule(_LANGSMITH, _token("langsmith-key"), ("lsv2_",)),
    Rule(_LINEAR, _token("linear-key"), ("lin_",)),
    Rule(_NOTION_SECRET, group_if("notion-token", lambda v: looks_random(v[7:], 3)), ("secret_",)),
    Rule(_NOTION, _token("notion-token"), ("ntn_",)),
    Rule(_AIRTABLE, _token("airtable-token"), ("pat",)),
    Rule(_GRAFANA, _judge_grafana, ("glsa_", "glc_")),
    Rule(_MAPBOX, _token("mapbox-token"), ("sk.eyj",)),
    Rule(_PULUMI, _token("pulumi-token"), ("pul-",)),
    Rule(_DOPPLER, _token("doppler-token"), ("dp.",)),
    Rule(_TERRAFORM, _token("terraform-token"), (".atlasv1.",)),
    ContextRule(_VAULT_LEGACY, _judge_vault_legacy, ("vault", "token")),
    Rule(_UNSEAL_KEY, _body("vault-unseal-key"), ("unseal key", "recovery key")),
    Rule(_UNSEAL_COMMAND, _body("vault-unseal-key"), ("unseal",)),
)
"""Our rules for providers detect-secrets does not know, in the order they are applied."""
