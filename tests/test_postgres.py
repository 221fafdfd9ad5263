"""The conversation suite on a real PostgreSQL server (`PostgresSaver`, `AsyncPostgresSaver`).

Needs HANDOVER_POSTGRES_URL (`.ci/run` starts a throwaway cluster with `.ci/postgres.sh`);
without it these tests are skipped, and with CI set they fail. Each test gets a fresh database
of its own (the `postgres_url` fixture in conftest.py).

    bash -c 'source .ci/postgres.sh && .venv/bin/python -m pytest -q tests/test_postgres.py'
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from specialist_handover.graph import build_graph
from specialist_handover.graph.checkpointers import close_checkpointer, open_checkpointer
from specialist_handover.graph.cli import main as cli_main
from specialist_handover.graph.turns import run_turn, thread_config
from specialist_handover.state import HandoverContext, TokenCounter
from tests.support.graphs import REQUESTS
from tests.support.models import RecordingOfflineModel, check_tool_history, system_text

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
HERO = "Please design the landing page hero with bold typography."


# --- helpers ---------------------------------------------------------------------------------


@pytest.fixture
def ctx(tmp_path) -> HandoverContext:
    root = tmp_path / "project"
    root.mkdir()
    return HandoverContext(project_root=str(root), model="offline")


@pytest.fixture
def saver(postgres_url, ctx):
    """A PostgresSaver on the test's own database (closed afterwards)."""
    checkpointer = open_checkpointer(postgres_url, project_root=ctx.project_root)
    yield checkpointer
    close_checkpointer(checkpointer)


def say(graph, text: str, ctx, thread: str = "t") -> dict:
    return run_turn(graph, text, thread_id=thread, context=ctx)


def transcript(postgres_url: str, ctx, thread: str = "t") -> list:
    """The thread's whole conversation as a new connection (another client) reads it."""
    other = open_checkpointer(postgres_url, project_root=ctx.project_root)
    try:
        return build_graph(checkpointer=other).transcript(thread_config(thread))
    finally:
        close_checkpointer(other)


def stored(postgres_url: str, ctx, thread: str = "t") -> dict:
    """The thread's state as a new connection (another client) reads it from the server."""
    other = open_checkpointer(postgres_url, project_root=ctx.project_root)
    try:
        return build_graph(checkpointer=other).get_state(thread_config(thread)).values
    finally:
        close_checkpointer(other)


def briefing_ids(root: str) -> Counter:
    ids: Counter = Counter()
    for path in Path(root, ".a0proj", "handover").glob("*.md"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("<!-- handover-id: "):
                ids[line.removeprefix("<!-- handover-id: ").removesuffix(" -->")] += 1
    return ids


def child_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "HANDOVER_MODEL", "HANDOVER_CHECKPOINTER")
    }
    env["PYTHONPATH"] = str(REPO)
    return env


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specialist_handover.graph.cli", *args],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )


# --- the conversation on PostgresSaver -----------------------------------------------------


def test_handover_and_specialist_reply_are_stored_in_postgres(saver, postgres_url, ctx):
    assert type(saver).__name__ == "PostgresSaver"
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=saver, model=model)
    values = say(graph, HERO, ctx)
    trail = values["handovers"]
    assert [(r["kind"], r["to_agent"]) for r in trail] == [("handover", "frontend_designer")]
    assert Path(trail[0]["briefing_path"]).exists()
    assert values["messages"][-1].name == "frontend_designer"
    assert "I'm the frontend designer" in values["messages"][-1].content
    assert values["active_agent"] == "frontend_designer"
    check_tool_history(values["messages"])
    # another client reads the same thread from the server
    again = stored(postgres_url, ctx)
    assert [m.model_dump() for m in again["messages"]] == [
        m.model_dump() for m in values["messages"]
    ]
    assert again["handover"]["specialist"] == "frontend_designer"
    assert list(briefing_ids(ctx.project_root).values()) == [1]


