"""The offline router's words: data tables, a stemmer and synonym lookups.

The tables say which words mean much the same thing (`SYNONYMS`), which say nothing about who
should do the work (`STOP_WORDS`) and which are small talk (`CHIT_CHAT`), and what wording reads
as an ask rather than a statement of facts (`ASK_PHRASES`, `PROBLEM_WORDS`, `PROBLEM_PHRASES`,
`REQUEST_VERBS`, `STATEMENT_STARTERS`, `ASK_SECOND_WORDS`). `words` splits a text into words,
`stem` reduces a word to its stem, `terms` gives the stems of a text's content words, and
`synonym_index`, `synonym_phrases` and `synonyms_of` look the synonym table up.

Nothing here knows the built-in profiles. No model, no network, no randomness.
"""

from __future__ import annotations

import re
from functools import lru_cache

# -- data -----------------------------------------------------------------------------------
# fmt: off
SYNONYMS: tuple[tuple[str, ...], ...] = (
    # performance and scale
    ("slow", "latency", "performance", "perf", "profile", "profiling", "bottleneck", "speed",
     "speed up"),
    ("load", "traffic", "throughput", "scale", "scalability", "scaling", "growth",
     "thousands of", "millions of", "many users", "lots of users", "high traffic", "peak"),
    # bugs and tests
    ("bug", "error", "exception", "crash", "fail", "failure", "traceback", "broken", "debug",
     "wrong", "incorrect", "glitch", "hang", "freeze", "unexpected", "throws an", "throws a",
     "is throwing", "thrown", "investigate", "stopped working",
     "figure out why", "find out why", "why does", "why is", "why are", "why do", "dies",
     "died", "suddenly", "weird", "odd", "since the update", "since yesterday",
     "since yesterdays", "regressed", "keeps crashing", "not showing"),
    ("flaky", "intermittent", "sometimes", "nondeterministic", "now and then", "every so often",
     "once in a while"),
    ("test", "tests", "testing", "coverage", "pytest", "unittest", "jest"),
    # security, offensive and defensive
    ("secure", "security", "vulnerability", "vulnerable", "vuln", "insecure", "hole",
     "weakness", "safe", "unsafe", "cve"),
    ("attack", "attacker", "exploit", "hack", "hacking", "pentest", "breach", "intrusion",
     "break into", "break in",
     "probe", "tamper", "tampering", "tampered", "fool", "fooled", "trick", "abuse", "malformed",
     "fuzz", "garbage input", "falls over", "fall over", "circumvent", "spoof", "spoofing",
     "manipulate", "cheat", "anti-cheat", "idor", "editing the id", "changing the id",
     "another user's", "someone else's"),
    ("inject", "injection", "sqli", "xss", "payload"),
    ("login", "signin", "logon", "auth", "authentication", "password", "sso", "session",
     "cookie", "log in", "sign in",
     "google account", "google accounts", "work account", "work accounts", "sign in with",
     "log in with", "social login", "single sign-on", "2fa", "mfa", "two-factor", "magic link",
     "accounts"),
    ("permission", "role", "roles", "authorization", "authorisation", "admin", "rbac",
     "only managers", "only admins", "only staff", "only the owner", "should see", "can see",
     "can access", "who can", "allowed to", "not allowed", "access", "restrict", "restricted",
     "visible to", "logged-in"),
    ("privacy", "gdpr", "pii", "personal", "compliant", "compliance", "retention",
     "erase", "erasure", "forget", "forgotten", "delete their data", "personal data",
     "hold about", "consent", "anonymise", "anonymize", "data subject"),
    ("encrypt", "encryption", "crypto", "cipher", "tls", "plaintext", "hash", "hashing"),
    ("secret", "secrets", "credential", "credentials", "vault", "keys", "api key", "api keys",
     "access key", "access keys", "private key", "api token", "api tokens",
     "hardcoded", "hard-coded", "in git", "checked in", "committed to git"),
    ("harden", "hardening", "protect", "brute force", "brute-force", "rate limit", "lockout",
     "defend"),
    # data
    ("database", "db", "sql", "postgres", "postgresql", "mysql", "table", "tables", "schema",
     "column", "columns", "migration", "migrations"),
    ("etl", "ingest", "ingestion", "data warehouse", "warehouse", "batch", "sync",
     "data import", "import job"),
    ("backup", "backups", "restore", "snapshot", "recovery"),
    ("cron", "scheduled", "scheduler", "nightly", "job", "jobs",
     "every night", "every hour", "every morning", "each night", "overnight"),
    # runtime and delivery
    ("deploy", "deployment", "release", "ship", "shipping", "rollout", "publish", "launch",
     "roll out",
     "go live", "go-live", "rollback", "roll back"),
    ("container", "containerise", "containerize", "docker", "pod", "kubernetes"),
    ("ci", "workflow", "build", "cd", "jenkins", "gitlab"),
    ("monitor", "monitoring", "observability", "metric", "metrics", "alert", "alerts", "logs",
     "uptime", "downtime", "dashboard",
     "logging", "paged", "on-call", "grafana", "prometheus", "sentry"),
    ("server", "servers", "infrastructure", "infra", "cloud", "aws", "gcp", "azure", "cluster",
     "hosting", "vm"),
    ("pypi", "npm", "registry", "wheel"),
    # releases and licences
    ("version", "semver", "major", "minor", "changelog",
     "what changed", "what's new", "whats new", "firmware", "upgrade notes", "patch notes"),
    ("license", "licence", "licensing", "gpl", "mit", "apache", "legal", "copyleft",
     "third-party", "third party", "bill of materials", "open source", "open-source", "sbom",
     "attribution"),
    # review and code quality
    ("review", "feedback", "critique", "opinion", "assess", "evaluate", "look over", "go over",
     "go through", "second pair of eyes", "before we merge",
     "honest", "point out", "sanity check", "sanity-check", "thoughts on"),
    ("pr", "diff", "patch", "commit", "merge"),
    ("readable", "readability", "clean", "messy", "naming", "lint", "linter", "tidy", "rename",
     "renaming", "variable", "variables", "make sense",
     "convoluted", "complicated", "hard to follow", "easier to follow", "hard to read",
     "easier to read", "inconsistent", "inconsistency", "inconsistencies", "spaghetti",
     "duplicated", "duplication", "names things", "too long", "too complex", "simplify",
     "simpler", "maintainable"),
    # writing code
    ("refactor", "restructure", "rewrite", "split", "convert", "cleanup", "clean up",
     "smaller pieces", "break up", "break apart", "break it up", "extract",
     "without changing what it does", "without changing behaviour",
     "without changing behavior", "god class", "untangle"),
    ("implement", "develop", "add", "wire", "hook", "integrate", "code up", "write code",
     "write the code", "so customers can", "so users can", "so people can", "let users",
     "allow users", "command-line", "command line", "cli", "script", "support for"),
    ("feature", "functionality", "capability"),
    ("endpoint", "route", "api", "handler", "controller"),
    # architecture
    ("architecture", "structure", "structured", "system", "microservice", "microservices",
     "monolith", "separate services", "overall design",
     "big picture", "high level", "high-level",
     "talk to", "talks to", "communicate",
     "communicates"),
    ("queue", "kafka", "rabbitmq", "event", "events", "broker", "messaging", "pubsub",
     "mqtt", "polling", "websocket", "websockets", "webhook", "webhooks", "pub/sub"),
    ("choice", "choose", "pick between", "decide between", "choose between", "trade-off",
     "tradeoff",
     "trade-offs", "versus", "vs", "alternative", "alternatives", "option", "options"),
    ("contract", "contracts", "rest", "graphql", "grpc", "protocol", "openapi"),
    ("framework", "technology", "tech"),
    # requirements
    ("requirement", "requirements", "specification", "spec", "criteria", "story", "stories",
     "scope", "mvp", "first version", "must have", "must-have", "nice to have", "nice-to-have",
     "can wait", "before we build", "scope creep"),
    ("stakeholder", "stakeholders", "business", "product owner"),
    ("clarify", "define", "vague", "unclear", "ambiguous", "pin down", "nail down",
     "pin that down", "pin it down", "nail it down", "nail that down", "what it should do",
     "what exactly", "measurable", "questions to ask", "questions should i ask", "what to ask",
     "turn that into", "client wants", "client says", "customer wants", "nobody knows",
     "what they want", "what they need", "needs of", "gather", "user needs", "goals",
     "success criteria", "definition of done"),
    # the codebase
    ("codebase", "code base", "repo", "repository", "project", "module", "modules", "source"),
    ("explain", "understand", "walkthrough", "overview", "organised", "organized",
     "walk through", "walk me through", "find my way", "just joined", "new here", "new to the",
     "what happens when", "what happens between", "what happens", "how does",
     "get my bearings", "make sense of", "fit together"),
    ("call", "calls", "caller", "callers", "usage", "usages", "reference", "references",
     "depends on", "depend on", "lean on", "leans on", "rely on", "relies on", "who uses",
     "what uses", "touch", "touches"),
    ("find", "locate", "search", "figure out", "which part", "where in",
     "which file", "what file", "which files", "which module", "which modules", "every place",
     "all the places", "everywhere", "can't spot", "can't find", "cannot find", "spot"),
    # memory
    ("memory leak", "ram", "memory usage", "out of memory", "oom", "keeps climbing",
     "keeps growing", "leak", "leaking"),
    # planning and coordination (the orchestrator's own work)
    ("plan", "planning", "roadmap", "milestone", "milestones", "sprint", "sprints", "phases",
     "order of work", "which expert", "who does what", "who should", "which specialist",
     "coordinate", "next steps", "from scratch"),
    # visual design
    ("colour", "color", "palette", "theme", "styling", "css", "visual", "pretty", "prettier",
     "ugly", "modern", "sleek", "polish", "aesthetic",
     "shadow", "shadows", "rounded", "corners", "look nicer", "looks dated", "look more"),
    ("font", "fonts", "typeface", "typography", "heading", "headings"),
    ("responsive", "mobile", "phone", "phones", "tablet", "desktop"),
    ("animation", "transition", "motion", "hover"),
    # user experience
    ("ui", "ux", "screen", "screens", "interface"),
    ("usable", "usability", "confusing", "confuse", "navigation", "intuitive", "friction",
     "easy to use", "easier to use", "hard to use", "what should the", "should show",
     "users see", "user sees", "empty", "nothing yet", "first time", "first-time", "steps",
     "journey", "flow"),
    ("accessible", "accessibility", "a11y", "wcag", "keyboard", "mouse", "blind"),
    ("wireframe", "sketch", "mockup", "prototype"),
    ("component", "components", "widget", "button", "input", "form", "dropdown", "modal"),
)
# fmt: on
"""Groups of words that mean much the same thing when routing; each entry stands for the rest.

An entry of several words ("look over") is a phrase: found verbatim in the request, it counts
as one word that matches through its group only. Homonyms stay out: `token` (design tokens),
`breakpoint`, `stack`, `trace`, `pipeline`, `style`, `library`, `image`, `port`, `code`,
`boundaries`, `notes`, `backend`, `import` mean different things to different specialists.
"""

STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either else even ever every few for from further get gets getting go goes going got had has
    have having he her here hers him his how i if in into is it its itself just least less let
    lets like ll me more most much must my myself need needs no nor not now of off on once one
    only or other our ours out over own please pls plz re really same shall she should so some
    something such than that the their theirs them then there these they this those through to
    too u under until up upon us ve very want wants was way we well were what when whenever
    where which while who whom whose why will with within without would yet you your yours
    yourself cannot im ok okay""".split()
    # the verbs and fillers of asking: any specialist writes, changes, fixes and makes things
    + """make makes made making help helps write writes written writing change changes
    changed changing keep keeps kept fix fixes fixed fixing put puts give gives take takes use
    uses used using try tries tried see show tell work works working look looks new thing
    things stuff bit lot maybe actually sure able anyone someone somebody handle handles
    handled handling start starts started starting deal live lives lived living""".split()
)
"""Words that say nothing about who should do the work."""

CHIT_CHAT = frozenset(
    """hi hello hey heya hiya howdy yo greetings morning afternoon evening night day good
    thanks thank thx ty cheers bye goodbye later see soon great cool nice awesome perfect
    lovely wonderful excellent fine sure yes yeah yep yup no nope alright sorry appreciate
    appreciated welcome happy glad lol haha hmm wow whats sup doing helpful today weekend""".split()
)
"""Words of greetings, thanks and small talk: a request made only of these (and stop words) is
chit-chat, and they never count for a profile."""

STEM_EXCEPTIONS = {"production": "production", "productions": "production"}
"""Words the suffix rules would merge with another meaning (`production` is not `product`)."""

ASK_PHRASES = re.compile(
    r"\b(please|pls|plz|can (you|u|we|someone)|could (you|u|we|someone)|would you|help|"
    r"i need|we need|i want|we want|i'?d like|we'?d like|need to|have to|let'?s|"
    r"is it possible|how (do|can|should|would) (i|we)|no idea|not sure|any idea|i wonder|"
    r"wondering|i'?m lost|do ?n[o'’]?t understand|confused|should|must|"
    r"(let|allow|enable) (users|staff|people|customers|admins|us|them))\b",
    re.I,
)
"""Wording that asks for something."""
PROBLEM_WORDS = frozenset(
    """bug bugs error errors exception exceptions crash crashes crashed crashing fail fails
    failed failing failure broken incorrect glitch hang hangs freeze freezes stuck slow
    leak leaks leaking timeout timeouts throws thrown stopped dies died dying""".split()
)
"""Words of a problem report ("the tests fail ..."): a report asks for help by itself."""
PROBLEM_PHRASES = re.compile(
    r"\b(not working|does ?n[o'’]?t work|won'?t work|out of (memory|disk|space)|"
    r"runs? out|running out|ran out|(is|are|was|were|goes|went|going) wrong|"
    r"(something|anything|nothing|what)(['’]s| is)? wrong|"
    r"keeps? (climbing|growing|crashing|failing|dying))\b|[a-z](error|exception)\b",
    re.I,
)
REQUEST_VERBS = frozenset(
    """add analyse analyze audit build bump check choose clean compare configure convert create
    debug decide define deploy design document draft estimate evaluate explain find fix
    generate get give help implement improve investigate list look make map migrate move
    optimise optimize pick plan prepare probe produce profile propose recommend refactor
    remove rename
    replace review rewrite run scan select set ship show sketch speed split suggest test tell
    trace try update upgrade validate verify walk write""".split()
)
"""Verbs a request starts with ("Write tests for ...", "Add JWT to ...")."""
STATEMENT_STARTERS = frozenset(
    """i we you it they he she there here this that these those the a an our my your their
    its his her some all for in on at by from of to with and but or as if because so when
    while after before since""".split()
)
"""First words of a clause that make it a statement rather than an imperative."""
ASK_SECOND_WORDS = frozenset(
    """the a an our my your their this that these those me us it them up to for how what why
    where which who when some all any every over out down through in on into with about if
    whether and""".split()
)
"""Second words that make an unknown first word read as an imperative ("Containerise the")."""

# -- words and stems ------------------------------------------------------------------------
_INFLECTION = ("ies", "sses", "es", "s", "ing", "ed", "ly")
_ES_AFTER = ("s", "x", "z", "ch", "sh")
_DERIVATION = (
    "ations", "ation", "ions", "ion", "ments", "ment", "ness", "ities", "ity", "ture", "er",
)  # fmt: skip
_VOWEL = re.compile(r"[aeiouy]")
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")
_CLITIC = re.compile(r"(?:n['’]t|['’](?:s|re|ve|ll|d|m))\b", re.I)


def _strip(word: str, suffix: str) -> str | None:
    """`word` without `suffix` when what is left is a plausible stem (3+ letters, a vowel)."""
    if not word.endswith(suffix):
        return None
    rest = word[: -len(suffix)]
    return rest if len(rest) >= 3 and _VOWEL.search(rest) else None


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light, deterministic suffix-stripping stem: `tests`, `testing`, `tested` -> `test`.

    One inflectional ending (-ies -> -y, -sses, -es after s/x/z/ch/sh, -s, -ing, -ed, -ly),
    then up to two derivational endings (-ation, -ion, -ment, -ness, -ity, -ture -> -t, -er),
    then a final -e and a doubled last consonant go. A stem keeps three letters and a vowel.
    """
    word = word.lower()
    if len(word) <= 3 or word in STEM_EXCEPTIONS:
        return STEM_EXCEPTIONS.get(word, word)
    for suffix in _INFLECTION:
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            continue
        if suffix == "es" and not word[:-2].endswith(_ES_AFTER):
            continue
        if suffix == "ed" and word.endswith("eed"):
            continue
        rest = _strip(word, suffix)
        if rest is not None:
            word = rest + {"ies": "y", "sses": "ss"}.get(suffix, "")
            break
    for _ in range(2):  # implementations -> implementation -> implement -> imple
        for suffix in _DERIVATION:
            rest = _strip(word, suffix)
            if rest is not None:
                word = rest + ("t" if suffix == "ture" else "")  # architecture -> architect
                break
        else:
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def words(text: str) -> list[tuple[int, str]]:
    """(position, lower-case word) for each word of `text`.

    camelCase, snake_case and a/b are split (`KeyError` -> `key`, `error`); `CVEs` stays one
    word; clitics go (`don't` -> `do`, `we're` -> `we`).
    """
    text = _CLITIC.sub(lambda m: " " * len(m.group(0)), text)
    found = []
    for token in _TOKEN.finditer(text):
        raw = token.group(0)
        mixed = any(c.islower() for c in raw) and any(c.isupper() for c in raw[1:])
        if mixed and not _ACRONYM_PLURAL.fullmatch(raw):
            found += [
                (token.start() + p.start(), p.group(0).lower()) for p in _CAMEL_PART.finditer(raw)
            ]
        else:
            found.append((token.start(), raw.lower()))
    return found


