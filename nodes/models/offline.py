"""The built-in offline model: deterministic, tool-calling, no network, no key.

It is a real LangChain chat model (`bind_tools`, `invoke`, streaming through
the base class), good enough that the demo shows real routing. It learns its
role from what it is explicitly given, never from prompt prose:

- bound to `return_to_orchestrator`, it is a specialist; the handover package
  that opens its conversation names which one (`Specialist: <profile>`);
- bound to `handover_to_specialist` only, it is the orchestrator; the tool's
  `specialist_profile` enum says which specialists this build has;
- bound to nothing, it summarises (stage 2 asks it to condense older turns).

As the orchestrator it matches the user's request against each candidate
profile's keywords and hands over to the best match with a topic slug, an
extractive summary, decisions, artifacts (file paths it sees) and a return
condition it reads from the wording; otherwise it answers itself. As a
specialist it answers in the profile's voice from its package, uses the tools
it is bound to when the request asks for them (workspace reads, stage 2 and 3,
a user's tool named in the request), passes the work on when the user names
another specialist, and returns when the user asks to go back.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from ...specialists import ORCHESTRATOR_PROFILE, Profile, builtin_profiles
from ..history.conversation import message_text
from ..history.extractive import (
    ARTIFACT,
    clip_words,
    extract_artifacts,
    extract_decisions,
    extractive_summary,
    first_sentence,
)
from ..tools.names import FULL_HISTORY, HANDOVER, READ_BRIEFING, RETURN

GO_BACK = re.compile(
    r"\b(back to the orchestrator|go back|return to the orchestrator|hand (it )?back|"
    r"that'?s all|we'?re done|we are done|switch back)\b",
    re.I,
)
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
PACKAGE_TITLE = "HANDOVER PACKAGE (stage 1)"
SPECIALIST_HINT = re.compile(r"^Specialist: ([a-z][a-z0-9_]*)$", re.M)
WORKSPACE = ("list_files", "read_file", "search_files")


def _keyword_hits(text: str, profile: Profile) -> list[tuple[int, str]]:
    """(position, keyword) for each of the profile's keywords found in the text."""
    lowered = text.lower()
    hits = []
    for keyword in profile.keywords:
        match = re.search(r"(?<![a-z0-9])" + re.escape(keyword) + r"(?![a-z0-9])", lowered)
        if match:
            hits.append((match.start(), keyword))
    return sorted(hits)


def _named_profiles(text: str, profiles: Mapping[str, Profile]) -> list[str]:
    """Profiles the text names outright (`security_data_engineer` or `security data engineer`)."""
    lowered = text.lower()
    found = []
    for name, profile in profiles.items():
        if name in lowered or profile.title in lowered:
            found.append(
                (lowered.find(name) if name in lowered else lowered.find(profile.title), name)
            )
    return [name for _, name in sorted(found)]


def choose_specialist(
    text: str,
    *,
    profiles: Mapping[str, Profile] | None = None,
    exclude: Sequence[str] = (),
) -> tuple[str, list[str]] | None:
    """The best-matching profile for a request and the keywords that matched, or None."""
    profiles = profiles if profiles is not None else builtin_profiles()
    candidates = {
        n: p for n, p in profiles.items() if n != ORCHESTRATOR_PROFILE and n not in exclude
    }
    named = _named_profiles(text, candidates)
    if named:
        return named[0], [candidates[named[0]].title]
    best: tuple[int, int, str, list[str]] | None = None
    for name, profile in candidates.items():
        hits = _keyword_hits(text, profile)
        if not hits:
            continue
        score = sum(len(k.split()) for _, k in hits)
        key = (score, -hits[0][0])
        if best is None or key > (best[0], best[1]):
            best = (score, -hits[0][0], name, [k for _, k in hits])
    return (best[2], best[3]) if best else None


def _slug(words: list[str]) -> str:
    text = "-".join(words)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].rstrip("-") or "request"


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:16]}", "type": "tool_call"}


def _handover_targets(tools: Sequence[dict[str, Any]]) -> list[str] | None:
    """The `specialist_profile` enum of a bound handover tool: who this build allows."""
    for spec in tools:
        function = spec.get("function") or {}
        if function.get("name") == HANDOVER:
            prop = ((function.get("parameters") or {}).get("properties") or {}).get(
                "specialist_profile"
            ) or {}
            enum = prop.get("enum")
            return [str(n) for n in enum] if isinstance(enum, list) else None
    return None


