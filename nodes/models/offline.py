"""The built-in offline model: deterministic, tool-calling, no network, no key.

It is a real LangChain chat model (`bind_tools`, `invoke`, streaming through
the base class), good enough that the demo shows real routing:

- As the orchestrator (bound to `handover_to_specialist`) it matches the user's
  request against each profile's keywords, and hands over to the best match with
  a topic slug, an extractive summary, decisions, artifacts (file paths it sees)
  and a return condition it reads from the wording; otherwise it answers itself.
- As a specialist (bound to `return_to_orchestrator` and friends) it answers in
  the profile's voice from the package it received, asks for the full history or
  its briefing when the user asks for them, passes the work on when the user names
  another specialist, and returns when the user asks to go back.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from ...specialists import ORCHESTRATOR_PROFILE, PROFILES, Profile
from ..history.conversation import message_text

PROFILE_TAG = re.compile(r"\(profile `([a-z0-9_]+)`\)")
GO_BACK = re.compile(
    r"\b(back to the orchestrator|go back|return to the orchestrator|hand (it )?back|"
    r"that'?s all|we'?re done|we are done|switch back)\b",
    re.I,
)
FULL_HISTORY = re.compile(
    r"\b(full history|whole conversation|entire conversation|everything we discussed|"
    r"all the history|full conversation)\b",
    re.I,
)
BRIEFING = re.compile(
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
DECISION = re.compile(
    r"\b(we decided|decided|decision|agreed|we will|we'll|let's|going with|must use|will use)\b",
    re.I,
)
ARTIFACT = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.(?:py|ts|tsx|js|jsx|css|scss|html|md|json|ya?ml|toml|sql|"
    r"sh|go|rs|java|kt|swift|rb|txt|cfg|ini|lock)\b"
)
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _keyword_hits(text: str, profile: Profile) -> list[tuple[int, str]]:
    """(position, keyword) for each of the profile's keywords found in the text."""
    lowered = text.lower()
    hits = []
    for keyword in profile.keywords:
        match = re.search(r"(?<![a-z0-9])" + re.escape(keyword) + r"(?![a-z0-9])", lowered)
        if match:
            hits.append((match.start(), keyword))
    return sorted(hits)


def _named_profiles(text: str) -> list[str]:
    """Profiles the text names outright (`security_data_engineer` or `security data engineer`)."""
    lowered = text.lower()
    found = []
    for name, profile in PROFILES.items():
        if name in lowered or profile.title in lowered:
            found.append(
                (lowered.find(name) if name in lowered else lowered.find(profile.title), name)
            )
    return [name for _, name in sorted(found)]


def choose_specialist(text: str, *, exclude: Sequence[str] = ()) -> tuple[str, list[str]] | None:
    """The best-matching profile for a request and the keywords that matched, or None."""
    named = [n for n in _named_profiles(text) if n not in exclude and n != ORCHESTRATOR_PROFILE]
    if named:
        return named[0], [PROFILES[named[0]].title]
    best: tuple[int, int, str, list[str]] | None = None
    for name, profile in PROFILES.items():
        if name == ORCHESTRATOR_PROFILE or name in exclude:
            continue
        hits = _keyword_hits(text, profile)
        if not hits:
            continue
        score = sum(len(k.split()) for _, k in hits)
        key = (score, -hits[0][0])
        if best is None or key > (best[0], best[1]):
            best = (score, -hits[0][0], name, [k for _, k in hits])
    return (best[2], best[3]) if best else None


def _first_sentence(text: str, words: int = 30) -> str:
    """The first sentence of at least four words (greetings like 'Hi!' say nothing)."""
    sentences = SENTENCE.split(" ".join(text.split()))
    sentence = next((s for s in sentences if len(s.split()) >= 4), sentences[0])
    parts = sentence.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _clip(text: str, words: int = 40) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _slug(words: list[str]) -> str:
    text = "-".join(words)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].rstrip("-") or "request"


def extract_artifacts(texts: Sequence[str], limit: int = 10) -> list[str]:
    """File paths mentioned in the texts, first mention first, without duplicates."""
    seen: list[str] = []
    for text in texts:
        for match in ARTIFACT.findall(text):
            if match not in seen:
                seen.append(match)
    return seen[:limit]


