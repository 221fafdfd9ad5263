"""The `handover` console command: chat, run, demo, trail, transcript.

handover demo                      # scripted conversation on the offline model
handover chat [--thread ID] [--review]   # interactive, line editing and history per project
handover run "message" [--thread ID] [--review]
handover trail [--thread ID]       # the thread's handovers with tokens and briefing paths
handover transcript [--thread ID] [--json]   # the whole conversation, archived turns included
handover stats [--thread ID] [--json]   # what the handovers sent, saved and the specialists used
handover profiles                  # the specialists of this build (built-ins plus --profiles DIR)
handover --version

Replies stream under the speaker's persona marker; on a terminal a spinner shows
who is at work (`graph/terminal/`). `--review` pauses each handover for you to
approve, edit or reject (`graph/terminal/review.py`). Ctrl-C stops the turn that
runs (`graph/terminal/stop.py`); in the chat the prompt comes back.

Exit status: 0 done; 1 a model or network failure (the turn is saved and
resumable); 2 a usage error or input refused (nothing stored); 3 a handover waits
for your review; 130 interrupted (the conversation is saved).

Checkpoints go to `--checkpointer` (default HANDOVER_CHECKPOINTER, else the SQLite file
<root>/.a0proj/checkpoints.sqlite): a SQLite file path or a postgresql:// URL.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import uuid
from collections.abc import Sequence
from typing import TextIO

from langchain_core.messages import AIMessage, HumanMessage

from ..specialists import ORCHESTRATOR_PROFILE, ProfileRegistry, resolve_profiles
from ..state import ORCHESTRATOR, HandoverContext, InputError
from .builder import build_graph
from .checkpointers import (
    CheckpointerError,
    CheckpointerSpecError,
    close_checkpointer,
    describe_checkpointer,
    is_postgres_url,
    open_checkpointer,
)
from .handover_graph import model_problem
from .runs import RunJournal
from .terminal import (
    Printer,
    Prompter,
    ReviewDeferred,
    StopRequest,
    TerminalReviewer,
    TurnStopped,
    agent_label,
    plural,
)
from .terminal.chat import (
    DEFERRED,
    chat,
    failure_advice,
    print_stats,
    print_trail,
    print_transcript,
    take_turn,
)
from .terminal.review import EDIT_HELP
from .turns import ReviewPending, has_unfinished_step, thread_config, thread_status

__all__ = ["Printer", "failure_advice", "main"]

DEMO_SCRIPT = (
    "Hi! We're starting the marketing site for our app. We decided to use React, and the "
    "first page lives in src/pages/Landing.tsx.",
    "Please design the landing page hero: bold typography and a clear layout.",
    "Make the call-to-action stand out more on mobile.",
    "Thanks, that's all. Go back to the orchestrator please.",
    "Before we build it, ask the solution architect and the frontend designer: should the "
    "hero render on the server or in the browser?",
    "Quick question: the unit test for the landing page is flaky, what should I check?",
    "Thanks!",
)

DEEP_SCRIPT = (
    "Which architecture should we pick for the billing service: microservices or a monolith?",
    "Before you answer, please read the full history of this conversation.",
    "Please ask the security data engineer to review the auth design for it.",
    "Thanks, go back to the orchestrator.",
)
DEEP_HISTORY_MESSAGES = 1000
DEEP_FULL_HISTORY_CAP = 3000


def seed_long_conversation(graph, thread: str, messages: int) -> None:  # type: ignore[no-untyped-def]
    """Give a demo thread a long earlier conversation with the orchestrator."""
    seeded = [
        message
        for i in range(messages // 2)
        for message in (
            HumanMessage(
                f"Earlier note {i}: the billing service must handle {100 + i} invoices a minute; "
                f"we decided to keep invoice ids stable (see docs/billing-{i % 7}.md)."
            ),
            AIMessage(
                f"Noted point {i}: throughput target {100 + i}/min and stable invoice ids.",
                name=ORCHESTRATOR,
            ),
        )
    ]
    graph.update_state(thread_config(thread), {"messages": seeded}, as_node=ORCHESTRATOR)


DEFAULT_THREAD = "main"
REVIEW_HELP = (
    "pause every handover for you to approve, edit or reject it (a/e/r) before it is carried "
    "out; a review a previous run left waiting is asked first. "
    + EDIT_HELP
    + " Reject asks for a reason, which the caller reads. With `run`, the answers come from "
    "stdin, one per line."
)


EXIT_REVIEW_WAITING = 3
EXIT_STATUS = (
    "Exit status: 0 done; 1 a model or network failure (the turn is saved: `handover resume` "
    "finishes it); 2 a usage error or input refused (nothing stored); 3 a handover waits for "
    "your review; 130 interrupted (the conversation is saved)."
)


class ReviewWaiting(Exception):
    """The command ended with a handover waiting for review (its input ended first)."""


def package_version() -> str:
    """The installed distribution's version, as `specialist_handover.__version__` says it
    (read here, not imported from the package root: a module imports nothing above it);
    `0+unknown` from a source tree not installed."""
    from importlib import metadata

    try:
        return metadata.version("specialist-handover")
    except metadata.PackageNotFoundError:
        return "0+unknown"


COMMANDS: dict[str, tuple[str, str, str]] = {
    "chat": (
        "thread common review",
        "interactive conversation",
        "An interactive conversation: replies stream under the speaker's marker; line editing "
        "and a history per project (<root>/.a0proj/chat_history). Type 'trail' for the "
        "handovers, 'resume' to finish a turn that failed, 'exit' or Ctrl-D to leave. Ctrl-C "
        "stops a reply (the rest of its turn runs before your next message) or clears the line "
        "you are typing.",
    ),
    "run": (
        "thread common review",
        "send one message (scriptable)",
        "Send one message on a thread and print the turn as it happens; a turn a failure or "
        "crash left unfinished on the thread is finished first, and running the same command "
        "again never sends the message twice. Exits 3 when a handover is left waiting for your "
        "review.",
    ),
    "demo": (
        "common",
        "a scripted conversation on the offline model",
        "Play a scripted conversation on the built-in offline model (no key, no network): a "
        "handover, the specialist's turns, a return to the orchestrator, then the thread's trail.",
    ),
    "trail": (
        "thread common",
        "print a thread's handovers",
        "Print a thread's handovers, returns and refusals in order, with each package's token "
        "count and briefing file, then who holds the thread. Exits 1 when the thread has no "
        "conversation yet.",
    ),
    "transcript": (
        "thread common",
        "print a thread's whole conversation",
        "Print a thread's whole conversation, oldest first: the archived turns (the graph state "
        "keeps the newest 200 or so messages) and the recent ones. Exits 1 when the thread has "
        "no conversation yet.",
    ),
    "stats": (
        "thread common",
        "sum what a thread's handovers cost and saved",
        "Sum a thread's handovers: tokens their packages sent against what the full history "
        "would have cost at each one, and the specialists' model calls and tokens (from the "
        "models' usage metadata) while they held the conversation. Exits 1 when the thread has "
        "no conversation yet.",
    ),
    "resume": (
        "thread common review",
        "finish a turn a failure or crash left unfinished",
        "Finish the turn a failure, a crash or Ctrl-C left unfinished on a thread, without "
        "sending anything new (with --review, answer a handover waiting for review first). "
        "Exits 3 when a handover is left waiting for your review.",
    ),
    "profiles": (
        "common",
        "list the specialists of this build",
        "List the profiles of this build, the built-in specialists plus those of --profiles "
        "DIR, with each one's marker, tools, source file and one-line description.",
    ),
}
"""Each subcommand: its option groups (parents, in order), its line in `--help`, its description."""


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--project-root",
        help="absolute project folder (default: HANDOVER_PROJECT_ROOT or the working directory)",
    )
    common.add_argument("--model", help="'offline' or an init_chat_model string")
    store = common.add_mutually_exclusive_group()
    store.add_argument(
        "--checkpointer",
        metavar="PATH_OR_URL",
        help="where checkpoints go: a SQLite file path or a postgresql://user:password@host:port/"
        "dbname URL (default: HANDOVER_CHECKPOINTER, else <root>/.a0proj/checkpoints.sqlite)",
    )
    store.add_argument(
        "--db",
        help="SQLite checkpoint file, the same as --checkpointer PATH "
        "(default: <root>/.a0proj/checkpoints.sqlite)",
    )
    common.add_argument(
        "--profiles",
        metavar="DIR",
        help="a folder of profile files added to the built-in specialists "
        "(default: HANDOVER_PROFILES)",
    )
    thread = argparse.ArgumentParser(add_help=False)
    thread.add_argument("--thread", help=f"conversation thread id (default: {DEFAULT_THREAD})")
    review = argparse.ArgumentParser(add_help=False)
    review.add_argument("--review", action="store_true", help=REVIEW_HELP)
    groups = {"common": common, "thread": thread, "review": review}
    parser = argparse.ArgumentParser(
        prog="handover",
        description="Talk to an orchestrator that hands over to specialists.",
        epilog=f"Conversations live on threads: --thread ID (default: {DEFAULT_THREAD}; demo "
        "makes a new demo-<random> each time). `handover COMMAND --help` shows a command's "
        f"options. {EXIT_STATUS}",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    commands = {
        name: sub.add_parser(
            name,
            parents=[groups[group] for group in parents.split()],
            help=summary,
            description=description,
            epilog=EXIT_STATUS if name in ("run", "resume") else None,
        )
        for name, (parents, summary, description) in COMMANDS.items()
    }
    commands["run"].add_argument("message", help="the user message")
    commands["demo"].add_argument(
        "--thread", help="conversation thread id (default: demo-<random>, a new thread each time)"
    )
    commands["demo"].add_argument(
        "--scenario",
        choices=("basic", "deep"),
        default="basic",
        help="basic: handover, specialist turns, return; deep: a 1,000-message history, "
        "request_full_history (capped and compacted), a chain of two specialists, a return",
    )
    commands["transcript"].add_argument(
        "--json", action="store_true", help="LangChain's message dicts, as a JSON list"
    )
    commands["stats"].add_argument("--json", action="store_true", help="the sums as a JSON object")
    return parser


def _context(args: argparse.Namespace) -> HandoverContext:
    ctx = HandoverContext()
    if args.project_root:
        ctx.project_root = args.project_root
    if args.model:
        ctx.model = args.model
    if getattr(args, "review", False):
        ctx.review_handovers = True
    if args.command == "demo":
        ctx.model = "offline"
        if args.scenario == "deep":
            ctx.full_history_max_tokens = DEEP_FULL_HISTORY_CAP
    return ctx.validated()


def _model_banner(ctx: HandoverContext) -> str:
    if ctx.model == "offline":
        why = "it was asked for" if os.environ.get("OPENAI_API_KEY") else "no OPENAI_API_KEY is set"
        return (
            f"Model: offline — the built-in deterministic model ({why}). "
            "Set HANDOVER_MODEL=openai:gpt-4o (or any init_chat_model string) for a real one."
        )
    return f"Model: {ctx.model}"


def _fail(text: str, code: int = 2, printer: Printer | None = None) -> int:
    """Print `text` on stderr (the printer idle first) and return the exit code `code`."""
    if printer is not None:
        printer.idle()
    print(text, file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Entry point of the `handover` command; returns the exit code."""
    out = out or sys.stdout
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        ctx = _context(args)
        profiles = resolve_profiles(args.profiles or os.environ.get("HANDOVER_PROFILES") or None)
    except (ValueError, OSError) as exc:  # a ProfileFileError too
        return _fail(f"handover: error: {exc}")
    if args.command == "profiles":
        return _print_profiles(profiles, out)
    if args.command not in ("trail", "transcript", "stats"):
        # the provider must resolve and have its key before a message is stored
        if problem := model_problem(ctx.model, profiles):
            return _fail(f"handover: error: the model {ctx.model!r} cannot be used: {problem}")
    if not os.path.isdir(ctx.project_root):
        return _fail(f"handover: error: project root {ctx.project_root!r} is not a folder")
    spec = checkpointer_spec(args)
    where = describe_checkpointer(spec, project_root=ctx.project_root)
    try:
        checkpointer = open_checkpointer(spec, project_root=ctx.project_root)
    except (OSError, ValueError, CheckpointerError, sqlite3.Error) as exc:
        if is_postgres_url(spec) or isinstance(exc, (CheckpointerSpecError, CheckpointerError)):
            return _fail(f"handover: error: {exc}")  # names the value, no password
        return _fail(f"handover: error: cannot open checkpoint file {where}: {exc}")
    try:
        return _main_with(args, ctx, profiles, checkpointer, where, out)
    finally:
        close_checkpointer(checkpointer)


