"""Secret redaction for every text field before it reaches a briefing file or package.

`redact(text)` replaces each secret with `[REDACTED:<kind>]` and counts what it
replaced. It is pure (no I/O, no network, nothing kept between calls), never raises on
a `str` (lone surrogates and NUL included), is idempotent (a marker is never matched or
counted again) and runs in linear time: each of our patterns is anchored by a
look-behind and uses possessive or bounded quantifiers, and of detect-secrets' plugins
only those whose patterns cannot backtrack badly are used. Provider tokens it knows
are found by its plugins (`vendors.py`, loaded once per process); the rest by
our patterns: well-known shapes (`tokens.py`), other providers
(`vendors.py`), command lines and credential files (`commands.py`),
secret-named assignments (`assignments.py`) and sentences (`context.py`),
on the engine in `engine.py`.

Kinds (`REDACTION_KINDS`, in the order they are applied):

- `private-key`: a PEM `-----BEGIN ... PRIVATE KEY-----` block through its END line
  (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK); without an END line, up to
  the next blank line. Also a base64-encoded one (kubeconfig `client-key-data:
  LS0tLS1CRUdJTi...`, a Secret's `tls.key`) and any `client-key-data` value.
- `slack-webhook`, `discord-webhook`: the path of `https://hooks.slack.com/services/...`
  and of `https://discord.com/api/webhooks/<id>/<token>` (host kept).
- `url-password`: the password of `scheme://user:pass@host` (scheme, user, host kept).
- `anthropic-key`: `sk-ant-...` (applied before `openai-key`, so it wins).
- `openai-key`: `sk-proj-`, `sk-svcacct-`, `sk-admin-` keys and legacy `sk-` + 32 alnum.
- `github-token`: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and `github_pat_` tokens.
- `slack-token`: `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxe-`, `xoxs-`, `xoxo-` and `xapp-` tokens.
- `google-api-key`: `AIza` + 35 characters.
- `aws-access-key-id`: `AKIA` / `ASIA` + 16 upper-case letters or digits.
- `jwt`: `eyJ...` + two more base64url segments.
- `auth-header`: the credentials of `Authorization: Bearer|Token|Basic|SSWS ...` (also
  nginx's `Authorization "Basic ..."`, quoted, without a colon), and a long
  digit-bearing token after a bare `Bearer` or `SSWS` (Okta). After the provider rules:
  a generated token standing alone after `Authorization:` (no scheme).
- `twilio-key` (first part): 32 random letters and digits (an auth token or API key
  secret) on a line with a Twilio SID, or with `twilio` and `token`/`secret`/`auth`.
- found by detect-secrets' plugins, each widened to the whole token: `stripe-key`
  (`sk_live_`, `rk_live_`), `azure-key` (a storage `AccountKey=` in a connection
  string; the name stays), `sendgrid-key` (`SG.x.y`), `twilio-key` (`AC`/`SK` + 32),
  `discord-token` (bot tokens), `gitlab-token` (`glpat-`, `gldt-`, `glft-`, `glsoat-`,
  `glrt-` and `GR1348941` tokens), `telegram-token` (`<bot id>:<35+ characters>`),
  `pypi-token`, `square-key` (`sq0csp-`), `mailchimp-key` (`<32>-us<n>`).
- found by our patterns: `stripe-key` (`sk_test_`, `rk_test_`), `webhook-secret`
  (`whsec_`), `azure-sas` (the `sig=` of a SAS URL or connection string), `azure-key`
  (a bare 88-character key on a line that mentions Azure or a storage account),
  `npm-token` (`npm_`), `huggingface-token` (`hf_`, `api_org_`), `gitlab-token` (any
  `gl...-` token, also longer and routable ones), `mailgun-key` (`key-` + 32; and
  32-8-8 hex signing keys in a text that mentions Mailgun), `digitalocean-token`
  (`dop_v1_`, `doo_v1_`, `dor_v1_`), `databricks-token` (`dapi` + 32), `vault-token`
  (`hvs.`, `hvb.`, `hvr.`), `shopify-token` (`shpat_`, `shpca_`, `shppa_`, `shpss_`),
  `age-key` (`AGE-SECRET-KEY-1...`), `langsmith-key` (`lsv2_sk_`, `lsv2_pt_`),
  `linear-key` (`lin_api_`, `lin_oauth_`), `notion-token` (`secret_` + 43, `ntn_`),
  `airtable-token` (`pat` + 14 + `.` + 64 hex), `grafana-token` (`glsa_`, `glc_`),
  `mapbox-token` (secret `sk.eyJ...`; public `pk.eyJ...` stays), `pulumi-token`
  (`pul-` + 40 hex), `doppler-token` (`dp.st.`, `dp.pt.`, `dp.ct.`, `dp.sa.`, ...),
  `terraform-token` (`<14>.atlasv1.<...>`), `vault-token` also a legacy `s.` + 24
  random characters with `vault` or `token` on its line or a neighbouring one, and
  `vault-unseal-key` (`Unseal Key 1: ...`, `Recovery Key 1: ...`, `vault operator
  unseal KEY`). A bare Azure key also counts on a line next to one that mentions
  Azure or a storage account (`az storage account keys list` and its output).
- `password` on command lines: `curl -u user:PASS` (and httpie's `-a`), `mysql -pPASS`
  (mysqldump, mariadb, ...), `mysqladmin ... password PASS`, `docker login -p PASS`
  (podman, nerdctl, helm registry, ..., and `az login -p`), `sshpass -p PASS`,
  `redis-cli -a PASS`, `htpasswd -b[c] file user PASS` (`-nb user PASS`), what `echo`
  pipes into `--password-stdin` or `passwd --stdin` (`token` for `--with-token`,
  `private-key` for `wg pubkey`), and what `<(echo ...)` hands to a secret-named
  option (`wg set wg0 private-key <(echo KEY)`: `private-key`; `preshared-key`:
  `secret`); in credential files, a `.netrc` entry's password (`machine H login U
  password P`) and a `.pgpass` line's (`host:port:db:user:P`, when the port is
  PostgreSQL's or `pgpass` is near).
- `docker-auth`: a docker config's `"auth": "<base64 user:password>"` (or a random token).
- the VALUE of an assignment, in `key=value`, `key: value`, `"key": "value"`,
  `KEY="value"`, `key => value`, `key: str = "value"`, `config["key"] = "value"` and
  `--key value` forms; the name stays (`password=[REDACTED:password]`). The kind comes
  from the name: `password` (password, passwd, passphrase, pwd, and `pass`: `DB_PASS=`,
  YAML `pass:`, openssl's `pass:`), `token` (also a name ending in `_PAT` when its value
  looks generated: `AZURE_DEVOPS_EXT_PAT=`), `api-key` (api_key, apikey, access_key,
  auth_key and `X-Auth-Key:`, app_key, application_key and `DD-APPLICATION-KEY:`;
  also, found by its call, a random literal as an SDK client's first argument:
  `cohere.ClientV2("<key>")`),
  `azure-key`
  (AccountKey, account_key, SharedAccessKey), `private-key` (`client-key-data`),
  `gcp-key-id` (a service-account key's `private_key_id`), `aws-secret-key` (a
  40-character base64 value under a name mentioning aws/secret), else `secret`
  (secret, client_secret, private_key, client_key, credentials, Rails'
  secret_key_base, ...). Any other name
  ending in `key` (`AZURE_STORAGE_KEY`) counts when its value looks generated (20+
  characters with digits and both cases): `secret`, or `azure-key` for an Azure name.
- `password` in sentences: "the db password is X", "the password for admin was X",
  "the password has been changed to X", "log in with password X", "root pw on the
  NAS: X" (also passphrase, passcode, pwd, pw, and mot de passe, Passwort, Kennwort,
  contraseña, senha, wachtwoord), "use the credentials admin:X", "the login is admin
  / X", when X is quoted or has a digit, a symbol or (but after a colon) an inner
  capital.
- `aws-secret-key` standing bare: 40 base64 characters with digits and both cases, on
  a line (or next to a line) with an AWS key id, `aws` or `secret`.

A judge that needs context reads the candidate's line (`LineContext`) with the markers
of other secrets blanked, so a second pass decides as the first did.

Deliberately NOT redacted:

- hex digests (git hashes, sha256, md5), UUIDs, base64 data (e.g. `data:image/png;base64,...`),
  email addresses, file paths, ordinary words and identifiers (`sk_learn`, `task-123`);
- public keys by design: Stripe publishable keys (`pk_live_`, `pk_test_`) and Mapbox
  public tokens (`pk.eyJ...`), also as an assignment's value, PEM public keys and
  certificates (also base64-encoded: `client-certificate-data`), age public keys
  (`age1...`), Mailgun `pubkey-...`;
- tokens in a real shape whose body is a mask or does not look random
  (`sk_live_xxxxxxxxxxxxxxxxxxxxxxxx`, `hf_XXXXXXXX...`, `glpat-xxxx...`, `sk_live_...`,
  also as an assignment's value), and text that merely resembles a shape (a dotted
  name in a Discord token's three parts needs digits and both cases; 32 hex digits are
  a Twilio token only on a Twilio line; an `sha512-` digest is no Azure key);
- URLs without a password (`https://github.com/org/repo`, `postgres://localhost/db`);
- prose about passwords/tokens: no assignment (`reset your password in settings`), or a
  `key: value` whose unquoted value has no digit or symbol and is followed by more words
  (`Token: the budget is 3000`); "the password is X" where X is a plain word or a length
  (`is required`, `is 12 characters long`); names that merely contain a word
  (`token_count=42`, `max_context_tokens=3000`, `password_reset_url=...`, `bypass: true`),
  key ids (`signing_key_id`), names ending in `key` whose value is not generated
  (`sort_key: createdAt`) or that name a public key (`public_key`, `publishable_key`);
  a colon path's segment (`arn:aws:secretsmanager:...:secret:prod/db`);
- small numbers (up to 7 digits) for any kind except `password` (`token=42`, `tokens: 3000`);
  for a bare `pass` name, tallies (`PASS: 12`, `pass: 12/12`) and a plain word in a
  sentence (`first pass: done`);
- empty values and placeholders: `password=`, `""`, `<your password>`, `${DB_PASSWORD}`,
  `$TOKEN`, `{token}`, `{{ secrets.X }}`, `%(pw)s`, `***`, `xxxx`, `your-api-key`,
  `<YOUR_TOKEN>`, `null`/`None`/`true`, to-do words (`TODO`, `TBD`, `FIXME`,
  `CHANGEME`, `REPLACE_ME`, `example`, `placeholder`), type names (`token: str`),
  anything starting with `[`, the opening of a literal (`secret = {`); on command lines
  `-p$MYSQL_PWD`, `-u "$USER:$PASS"`, `echo "$PASS" | docker login --password-stdin`;
- references to a secret manager as a value: `op://vault/item/field`, `vault:kv/app`,
  `ref+vault://...`, `arn:aws:secretsmanager:...`/`arn:aws:ssm:...`,
  `projects/p/secrets/s/versions/1`, `@Microsoft.KeyVault(...)`;
- a plain lower-case word as the unquoted value of a token or API key (`id-token:
  write`, `contents: read`, `token = nextchar`): generated tokens are not words;
- unquoted code references: calls and subscripts (`os.environ["API_KEY"]`, `getpass()`),
  dotted names (`settings.API_KEY`, but not one with a generated part:
  `v1.FAKE0a9Bc8De7Fg6...` is a token), and bare identifiers that themselves name a
  secret (`token=access_token`, `token=accessToken`, `password=db_password`). Other
  bare identifiers (`password=pw`) ARE redacted: they cannot be told apart from a
  password;
- names ending in `_PAT` whose value is no generated token (`HEX_PAT = "[0-9a-f]+"`), a
  `.netrc` entry without a login or whose password names itself (`password PASSWORD`),
  five colon-separated fields on a port that is not PostgreSQL's (a time, a MAC address)
  and an `/etc/shadow` line; `az login -p ~/cert.pem` (a certificate's path);
- `pwd=/some/path` (a working directory) and `client-key: /path/to/key.pem` (a key file's
  path, not the key).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from .assignments import ASSIGNMENT_RULE
from .commands import COMMAND_RULES
from .context import PROSE_RULES
from .engine import marker
from .platforms import PLATFORM_RULES, PLATFORM_SECRET_RULES
from .tokens import BARE_AUTH_RULES, TOKEN_RULES, redact_pem
from .vendors import OWN_RULES, PLUGIN_RULES, TWILIO_SECRET_RULES

__all__ = ["REDACTION_KINDS", "Redaction", "marker", "redact", "redact_all"]

REDACTION_KINDS: tuple[str, ...] = tuple(
    (
        "private-key slack-webhook discord-webhook url-password anthropic-key openai-key "
        "github-token slack-token google-api-key aws-access-key-id jwt auth-header "
        "teams-webhook wecom-webhook sentry-dsn sentry-token square-key facebook-token "
        "newrelic-key firebase-key google-oauth alibaba-key alibaba-secret tencent-key "
        "tencent-secret wechat-secret postman-key azure-ad-secret azure-devops-pat "
        "atlassian-token twilio-key stripe-key azure-key sendgrid-key discord-token "
        "gitlab-token telegram-token pypi-token mailchimp-key webhook-secret azure-sas "
        "npm-token huggingface-token mailgun-key digitalocean-token databricks-token "
        "vault-token shopify-token age-key langsmith-key linear-key notion-token airtable-token "
        "grafana-token mapbox-token pulumi-token doppler-token terraform-token vault-unseal-key "
        "password docker-auth token api-key gcp-key-id aws-secret-key secret"
    ).split()
)
"""Every kind name a marker can carry; see the module docstring for what each covers."""

_STEPS: tuple[Callable[[str, str, Counter[str]], str], ...] = (
    redact_pem,
    *(rule.apply for rule in TOKEN_RULES),
    *(rule.apply for rule in PLATFORM_RULES),
    *(rule.apply for rule in TWILIO_SECRET_RULES),
    *(rule.apply for rule in PLUGIN_RULES),
    *(rule.apply for rule in OWN_RULES),
    *(rule.apply for rule in BARE_AUTH_RULES),
    *(rule.apply for rule in COMMAND_RULES),
    ASSIGNMENT_RULE.apply,
    *(rule.apply for rule in PLATFORM_SECRET_RULES),
    *(rule.apply for rule in PROSE_RULES),
)


@dataclass(frozen=True)
class Redaction:
    """The redacted text and how many secrets of each kind were replaced."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """How many secrets were replaced in all."""
        return sum(self.counts.values())


REMEMBERED_CHARS = 8192
"""Texts up to this long have their redaction remembered, the last 1,024 of them (a handover
redacts its summary, reason and decisions for the package, the briefing and the trail; the
rules are pure)."""


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with `[REDACTED:<kind>]` and count them by kind."""
    if len(text) <= REMEMBERED_CHARS:
        redacted, counts = _remembered(text)
        return Redaction(redacted, dict(counts))
    return Redaction(*_redact(text))


@lru_cache(maxsize=1024)
def _remembered(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    redacted, counts = _redact(text)
    return redacted, tuple(counts.items())


def _redact(text: str) -> tuple[str, dict[str, int]]:
    counts: Counter[str] = Counter()
    lowered = text.lower()
    for step in _STEPS:
        text = step(text, lowered, counts)
    return text, dict(counts)


def redact_all(texts: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    """Redact each text; return the redacted texts and the counts summed over all of them."""
    total: Counter[str] = Counter()
    redacted: list[str] = []
    for text in texts:
        result = redact(text)
        redacted.append(result.text)
        total.update(result.counts)
    return redacted, dict(total)
