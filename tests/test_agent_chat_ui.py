"""LangChain's Agent Chat UI, in a real browser, against the project's `langgraph dev` server.

What a LangGraph user sees when they point the Agent Chat UI at this graph:
each reply with its speaker, handovers reviewed with the UI's own Approve /
Reject controls, a message typed while a review waits, and a thread restored
by a reload.

One `langgraph dev` (offline model; tests/support/langgraph_server.py), one
Agent Chat UI (tests/support/chat_ui.py) and one headless Chromium (Debian's,
driven by Playwright; never a downloaded browser) serve the whole module; each
test opens its own page. A test waits for the run its click started by asking
the server (`runs.join`), then reads the thread's state and expects the page
to show it. A screenshot of every test's page is saved to
``test-artifacts/agent-chat-ui/<test>.png``.

Without Chromium, Node.js or pnpm/npm the tests are skipped, unless the
environment variable CI is set: CI must run them, so there they fail.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pytest
from langgraph_sdk import get_sync_client

from tests.support.chat_ui import ChatUI, agent_chat_ui, missing_tools
from tests.support.langgraph_server import REPO_ROOT, LangGraphServer, langgraph_dev_server

try:  # the test extra installs it; without it the tests skip (or fail under CI)
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover
    expect = sync_playwright = None  # type: ignore[assignment]
    PlaywrightTimeoutError = TimeoutError  # type: ignore[misc,assignment]

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page, Response

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "agent-chat-ui"
GRAPH_ID = "orchestrator"
TIMEOUT_MS = 30_000
"""How long the page may take to show what the server already holds."""
PAGE_LOAD_MS = 120_000
"""A page load (in dev mode the browser also loads the app's unbundled scripts)."""
HTTP_TIMEOUT = 60.0

HELLO = "Hello there!"
HERO = "Please design the landing page hero with bold typography."
GO_BACK = "Thanks, go back to the orchestrator please."
MOVED_ON = "Never mind, what is a monorepo?"
REJECT_REASON = "The hero can wait until the copy is final."

# The UI's markup has no test ids: a message is a `div.group`, the assistant's on the left
# (mr-auto), the user's on the right (ml-auto); sonner renders each toast as an
# <li data-sonner-toast data-type=...>.
ASSISTANT_MESSAGE = "div.group.mr-auto"
USER_MESSAGE = "div.group.ml-auto"
CHAT_BOX = "Type your message..."
ERROR_TOAST = "[data-sonner-toast][data-type=error]"
RUN_STREAM = re.compile(r"/threads/([0-9a-f-]{36})/runs/stream$")
PAGE_REQUESTS = {
    "run": RUN_STREAM,
    "history": re.compile(r"/threads/[0-9a-f-]{36}/history$"),
    "search": re.compile(r"/threads/search$"),
}
LABEL_LINE = re.compile(r"^\W*\*\*[^*]+\*\*\s*$")
"""A reply's opening speaker line, e.g. `🖌️ **frontend designer**`."""


# --- tools ---------------------------------------------------------------------------------


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing() -> list[str]:
    missing = []
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"Chromium at {CHROMIUM} (apt-get install chromium fonts-noto-color-emoji)")
    if sync_playwright is None:
        missing.append("the playwright package (pip install -e '.[test]')")
    return missing + missing_tools()


@pytest.fixture(scope="module")
def tools() -> None:
    """Skip (fail under CI) when the browser, Node.js or pnpm/npm are missing."""
    missing = _missing()
    if not missing:
        return
    reason = "the Agent Chat UI browser tests need " + "; ".join(missing)
    if _in_ci():
        pytest.fail(f"{reason} (CI is set, so they must run)", pytrace=False)
    pytest.skip(reason)


# --- servers, browser, page ----------------------------------------------------------------


def _report(config: pytest.Config, line: str) -> None:
    """A line on pytest's terminal, shown even with -q, outside the captured output."""
    reporter = config.pluginmanager.getplugin("terminalreporter")
    capture = config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None:  # pragma: no cover - pytest without them
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