def checkpointer_spec(args: argparse.Namespace) -> str | None:
    """--checkpointer, else --db (a SQLite path), else HANDOVER_CHECKPOINTER, else None."""
    return args.checkpointer or args.db or os.environ.get("HANDOVER_CHECKPOINTER") or None


def _main_with(  # type: ignore[no-untyped-def]
    args: argparse.Namespace, ctx: HandoverContext, profiles, checkpointer, where: str, out: TextIO
) -> int:
    try:
        graph = build_graph(checkpointer=checkpointer, profiles=profiles)
    except ValueError as exc:  # a ProfileFileError too
        return _fail(f"handover: error: {exc}")
    if args.command in ("chat", "run", "demo"):
        graph.warm_up(ctx)  # the offline router's indexes: before the first turn, not in it
    printer = Printer(out, profiles)
    stop = StopRequest(on_request=printer.stopping)  # Ctrl-C during a turn
    graph = stop.bind(graph)
    thread = args.thread or (
        "demo-" + uuid.uuid4().hex[:8] if args.command == "demo" else DEFAULT_THREAD
    )
    if args.command == "trail":
        return print_trail(graph, thread, printer)
    if args.command == "transcript":
        return print_transcript(graph, thread, printer, as_json=args.json)
    if args.command == "stats":
        return print_stats(graph, thread, printer, as_json=args.json)
    printer.say(_model_banner(ctx))
    printer.say(f"Thread: {thread}   checkpoints: {where}")
    try:
        if args.command in ("chat", "run", "resume"):
            _say_who_holds(graph, thread, printer)
        _run_command(args, graph, thread, ctx, printer, stop)
    except (KeyboardInterrupt, TurnStopped):
        printer.say("\ninterrupted; the conversation is saved and continues on the next run")
        return 130
    except ReviewWaiting:
        return _fail(
            f"handover: a handover on thread {thread!r} waits for your review, so the turn is "
            f"not finished (exit {EXIT_REVIEW_WAITING}). Answer it with `handover resume "
            f"--review --thread {thread}` (or `handover chat --review --thread {thread}`).",
            EXIT_REVIEW_WAITING,
            printer,
        )
    except InputError as exc:  # refused before anything was stored
        return _fail(f"handover: error: {exc}", 2, printer)
    except ReviewPending:  # refused before anything was stored
        return _fail(
            f"handover: error: a handover on thread {thread!r} waits for your review; answer "
            f"it first with --review (`handover run --review ... --thread {thread}`, "
            f"`handover chat --review --thread {thread}` or `handover resume --review --thread "
            f"{thread}`). Your message was not stored.",
            2,
            printer,
        )
    except Exception as exc:  # a model or network failure: a message, not a traceback
        return _fail(failure_advice(graph, thread, exc), 1, printer)
    finally:
        printer.idle()
    return 0


