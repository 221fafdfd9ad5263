"""`handover chat`: the conversation loop, one turn at a time, and what the terminal says when a
turn fails or is stopped.

Each line typed goes to the thread's active agent; `trail` prints the handovers,
`resume` finishes a turn that failed, `exit`, `quit` or Ctrl-D leave. Ctrl-C at the
prompt clears the line; Ctrl-C during a turn stops it (`stop.py`) and the prompt
comes back.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage, messages_to_dict
from langgraph.graph.state import CompiledStateGraph

from ...nodes.handover.cost import saving_line, usage_line
from ...nodes.history.conversation import speaker
from ...state import ORCHESTRATOR, HandoverContext, message_text
from ..handover_graph import HandoverGraph
from ..turns import has_unfinished_step, run_turn, thread_config
from .printer import Printer
from .prompts import ChatHistory, Prompter, load_readline
from .review import ReviewDeferred, TerminalReviewer
from .stop import OnEvent, StopRequest, TurnStopped
from .text import plural

DEFERRED = (
    "⏸️  The handover waits for your review; it is asked first next time (`handover chat "
    "--review`, `handover run --review ...` or `handover resume --review` on this thread)."
)


def take_turn(
    graph: CompiledStateGraph,
    text: str | None,
    *,
    thread: str,
    context: HandoverContext,
    on_event: OnEvent,
    stop: StopRequest,
    reviewer: TerminalReviewer | None = None,
    message_id: str | None = None,
) -> dict[str, Any]:
    """`run_turn` streamed live, stopped by Ctrl-C (TurnStopped) with nothing more shown."""
    with stop.catching_ctrl_c():
        return run_turn(
            graph,
            text,
            thread_id=thread,
            context=context,
            on_event=stop.unless_stopping(on_event),
            on_review=reviewer,
            live=True,
            message_id=message_id,
        )


def failure_advice(graph, thread: str, exc: BaseException, *, in_chat: bool = False) -> str:  # type: ignore[no-untyped-def]
    """The error, and what to do next: resume the stored turn, or try again (nothing stored)."""
    text = f"handover: error: {type(exc).__name__}: {exc}"
    try:
        stored = has_unfinished_step(graph, thread_config(thread))
    except Exception:  # noqa: BLE001 - the advice must not fail too
        stored = False
    if stored and in_chat:
        return f"{text}\nYour message is saved; type 'resume' to finish its turn."
    if stored:
        return (
            f"{text}\nYour message is saved and its turn is unfinished. `handover resume --thread "
            f"{thread}` finishes it (running the same `handover run` again does too, without "
            "sending the message twice)."
        )
    return f"{text}\nNothing of this turn was stored; fix the cause and send it again."


def stopped_note(graph: CompiledStateGraph, thread: str, text: str | None) -> str:
    """What a turn stopped by Ctrl-C left, and what happens to it next."""
    snapshot = graph.get_state(thread_config(thread))  # type: ignore[arg-type]
    not_sent = " Your message was not sent." if text is not None else ""
    if not (snapshot.next or snapshot.tasks):
        return "⏹️  Stopped." + not_sent
    if text is not None and _last_user_text(snapshot) == text:
        return (
            "⏹️  Stopped. Your message is saved; the rest of its turn runs before your next "
            "message ('resume' runs it now)."
        )
    return (
        "⏹️  Stopped. The unfinished turn runs before your next message ('resume' runs it now)."
        + not_sent
    )


def _last_user_text(snapshot: Any) -> str | None:
    for message in reversed((snapshot.values or {}).get("messages") or []):
        if isinstance(message, HumanMessage):
            return message_text(message)
    return None


def print_trail(graph: HandoverGraph, thread: str, printer: Printer) -> int:
    """The thread's handovers, returns and refusals, numbered; 1 when the thread is empty."""
    config = thread_config(thread)
    values = graph.get_state(config).values  # type: ignore[arg-type]
    records = graph.trail(config)
    if not values:
        printer.say(f"No conversation on thread {thread!r} yet.")
        return 1
    printer.say(f"Handover trail of thread {thread!r} ({plural(len(records), 'event')}):")
    for i, r in enumerate(records, 1):
        if r["kind"] == "handover":
            printer.say(
                f"{i:>3}. {r['time']} 🔄 {r['from_agent']} -> {r['to_agent']} "
                f"topic={r['topic']} return={r['return_condition']} "
                f"tokens={r['estimated_tokens']}\n       📝 {r['reason']}\n"
                f"       📄 {r['briefing_path']}"
            )
        elif r["kind"] == "consult":
            printer.say(
                f"{i:>3}. {r['time']} 💬 {r['from_agent']} asked {r['to_agent']} "
                f"topic={r['topic']} tokens={r['estimated_tokens']} (consult)\n"
                f"       ❓ {r['reason']}\n"
                f"       📄 {r['briefing_path']}"
            )
        elif r["kind"] == "refused":
            printer.say(
                f"{i:>3}. {r['time']} ⛔ {r['from_agent']} -> {r['to_agent']}: {r.get('error')}"
            )
        else:
            printer.say(f"{i:>3}. {r['time']} ↩️  {r['from_agent']} -> orchestrator: {r['reason']}")
        if r["kind"] in ("handover", "consult") and "full_history_tokens" in r:
            printer.say(f"       {saving_line(r)}")
        if isinstance(r.get("usage"), dict):
            printer.say(f"       {usage_line(r['usage'])} while {r['from_agent']} held it")
    printer.say(f"Active agent: {values.get('active_agent', ORCHESTRATOR)}")
    return 0