def extract_decisions(texts: Sequence[str], limit: int = 5) -> list[str]:
    """Sentences that state a decision (`we decided`, `let's`, `going with` ...)."""
    found: list[str] = []
    for text in texts:
        for sentence in SENTENCE.split(" ".join(text.split())):
            if DECISION.search(sentence) and sentence not in found:
                found.append(sentence.strip())
    return found[-limit:]


def extractive_summary(texts: Sequence[str], max_words: int = 180) -> str:
    """The first sentence of each earlier message, most recent kept when over `max_words`."""
    lines = [_first_sentence(t, 40) for t in texts if t.strip()]
    kept: list[str] = []
    total = 0
    for line in reversed(lines):
        total += len(line.split())
        if total > max_words:
            break
        kept.append(line)
    return " ".join(reversed(kept))


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:16]}", "type": "tool_call"}


class OfflineChatModel(BaseChatModel):
    """Deterministic tool-calling chat model used when no real model is configured."""

    @property
    def _llm_type(self) -> str:
        return "handover-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": "offline"}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # type: ignore[override]
        """Bind tools like a real model does (OpenAI tool schemas in the request)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = {t["function"]["name"] for t in kwargs.get("tools") or []}
        system = "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
        convo = [m for m in messages if not isinstance(m, SystemMessage)]
        # the reply carries its agent's name already, so streamed chunks are named too
        if "return_to_orchestrator" in tools:
            tag = PROFILE_TAG.search(system)
            reply = self._specialist(tag.group(1) if tag else "", system, convo, tools)
            reply.name = tag.group(1) if tag else None
        elif "handover_to_specialist" in tools:
            reply = self._orchestrator(convo)
            reply.name = "orchestrator"
        else:
            reply = AIMessage(content=self._summarise(convo))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    # -- orchestrator --------------------------------------------------------------
    def _orchestrator(self, convo: list[BaseMessage]) -> AIMessage:
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
            profile = PROFILES.get(last.name)
            label = profile.label if profile else last.name
            report = message_text(last).split("[returned to the orchestrator]")[-1].strip()
            return AIMessage(
                content=f"Back with the orchestrator. {label} reported: "
                f"{_first_sentence(report, 60)} What would you like to do next?"
            )
        request = message_text(last)
        choice = choose_specialist(request)
        if choice is None:
            decisions = extract_decisions([request])
            noted = decisions + [
                a for a in extract_artifacts([request]) if not any(a in d for d in decisions)
            ]
            names = ", ".join(n for n in PROFILES if n != ORCHESTRATOR_PROFILE)
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
            "summary": extractive_summary(earlier) or f"The user asks: {_clip(request)}",
            "handover_reason": f"The request is about {', '.join(ordered[:3])}: "
            f"{PROFILES[name].description}",
            "decisions": extract_decisions(texts),
            "artifacts": extract_artifacts(texts),
            "return_condition": "task_complete"
            if TASK_COMPLETE.search(request)
            else "after_reply"
            if AFTER_REPLY.search(request)
            else "user_request",
        }
        return AIMessage(content="", tool_calls=[_call("handover_to_specialist", args)])

    # -- specialist ----------------------------------------------------------------
    def _specialist(
        self, name: str, system: str, convo: list[BaseMessage], tools: set[str]
    ) -> AIMessage:
        profile = PROFILES.get(name)
        title = profile.title if profile else "specialist"
        packages = [m for m in convo if _is_package(m)]
        package = _parse_package(message_text(packages[-1]) if packages else system)
        convo = [m for m in convo if not _is_package(m)]
        last = convo[-1] if convo else None
        if isinstance(last, ToolMessage):
            return AIMessage(content=self._after_tool(title, last, package))
        request = message_text(last) if isinstance(last, HumanMessage) else ""
        if request and GO_BACK.search(request):
            return AIMessage(
                content="",
                tool_calls=[
                    _call(
                        "return_to_orchestrator",
                        {"summary": self._work_summary(title, package, convo)},
                    )
                ],
            )
        if request and FULL_HISTORY.search(request) and "request_full_history" in tools:
            return AIMessage(content="", tool_calls=[_call("request_full_history", {})])
        if request and BRIEFING.search(request) and "read_briefing" in tools:
            return AIMessage(
                content="", tool_calls=[_call("read_briefing", {"topic": package.get("topic")})]
            )
        if request and PASS_ON.search(request) and "handover_to_specialist" in tools:
            choice = choose_specialist(request, exclude=[name])
            if choice and _named_profiles(request):
                target, _ = choice
                args = {
                    "specialist_profile": target,
                    "topic": package.get("topic") or "follow-up",
                    "summary": f"{title} worked on {package.get('topic', 'the request')}: "
                    f"{package.get('summary', '')}".strip(),
                    "handover_reason": f"The user asked to bring in the {PROFILES[target].title}: "
                    f"{_first_sentence(request)}",
                    "decisions": package.get("decisions", []),
                    "artifacts": package.get("artifacts", []),
                    "return_condition": package.get("return_condition", "user_request"),
                }
                return AIMessage(content="", tool_calls=[_call("handover_to_specialist", args)])
        first = not any(isinstance(m, AIMessage) and m.name == name for m in convo)
        return AIMessage(content=self._answer(title, profile, package, request, first))

    def _answer(
        self, title: str, profile: Profile | None, package: dict, request: str, first: bool
    ) -> str:
        ask = request or package.get("request") or "the task in the package"
        topic = package.get("topic", "this topic")
        if not first:
            focus = profile.description.rstrip(".") if profile else "my specialty"
            return (
                f"Continuing on '{topic}'. You asked: \"{_clip(ask)}\"\n"
                f"As {title} ({focus}), here is the next step: I apply it within the decisions "
                "so far, say what changes and where, and flag anything that needs your call."
            )
        lines = [f"I'm the {title}, taking over '{topic}' from the handover package."]
        lines.append(f'You asked: "{_clip(ask)}"')
        if package.get("summary"):
            lines.append(f"From the package: {package['summary']}")
        if package.get("decisions"):
            decided = "; ".join(d.rstrip(". ") for d in package["decisions"])
            lines.append(f"I'll keep to the decisions so far: {decided}.")
        if package.get("artifacts"):
            lines.append("Files I'll work from: " + ", ".join(package["artifacts"]) + ".")
        focus = profile.description.rstrip(".") if profile else "my specialty"
        lines.append(
            f"My proposal, as {title} ({focus}): 1) pin down the goal and constraints above; "
            "2) produce the concrete deliverable for this step; 3) list open questions and risks."
        )
        return "\n".join(lines)

    def _after_tool(self, title: str, result: ToolMessage, package: dict) -> str:
        text = message_text(result)
        first = text.splitlines()[0] if text else ""
        if result.name == "request_full_history":
            return f"I read the full conversation ({first}). I have what I need and will continue on '{package.get('topic', 'the task')}'."
        if result.name == "read_briefing":
            return (
                f"I read my briefing notes ({first[:200]}). I'll build on what was decided before."
            )
        if text.startswith("ERROR"):
            return f"I could not do that: {text.removeprefix('ERROR: ')} I'll carry on myself as {title}."
        return f"Done: {first[:200]}"

    def _work_summary(self, title: str, package: dict, convo: list[BaseMessage]) -> str:
        replies = sum(1 for m in convo if isinstance(m, AIMessage) and message_text(m))
        asks = [message_text(m) for m in convo[:-1] if isinstance(m, HumanMessage)]
        last = asks[-1] if asks else package.get("request", "the handover request")
        return (
            f"The {title} worked on '{package.get('topic', 'the task')}' ({replies} replies); "
            f'last request handled: "{_first_sentence(last, 30)}".'
        )

    def _summarise(self, convo: list[BaseMessage]) -> str:
        return extractive_summary([message_text(m) for m in convo], max_words=200)


def _is_package(message: BaseMessage) -> bool:
    """The stage-1 package message that opens a specialist's request."""
    return (
        isinstance(message, HumanMessage)
        and "HANDOVER PACKAGE (stage 1)" in (message_text(message).split("\n", 1)[0])
    )


def _parse_package(system: str) -> dict[str, Any]:
    """Read the rendered stage-1 package back out of the text it was given in."""
    package: dict[str, Any] = {}
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
        package["summary"] = _first_sentence(summary, 60)
    for key, head in (("decisions", "Decisions"), ("artifacts", "Artifacts")):
        body = next((v for k, v in sections.items() if k.startswith(head)), "")
        package[key] = [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]
    turns = next((v for k, v in sections.items() if k.startswith("Recent turns")), "")
    users = re.findall(r"^\d+\. user: (.+)$", turns, re.M)
    if users:
        package["request"] = users[-1]
    return package
