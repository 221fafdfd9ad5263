"""The words the ledger's extractor reads: cues of a decision or a constraint, artifact patterns,
and the slots a decision can be about (so a changed mind can be told from a second choice).

Plain data and regular expressions: no model, no network. A slot is what a decision settles
(`database`, `region`, `auth`, `latency`, ...): the words that name the slot and the values it
may take, listed in `slots.txt`. Two statements about one slot are one decision changed when the newer says so
("instead of", "switch from", "actually", ...); two values of one slot without such a word are
kept side by side (a service may well use Postgres and SQLite).
"""

from __future__ import annotations

import re
from pathlib import Path

# --- artifacts -----------------------------------------------------------------------------

URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,9}://[^\s<>\"'`)\]]+", re.I)
PATH = re.compile(
    r"(?<![\w@:/.-])(?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+-]*"  # with a slash
    r"|(?<![\w@/.-])\.?[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|css|scss|html|md|mdx|rst|json|"
    r"ya?ml|toml|ini|cfg|conf|env|sql|sh|bash|go|rs|java|kt|kts|swift|rb|php|cs|cpp|cc|c|h|hpp|"
    r"txt|csv|lock|proto|graphql|gql|tf|tfvars|hcl|xml|gradle|ipynb|vue|svelte|dart|ex|exs|"
    r"lua|pdf|png|svg)\b"
    r"|\b(?:Dockerfile|Makefile|Procfile|Jenkinsfile|Caddyfile|Gemfile|Rakefile|Vagrantfile)\b"
)
NOT_PATHS = frozenset(
    """and/or i/o w/o tcp/ip n/a either/or on/off yes/no read/write input/output client/server a/b
    24/7 ci/cd he/she his/her s/he true/false am/pm pros/cons ui/ux req/s km/h""".split()
)
"""Slash words that are not paths."""
EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")
CODE = re.compile(r"`([^`\n]{2,80})`")
IDENTIFIER_CODE = re.compile(r"^[\w@#./:+-]{2,60}$")
"""A code span that names something (`cart_sid`, `stg_`, `@acme/ui`), not a pasted message."""
TECH_TOKEN = re.compile(
    r"(?<![\w@#/.-])(?:"
    r"[A-Z][A-Z0-9]{1,7}s?(?![a-z])"  # an acronym: AWS, HLS, ALBs, W3C, S3
    r"|[A-Z0-9]*[A-Z][0-9][A-Z0-9]+"  # A06BX2K9QRT
    r"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase: terminationGracePeriod
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase: OpenSearch, PagerDuty, MurmurHash3
    r"|[A-Za-z]+[0-9][A-Za-z0-9]*(?:\.[a-z0-9]+)?"  # m6i.large, utf8, x86
    r"|[a-z0-9]+(?:_[a-z0-9]+)+_?(?=-[a-z]+\b)|[a-z0-9]+(?:_[a-z0-9]+)+_?|[a-z]{2,}_(?![\w])"  # snake_case, stg_
    r"|[a-z][\w-]*(?:\.[A-Za-z_][\w-]*){2,}|[a-z]\w*\.[a-z]\w*_\w+"  # com.acme.app, schema.table_name
    r"|[A-Z]\.\d{2,4}|[A-Z]{2,}-[\w.]+"  # X.509, GPT-4o
    r"|[@#][\w-]+(?:/[\w.-]+)?"  # @scope/package, #channel
    r"|[a-z0-9]+(?:-[a-z0-9]+){2,}"  # cart-service-rollout
    r"|[A-Z0-9]{2,}(?:-[A-Z0-9]{2,})+"  # WH-AMS, DEP-ROT
    r"|[\w.-]*<[\w ]{2,30}>[\w.-]*|[\w.-]*\{[\w ]{2,30}\}[\w.-]*"  # order-<order number>
    r")(?![\w-])"
)
"""A token that names a product, a setting or an identifier, not an English word."""
GENERIC_ACRONYMS = frozenset(
    """OK OKAY PR PRS TODO TODOS FYI ASAP EOD EOW LOL IMO IMHO TBD BTW AFAIK IIRC WIP ETA AFK
    DM DMS OMG VPN IDE QA PM AM TL DR NB PS RE FW CC THX TY IT HR UI UX CI""".split()
)
"""Acronyms of chat and office life: they say nothing settled."""
QUOTED = re.compile(r"(?:^|[\s(])['\"“‘]([^'\"”’\n]{2,60})['\"”’](?=[\s,.;:)!?]|$)")
TIME_OR_DATE = re.compile(
    r"\b\d{1,2}:\d{2}\b|(?<![\w:]):\d{2}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\bQ[1-4]\b|\b20\d\d-\d\d(?:-\d\d)?\b"
    r"|\b(?:every|each|per|once an?|twice an?)\s+(?:\d+\s*)?(?:second|minute|hour|day|night|"
    r"week|month|quarter|year|request|deploy|release|commit|build|run|sprint)s?\b"
    r"|\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually)\b"
    r"|\b\d+-(?:second|sec|minute|min|hour|day|week|month|year|ms|gb|mb|kb|inch|core|node)s?\b"
    r"|\b\d{3,4}p\b|\b\d+(?:\.\d+)?x\b|\b\d+\.\d+\b",
    re.I,
)
"""Times, dates, frequencies and bare decimals (thresholds, ratios, versions)."""
REGION = re.compile(
    r"\b(?:(?:us|eu|ap|sa|ca|me|af|il|mx|cn)-(?:gov-)?(?:north|south|east|west|central|"
    r"northeast|southeast|northwest|southwest)-\d"
    r"|(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-(?:north|south|east|"
    r"west|central|northeast|southeast|northwest|southwest)\d"
    r"|(?:west|east|north|south|central)(?:us|europe|eu)\d?|uksouth|ukwest|fra\d|ams\d|lhr|iad)\b",
    re.I,
)
VERSION = re.compile(
    r"\bv\d+(?:\.\d+){1,3}(?:-[\w.]+)?\b"
    r"|\bversion\s+v?\d+(?:\.\d+)+\b"
    r"|\b(?!(?:is|are|was|were|be|at|to|of|in|on|by|as|above|below|under|over|than|from|with|"
    r"and|or|not|no|the|a|an|keep|between|around|about|near|only|just|every|each|per|up|down|"
    r"still|now|then|after|before|since|until|is|it|that|this|score|scoring|threshold|level|"
    r"rate|ratio|factor|weight|probability|confidence|alpha|p)\s)"
    r"[A-Za-z][A-Za-z+#.-]{1,20}\s+v?\d+\.\d+(?:\.\d+)?(?:\.x)?(?!\.?\d)"
    r"(?!\s?(?:ms|s|%|gb|mb|kb|tb|days?|hours?|minutes?|seconds?|x)\b)"
    r"|\b(?:python|py|node(?:\.?js)?|go(?:lang)?|java|jdk|ruby|rust|rustc|php|perl|postgres(?:ql)?"
    r"|pg|mysql|mariadb|mongo(?:db)?|redis|react|vue|angular|next(?:\.?js)?|nuxt|django|rails"
    r"|kubernetes|k8s|terraform|ubuntu|debian|alpine|\.net|dotnet|kotlin|swift|scala|elixir"
    r"|erlang|otp|typescript|ts|deno|bun|elasticsearch|opensearch|kafka|spring(?: boot)?"
    r"|laravel|flask|fastapi|express|nestjs|svelte|sveltekit|flutter|dart|ios|android|api"
    r"|gradle|maven|npm|pnpm|yarn|pydantic|sqlalchemy|celery|airflow|spark|tailwind|bootstrap"
    r"|webpack|vite|jest|pytest|playwright|helm|istio|envoy|nginx|openssl|tls|http|oauth|unity"
    r"|unreal|godot|llvm|gcc|clang|cuda|pytorch|tensorflow|numpy|pandas|protobuf|grpc|openapi"
    r"|graphql|es|ecmascript|c\+\+|cpp|c#|lua|r|julia|haskell|ocaml|zig)\s?v?\d+(?:\.\d+){0,2}"
    r"(?:\.x|\+)?(?!\.?\d)(?!\s?(?:ms|s|%|gb|mb|kb|days?|hours?|minutes?)\b)",
    re.I,
)
UNIT = (
    r"(?:ms|millis(?:econds?)?|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|"
    r"d|weeks?|wks?|months?|mos?|years?|yrs?|b|bytes?|kb|mb|gb|tb|pb|kib|mib|gib|tib|k|m|"
    r"%|percent|rps|qps|rpm|tps|req/s|requests?(?:/| per | a )(?:s|sec|second|min|minute)|"
    r"users?|connections?|conns?|retries|retry|attempts?|tries|items?|rows?|records?|events?|"
    r"messages?|msgs?|cents?|usd|eur|gbp|dollars?|euros?|x|cores?|vcpus?|cpus?|nodes?|"
    r"replicas?|pods?|instances?|workers?|threads?|shards?|partitions?|chars?|characters?|"
    r"tokens?|px|rem|em|pt|dp|fps|dpi|mbps|gbps|kbps|ghz|mhz|digits?|decimals?|places|"
    r"inch(?:es)?|cm|mm|wide|tall|"
    r"columns?|fields?|levels?|steps?|pages?|lines?|tabs?|spaces?|seats?|tenants?|regions?|"
    r"zones?|azs?|backups?|copies|versions?|releases?|sprints?|points?|stars?|colou?rs?)"
)
NUMBER_UNIT = re.compile(
    rf"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?\s?[kmb]?\b|\b\d[\d,]*(?:\.\d+)?\s?{UNIT}(?![\w/])"
    r"|\b\d+(?:\.\d+)?\s?nines\b)",
    re.I,
)
FORMATS = re.compile(
    r"\b(?:ulids?|uuids?(?:v\d)?|uuid ?v\d|ksuids?|nanoids?|snowflake(?: ids?)?|cuids?|"
    r"iso[ -]?8601|rfc ?\d{3,4}|semver|calver|utf-?8|utc|e\.164|base(?:32|58|64)|"
    r"snake_case|camelcase|kebab-case|pascalcase|json(?:lines|l)?|ndjson|parquet|avro|csv|"
    r"protobuf|msgpack|yaml|toml|markdown|sha-?256|bcrypt|argon2|scrypt|aes-?256|ed25519|"
    r"rsa|jwt|jwts|oauth ?2(?:\.\d)?|oidc|saml|mtls|tls ?1\.\d|http/?[23]|websockets?|sse|"
    r"grpc|graphql|rest(?:ful)?|soap|cron|integer cents|minor units|bigint|decimal|numeric)\b",
    re.I,
)
"""Named formats and schemes: an ID format or an encoding is a decision's substance."""