@pytest.fixture(scope="module")
def server(tools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LangGraphServer]:
    with langgraph_dev_server(log_dir=tmp_path_factory.mktemp("langgraph-dev")) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: LangGraphServer):
    return get_sync_client(url=server.url, api_key=None, timeout=HTTP_TIMEOUT)


@pytest.fixture(scope="module")
def ui(
    server: LangGraphServer, tmp_path_factory: pytest.TempPathFactory, pytestconfig
) -> Iterator[ChatUI]:
    started = time.monotonic()
    with agent_chat_ui(
        api_url=server.url, assistant_id=GRAPH_ID, log_dir=tmp_path_factory.mktemp("chat-ui")
    ) as running:
        _report(
            pytestconfig,
            f"\nAgent Chat UI ({running.mode}) ready at {running.url} in "
            f"{time.monotonic() - started:.1f}s; log {running.log_path}",
        )
        yield running


@pytest.fixture(scope="module")
def browser(tools) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def screenshots(pytestconfig) -> Iterator[list[Path]]:
    """Where every test's screenshot went, listed once the module is done."""
    saved: list[Path] = []
    yield saved
    if saved:
        names = ", ".join(p.name for p in saved)
        _report(pytestconfig, f"\nAgent Chat UI screenshots in {ARTIFACTS}/: {names}")


@pytest.fixture
def page(browser: Browser, screenshots: list[Path], request) -> Iterator[Page]:
    """A fresh page; its screenshot is saved when the test ends, passed or failed."""
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    opened = context.new_page()
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', request.node.name)}.png"
        try:
            opened.screenshot(path=str(path))
            screenshots.append(path)
            print(f"screenshot: {path}")
        finally:
            context.close()


@pytest.fixture(scope="module")
def thread_ids(client) -> Iterator[set[str]]:
    """Threads the UI created; deleted afterwards (`langgraph dev` persists threads)."""
    created: set[str] = set()
    yield created
    for thread_id in created:
        try:
            client.threads.delete(thread_id)
        except Exception as exc:  # the server may be gone: nothing left to clean
            print(f"could not delete thread {thread_id}: {exc}")


@pytest.fixture(scope="module")
def reviewed_assistant(client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An assistant of the graph whose context reviews every handover."""
    root = tmp_path_factory.mktemp("reviewed-project")
    assistant = client.assistants.create(
        GRAPH_ID,
        context={"review_handovers": True, "model": "offline", "project_root": str(root)},
        name=f"reviewed handovers {uuid.uuid4().hex[:8]}",
    )
    yield assistant["assistant_id"]
    try:
        client.assistants.delete(assistant["assistant_id"])
    except Exception as exc:
        print(f"could not delete assistant {assistant['assistant_id']}: {exc}")


# --- driving the chat ----------------------------------------------------------------------


def text_of(message: dict[str, Any]) -> str:
    """A stored message's text, whether its content is a string or a list of blocks."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def visible_lines(markdown: str) -> list[str]:
    """The lines of a Markdown reply as the page shows them: no speaker line, list
    markers, bold or code marks, whitespace collapsed."""
    lines = markdown.strip().splitlines()
    if lines and LABEL_LINE.match(lines[0]):
        lines = lines[1:]
    shown = []
    for line in lines:
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)
        line = " ".join(line.replace("**", "").replace("`", "").split())
        if line:
            shown.append(line)
    return shown