def test_user_request_keeps_the_specialist_until_the_user_asks_to_go_back(saver, postgres_url, ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=saver, model=model)
    say(graph, HERO, ctx)
    assert graph.get_state(thread_config("t")).values["handovers"][0]["return_condition"] == (
        "user_request"
    )
    values = say(graph, "Make the call-to-action stand out more on mobile.", ctx)
    assert values["active_agent"] == "frontend_designer"
    assert values["messages"][-1].content.startswith("Continuing on")
    assert "(profile `frontend_designer`)" in system_text(model.requests[-1])
    values = say(graph, "Thanks, that's all. Go back to the orchestrator please.", ctx)
    assert values["active_agent"] == "orchestrator"
    assert values["messages"][-1].name == "orchestrator"
    assert "Back with the orchestrator" in values["messages"][-1].content
    assert [r["kind"] for r in values["handovers"]] == ["handover", "return"]
    assert values["handover_depth"] == 0
    check_tool_history(values["messages"])
    assert stored(postgres_url, ctx)["active_agent"] == "orchestrator"


def test_task_complete_returns_in_the_same_run(saver, postgres_url, ctx):
    graph = build_graph(checkpointer=saver, model=RecordingOfflineModel())
    values = say(graph, "The unit test crashes in pytest, fix it and report back.", ctx)
    assert values["handovers"][0]["return_condition"] == "task_complete"
    assert values["active_agent"] == "orchestrator"
    names = [m.name for m in values["messages"] if isinstance(m, AIMessage) and m.content]
    assert names[-2:] == ["test_debug_engineer", "orchestrator"]
    assert "test debug engineer" in values["messages"][-1].content
    check_tool_history(values["messages"])
    assert stored(postgres_url, ctx)["active_agent"] == "orchestrator"


def test_after_reply_answers_once_then_the_orchestrator_has_the_next_turn(saver, ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=saver, model=model)
    values = say(graph, "Quick question: which css unit for the hero layout?", ctx)
    assert values["handovers"][0]["return_condition"] == "after_reply"
    answer, note = values["messages"][-2:]  # its answer, then the note who holds the thread
    assert answer.name == "frontend_designer" and note.response_metadata["for_readers"]
    assert values["active_agent"] == "orchestrator"
    before = len(model.requests)
    say(graph, "Thanks. Hello again.", ctx)
    assert "(profile `a0_software_orchestrator`)" in system_text(model.requests[before])