def print_stats(
    graph: HandoverGraph, thread: str, printer: Printer, *, as_json: bool = False
) -> int:
    """What the thread's handovers cost and saved, summed (`HandoverGraph.stats`); 1 when the
    thread is empty."""
    config = thread_config(thread)
    values = graph.get_state(config).values  # type: ignore[arg-type]
    if not values:
        printer.say(f"No conversation on thread {thread!r} yet.")
        return 1
    stats = graph.stats(config)
    if as_json:
        printer.say(json.dumps(stats, indent=2))
        return 0
    printer.say(
        f"Handover costs of thread {thread!r}: {plural(stats['handovers'], 'handover')}, "
        f"{plural(stats['consults'], 'specialist')} consulted, "
        f"{plural(stats['returns'], 'return')}, {plural(stats['refused'], 'refusal')}"
    )
    sums = {
        "estimated_tokens": stats["package_tokens"],
        "full_history_tokens": stats["full_history_tokens"],
    }
    used = {
        key: stats[f"specialist_{key}"] for key in ("model_calls", "input_tokens", "output_tokens")
    }
    printer.say(f"  {saving_line(sums, history='the full history at each handover and consult')}")
    printer.say(f"  {usage_line(used)} by the specialists while they held the conversation")
    return 0


def print_transcript(
    graph: HandoverGraph, thread: str, printer: Printer, *, as_json: bool = False
) -> int:
    """The thread's whole conversation, archived turns included, oldest first (as JSON with
    `as_json`: LangChain's message dicts); 1 when the thread is empty."""
    config = thread_config(thread)
    messages = graph.transcript(config)
    if not messages:
        printer.say(f"No conversation on thread {thread!r} yet.")
        return 1
    if as_json:
        printer.say(json.dumps(messages_to_dict(messages), ensure_ascii=False, indent=1))
        return 0
    printer.say(f"Transcript of thread {thread!r} ({plural(len(messages), 'message')}):")
    for i, message in enumerate(messages, 1):
        who = speaker(message)
        if isinstance(message, ToolMessage):
            who = f"tool {message.name or ''}".strip()
        calls = [c["name"] for c in getattr(message, "tool_calls", None) or []]
        text = message_text(message).strip() or (f"(calls {', '.join(calls)})" if calls else "")
        first, *rest = f"{i:>4}. {who}: {text}".split("\n")
        printer.say("\n".join([first, *(f"      {line}" if line else "" for line in rest)]))
    return 0


def chat(
    graph: HandoverGraph,
    thread: str,
    ctx: HandoverContext,
    printer: Printer,
    prompter: Prompter,
    reviewer: TerminalReviewer,
    stop: StopRequest,
) -> None:
    """Read lines and answer them until `exit`, `quit` or the end of input."""
    history = ChatHistory(
        ctx.project_root, printer, readline=load_readline() if prompter.interactive else None
    )
    if prompter.interactive:
        history.load()
    printer.say(
        "Type a message (Ctrl-D or 'exit' to leave, 'trail' for the handovers, 'resume' to "
        "finish a turn that failed, Ctrl-C to stop a reply"
        + ("; ↑/↓ recall earlier lines)." if history.readline is not None else ").")
    )
    # finish a step a crash left unfinished, or a review left waiting, before the first message
    _turn(graph, None, thread, ctx, printer, reviewer, stop)
    while True:
        try:
            text = prompter.ask("🧑 You: ").strip()
        except KeyboardInterrupt:  # Ctrl-C at the prompt: a new, empty line
            continue
        except EOFError:
            return
        if text in ("exit", "quit"):
            return
        if prompter.interactive:
            history.add(text)
        if text == "trail":
            print_trail(graph, thread, printer)
            continue
        if not text:
            continue
        printer.thinking(_active_agent(graph, thread))
        values = _turn(
            graph, None if text == "resume" else text, thread, ctx, printer, reviewer, stop
        )
        if values is not None:  # else stopped, waiting for review, or failed: it said so
            printer.say(f"   (next message goes to: {values.get('active_agent') or ORCHESTRATOR})")


def _active_agent(graph: CompiledStateGraph, thread: str) -> str:
    """Who the thread's next message goes to (the orchestrator when that cannot be read)."""
    try:
        values = graph.get_state(thread_config(thread)).values  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - only the spinner's label depends on it
        return ORCHESTRATOR
    return str((values or {}).get("active_agent") or ORCHESTRATOR)


def _turn(graph, text, thread, ctx, printer, reviewer, stop) -> dict[str, Any] | None:  # type: ignore[no-untyped-def]
    """One turn of the chat: its state values, or None when it did not finish (it was stopped,
    a review was left waiting, or it failed; the chat says which and goes on)."""
    try:
        return take_turn(
            graph,
            text,
            thread=thread,
            context=ctx,
            on_event=printer,
            stop=stop,
            reviewer=reviewer,
        )
    except ReviewDeferred:
        printer.say(DEFERRED)
    except TurnStopped:
        printer.idle()
        printer.say(stopped_note(graph, thread, text))
    except Exception as exc:  # keep the chat going; say what happened and what to do
        printer.say(failure_advice(graph, thread, exc, in_chat=True))
    finally:
        printer.idle()
    return None