def terms(text: str) -> set[str]:
    """The stems of the content words of `text`."""
    return {stem(w) for _, w in words(text) if w not in STOP_WORDS}


def _key(entry: str) -> str:
    """A synonym entry's key: a word's stem, a phrase as it is."""
    return entry if " " in entry else stem(entry)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A pattern that finds `phrase` as whole words of a lower-cased text."""
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


@lru_cache(maxsize=1)
def synonym_index() -> dict[str, frozenset[str]]:
    """Key (stem or phrase) -> the keys it stands for through `SYNONYMS` (itself excluded)."""
    index: dict[str, set[str]] = {}
    for group in SYNONYMS:
        keys = {_key(entry) for entry in group}
        for key in keys:
            index.setdefault(key, set()).update(keys - {key})
    return {key: frozenset(others) for key, others in index.items()}


@lru_cache(maxsize=1)
def synonym_phrases() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The table's phrases, longest first, with their patterns."""
    phrases = sorted({e for group in SYNONYMS for e in group if " " in e}, key=lambda p: -len(p))
    return tuple((phrase, phrase_pattern(phrase)) for phrase in phrases)


def synonyms_of(word: str) -> frozenset[str]:
    """The keys (stems, phrases) a word or phrase stands for through the table, not its own."""
    return synonym_index().get(_key(word.lower()), frozenset())