class OfflineChatModel(BaseChatModel):
    """Deterministic tool-calling chat model used when no real model is configured.

    `profiles` gives it the profiles of a build (their keywords and voices);
    without it, it knows the built-in ones.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    profiles: Any = None

    @property
    def _llm_type(self) -> str:
        return "handover-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": "offline"}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # type: ignore[override]
        """Bind tools like a real model does (OpenAI tool schemas in the request)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _registry(self) -> Mapping[str, Profile]:
        return self.profiles if self.profiles is not None else builtin_profiles()

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        bound = list(kwargs.get("tools") or [])
        tools = {t["function"]["name"] for t in bound}
        convo = [m for m in messages if not isinstance(m, SystemMessage)]
        profiles = self._registry()
        targets = _handover_targets(bound)
        if targets is not None:
            profiles = {n: p for n, p in profiles.items() if n in targets}
        # the reply carries its agent's name already, so streamed chunks are named too
        if RETURN in tools:
            package = _parse_package(_package_message(convo))
            name = package.get("specialist", "")
            reply = self._specialist(name, convo, bound, profiles, package)
            reply.name = name or None
        elif HANDOVER in tools:
            reply = self._orchestrator(convo, profiles)
            reply.name = "orchestrator"
        else:
            reply = AIMessage(content=self._summarise(convo))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    # -- orchestrator --------------------------------------------------------------
    def _orchestrator(self, convo: list[BaseMessage], profiles: Mapping[str, Profile]) -> AIMessage:
        last = convo[-1] if convo else HumanMessage("")
        if isinstance(last, ToolMessage):
            result = message_text(last)
            if result.startswith("ERROR"):
                return AIMessage(
                    content=f"I could not hand this over ({result.removeprefix('ERROR: ')}). "
                    "I'll keep helping you here: tell me more about what you need."
                )
            return AIMessage(content="The handover is done; the specialist has the conversation.")
        if isinstance(last, AIMessage) and last.name and last.name != "orchestrator":
            profile = self._registry().get(last.name)
            label = profile.label if profile else last.name
            report = message_text(last).split("[returned to the orchestrator]")[-1].strip()
            return AIMessage(
                content=f"Back with the orchestrator. {label} reported: "
                f"{first_sentence(report, 60)} What would you like to do next?"
            )
        request = message_text(last)
        choice = choose_specialist(request, profiles=profiles)
        if choice is None:
            decisions = extract_decisions([request])
            noted = decisions + [
                a for a in extract_artifacts([request]) if not any(a in d for d in decisions)
            ]
            names = ", ".join(n for n in profiles if n != ORCHESTRATOR_PROFILE)
            opening = f"Noted: {'; '.join(n.rstrip('. ') for n in noted)}. " if noted else ""
            return AIMessage(
                content=f"{opening}I'm the orchestrator: I answer general questions myself and "
                f"hand specialist work to one of: {names}. Tell me what you need — a design, "
                "an architecture, a failing test, a release — and I'll bring in the right "
                "specialist with a short briefing."
            )
        name, keywords = choice
        earlier = [message_text(m) for m in convo[:-1] if isinstance(m, HumanMessage)]
        texts = [*earlier, request]
        ordered = sorted(keywords, key=lambda k: request.lower().find(k))
        args = {
            "specialist_profile": name,
            "topic": _slug(ordered[:3]),
            "summary": extractive_summary(earlier) or f"The user asks: {clip_words(request)}",
            "handover_reason": f"The request is about {', '.join(ordered[:3])}: "
            f"{profiles[name].description}",
            "decisions": extract_decisions(texts),
            "artifacts": extract_artifacts(texts),
            "return_condition": "task_complete"
            if TASK_COMPLETE.search(request)
            else "after_reply"
            if AFTER_REPLY.search(request)
            else "user_request",
        }
        return AIMessage(content="", tool_calls=[_call(HANDOVER, args)])

    # -- specialist ----------------------------------------------------------------
    def _specialist(
        self,
        name: str,
        convo: list[BaseMessage],
        bound: list[dict[str, Any]],
        profiles: Mapping[str, Profile],
        package: dict[str, Any],
    ) -> AIMessage:
        tools = {t["function"]["name"]: t["function"] for t in bound}
        profile = self._registry().get(name)
        title = profile.title if profile else "specialist"
        convo = [m for m in convo if not _is_package(m)]
        last = convo[-1] if convo else None
        if isinstance(last, ToolMessage):
            if last.name not in (HANDOVER, FULL_HISTORY, READ_BRIEFING) and message_text(
                last
            ).startswith("ERROR"):  # a tool of its own failed: say so, then answer anyway
                first = sum(isinstance(m, AIMessage) and m.name == name for m in convo) <= 1
                answer = self._answer(title, profile, package, _last_request(convo), first)
                note = message_text(last).removeprefix("ERROR: ")
                return AIMessage(content=f"({last.name} did not work: {note})\n{answer}")
            return AIMessage(content=self._after_tool(title, last, package))
        request = message_text(last) if isinstance(last, HumanMessage) else ""
        if request and GO_BACK.search(request):
            summary = self._work_summary(title, package, convo)
            return AIMessage(content="", tool_calls=[_call(RETURN, {"summary": summary})])
        if request and FULL_HISTORY_ASK.search(request) and FULL_HISTORY in tools:
            return AIMessage(content="", tool_calls=[_call(FULL_HISTORY, {})])
        if request and BRIEFING_ASK.search(request) and READ_BRIEFING in tools:
            return AIMessage(
                content="", tool_calls=[_call(READ_BRIEFING, {"topic": package.get("topic")})]
            )
        if request and PASS_ON.search(request) and HANDOVER in tools:
            others = {n: p for n, p in profiles.items() if n != name}
            choice = choose_specialist(request, profiles=others)
            if choice and _named_profiles(request, others):
                target = choice[0]
                args = {
                    "specialist_profile": target,
                    "topic": package.get("topic") or "follow-up",
                    "summary": f"{title} worked on {package.get('topic', 'the request')}: "
                    f"{package.get('summary', '')}".strip(),
                    "handover_reason": f"The user asked to bring in the {others[target].title}: "
                    f"{first_sentence(request)}",
                    "decisions": package.get("decisions", []),
                    "artifacts": package.get("artifacts", []),
                    "return_condition": package.get("return_condition", "user_request"),
                }
                return AIMessage(content="", tool_calls=[_call(HANDOVER, args)])
        first = not any(isinstance(m, AIMessage) and m.name == name for m in convo)
        # on taking over, the request is the package's last user turn
        ask = request or (package.get("request", "") if first else "")
        call = _tool_for_request(ask, tools) if ask else None
        if call is not None:
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=self._answer(title, profile, package, request, first))

    def _answer(
        self, title: str, profile: Profile | None, package: dict, request: str, first: bool
    ) -> str:
        ask = request or package.get("request") or "the task in the package"
        topic = package.get("topic", "this topic")
        focus = profile.description.rstrip(".") if profile else "my specialty"
        if not first:
            return (
                f"Continuing on '{topic}'. You asked: \"{clip_words(ask)}\"\n"
                f"As {title} ({focus}), here is the next step: I apply it within the decisions "
                "so far, say what changes and where, and flag anything that needs your call."
            )
        lines = [f"I'm the {title}, taking over '{topic}' from the handover package."]
        lines.append(f'You asked: "{clip_words(ask)}"')
        if package.get("summary"):
            lines.append(f"From the package: {package['summary']}")
        if package.get("decisions"):
            decided = "; ".join(d.rstrip(". ") for d in package["decisions"])
            lines.append(f"I'll keep to the decisions so far: {decided}.")
        if package.get("artifacts"):
            lines.append("Files I'll work from: " + ", ".join(package["artifacts"]) + ".")
        lines.append(
            f"My proposal, as {title} ({focus}): 1) pin down the goal and constraints above; "
            "2) produce the concrete deliverable for this step; 3) list open questions and risks."
        )
        return "\n".join(lines)

    def _after_tool(self, title: str, result: ToolMessage, package: dict) -> str:
        text = message_text(result)
        first = text.splitlines()[0] if text else ""
        if result.name == FULL_HISTORY:
            return (
                f"I read the full conversation ({first}). I have what I need and will continue "
                f"on '{package.get('topic', 'the task')}'."
            )
        if result.name == READ_BRIEFING:
            return (
                f"I read my briefing notes ({first[:200]}). I'll build on what was decided before."
            )
        if text.startswith("ERROR"):
            return (
                f"I could not do that: {text.removeprefix('ERROR: ')} "
                f"I'll carry on myself as {title}."
            )
        shown = "\n".join(text.splitlines()[:12])
        more = len(text.splitlines()) - 12
        return f"From {result.name}:\n{shown}" + (f"\n… ({more} more lines)" if more > 0 else "")

    def _work_summary(self, title: str, package: dict, convo: list[BaseMessage]) -> str:
        replies = sum(1 for m in convo if isinstance(m, AIMessage) and message_text(m))
        asks = [message_text(m) for m in convo[:-1] if isinstance(m, HumanMessage)]
        last = asks[-1] if asks else package.get("request", "the handover request")
        return (
            f"The {title} worked on '{package.get('topic', 'the task')}' ({replies} replies); "
            f'last request handled: "{first_sentence(last, 30)}".'
        )

    def _summarise(self, convo: list[BaseMessage]) -> str:
        """A summary: the first sentence of each line of the text it is asked to condense."""
        lines = [line for m in convo for line in message_text(m).splitlines() if line.strip()]
        return extractive_summary(lines, max_words=200)