# --- cues ------------------------------------------------------------------------------------

DECISION = re.compile(
    r"\b(?:we|i|the team|team|they|everyone|product|the client|the customer)\s+(?:have\s+|'ve\s+|"
    r"all\s+|finally\s+|just\s+)?(?:decided|agreed|chose|chosen|picked|selected|settled|opted|"
    r"went|committed|landed|standardi[sz]ed|signed off|locked in|voted)\b"
    r"|\blet'?s\s+(?:just\s+|also\s+|definitely\s+|please\s+)?(?:go|use|pick|choose|stick|keep|"
    r"switch|move|adopt|standardi[sz]e|store|put|deploy|host|run|target|call|name|model|"
    r"represent|treat|encode|format|default|require|enforce|limit|cap|set|pin|ship|build|"
    r"make it|make them|bill|charge|retain|expire|lock|settle|rely|support|expose|version|"
    r"split|merge|partition|shard|cache|queue|log|send|serve|write|keep|do)\b"
    r"|\bwe(?:'ll| will| are going to|'re going to| shall)\s+(?!see\b|talk\b|check\b|"
    r"look\b|figure\b|discuss\b|think\b|need to talk\b|get back\b)\w+"
    r"|\bi(?:'ll| will| am going to|'m going to)\s+(?:use|go with|stick with|pick|standardi[sz]e)\b"
    r"|\b(?:we|i)(?:'re| are| am|'m)\s+(?:now\s+)?(?:using|going with|on|sticking with|"
    r"switching to|moving to|standardi[sz]ing on|targeting|deploying (?:to|on)|hosting on)\b"
    r"|\b(?:we|i)\s+(?:use|prefer|standardi[sz]e on|rely on|target|deploy to|host on|build on|"
    r"run on|store|keep|support|cut over|roll out|migrate|launch|start with|begin with|go live|"
    r"ship|release|test with|test on|bill|charge|sign|encrypt|log|version|tag|deploy|host|"
    r"need|require|only)\b"
    r"|\bgo(?:ing|es)? with\b|\bsettled on\b|\bstick(?:ing)? with\b|\bsettle on\b"
    r"|\bswitch(?:ing|ed)?\s+(?:over\s+)?(?:to|from)\b|\bmov(?:e|ing|ed)\s+(?:over\s+)?(?:to|from)\b"
    r"|\binstead of\b|\brather than\b|\bscratch\b|\bchanged? (?:my|our) minds?\b"
    r"|\bon second thought\b|\b(?:\w+[\w.+-]*\s){1,2}it is\b|\bfinal (?:answer|call|decision)\b"
    r"|\b(?:decision|verdict|choice|pick|plan|call)\s*(?:is|was|:)"
    r"|\bdecided\b|\bagreed\b|\bsigned off\b|\bwe'?d rather\b|\bwe would rather\b"
    r"|\bis (?:the|our) (?:plan|way to go|choice|winner|pick|standard|default|source of truth)\b"
    r"|\bas agreed\b|\bgo ahead with\b|\bthe plan is\b|\bdefaults? to\b|\bsource of truth\b"
    r"|\bwill be (?:our|the)\b|\bour (?:stack|choice|pick|db|database|backend|frontend) (?:is|will)\b"
    r"|\bfrom now on\b|\bgoing forward\b|\bwe'?re (?:a|an) \w+ shop\b"
    r"|^(?:please\s+)?(?:use|pick|choose|adopt|go with|stick with|target|pin|deploy (?:to|on)|"
    r"host (?:it )?on|store|standardi[sz]e on|switch to|move to|bill|charge|cap|limit|set)\b",
    re.I,
)
CONSTRAINT = re.compile(
    r"\b(?:must|mustn'?t|has to|have to|needs? to|shall|cannot|can'?t|can not|may not|"
    r"should never|should always|should not|shouldn'?t|(?:is|are) required|required|"
    r"requirement|mandatory|non-negotiable|non negotiable|hard (?:requirement|limit|"
    r"constraint|rule|line|cap|stop|deadline)|constraint|no exceptions|not allowed|forbidden|"
    r"prohibited|never|always|at most|at least|no more than|no less than|not more than|"
    r"not exceed|exceed|up to|maximum|minimum|max|min|cap(?:ped)? at|limit(?:ed)? to|"
    r"budget|deadline|sla|slo|slas|slos|uptime|availability|compliance|compliant|gdpr|hipaa|"
    r"pci(?:-dss)?|soc ?2|iso ?27001|retention|retain(?:ed)?|purged?|deleted? after|expire[sd]?|"
    r"ttl|(?:don'?t|do not|does not|doesn'?t|won'?t|will not) (?:use|store|log|allow|expose|"
    r"ship|deploy|touch|break|change|send|keep|retain|support|add|depend|call|rely|persist|"
    r"share|collect|track|cache|commit|push|merge|mix|print|leak))\b"
    r"|\bonly\s+(?:use|allow|accept|support|store|run|deploy|ship|keep|expose|ever)\b"
    r"|\b(?:under|below|within|over|above|less than|more than|fewer than)\s+[$€£]?\d",
    re.I,
)
CHANGE = re.compile(
    r"\b(?:actually|instead|instead of|rather than|scratch|scrap|switch(?:ing|ed)?|back to|go back|"
    r"rethink|reconsider(?:ed)?|revisit(?:ed)?|after all|correction|off of|"
    r"revert(?:ed|ing)?|mov(?:e|ing|ed) "
    r"(?:over )?to|chang(?:e|ed|ing)|changed? (?:my|our|their|his|her) minds?|no longer|not anymore|"
    r"any ?more|on second thought|correction|update:|revis(?:e|ed|ing)|replac(?:e|ed|"
    r"ing)|relax(?:ed|ing)?|tighten(?:ed|ing)?|bump(?:ed|ing)?|rais(?:e|ed|ing)|lower(?:ed|ing)?|"
    r"reduc(?:e|ed|ing)|increas(?:e|ed|ing)|drop(?:ped|ping)?|ditch(?:ed|ing)?|"
    r"from now on|going forward|wait|hold on|turns out|make (?:it|that)|not \w+ but)\b",
    re.I,
)
"""Words that say a statement replaces an earlier one of its slot."""
REPLACED_BEFORE = re.compile(
    r"(?:instead of|rather than|scratch(?: that)?|not|no longer|no more|drop(?:ping)?|ditch(?:ing)?"
    r"|away from|(?:switch|mov|migrat|port|chang)\w*(?: \w+){0,3} from|replac(?:e|ing)|"
    r"(?:mov|switch|migrat|tak)\w*(?: \w+){0,2} off(?: of)?|scrap(?:ping)?|retir(?:e|ing)|"
    r"sunset(?:ting)?|deprecat(?:e|ing)|dump(?:ing)?|"
    r"forget(?: about)?|abandon(?:ing)?|remove|removing|kill|killing)\s+(?:the\s+|our\s+|"
    r"using\s+)?$",
    re.I,
)
"""Read just before a value: that value is the one being replaced."""
REPLACED_AFTER = re.compile(
    r"^\s*(?:is|was|are)?\s*(?:out|gone|dead|off the table|dropped|deprecated|cancel+ed|no more)\b",
    re.I,
)
TENTATIVE = re.compile(
    r"^(?:\W*)(?:maybe|perhaps|possibly|what if|how about|could we|should we|would we|do we|"
    r"did we|can we|shall we|are we|were we|is it|is there|i wonder|wondering|not sure|unsure|"
    r"i'?m not sure|no idea|thinking about|considering|we could|we might|might|any thoughts|"
    r"thoughts on|does anyone|has anyone|idk|dunno|i guess|hypothetically|suppose|say we|"
    r"let me know|can you|could you|would you|will you|please (?:check|look|review|explain|tell)"
    r"|if (?:we|you|i)\b(?!.*\b(?:must|never|always|only|at most|at least)\b)"
    r"|(?:what|why|how|which|who|where|when)(?:'s|'re|\s+(?:is|are|was|were|do|does|did|can|"
    r"could|should|would|will|about|if|exactly|else|kind|sort|much|many|long|often)))\b"
    r"|\b(?:not (?:yet )?decided|undecided|haven'?t decided|still deciding|tbd|to be decided|"
    r"open question|up in the air|not settled|no decision|not sure yet|for now maybe|"
    r"don'?t trust|not convinced|suspicious)\b",
    re.I,
)
"""A question, a maybe, or an explicit "not decided": nothing settled."""
NARRATIVE = re.compile(
    r"\b(?:yesterday|last (?:week|night|time|month|year|sprint)|earlier today|this morning|"
    r"the other day|a while ago|back then|in my last job|at my old job|years ago|once|used to|"
    r"i (?:looked|saw|read|opened|checked|glanced|skimmed|noticed|found|tried|ran|spent|"
    r"watched|heard|remember|think i|was)|took|broke|crashed|failed|flaked|timed out|"
    r"was (?:slow|down|broken|red|green)|went down|lol|haha|coffee|lunch|weekend|vacation|"
    r"meeting|standup|stand-up|demo day|must (?:say|admit)|have to (?:say|admit|go|run|leave)|"
    r"need to (?:go|run|leave|grab|step away|take a break)|again|still waiting|this afternoon|"
    r"tonight|no idea|no clue|somewhere|rerun|re-run)\b",
    re.I,
)
"""Telling what happened: numbers and files in it are news, not settled things."""
ARTIFACT_CUE = re.compile(
    r"\b(?:lives?|lies|sits?|is|are|will be|should be|goes|go|put|store[ds]?|keep|save[ds]?|"
    r"located|defined|documented|described|specified|spec|specs|schema|config|configuration|"
    r"workflow|pipeline|template|path|file|folder|directory|repo|repository|url|link|endpoint|"
    r"docs?|wiki|runbook|see|use|using|reference|points? to|here'?s|here is|source of truth|"
    r"entry ?point|main|canonical|owner|tracked in|ticket|issue|epic|pr|branch|tag|image|"
    r"bucket|dashboard|channel|version|pin(?:ned)?|upgrade|target|require[sd]?|on)\b",
    re.I,
)
LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|all right|right|so|also|and|btw|by the way|oh|hey|hi|hello|well|"
    r"fyi|note|quick note|one more thing|another thing|plus|anyway|great|cool|thanks|"
    r"thank you|perfect|nice|good|yes|yeah|yep|sure)\b[\s,:;.!-]*)+",
    re.I,
)
"""Words that open a statement without adding to it."""