def _say_who_holds(graph, thread: str, printer: Printer) -> None:  # type: ignore[no-untyped-def]
    """`↪ Thread 'main' continues with 🖌️ [frontend designer].` for a thread already started."""
    status = thread_status(graph, thread)
    if not status["started"]:
        return
    request = status["reviews"][0] if status["reviews"] else None
    asked = request if isinstance(request, dict) else {}
    holder = agent_label(asked.get("from_agent") or status["active_agent"], printer.profiles)
    line = f"↪ Thread {thread!r} continues with {holder}"
    if status["reviews"]:
        target = asked.get("specialist_profile")
        line += (
            f"; its handover to {agent_label(str(target), printer.profiles)} waits for your review"
            if target
            else "; a handover waits for your review"
        )
    elif status["unfinished"]:
        line += "; a step left unfinished is completed first"
    printer.say(line + ".")


def _run_command(  # type: ignore[no-untyped-def]
    args, graph, thread: str, ctx: HandoverContext, printer: Printer, stop: StopRequest
) -> None:
    prompter = Prompter(printer)
    reviewer = TerminalReviewer(printer, stop.interruptible(prompter.ask))
    if args.command in ("run", "resume"):
        if args.command == "resume" and not has_unfinished_step(graph, thread_config(thread)):
            printer.say(f"Nothing to resume on thread {thread!r}.")
            return
        text = args.message if args.command == "run" else None
        _turn(graph, text, thread, ctx, printer, stop, reviewer if args.review else None)
        if thread_status(graph, thread)["reviews"]:  # the command leaves a review waiting
            raise ReviewWaiting(thread)
    elif args.command == "demo":
        printer.say(
            "This demo plays a scripted conversation. You talk to the orchestrator; when a "
            "request belongs to a specialist it hands the conversation over with a small "
            "package (🔄 📝 📦 lines), the specialist answers in its own voice, and control "
            "comes back (↩️) when the user asks or the task is done. The line after each turn "
            "says who gets the next message."
        )
        script: Sequence[str] = DEMO_SCRIPT
        if args.scenario == "deep":
            seed_long_conversation(graph, thread, DEEP_HISTORY_MESSAGES)
            printer.say(
                f"(seeded an earlier conversation of {plural(DEEP_HISTORY_MESSAGES, 'message')}; "
                "request_full_history is capped at "
                f"{plural(ctx.full_history_max_tokens, 'token')} here)"
            )
            script = DEEP_SCRIPT
        for text in script:
            _turn(graph, text, thread, ctx, printer, stop)
        printer.say(f"\nDemo done. See the trail with: handover trail --thread {thread}")
        print_trail(graph, thread, printer)
        print_stats(graph, thread, printer)
    else:
        chat(graph, thread, ctx, printer, prompter, reviewer, stop)


