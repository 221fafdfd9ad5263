"""What the offline model reads in a request: wording cues, profile choice, tool calls.

Deterministic and lexical: regular expressions over the words of the request,
and a scorer over each candidate profile's keywords, description and prompt
(`scorer.py`). No model, no network.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ....specialists import ORCHESTRATOR_PROFILE, Profile, builtin_profiles
from ...history.extractive import ARTIFACT
from ...tools.names import FULL_HISTORY, HANDOVER, READ_BRIEFING, RETURN
from .scorer import best_profile

FULL_HISTORY_ASK = re.compile(
    r"\b(full history|whole conversation|entire conversation|everything we discussed|"
    r"all the history|full conversation)\b",
    re.I,
)
BRIEFING_ASK = re.compile(
    r"\b(briefing|what did we decide|previous handovers?|earlier decisions)\b", re.I
)
PASS_ON = re.compile(
    r"\b(ask|hand (this |it )?(over )?to|pass (this |it )?(on )?to|involve|bring in|get)\b", re.I
)
TASK_COMPLETE = re.compile(
    r"\b(and (then )?(come|report) back|report back|when (you'?re|you are) done|once done|"
    r"and return|then return)\b",
    re.I,
)
CONSULT_ASK = re.compile(
    r"\b(?:ask|consult)\s+(?P<names>[^:?!]{3,200}?)\s*(?::|\babout\b|\bwhether\b)\s*"
    r"(?P<question>\S.*)",
    re.I | re.S,
)
"""`ask the solution architect and the ui design specialist: ...`, `consult X, Y and Z about
...`: several named specialists, then the question."""
CONSULT_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", re.I)
CONSULT_NAME_WORDS = 4
"""A longer piece between the commas is not a name (`ask someone to look at the logs`)."""
AFTER_REPLY = re.compile(r"\b(quick question|quickly|just tell me|one question|briefly)\b", re.I)
LIST_FILES_ASK = re.compile(
    r"\b((list|show)( me)? (the |all )?files|what files|which files|map the repo|"
    r"layout of the (repo|project|codebase))\b",
    re.I,
)
SEARCH_ASK = re.compile(
    r"\b(where is|where are|find|search for|look for|grep for|who calls)\b", re.I
)
QUOTED = re.compile(r"[\"“`']([^\"”`']{2,200})[\"”`']")
IDENTIFIER = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*(?:_[A-Za-z0-9_]+|\(\))|[a-z]+[A-Z]\w*)")
WORKSPACE = ("list_files", "read_file", "search_files")


def named_profiles(text: str, profiles: Mapping[str, Profile]) -> list[str]:
    """Profiles the text names outright (`security_data_engineer` or `security data engineer`)."""
    lowered = text.lower()
    found = [(lowered.find(n if n in lowered else p.title), n) for n, p in profiles.items()]
    return [name for at, name in sorted(found) if at >= 0]


def consult_request(text: str, *, profiles: Mapping[str, Profile]) -> tuple[list[str], str] | None:
    """The profiles a consult request names (in its order) and its question, or None.

    Each name between `ask`/`consult` and the question is a profile's name or title; one
    that names none is passed on as written (`ui_designer`), for the graph to refuse with
    its suggestions. At least two names, at least one of them known, make a consult.
    """
    found = CONSULT_ASK.search(text)
    if found is None:
        return None
    pieces = [p.strip() for p in CONSULT_SPLIT.split(found["names"]) if p.strip()]
    names: list[str] = []
    for piece in pieces:
        piece = re.sub(r"^(?:both\s+)?(?:the|our|your)\s+", "", piece, flags=re.I)
        if len(piece.split()) > CONSULT_NAME_WORDS:
            return None
        named = named_profiles(piece, profiles)
        names.append(named[0] if named else re.sub(r"[^a-z0-9]+", "_", piece.lower()).strip("_"))
    if len(names) < 2 or not any(n in profiles for n in names):
        return None
    return names, found["question"].strip()


def choose_specialist(
    text: str,
    *,
    profiles: Mapping[str, Profile] | None = None,
    exclude: Sequence[str] = (),
    stay: Profile | None = None,
) -> tuple[str, list[str]] | None:
    """The best-matching profile for a request and the words that matched, or None.

    A profile the text names outright wins. Otherwise the lexical scorer (`scorer.py`) weighs
    each candidate's keywords, description and prompt against the request; chit-chat and
    weak matches stay with the orchestrator, and so does a request its own keywords claim best
    (`stay`: the orchestrator's profile, taken from `profiles` unless given, for a caller that
    passes only the handover targets). The matched words are the keyword phrases found,
    else the request's own words that scored most, so a topic slug reads like the request.
    """
    profiles = profiles if profiles is not None else builtin_profiles()
    candidates = {
        n: p for n, p in profiles.items() if n != ORCHESTRATOR_PROFILE and n not in exclude
    }
    if named := named_profiles(text, candidates):
        return named[0], [candidates[named[0]].title]
    stay = stay if stay is not None else profiles.get(ORCHESTRATOR_PROFILE)
    return best_profile(text, candidates, stay=stay)


def topic_slug(words: list[str]) -> str:
    text = "-".join(words)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].rstrip("-") or "request"


def make_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:16]}", "type": "tool_call"}


def handover_targets(tools: Sequence[dict[str, Any]]) -> list[str] | None:
    """The `specialist_profile` enum of a bound handover tool: who this build allows."""
    for spec in tools:
        function = spec.get("function") or {}
        if function.get("name") == HANDOVER:
            properties = (function.get("parameters") or {}).get("properties") or {}
            enum = (properties.get("specialist_profile") or {}).get("enum")
            return [str(n) for n in enum] if isinstance(enum, list) else None
    return None


def tool_for_request(request: str, tools: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A call to a bound tool the request asks for: a user's tool it names, or a workspace read."""
    lowered = request.lower()
    for tool_name, function in tools.items():
        if tool_name in (HANDOVER, RETURN, FULL_HISTORY, READ_BRIEFING, *WORKSPACE):
            continue
        if tool_name.lower() in lowered or tool_name.replace("_", " ").lower() in lowered:
            return make_call(tool_name, arguments_from(request, function.get("parameters") or {}))
    paths = ARTIFACT.findall(request)
    if "read_file" in tools and paths:
        return make_call("read_file", {"path": paths[0]})
    if "search_files" in tools and SEARCH_ASK.search(request):
        if query := QUOTED.search(request) or IDENTIFIER.search(request):
            return make_call("search_files", {"query": query.group(1).removesuffix("()")})
    if "list_files" in tools and LIST_FILES_ASK.search(request):
        return make_call("list_files", {})
    return None


def arguments_from(request: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a user's tool: quoted text for strings, the first number for numbers."""
    args: dict[str, Any] = {}
    quoted = [m.group(1) for m in QUOTED.finditer(request)]
    numbers = re.findall(r"-?\d+(?:\.\d+)?", request)
    for key in parameters.get("required") or []:
        kind = ((parameters.get("properties") or {}).get(key) or {}).get("type")
        if kind in ("integer", "number"):
            value = numbers.pop(0) if numbers else "0"
            args[key] = int(float(value)) if kind == "integer" else float(value)
        elif kind == "boolean":
            args[key] = False
        elif kind == "array":
            args[key] = [quoted.pop(0)] if quoted else []
        else:
            args[key] = quoted.pop(0) if quoted else request
    return args
