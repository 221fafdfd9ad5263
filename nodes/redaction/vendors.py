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

The plugins and our patterns are the `plugins`, `twilio` and `vendors` tables of
`rules.toml`; the judges that read the lines around a token are here.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING

from .engine import TABLES, Seen, Span, load_rules, looks_random, secret_near, splice

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector


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


def _load_plugin_rules() -> tuple[PluginRule, ...]:
    """Import detect-secrets and build its plugins (the `plugins` of `rules.toml`) once per
    process.

    Importing it calls `logging.captureWarnings(True)`, which would send every warning
    of this process to logging; the warning display is put back as it was.
    """
    specs = TABLES["plugins"]
    showwarning = warnings.showwarning
    try:
        detectors = [
            getattr(import_module(f"detect_secrets.plugins.{module}"), name)
            for module, name in (spec["detector"].split(".") for spec in specs)
        ]
    finally:
        warnings.showwarning = showwarning
    return tuple(
        PluginRule(
            spec["kind"],
            detector(),
            re.compile(spec["shape"]),
            tuple(spec.get("needles", ())),
            re.compile(spec["probe"]) if "probe" in spec else None,
            spec.get("classes", 2),
        )
        for spec, detector in zip(specs, detectors, strict=True)
    )


PLUGIN_RULES = _load_plugin_rules()
"""detect-secrets' plugins with our kinds, in the order they are applied."""

_VAULT_WORD = re.compile("vault|token", re.IGNORECASE)
_AZURE_WORD = re.compile(r"azure|storage|account|windows\.net", re.IGNORECASE)
_TWILIO_SID = re.compile(r"(?:AC|SK)[a-z0-9]{32}")
_TWILIO_WORD = re.compile("twilio", re.IGNORECASE)
_SECRET_WORD = re.compile("token|secret|auth", re.IGNORECASE)
_UPPER = re.compile("[A-Z]")
_LOWER = re.compile("[a-z]")


def _judge_vault_legacy(kind: str, match: re.Match[str], seen: Seen) -> Span | None:
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
    return (kind, *match.span())


# a bare 88-character storage key on a line that mentions Azure or a storage account, or next
# to one (`az storage account keys list` and its output); an `sha512-` digest, also 88
# characters, has its dash and stays
_judge_azure_bare_key = partial(secret_near, context=_AZURE_WORD)


def _judge_twilio_secret(kind: str, match: re.Match[str], seen: Seen) -> Span | None:
    """Accept 32 random letters and digits (an auth token or API key secret) on a line with
    a Twilio SID, or with both `twilio` and `token`/`secret`/`auth`; not elsewhere (an md5
    digest stays). Applied before the SIDs themselves are replaced."""
    span = match.span()
    if not looks_random(match["body"]):
        return None
    if seen(_TWILIO_SID).around(*span) or (
        seen(_TWILIO_WORD).around(*span) and seen(_SECRET_WORD).around(*span)
    ):
        return (kind, *span)
    return None


TWILIO_SECRET_RULES = load_rules("twilio", {"twilio_secret": _judge_twilio_secret})
"""A Twilio auth token or API key secret, known by the SID or the words on its line."""

OWN_RULES = load_rules(
    "vendors", {"azure_bare_key": _judge_azure_bare_key, "vault_legacy": _judge_vault_legacy}
)
"""Our rules for providers detect-secrets does not know, in the order they are applied."""
