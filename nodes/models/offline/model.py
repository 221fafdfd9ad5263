"""The built-in offline model: deterministic, tool-calling, no network, no key.

It is a real LangChain chat model (`bind_tools`, `invoke`, streaming through
the base class), good enough that the demo shows real routing. It learns its
role from what it is explicitly given, never from prompt prose:

- given a handover package (the message that opens a specialist's view carries
  it as data), it is the specialist the package names;
- offered `handover_to_specialist`, it is whoever that tool's
  `specialist_profile` enum leaves out: the orchestrator cannot pick its own
  profile, a specialist can (to hand back) and misses only itself;
- otherwise it summarises (stage 2 asks it to condense older turns).

As the orchestrator it scores the user's request against each candidate
profile with a small deterministic scorer (stems, synonyms and phrases drawn
from the profile's keywords and description, and a vote of the request's
nearest example requests, see `scorer.py` and `examples.py`) and hands over to
the best match above a threshold with a topic slug, an
extractive summary, decisions, artifacts (file paths it sees) and a return
condition it reads from the wording; otherwise it answers itself. Offered
`consult_specialists` too, it consults on a clear cue (`ask X and Y: <question>`,
`consult X, Y and Z about ...`) and answers the user from the consult's answers.
As a
specialist it answers in the profile's voice from its package, uses the tools
it is bound to when the request asks for them (workspace reads, stage 2 and 3,
a user's tool named in the request), passes the work on when the user names
another specialist, and returns when the user asks to go back; asked in a
consult (the request message the graph names `consult`), it answers the question once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from ....specialists import ORCHESTRATOR_PROFILE, Profile, builtin_profiles
from ....state import message_text, token_counter
from ...handover.consult_message import CONSULT_SENDER, QUESTION_DATA_KEY
from ...handover.handover_to_specialist import HANDOVER_SENDER, package_of
from ...handover.review import for_people
from ...handover.transfer import GO_BACK
from ...history.extractive import (
    clip_words,
    extract_artifacts,
    extract_decisions,
    extractive_summary,
    first_sentence,
)
from ...ledger.extract import artifacts_in, settled_lists
from ...tools.names import CONSULT, FULL_HISTORY, HANDOVER, READ_BRIEFING, RETURN
from .cues import (
    AFTER_REPLY,
    BRIEFING_ASK,
    FULL_HISTORY_ASK,
    PASS_ON,
    TASK_COMPLETE,
    choose_specialist,
    consult_request,
    handover_targets,
    make_call,
    named_profiles,
    tool_for_request,
    topic_slug,
)
from .scorer import best_profile

WARM_UP_REQUEST = "Please review the architecture of the billing service and its failing tests."
"""A request that goes through the whole router (not small talk, no profile named)."""

FENCE = "`" * 3
"""A Markdown code fence: a tool's output is shown as code."""


# -- what it learns from the messages the graph puts into an agent's view -------------------
# The graph's own messages (the stage-1 package, the orchestrator's notes) are user turns named
# `handover`. The package message also carries the package as data (`additional_kwargs`), which
# the model reads as it is; across an HTTP hop (the tests' local OpenAI-compatible server) only
# the name survives, and the model knows who it is from the tools it is offered instead.
def from_the_graph(message: BaseMessage) -> bool:
    """A message the graph put into the view (the package, the notes), not a user's turn."""
    return isinstance(message, HumanMessage) and message.name == HANDOVER_SENDER


def last_request(convo: list[BaseMessage], default: str = "") -> str:
    """The user's last turn in the conversation (`default` when there is none)."""
    return next((message_text(m) for m in reversed(convo) if isinstance(m, HumanMessage)), default)


def package_in(convo: list[BaseMessage]) -> dict[str, Any]:
    """The package the view opens with, as the specialist works from it ({} if none): its
    fields, the summary's first sentence, and the request (the last user turn it carries)."""
    package = next((p for m in reversed(convo) if (p := package_of(m)) is not None), None)
    if package is None:
        return {}
    found: dict[str, Any] = dict(package)
    found["summary"] = first_sentence(str(package.get("summary") or ""), 60)
    turns = [str(t) for t in package.get("recent_turns") or []]
    users = [t.removeprefix("user: ") for t in turns if t.startswith("user: ")]
    found["request"] = users[-1] if users else ""
    return found


