"""The terminal's printer: graph events shown the way a person reads a conversation.

Replies stream under the speaker's persona marker as their tokens arrive; each tool
call is one line (`🔧 read_file(path="src/app.py") → 7 lines`, `📚` for stages 2
and 3); handovers print as `🔄 Handoff to` / `📝 Reason` / `📦 Package` lines,
refusals as `⛔`, returns as `↩️`. On a TTY a spinner with elapsed seconds shows
while an agent thinks or a tool runs.
"""

from __future__ import annotations

import threading
from typing import Any, TextIO

from langchain_core.messages import AIMessage, ToolMessage

from ...nodes.handover.cost import saving_line, usage_line
from ...specialists import ProfileRegistry, resolve_profiles
from ...state import message_text
from ..turns import STEP_EVENT, TASK_EVENT, TOKEN_EVENT
from .review_text import package_lines
from .spinner import Spinner, is_terminal
from .text import agent_label, agent_title, plural, tool_line

QUIET_TOOLS = ("handover_to_specialist", "return_to_orchestrator")
"""Tools whose results the trail lines (🔄, ⛔, ↩️) already tell."""


def label_of(message: AIMessage, profiles: ProfileRegistry) -> str:
    """`🖌️ [frontend designer]` for a specialist's reply, `🧭 [a0 software orchestrator]` for
    the orchestrator's: the persona marker of the profile, as streamed metadata says it."""
    meta = message.response_metadata or {}
    marker = f"{meta.get('persona_emoji', '')} {meta.get('persona_marker')}".strip()
    return agent_label(message.name or "", profiles, marker if meta.get("persona_marker") else "")