@dataclass
class Chat:
    """One browser page on the Agent Chat UI, and the server behind it."""

    page: Page
    ui: ChatUI
    client: Any
    thread_ids: set[str]
    runs: list[dict[str, Any]] = field(default_factory=list)
    """The run requests the page sent (the latest last)."""
    network: list[str] = field(default_factory=list)
    """What the page asked the server, in order: run-start, run-end, history, search."""

    def __post_init__(self) -> None:
        self.page.on("request", lambda r: self._note(r, "run-start", "run"))
        self.page.on("requestfinished", lambda r: self._note(r, "run-end", "run"))
        self.page.on("requestfinished", lambda r: self._note(r, "history", "history"))
        self.page.on("requestfinished", lambda r: self._note(r, "search", "search"))

    def _note(self, request, kind: str, what: str) -> None:
        if request.method == "POST" and PAGE_REQUESTS[what].search(request.url):
            self.network.append(kind)

    def open(self, **query: str) -> None:
        """Load the chat (`assistantId=...` picks an assistant) and wait for its input."""
        url = f"{self.ui.url}/?{urlencode(query)}" if query else f"{self.ui.url}/"
        self.page.goto(url, timeout=PAGE_LOAD_MS)
        expect_visible(self.page.get_by_placeholder(CHAT_BOX), PAGE_LOAD_MS)

    def send(self, text: str) -> str:
        """Type `text` into the chat box, send it, wait until its run ends; the thread id."""
        return self.act(lambda: self._type_and_send(text))

    def _type_and_send(self, text: str) -> None:
        self.page.get_by_placeholder(CHAT_BOX).fill(text)
        self.page.locator("form button[type=submit]").click()

    def act(self, action) -> str:
        """Do `action` (a click that starts a run), wait for that run to end; the thread id."""
        with self.page.expect_response(_is_run_request, timeout=TIMEOUT_MS) as started:
            action()
        response: Response = started.value
        thread_id = RUN_STREAM.search(response.url)[1]  # type: ignore[index]
        self.thread_ids.add(thread_id)
        self.runs.append(response.request.post_data_json or {})
        for run in self.client.runs.list(thread_id, limit=100):
            if run["status"] in ("pending", "running"):
                self.client.runs.join(thread_id, run["run_id"])
        return thread_id

    def wait_until_settled(self) -> None:
        """Wait for the page's own refreshes after the first run of a new thread: the
        thread's history after the run ended, and the thread list the UI fetches a few
        seconds after it learned the thread's id. The review form re-renders on each, and
        each re-render resets what was typed into it."""

        def settled() -> bool:
            start = len(self.network) - self.network[::-1].index("run-start")
            if "run-end" not in self.network[start:]:  # the run's stream is still closing
                return False
            end = len(self.network) - self.network[::-1].index("run-end")
            return "history" in self.network[end:] and "search" in self.network[start:]

        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while not settled():
            left = deadline - time.monotonic()
            if left <= 0:  # best effort: a refresh that came early is not seen again
                return  # (the callers check what they typed is still there before a click)
            with contextlib.suppress(PlaywrightTimeoutError):
                self.page.wait_for_event("requestfinished", timeout=left * 1000)

    def state(self, thread_id: str) -> dict[str, Any]:
        return self.client.threads.get_state(thread_id)

    def expect_user_message(self, text: str) -> None:
        expect_visible(self.page.locator(USER_MESSAGE).filter(has_text=text))

    def expect_reply(self, message: dict[str, Any]) -> Locator:
        """The stored reply's text is on the page, all in one assistant message."""
        lines = visible_lines(text_of(message))
        assert lines, f"reply without text: {message}"
        bubble = self.page.locator(ASSISTANT_MESSAGE).filter(has_text=lines[0]).last
        expect_visible(bubble)
        for line in lines[1:]:
            expect(bubble).to_contain_text(line, timeout=TIMEOUT_MS)
        return bubble

    def expect_speaker(self, bubble: Locator, speaker: str) -> None:
        """The message opens with its speaker's name in bold, e.g. **frontend designer**."""
        label = speaker.replace("_", " ")
        expect(bubble.locator("strong").first).to_have_text(label, timeout=TIMEOUT_MS)

    def expect_no_error_toast(self) -> None:
        toasts = self.page.locator(ERROR_TOAST)
        expect(toasts, f"error toast: {toasts.all_inner_texts()}").to_have_count(0)


def expect_visible(locator: Locator, timeout: float = TIMEOUT_MS) -> None:
    expect(locator).to_be_visible(timeout=timeout)


def _is_run_request(response: Response) -> bool:
    return response.request.method == "POST" and bool(RUN_STREAM.search(response.url))


def replies_after(
    messages: list[dict[str, Any]], user_text: str, until: str | None = None
) -> list[dict[str, Any]]:
    """The assistant messages with text after the (last) user message `user_text`, up to
    the user message `until` (default: to the end)."""
    start = _last_user_message(messages, user_text) + 1
    end = _last_user_message(messages, until) if until else len(messages)
    return [m for m in messages[start:end] if m["type"] == "ai" and text_of(m).strip()]