def _tool_for_request(request: str, tools: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A call to a bound tool the request asks for: a user's tool it names, or a workspace read."""
    lowered = request.lower()
    for tool_name, function in tools.items():
        if tool_name in (HANDOVER, RETURN, FULL_HISTORY, READ_BRIEFING, *WORKSPACE):
            continue
        if tool_name.lower() in lowered or tool_name.replace("_", " ").lower() in lowered:
            return _call(tool_name, _arguments_from(request, function.get("parameters") or {}))
    paths = ARTIFACT.findall(request)
    if "read_file" in tools and paths:
        return _call("read_file", {"path": paths[0]})
    if "search_files" in tools and SEARCH_ASK.search(request):
        quoted = QUOTED.search(request)
        identifier = IDENTIFIER.search(request)
        query = quoted.group(1) if quoted else identifier.group(1) if identifier else None
        if query:
            return _call("search_files", {"query": query.removesuffix("()")})
    if "list_files" in tools and LIST_FILES_ASK.search(request):
        return _call("list_files", {})
    return None


def _arguments_from(request: str, parameters: dict[str, Any]) -> dict[str, Any]:
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


def _last_request(convo: list[BaseMessage]) -> str:
    asks = [message_text(m) for m in convo if isinstance(m, HumanMessage)]
    return asks[-1] if asks else ""


def _package_message(convo: list[BaseMessage]) -> str:
    packages = [m for m in convo if _is_package(m)]
    return message_text(packages[-1]) if packages else ""


def _is_package(message: BaseMessage) -> bool:
    """The stage-1 package message that opens a specialist's request."""
    return (
        isinstance(message, HumanMessage)
        and PACKAGE_TITLE in (message_text(message).split("\n", 1)[0])
    )


def _parse_package(system: str) -> dict[str, Any]:
    """Read the rendered stage-1 package back out of the text it was given in."""
    package: dict[str, Any] = {}
    hint = SPECIALIST_HINT.search(system)
    if hint:
        package["specialist"] = hint.group(1)
    for key, pattern in (
        ("topic", r"^Topic: (.+)$"),
        ("return_condition", r"^Return condition: (\w+)"),
    ):
        match = re.search(pattern, system, re.M)
        if match:
            package[key] = match.group(1).strip()
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", system, re.M | re.S))
    summary = next((v for k, v in sections.items() if k.startswith("Summary")), "").strip()
    if summary and summary != "(no summary)":
        package["summary"] = first_sentence(summary, 60)
    for key, head in (("decisions", "Decisions"), ("artifacts", "Artifacts")):
        body = next((v for k, v in sections.items() if k.startswith(head)), "")
        package[key] = [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]
    turns = next((v for k, v in sections.items() if k.startswith("Recent turns")), "")
    users = re.findall(r"^\d+\. user: (.+)$", turns, re.M)
    if users:
        package["request"] = users[-1]
    return package