class Printer:
    """Prints the events of `run_turn(..., on_event=printer, live=True)` (and without `live`:
    one update per graph step)."""

    def __init__(
        self, out: TextIO, profiles: ProfileRegistry | None = None, *, spinner: bool | None = None
    ) -> None:
        self.out = out
        self.profiles = profiles if profiles is not None else resolve_profiles()
        self.lock = threading.RLock()
        self.spinner = Spinner(
            out, self.lock, enabled=is_terminal(out) if spinner is None else spinner
        )
        self._line_open = False  # the cursor is after streamed text, not at a line's start
        self._streaming: str | None = None  # id of the reply being streamed
        self._fresh = False  # nothing of that reply printed yet
        self._shown: set[str] = set()  # ids of replies already on screen
        self._shown_calls: set[str] = set()  # tool-call ids whose result is on screen
        self._calls: dict[str, tuple[str, Any]] = {}  # tool-call id -> (name, args)

    # --- events -------------------------------------------------------------------------
    def __call__(self, node: str, update: dict[str, Any]) -> None:
        live = {TOKEN_EVENT: self.token, TASK_EVENT: self.task, STEP_EVENT: self.step}
        if node in live:
            live[node](update)
        elif node == "resume":
            self.resuming(update)
        elif node == "already_sent":
            self.say(
                "↪ This message was sent before, by a run that stopped before showing its "
                "answer; it is not sent again."
            )
        elif node == "review":
            if "answer" not in update:  # nobody to answer it here: say so
                self.review_waiting(update["request"])
        else:
            self.graph_step(node, update)

    def resuming(self, update: dict[str, Any]) -> None:
        pending = update.get("pending")
        if update.get("review") and pending:
            self.say(f"⏸️  The turn of {pending[:80]!r} waits for your review of its handover.")
        elif update.get("review"):
            self.say("⏸️  A handover waits for your review.")
        elif pending:
            self.say(f"♻️  Resuming the unfinished turn of: {pending[:80]!r}")
        else:
            self.say("♻️  Resuming the step a previous run left unfinished.")

    def review_waiting(self, request: dict[str, Any]) -> None:
        for line in package_lines(request, self.profiles):
            self.say(line)
        self.say(
            "⏸️  This handover waits for your review: answer it with `--review` (`handover chat "
            "--review`, `handover run --review ...` or `handover resume --review`)."
        )

    def token(self, event: dict[str, Any]) -> None:
        """A piece of a reply: the speaker's marker once, then the text as it comes."""
        self.spinner.stop()
        with self.lock:
            if event.get("id") is None or self._streaming != event["id"]:
                self._end_line()
                label = agent_label(
                    event.get("agent", ""), self.profiles, event.get("persona_marker", "")
                )
                self._write(f"{label} ")
                self._streaming, self._fresh = event.get("id"), True
                if event.get("id"):
                    self._shown.add(event["id"])
            text = event.get("text", "")
            if self._fresh:
                text = text.lstrip()
                if not text:
                    return
                self._fresh = False
            self._write(text)

    def task(self, event: dict[str, Any]) -> None:
        """A step starts: show who is at work until something prints."""
        with self.lock:
            self._end_line()
        agent, node = event.get("agent", ""), event.get("node", "")
        if node.startswith("__"):  # LangGraph's own steps
            return
        if not event.get("ns") and node == "handover":
            self.spinner.start("handing over…")
        elif node == "tools" and event.get("tool"):
            self.spinner.start(f"{agent_title(agent, self.profiles)} is running {event['tool']}…")
        else:
            self.thinking(agent)

    def step(self, event: dict[str, Any]) -> None:
        """A step of an agent's loop ended: its reply (streamed already) or a tool's result."""
        self._show_messages(event.get("update", {}).get("messages") or [], inner=True)

    def graph_step(self, node: str, update: dict[str, Any]) -> None:
        """A graph node's update: what was not on screen yet, and the trail's lines."""
        records = update.get("handovers") or []
        for record in records:
            if record["kind"] != "return":
                self.trail_event(record)
        self._show_messages(update.get("messages") or [])
        for record in records:
            if record["kind"] == "return":
                self.trail_event(record)

    def _show_messages(self, messages: list[Any], *, inner: bool = False) -> None:
        """Replies not on screen yet and tools' results; the calls they answer are noted (an
        agent's inner step has the last word on a call)."""
        for message in messages:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    noted = (call["name"], call.get("args"))
                    if inner or (call.get("id") or "") not in self._calls:
                        self._calls[call.get("id") or ""] = noted
                self.reply(message)
            elif isinstance(message, ToolMessage):
                self.tool_result(message)

    # --- pieces -------------------------------------------------------------------------
    def reply(self, message: AIMessage) -> None:
        """A whole reply: printed unless its tokens already were."""
        if message.id and message.id in self._shown:
            if message.id == self._streaming:
                with self.lock:
                    self._end_line()
            return
        text = message_text(message).strip()
        if message.id:
            self._shown.add(message.id)
        if text:
            self.say(f"{label_of(message, self.profiles)} {text}")

    def tool_result(self, message: ToolMessage) -> None:
        if message.tool_call_id in self._shown_calls:
            return
        self._shown_calls.add(message.tool_call_id)
        if message.name in QUIET_TOOLS:
            return
        name, args = self._calls.get(message.tool_call_id, (message.name or "tool", None))
        self.say(f"   {tool_line(message.name or name, args, message_text(message))}")

    def trail_event(self, r: dict[str, Any]) -> None:
        if r["kind"] == "handover":
            self.say(f"🔄 Handoff to: {r['to_agent']}")
            self.say(f"📝 Reason: {r['reason']}")
            self.say(
                f"📦 Package: {plural(r['estimated_tokens'], 'token')}, return condition "
                f"{r['return_condition']}; briefing: {r['briefing_path']}"
            )
        elif r["kind"] == "refused":
            self.say(f"⛔ Handoff to {r['to_agent']} refused: {r.get('error', '')}")
        elif r["kind"] == "consult":
            self.say(f"💬 Consult: {r['to_agent']} is asked: {r['reason']}")
            self.say(
                f"📦 Package: {plural(r['estimated_tokens'], 'token')}; briefing: "
                f"{r['briefing_path']}"
            )
        else:
            self.say(f"↩️  {r['from_agent']} hands back to the orchestrator: {r['reason']}")
            if isinstance(r.get("usage"), dict):
                self.say(f"{usage_line(r['usage'])} while {r['from_agent']} held it")
        if r["kind"] in ("handover", "consult") and "full_history_tokens" in r:
            self.say(saving_line(r))

    # --- output -------------------------------------------------------------------------
    def thinking(self, agent: str) -> None:
        """Show `<agent> is thinking… 3s` (TTY only) until the next output."""
        self.spinner.start(f"{agent_title(agent, self.profiles)} is thinking…")

    def stopping(self) -> None:
        """Ctrl-C was pressed: the spinner (if it turns) says the turn is stopping. Called from
        a signal handler, so it writes nothing itself."""
        self.spinner.relabel("stopping…")

    def idle(self) -> None:
        """Stop the spinner and end a streamed line: the terminal is the person's again."""
        self.spinner.stop()
        with self.lock:
            self._end_line()

    def say(self, text: str) -> None:
        """A line of its own."""
        self.write(text + "\n")

    def write(self, text: str) -> None:
        """Text without a newline (a prompt)."""
        self.spinner.stop()
        with self.lock:
            self._end_line()
            self.out.write(text)
            self.out.flush()

    def _write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._line_open = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False
        self._streaming = None