# --- slots ------------------------------------------------------------------------------------


def _read_slots() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """`slots.txt` beside this file: `slot: words | values` a line, phrases separated by commas
    (`#` starts a comment line; an indented line goes on with the one before)."""
    text = Path(__file__).with_name("slots.txt").read_text(encoding="utf-8")
    slots = {}
    for line in re.sub(r"\n[ \t]+", " ", text).splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, phrases = line.partition(":")
            words, values = (
                tuple(p.strip() for p in part.split(",") if p.strip())
                for part in phrases.split("|")
            )
            slots[name.strip()] = (words, values)
    return slots


SLOTS = _read_slots()
"""Each slot: the words that name it, and the values it may take (lower case)."""

MEASURED_SLOTS = frozenset(
    "latency timeout retries rate_limit throughput availability budget memory size retention".split()
)
"""Slots whose value is a number with a unit: a new number for one is a changed mind only
when the statement says so."""


SLOT_PHRASES: dict[str, list[tuple[str, bool]]] = {}
"""A lexicon phrase (lower case) -> the slots it names, and whether it is one of their values."""
for _slot_name, (_words, _values) in SLOTS.items():
    for _phrase in _words + _values:
        SLOT_PHRASES.setdefault(_phrase, []).append((_slot_name, _phrase in _values))
SLOT_VALUES = {slot: frozenset(values) for slot, (_, values) in SLOTS.items()}
SLOT_PATTERN = re.compile(
    r"(?<![\w.-])("
    + "|".join(re.escape(p) for p in sorted(SLOT_PHRASES, key=len, reverse=True))
    + r")(s|es)?(?![\w-])",
    re.I,
)
"""Every slot phrase in one pattern, longest first; a plural counts for phrases over 3
letters (`magic links` is `magic link`, `goes` is not `go`)."""
TECH_TERMS = re.compile(
    "|".join(
        rf"(?<![\w.-]){value}(?![\w-])"
        for value in sorted(
            {re.escape(v) for values in SLOT_VALUES.values() for v in values}, key=len, reverse=True
        )
    ),
    re.I,
)
"""Any value of any slot: a statement that names one has substance."""