def test_the_same_thread_continues_in_a_new_process(postgres_url, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    common = ["--thread", "t1", "--project-root", str(root), "--checkpointer", postgres_url]
    first = run_cli(["run", HERO, *common], cwd=root)
    assert first.returncode == 0, first.stderr
    assert "🔄 Handoff to: frontend_designer" in first.stdout
    assert f"checkpoints: PostgreSQL {postgres_url}" in first.stdout
    second = run_cli(["run", "Make it darker.", *common], cwd=root)
    assert second.returncode == 0, second.stderr
    assert "🖌️ [frontend designer] Continuing on" in second.stdout
    assert "Handoff to" not in second.stdout
    # nothing went to the SQLite file
    assert not (root / ".a0proj" / "checkpoints.sqlite").exists()
    other = run_cli(["run", "Make it darker.", "--thread", "t2", *common[2:]], cwd=root)
    assert other.returncode == 0, other.stderr
    # a new thread starts with the orchestrator, which hands over afresh
    assert "Continuing on" not in other.stdout
    assert "🔄 Handoff to: frontend_designer" in other.stdout


KILLED_CHILD = textwrap.dedent(
    """
    import os, sys, time
    from langchain_core.tools import tool
    from specialist_handover import build_graph
    from specialist_handover.graph.checkpointers import open_checkpointer
    from specialist_handover.graph.turns import run_turn

    url, root, marker, text = sys.argv[1:5]

    @tool
    def slow_probe(target: str) -> str:
        \"\"\"Probe a part of the codebase (slow).\"\"\"
        with open(marker, "a") as fh:
            fh.write("started\\n")
        if os.environ.get("HANG_IN_TOOL"):
            time.sleep(120)
        return f"probe of {target}: 3 handlers, 1 slow query"

    graph = build_graph(
        checkpointer=open_checkpointer(url, project_root=root),
        tools={"codebase_explorer": [slow_probe]},
    )
    context = {"project_root": root, "model": "offline"}
    values = run_turn(graph, text or None, thread_id="k", context=context)
    print("LAST:", values["messages"][-1].content.splitlines()[0])
    """
)


def test_sigkill_while_a_specialists_tool_runs_resumes_on_postgres(postgres_url, tmp_path):
    root, marker = tmp_path / "project", tmp_path / "tool-started"
    root.mkdir()
    request = 'Where is the entry point of the server? Please run slow_probe on "search".'

    def child(text: str, *, hang: bool) -> subprocess.Popen:
        env = child_env() | ({"HANG_IN_TOOL": "1"} if hang else {})
        return subprocess.Popen(
            [sys.executable, "-c", KILLED_CHILD, postgres_url, str(root), str(marker), text],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first = child(request, hang=True)
    deadline = time.monotonic() + 120

    # the file exists as soon as it is opened; wait for the line (written when it closes)
    def started() -> bool:
        return marker.exists() and "started" in marker.read_text()

    while not started() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started(), first.communicate(timeout=5)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL

    second = child("", hang=False)
    out, err = second.communicate(timeout=180)
    assert second.returncode == 0, err
    assert "LAST: From slow_probe:" in out

    # the tool ran twice (it never finished the first time), the model asked for it once
    assert marker.read_text().count("started") == 2
    ctx = HandoverContext(project_root=str(root), model="offline")
    checkpointer = open_checkpointer(postgres_url, project_root=str(root))
    try:
        graph = build_graph(checkpointer=checkpointer)
        snapshot = graph.get_state(thread_config("k"))
        assert not snapshot.next and not snapshot.tasks  # the resumed run finished
        messages = snapshot.values["messages"]
    finally:
        close_checkpointer(checkpointer)
    check_tool_history(messages)
    calls = [
        c
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["name"] == "slow_probe"
    ]
    results = [m for m in messages if isinstance(m, ToolMessage) and m.name == "slow_probe"]
    assert len(calls) == 1 and len(results) == 1
    assert results[0].content == "probe of search: 3 handlers, 1 slow query"
    assert messages[-1].name == "codebase_explorer"
    assert [m.content for m in messages if isinstance(m, HumanMessage)] == [request]
    assert list(briefing_ids(ctx.project_root).values()) == [1]  # one briefing entry


def seed(graph, thread: str, n: int) -> None:
    history = []
    for i in range(n // 2):
        history.append(
            HumanMessage(
                f"Earlier point {i}: we settled detail {i} of the billing flow and its limits."
            )
        )
        history.append(AIMessage(f"Noted detail {i}.", name="orchestrator"))
    graph.update_state(thread_config(thread), {"messages": history}, as_node="orchestrator")


def test_stage_2_full_history_on_a_long_seeded_history(saver, postgres_url, ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=saver, model=model)
    seed(graph, "t", 2000)
    ctx.full_history_max_tokens = 5000
    say(graph, HERO, ctx)
    request = model.requests[-1]
    assert not any("Earlier point 3:" in str(m.content) for m in request)  # stage 1 only
    stored_before = [m.model_dump() for m in transcript(postgres_url, ctx)]
    values = say(graph, "Please read the full history before you go on.", ctx)
    results = {
        m.tool_call_id: m.text
        for request in model.requests
        for m in request
        if isinstance(m, ToolMessage) and m.name == "request_full_history"
    }
    assert len(results) == 1
    [text] = results.values()
    assert TokenCounter().count_text(text) <= 5000
    assert text.startswith("FULL HISTORY (stage 2): ")
    assert "compacted" in text.splitlines()[0] and "(cap 5,000)" in text.splitlines()[0]
    assert "HANDOVER PACKAGE (stage 1)" in text
    assert "Please read the full history before you go on." in text
    assert any(
        isinstance(m, ToolMessage) and m.name == "request_full_history" for m in model.requests[-1]
    )
    # the stored history before it is untouched, as another client reads it (the state keeps
    # a working window; the transcript is every message, archived ones included)
    stored_after = [m.model_dump() for m in transcript(postgres_url, ctx)]
    assert len(stored_after) > len(stored_before) > 2000
    assert stored_after[: len(stored_before)] == stored_before
    assert values["messages"][-1].name == "frontend_designer"


def test_chain_of_two_specialists_and_a_return(saver, ctx):
    model = RecordingOfflineModel()
    graph = build_graph(checkpointer=saver, model=model)
    say(graph, REQUESTS["solution_architect"], ctx)
    values = say(graph, "Please ask the security data engineer about the auth design.", ctx)
    trail = values["handovers"]
    assert [(r["kind"], r["from_agent"], r["to_agent"]) for r in trail] == [
        ("handover", "orchestrator", "solution_architect"),
        ("handover", "solution_architect", "security_data_engineer"),
    ]
    assert values["active_agent"] == "security_data_engineer"
    assert values["handover"]["chain"] == ["solution_architect", "security_data_engineer"]
    assert values["handover_depth"] == 2
    assert len({r["briefing_path"] for r in trail}) == 2
    before = len(model.requests)
    say(graph, "And the token expiry?", ctx)
    assert "(profile `security_data_engineer`)" in system_text(model.requests[before])
    values = say(graph, "Thanks, go back to the orchestrator.", ctx)
    assert values["active_agent"] == "orchestrator"
    assert values["handover_depth"] == 0
    assert values["messages"][-1].name == "orchestrator"
    assert [r["kind"] for r in values["handovers"]] == ["handover", "handover", "return"]
    check_tool_history(values["messages"])


def test_async_postgres_saver_with_ainvoke(postgres_url, ctx):
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    async def conversation() -> tuple[dict, dict]:
        conn = await AsyncConnection.connect(
            postgres_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        async with conn:
            checkpointer = AsyncPostgresSaver(conn)
            await checkpointer.setup()
            graph = build_graph(checkpointer=checkpointer, model=RecordingOfflineModel())
            config = thread_config("a")
            first = await graph.ainvoke(
                {"messages": [HumanMessage(HERO)]}, config, context=ctx, durability="sync"
            )
            second = await graph.ainvoke(
                {"messages": [HumanMessage("Make it darker.")]},
                config,
                context=ctx,
                durability="sync",
            )
            snapshot = await graph.aget_state(config)
            assert not snapshot.next
            return first, second

    first, second = asyncio.run(conversation())
    assert first["active_agent"] == "frontend_designer"
    assert first["messages"][-1].name == "frontend_designer"
    assert second["messages"][-1].content.startswith("Continuing on")
    check_tool_history(second["messages"])
    # the sync saver reads what the async one wrote
    assert [m.content for m in stored(postgres_url, ctx, "a")["messages"] if m.type == "human"] == [
        HERO,
        "Make it darker.",
    ]


def test_terminal_with_checkpointer_url_continues_one_thread(postgres_url, ctx, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.delenv("HANDOVER_CHECKPOINTER", raising=False)
    root = ctx.project_root
    # trust auth ignores the password: the URL may carry one, and it is never printed
    with_password = postgres_url.replace("://postgres@", "://postgres:s3cret-pw@", 1)
    common = ["--thread", "cli", "--project-root", root, "--checkpointer", with_password]
    out = io.StringIO()
    assert cli_main(["run", HERO, *common], out=out) == 0
    text = out.getvalue()
    assert "🔄 Handoff to: frontend_designer" in text
    assert "checkpoints: PostgreSQL postgresql://postgres:***@127.0.0.1:" in text
    assert "s3cret-pw" not in text
    out = io.StringIO()
    assert cli_main(["run", "Make it darker.", *common], out=out) == 0
    assert "🖌️ [frontend designer] Continuing on" in out.getvalue()
    assert "Handoff to" not in out.getvalue()
    out = io.StringIO()
    assert cli_main(["trail", *common], out=out) == 0
    assert "Active agent: frontend_designer" in out.getvalue()
    assert not Path(root, ".a0proj", "checkpoints.sqlite").exists()
    assert len(stored(postgres_url, ctx, "cli")["messages"]) >= 5


def test_handover_checkpointer_env_names_the_server(postgres_url, ctx, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    monkeypatch.setenv("HANDOVER_CHECKPOINTER", postgres_url)
    out = io.StringIO()
    code = cli_main(["run", HERO, "--thread", "env", "--project-root", ctx.project_root], out=out)
    assert code == 0
    assert f"checkpoints: PostgreSQL {postgres_url}" in out.getvalue()
    assert not Path(ctx.project_root, ".a0proj", "checkpoints.sqlite").exists()
    values = stored(postgres_url, ctx, "env")
    assert values["active_agent"] == "frontend_designer"
    assert [m.content for m in values["messages"] if m.type == "human"] == [HERO]
    # --db still means a SQLite file, and wins over the environment
    db = Path(ctx.project_root) / "other.sqlite"
    out = io.StringIO()
    code = cli_main(
        ["run", "hello", "--thread", "env", "--project-root", ctx.project_root, "--db", str(db)],
        out=out,
    )
    assert code == 0 and f"checkpoints: {db}" in out.getvalue() and db.exists()


# --- clear errors (no server needed) --------------------------------------------------------


def test_terminal_refuses_both_db_and_checkpointer(tmp_path, capsys):
    code = cli_main(
        ["run", "hi", "--project-root", str(tmp_path), "--db", "a.sqlite", "--checkpointer", "b"]
    )
    assert code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("mysql://u:hunter22@db/x", "unsupported checkpointer 'mysql://u:***@db/x'"),
        ("postgresql://u:hunter22@127.0.0.1:notaport/x", "malformed PostgreSQL URL"),
        ("host=localhost dbname=x password=hunter22", "unsupported checkpointer"),
        ("postgresql://u:hunter22@127.0.0.1:{closed}/x", "cannot connect to PostgreSQL at"),
    ],
)
def test_terminal_bad_or_unreachable_checkpointer_is_a_clear_error(
    spec, expected, tmp_path, capsys, monkeypatch
):
    import socket

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HANDOVER_MODEL", raising=False)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    spec = spec.replace("{closed}", str(closed))
    code = cli_main(["run", "hi", "--project-root", str(tmp_path), "--checkpointer", spec])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("handover: error: ") and expected in err, err
    assert "Traceback" not in err and "hunter22" not in err
    assert not (tmp_path / ".a0proj").exists()  # nothing stored anywhere


# --- concurrency -----------------------------------------------------------------------------

CONCURRENT_CHILD = textwrap.dedent(
    """
    import os, sys, time
    from specialist_handover import build_graph
    from specialist_handover.graph.checkpointers import open_checkpointer
    from specialist_handover.graph.turns import run_turn

    url, root, gate, n, text = sys.argv[1:6]
    graph = build_graph(checkpointer=open_checkpointer(url, project_root=root))
    open(os.path.join(gate, f"ready-{n}"), "w").close()
    deadline = time.monotonic() + 120
    while len(os.listdir(gate)) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    run_turn(graph, text, thread_id="shared", context={"project_root": root, "model": "offline"})
    """
)


def test_four_processes_on_one_thread_lose_no_turn(postgres_url, tmp_path):
    root, gate = tmp_path / "project", tmp_path / "gate"
    root.mkdir()
    gate.mkdir()
    # the tables exist before the four start, as on any database in use
    close_checkpointer(open_checkpointer(postgres_url, project_root=str(root)))
    texts = [f"(p{i}) Hello, what should we look at next?" for i in range(4)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_CHILD, postgres_url, str(root), str(gate), str(i), t],
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, t in enumerate(texts)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, [err[-2000:] for _, err in outputs]
    checkpointer = open_checkpointer(postgres_url, project_root=str(root))
    try:
        messages = (
            build_graph(checkpointer=checkpointer)
            .get_state(thread_config("shared"))
            .values["messages"]
        )
    finally:
        close_checkpointer(checkpointer)
    asked = [m.content for m in messages if m.type == "human"]
    assert Counter(asked) == Counter(texts)  # all four turns stored, none twice
    kinds = [m.type for m in messages]
    assert kinds[-1] != "human"
    assert all(kinds[i + 1] != "human" for i, kind in enumerate(kinds[:-1]) if kind == "human")
    check_tool_history(messages)


def test_briefings_across_replicas_through_postgres_store(postgres_url, tmp_path):
    """Two graphs on two project roots share a PostgresStore: B's specialist reads A's entry."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(postgres_url) as store:
        store.setup()
        contexts = []
        graphs = []
        for name in ("a", "b"):
            root = tmp_path / name
            root.mkdir()
            contexts.append({"project_root": str(root), "model": "offline"})
            graphs.append(build_graph(checkpointer=InMemorySaver(), store=store))
        config = {"configurable": {"thread_id": "t"}}
        hero = "Please design the landing page hero with bold typography."
        graphs[0].invoke({"messages": [("user", hero)]}, config, context=contexts[0])
        written_on_a = graphs[0].get_state(config).values["handover"]["handover_id"]
        graphs[1].invoke({"messages": [("user", hero)]}, config, context=contexts[1])
        values = graphs[1].invoke(
            {"messages": [("user", "What did we decide before? Check your briefing.")]},
            config,
            context=contexts[1],
        )
        items = store.search(("briefings", "frontend_designer"), limit=10)
    answer = next(
        m
        for m in reversed(values["messages"])
        if isinstance(m, ToolMessage) and m.name == "read_briefing"
    )
    assert len(items) == 2 and written_on_a in {item.key for item in items}
    assert f"`{written_on_a}`" in answer.content and "2 of 2 entries" in answer.content