def _turn(  # type: ignore[no-untyped-def]
    graph, text: str | None, thread, ctx: HandoverContext, printer: Printer, stop, reviewer=None
) -> None:
    """One turn of `run` or `demo`, or (`text` None) what `resume` finishes."""
    journal, message_id, resent = RunJournal(ctx.project_root), None, []
    if text is not None:
        status = thread_status(graph, thread)
        if status["reviews"] and reviewer is None:  # refused before the message is shown or stored
            raise ReviewPending(f"thread {thread!r} has a handover waiting for review")
        printer.say(f"\n🧑 You: {text}")
        printer.thinking(status["active_agent"])
        message_id = journal.message_id_for(thread, text)  # the same id when this is a rerun

    def on_event(node: str, update: dict) -> None:  # type: ignore[type-arg]
        if node == "already_sent":
            resent.append(update["message_id"])
        printer(node, update)

    try:
        values = take_turn(
            graph,
            text,
            thread=thread,
            context=ctx,
            on_event=on_event,
            stop=stop,
            reviewer=reviewer,
            message_id=message_id,
        )
    except ReviewDeferred:
        printer.say(DEFERRED)
        return
    finally:
        printer.idle()
    if resent:  # show the answer the stopped run did not get to show
        messages = values.get("messages") or []
        ids = [m.id for m in messages]
        after = messages[ids.index(message_id) + 1 :] if message_id in ids else []
        printer.graph_step("replay", {"messages": after})
    if text is not None:
        journal.done(thread)
    elif thread_status(graph, thread)["reviews"]:  # resume says so before the next line
        raise ReviewWaiting(thread)
    printer.say(f"   (next message goes to: {values.get('active_agent', ORCHESTRATOR)})")


def _print_profiles(profiles: ProfileRegistry, out: TextIO) -> int:
    count = (
        f"{plural(len(profiles), 'profile')} ({plural(len(profiles.specialists), 'specialist')})"
    )
    print(f"{count}:", file=out)
    for name, profile in profiles.items():
        role = "orchestrator" if name == ORCHESTRATOR_PROFILE else "specialist"
        tools = f"  tools: {', '.join(profile.tools)}" if profile.tools else ""
        source = f"  [{profile.source}]" if profile.source and "/" in profile.source else ""
        print(f"{profile.label}  {name} ({role}){tools}{source}", file=out)
        print(f"    {profile.description}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