def consult_question(message: BaseMessage | None) -> str | None:
    """The question of a consult's request message (its data, or across an HTTP hop its
    text after `Question:`), or None when the message is no consult."""
    if not isinstance(message, HumanMessage) or message.name != CONSULT_SENDER:
        return None
    data = (message.additional_kwargs or {}).get(QUESTION_DATA_KEY)
    if isinstance(data, dict) and isinstance(data.get("question"), str):
        return str(data["question"])
    return message_text(message).split("Question:", 1)[-1].strip()


def _called(convo: list[BaseMessage], result: ToolMessage) -> str | None:
    """The name of the call a tool result answers (over HTTP a result carries no name)."""
    calls = (c for m in reversed(convo) for c in getattr(m, "tool_calls", None) or [])
    return next((str(c.get("name")) for c in calls if c.get("id") == result.tool_call_id), None)


def _could_not(what: str, error: str) -> str:
    """The orchestrator's answer when a handover or consult it called failed."""
    return (
        f"I could not {what} ({for_people(error).removeprefix('ERROR: ').rstrip('.')}). "
        "I'll keep helping you here: tell me more about what you need."
    )


def _passed_on(convo: list[BaseMessage], request: str) -> tuple[str, list[str], list[str]]:
    """What the orchestrator passes on: a summary of the user's earlier turns (else the
    request), and the decisions and artifacts settled in those turns and the request."""
    earlier = [
        message_text(m) for m in convo[:-1] if isinstance(m, HumanMessage) and not from_the_graph(m)
    ]
    decisions, artifacts = settled_lists([*earlier, request])
    summary = extractive_summary(earlier) or f"The user asks: {clip_words(request)}"
    return summary, decisions, artifacts


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

    def warm_up(self) -> None:
        """Build the router's indexes for this model's profiles now, as the first request to
        the orchestrator would (about half a second for the built-in profiles' examples):
        the graph calls this at start (`HandoverGraph.warm_up`), so a first turn is quick."""
        registry = self._registry()
        candidates = {n: p for n, p in registry.items() if n != ORCHESTRATOR_PROFILE}
        best_profile(WARM_UP_REQUEST, candidates, stay=registry.get(ORCHESTRATOR_PROFILE))

    def _registry(self) -> Mapping[str, Profile]:
        return self.profiles if self.profiles is not None else builtin_profiles()

    def _me(self, targets: list[str] | None) -> str:
        """Who offers this handover tool: the orchestrator cannot pick its own profile, a
        specialist can (to hand back) and misses only itself."""
        if targets is None:
            return ""
        if ORCHESTRATOR_PROFILE not in targets:
            return ORCHESTRATOR_PROFILE
        missing = [name for name in self._registry() if name not in targets]
        return missing[0] if len(missing) == 1 else ""

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
        targets = handover_targets(bound)
        if targets is not None:
            profiles = {n: p for n, p in profiles.items() if n in targets}
        package = package_in(convo)
        me = package.get("specialist") or self._me(targets)
        # the reply carries its agent's name already, so streamed chunks are named too
        if me and me != ORCHESTRATOR_PROFILE:
            reply = self._specialist(me, convo, bound, profiles, package)
            reply.name = me
        elif HANDOVER in tools:
            reply = self._orchestrator(convo, profiles, consults=CONSULT in tools)
            reply.name = "orchestrator"
        else:
            reply = AIMessage(content=self._summarise(convo))
        # usage as a hosted model reports it, counted with the default vocabulary
        counter = token_counter()
        sent, made = counter.count_messages(messages), counter.count_message(reply)
        reply.usage_metadata = {
            "input_tokens": sent,
            "output_tokens": made,
            "total_tokens": sent + made,
        }
        return ChatResult(generations=[ChatGeneration(message=reply)])

    # -- orchestrator --------------------------------------------------------------
    def _orchestrator(
        self, convo: list[BaseMessage], profiles: Mapping[str, Profile], consults: bool = False
    ) -> AIMessage:
        last = convo[-1] if convo else HumanMessage("")
        if isinstance(last, ToolMessage):
            result = message_text(last)
            if CONSULT in (last.name, _called(convo, last)):
                return AIMessage(content=self._from_consult(result))
            if result.startswith("ERROR"):
                return AIMessage(content=_could_not("hand this over", result))
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
        asked = consult_request(request, profiles=profiles) if consults else None
        if asked is not None:  # ask the named specialists the same question at once
            names, question = asked
            summary, decisions, artifacts = _passed_on(convo, request)
            consult = {
                "consults": [{"specialist_profile": n, "question": question} for n in names],
                "topic": topic_slug(question.split()[:4]),
                "summary": summary,
                "decisions": decisions[-8:],
                "artifacts": artifacts[-10:],
            }
            return AIMessage(content="", tool_calls=[make_call(CONSULT, consult)])
        stay = self._registry().get(ORCHESTRATOR_PROFILE)  # planning stays: not a target
        choice = choose_specialist(request, profiles=profiles, stay=stay)
        if choice is None:
            decisions = extract_decisions([request])
            noted = decisions + [
                a for a in extract_artifacts([request]) if not any(a in d for d in decisions)
            ]
            others = ", ".join(n for n in profiles if n != ORCHESTRATOR_PROFILE)
            opening = f"Noted: {'; '.join(n.rstrip('. ') for n in noted)}. " if noted else ""
            return AIMessage(
                content=f"{opening}I'm the orchestrator: I answer general questions myself and "
                f"hand specialist work to one of: {others}. Tell me what you need — a design, "
                "an architecture, a failing test, a release — and I'll bring in the right "
                "specialist with a short briefing."
            )
        name, keywords = choice
        summary, decisions, artifacts = _passed_on(convo, request)
        artifacts += [a for a in artifacts_in(request) if a not in artifacts]  # this request's
        ordered = sorted(keywords, key=lambda k: request.lower().find(k))
        args = {
            "specialist_profile": name,
            "topic": topic_slug(ordered[:3]),
            "summary": summary,
            "handover_reason": f"The request is about {', '.join(ordered[:3])}: "
            f"{profiles[name].description}",
            "decisions": decisions[-8:],
            "artifacts": artifacts[-10:],
            "return_condition": "task_complete"
            if TASK_COMPLETE.search(request)
            else "after_reply"
            if AFTER_REPLY.search(request)
            else "user_request",
        }
        return AIMessage(content="", tool_calls=[make_call(HANDOVER, args)])

    def _from_consult(self, result: str) -> str:
        """The orchestrator's answer from a consult's answers: each in a sentence or two."""
        if result.startswith("ERROR") and "\n\n[" not in result:
            return _could_not("consult them", result)
        lines = ["I asked the specialists at once. What they said:"]
        for block in result.split("\n\n[")[1:]:
            head, _, body = block.partition("\n")
            who = head.split("]", 1)[-1].split(" — ", 1)[0].strip()
            text = " ".join(body.split())
            if text.startswith("ERROR"):
                lines.append(
                    f"- {who}: not asked ({clip_words(for_people(text).removeprefix('ERROR: '), 24)})"
                )
            else:
                lines.append(f"- {who}: {first_sentence(text, 40)}")
        lines.append("Tell me which way you'd like to go, and I'll bring in whoever does it.")
        return "\n".join(lines)

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
        # behind an HTTP hop the package arrives as text only: then the request is in there
        brief = "" if package else next((message_text(m) for m in convo if from_the_graph(m)), "")
        convo = [m for m in convo if not from_the_graph(m)]
        last = convo[-1] if convo else None
        if isinstance(last, ToolMessage):
            result = message_text(last)
            own = last.name not in (HANDOVER, FULL_HISTORY, READ_BRIEFING)
            if own and result.startswith("ERROR"):  # a tool of its own failed: say so, answer on
                first = sum(isinstance(m, AIMessage) and m.name == name for m in convo) <= 1
                answer = self._answer(title, profile, package, last_request(convo), first)
                note = result.removeprefix("ERROR: ")
                return AIMessage(content=f"({last.name} did not work: {note})\n{answer}")
            return AIMessage(content=self._after_tool(title, last, package))
        question = consult_question(last)
        if question is not None:  # a consult: one answer, no transfers
            call = tool_for_request(question, tools)
            if call is not None:
                return AIMessage(content="", tool_calls=[call])
            return AIMessage(content=self._consult_answer(title, profile, package, question))
        request = message_text(last) if isinstance(last, HumanMessage) else ""
        if GO_BACK.search(request):  # (no cue matches an empty request)
            summary = self._work_summary(title, package, convo)
            return AIMessage(content="", tool_calls=[make_call(RETURN, {"summary": summary})])
        if FULL_HISTORY_ASK.search(request) and FULL_HISTORY in tools:
            return AIMessage(content="", tool_calls=[make_call(FULL_HISTORY, {})])
        if BRIEFING_ASK.search(request) and READ_BRIEFING in tools:
            topic = {"topic": package.get("topic")}
            return AIMessage(content="", tool_calls=[make_call(READ_BRIEFING, topic)])
        if PASS_ON.search(request) and HANDOVER in tools:
            others = {n: p for n, p in profiles.items() if n != name}
            choice = choose_specialist(request, profiles=others)
            if choice and named_profiles(request, others):
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
                return AIMessage(content="", tool_calls=[make_call(HANDOVER, args)])
        first = not any(isinstance(m, AIMessage) and m.name == name for m in convo)
        # on taking over, the request is the package's last user turn
        ask = request or ((package.get("request") or brief) if first else "")
        call = tool_for_request(ask, tools) if ask else None
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
                f"Continuing on '{topic}'. You asked: \"{clip_words(ask)}\"\n\n"
                f"As {title} ({focus}), here is the next step: I apply it within the decisions "
                "so far, say what changes and where, and flag anything that needs your call."
            )
        # Markdown: paragraphs and a list, as any chat UI renders them
        lines = [f"I'm the {title}, taking over '{topic}' from the handover package."]
        lines.append(f'You asked: "{clip_words(ask)}"')
        if package.get("summary"):
            lines.append(f"From the package: {package['summary']}")
        if package.get("decisions"):
            decided = "; ".join(d.rstrip(". ") for d in package["decisions"])
            lines.append(f"I'll keep to the decisions so far: {decided}.")
        if package.get("artifacts"):
            lines.append("Files I'll work from: " + ", ".join(package["artifacts"]) + ".")
        if package.get("last_time"):
            lines.append(f"Last time here: {clip_words(package['last_time'][0])}")
        lines.append(
            f"My proposal, as {title} ({focus}):\n\n1. Pin down the goal and constraints above."
            "\n2. Produce the concrete deliverable for this step.\n3. List open questions and risks."
        )
        return "\n\n".join(lines)

    def _consult_answer(
        self, title: str, profile: Profile | None, package: dict, question: str
    ) -> str:
        focus = profile.description.rstrip(".") if profile else "my specialty"
        lines = [
            f'As the {title}, on "{clip_words(question, 30)}": start from the constraints '
            "already decided and choose the simplest option that meets them.",
            f"I look at it for {focus[0].lower() + focus[1:]}.",
        ]
        if package.get("decisions"):
            decided = "; ".join(d.rstrip(". ") for d in package["decisions"])
            lines.append(f"It keeps to the decisions so far: {decided}.")
        lines.append(
            "Risks to watch: the parts only my specialty sees; I'd confirm them before committing."
        )
        return " ".join(lines)

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
        shown = "\n".join(text.splitlines()[:12]).replace(FENCE, "'" * 3)
        more = len(text.splitlines()) - 12
        tail = f"\n\n… ({more} more line{'s' if more != 1 else ''})" if more > 0 else ""
        return f"From {result.name}:\n\n{FENCE}\n{shown}\n{FENCE}" + tail

    def _work_summary(self, title: str, package: dict, convo: list[BaseMessage]) -> str:
        replies = sum(1 for m in convo if isinstance(m, AIMessage) and message_text(m))
        last = last_request(convo[:-1], package.get("request", "the handover request"))
        return (
            f"The {title} worked on '{package.get('topic', 'the task')}' "
            f"({replies} repl{'y' if replies == 1 else 'ies'}); "
            f'last request handled: "{first_sentence(last, 30)}".'
        )

    def _summarise(self, convo: list[BaseMessage]) -> str:
        """A summary: the first sentence of each line of the text it is asked to condense."""
        lines = [line for m in convo for line in message_text(m).splitlines() if line.strip()]
        return extractive_summary(lines, max_words=200)