def _last_user_message(messages: list[dict[str, Any]], text: str) -> int:
    found = [i for i, m in enumerate(messages) if m["type"] == "human" and text_of(m) == text]
    assert found, f"no user message {text!r} in the thread:\n{outline(messages)}"
    return found[-1]


def outline(messages: list[dict[str, Any]]) -> str:
    """One line per stored message (type, name, the start of its text): for failure messages."""
    return "\n".join(
        f"  {m['type']:<5} {m.get('name') or '-':<18} {text_of(m)[:70]!r}" for m in messages
    )


def pending_reviews(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [i["value"] for task in state["tasks"] for i in task.get("interrupts", [])]


@pytest.fixture
def chat(page: Page, ui: ChatUI, client, thread_ids: set[str]) -> Chat:
    return Chat(page=page, ui=ui, client=client, thread_ids=thread_ids)


# --- the scenarios -------------------------------------------------------------------------


def test_each_reply_shows_with_its_speaker_through_a_handover_and_a_return(chat: Chat):
    """Hello (the orchestrator), a design request (the frontend designer), going back."""
    chat.open()
    for text, speaker in [
        (HELLO, "orchestrator"),
        (HERO, "frontend_designer"),
        (GO_BACK, "orchestrator"),
    ]:
        thread_id = chat.send(text)
        values = chat.state(thread_id)["values"]
        assert values["active_agent"] == speaker, text
        (reply,) = replies_after(values["messages"], text)
        assert reply["name"] == speaker, reply
        chat.expect_user_message(text)
        bubble = chat.expect_reply(reply)
        chat.expect_speaker(bubble, speaker)
    chat.expect_no_error_toast()


CONSULT = (
    "Ask the solution architect and the frontend designer: should the hero render on the server?"
)


def test_a_consult_shows_the_orchestrators_answer_from_both_specialists(chat: Chat):
    """The orchestrator asks two specialists at once and answers from what they said."""
    chat.open()
    thread_id = chat.send(CONSULT)
    values = chat.state(thread_id)["values"]
    assert values["active_agent"] == "orchestrator"
    reply = replies_after(values["messages"], CONSULT)[-1]
    assert reply["name"] == "orchestrator"
    assert "solution_architect" in text_of(reply) and "frontend_designer" in text_of(reply)
    chat.expect_user_message(CONSULT)
    chat.expect_speaker(chat.expect_reply(reply), "orchestrator")
    chat.expect_no_error_toast()


def _ask_for_a_reviewed_handover(chat: Chat, assistant_id: str) -> tuple[str, str]:
    """Open the reviewed assistant, ask for design work: the UI shows the review.

    Returns the thread id and the id of the handover call that waits for review."""
    chat.open(assistantId=assistant_id)
    thread_id = chat.send(HERO)
    state = chat.state(thread_id)
    (review,) = pending_reviews(state)
    (action,) = review["action_requests"]
    assert action["name"] == "handover_to_specialist"
    assert action["args"]["specialist_profile"] == "frontend_designer"
    (call,) = state["values"]["messages"][-1]["tool_calls"]
    expect_visible(chat.page.get_by_role("button", name="Approve", exact=True))
    expect_visible(chat.page.get_by_role("button", name="Submit rejection"))
    return thread_id, call["id"]


def test_approve_in_the_review_carries_out_the_handover_and_the_specialist_answers(
    chat: Chat, reviewed_assistant: str
):
    thread_id, _ = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    approve = chat.page.get_by_role("button", name="Approve", exact=True)
    chat.act(approve.click)

    assert chat.runs[-1]["command"]["resume"] == {"decisions": [{"type": "approve"}]}
    state = chat.state(thread_id)
    assert not pending_reviews(state)
    values = state["values"]
    assert values["active_agent"] == "frontend_designer"
    reply = replies_after(values["messages"], HERO)[-1]
    assert reply["name"] == "frontend_designer"
    chat.expect_speaker(chat.expect_reply(reply), "frontend_designer")
    expect(approve).to_be_hidden(timeout=TIMEOUT_MS)
    chat.expect_no_error_toast()


def test_reject_in_the_review_leaves_the_orchestrator_saying_it_could_not_hand_over(
    chat: Chat, reviewed_assistant: str
):
    thread_id, _ = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    chat.wait_until_settled()  # else a late re-render may wipe the reason before the click
    feedback = chat.page.get_by_placeholder("Share feedback with the agent...")
    feedback.fill(REJECT_REASON)
    expect_visible(chat.page.get_by_text("Currently selected: Reject"))
    chat.page.wait_for_timeout(1000)  # a late re-render resets the form: type it again then
    if feedback.input_value() != REJECT_REASON:
        feedback.fill(REJECT_REASON)
    expect(feedback).to_have_value(REJECT_REASON)
    chat.act(chat.page.get_by_role("button", name="Submit rejection").click)

    decision = {"type": "reject", "message": REJECT_REASON}
    assert chat.runs[-1]["command"]["resume"] == {"decisions": [decision]}
    state = chat.state(thread_id)
    assert not pending_reviews(state)
    values = state["values"]
    assert values["active_agent"] == "orchestrator"
    reply = replies_after(values["messages"], HERO)[-1]
    assert reply["name"] == "orchestrator"
    assert "could not hand" in text_of(reply) and REJECT_REASON.rstrip(".") in text_of(reply)
    chat.expect_speaker(chat.expect_reply(reply), "orchestrator")
    expect(chat.page.get_by_role("button", name="Submit rejection")).to_be_hidden(
        timeout=TIMEOUT_MS
    )
    chat.expect_no_error_toast()


def test_a_message_typed_while_a_review_waits_is_answered_without_an_error(
    chat: Chat, reviewed_assistant: str
):
    """The UI answers the pending call itself (`do-not-render-...`) and sends the message:
    the handover is not carried out, the caller says so, the new message is answered."""
    thread_id, call_id = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    chat.send(MOVED_ON)

    sent = chat.runs[-1]["input"]["messages"]
    assert [m["type"] for m in sent] == ["tool", "human"], sent
    assert sent[0]["id"].startswith("do-not-render-") and sent[0]["tool_call_id"] == call_id
    chat.expect_user_message(MOVED_ON)
    state = chat.state(thread_id)
    messages = state["values"]["messages"]
    stored = outline(messages)
    answer = replies_after(messages, MOVED_ON)
    assert answer, f"the new message has no answer:\n{stored}"
    for reply in answer:
        chat.expect_reply(reply)
    chat.expect_no_error_toast()
    expect(chat.page.get_by_role("button", name="Approve", exact=True)).to_be_hidden(
        timeout=TIMEOUT_MS
    )

    # the user moved on: the handover is not carried out, and the caller says so
    assert not pending_reviews(state), "the review still waits"
    assert state["values"]["active_agent"] == "orchestrator"
    assert not any(m.get("id", "").startswith("do-not-render-") for m in messages), stored
    answers = [m for m in messages if m["type"] == "tool" and m.get("tool_call_id") == call_id]
    assert [text_of(m)[:6] for m in answers] == ["ERROR:"], (
        f"the pending handover call needs one ERROR answer:\n{stored}"
    )
    said_so = replies_after(messages, HERO, until=MOVED_ON)
    assert [m["name"] for m in said_so] == ["orchestrator"], f"no word from the caller:\n{stored}"
    chat.expect_reply(said_so[0])
    chat.expect_no_error_toast()


def test_a_reload_restores_the_thread(chat: Chat):
    chat.open()
    thread_id = chat.send(HELLO)
    (reply,) = replies_after(chat.state(thread_id)["values"]["messages"], HELLO)
    chat.expect_reply(reply)

    chat.page.reload(timeout=PAGE_LOAD_MS)
    expect(chat.page).to_have_url(re.compile(rf"[?&]threadId={thread_id}\b"))
    chat.expect_user_message(HELLO)
    chat.expect_reply(reply)
    chat.expect_no_error_toast()
