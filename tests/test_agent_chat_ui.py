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
CARRY_ON = "Carry on without it"
"""How a refused handover's answer tells the calling model to go on: never shown as its reply."""

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

    def expect_reply(self, message: dict[str, Any], speaker: str | None = None) -> Locator:
        """The stored reply's text is on the page, all in one assistant message (with
        `speaker`: the one under that speaker's label, as another reply may quote it)."""
        lines = visible_lines(text_of(message))
        assert lines, f"reply without text: {message}"
        bubbles = self.page.locator(ASSISTANT_MESSAGE).filter(has_text=lines[0])
        if speaker:
            label = self.page.locator("strong", has_text=re.compile(rf"^{_label(speaker)}$"))
            bubbles = bubbles.filter(has=label)
        bubble = bubbles.last
        expect_visible(bubble)
        for line in lines[1:]:
            expect(bubble).to_contain_text(line, timeout=TIMEOUT_MS)
        return bubble

    def expect_speaker(self, bubble: Locator, speaker: str) -> None:
        """The message opens with its speaker's name in bold, e.g. **frontend designer**."""
        expect(bubble.locator("strong").first).to_have_text(_label(speaker), timeout=TIMEOUT_MS)

    def expect_replies_in_order(self, replies: list[dict[str, Any]]) -> None:
        """Each stored reply is on the page under its speaker's label, one below the other."""
        bubbles = []
        for reply in replies:
            bubble = self.expect_reply(reply, reply["name"])
            self.expect_speaker(bubble, reply["name"])
            bubbles.append(bubble)
        tops = [box["y"] for box in (b.bounding_box() for b in bubbles) if box]
        assert len(tops) == len(bubbles) and tops == sorted(tops) and len(set(tops)) == len(tops), (
            f"replies out of order on the page: {[r['name'] for r in replies]} at {tops}"
        )

    def edit_field(self, name: str) -> Locator:
        """The review form's box for the argument `name` (the form titles it in Start Case)."""
        title = name.replace("_", " ").title()
        return self.page.locator(
            f"xpath=//p[normalize-space()='{title}']/following-sibling::textarea"
        )

    def fill_review(self, values: dict[Locator, str]) -> None:
        """Type `values` into the review form once the page stopped refreshing it; type again
        what a late re-render wiped (each resets the form), and check all of it is there."""
        self.wait_until_settled()
        for box, text in values.items():
            box.fill(text)
        self.page.wait_for_timeout(1000)
        for box, text in values.items():
            if box.input_value() != text:
                box.fill(text)
        for box, text in values.items():
            expect(box).to_have_value(text)

    def tool_call(self, call_id: str) -> Locator:
        """The table of the tool call `call_id` (its name and id head it)."""
        return self.page.locator(
            f"div.overflow-hidden.rounded-lg:has(h3 > code:text-is('{call_id}'))"
        )

    def expect_tool_result(self, call_id: str, text: str) -> Locator:
        """The tool result that answers `call_id` shows `text` (expanded when the UI cut it)."""
        card = self.page.locator(
            "div.overflow-hidden.rounded-lg:has(h3:has-text('Tool Result'))"
            f":has(code:text-is('{call_id}'))"
        )
        expect_visible(card)
        more = card.locator("button")
        if more.count():  # the UI shows 4 lines or 500 characters until it is expanded
            more.click()
        expect(card).to_contain_text(text, timeout=TIMEOUT_MS)
        return card

    def expect_no_error_toast(self) -> None:
        toasts = self.page.locator(ERROR_TOAST)
        expect(toasts, f"error toast: {toasts.all_inner_texts()}").to_have_count(0)


def _label(speaker: str) -> str:
    """A speaker's label as the page shows it: `frontend_designer` -> frontend designer."""
    return speaker.replace("_", " ")


def save_screenshot(page: Page, screenshots: list[Path], name: str) -> None:
    """A screenshot of the page midway through a test, beside the tests' own."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    screenshots.append(path)


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


def handover_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored handover calls, in order."""
    return [
        call
        for m in messages
        if m["type"] == "ai"
        for call in m.get("tool_calls") or []
        if call["name"] == "handover_to_specialist"
    ]


def answers_to(messages: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    """The stored tool messages that answer the call `call_id`."""
    return [m for m in messages if m["type"] == "tool" and m.get("tool_call_id") == call_id]


def arg_cell(call: Locator, name: str) -> Locator:
    """The value cell of the argument `name` in a tool call's table on the page."""
    return call.locator(f"xpath=.//tr[td[1][normalize-space()='{name}']]/td[2]")


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
CONSULTED = ["solution_architect", "frontend_designer"]


def test_a_consult_shows_each_specialists_answer_then_the_orchestrators(chat: Chat):
    """The orchestrator asks two specialists at once; each answer shows as its specialist's
    own message, then the orchestrator answers from what they said."""
    chat.open()
    thread_id = chat.send(CONSULT)
    values = chat.state(thread_id)["values"]
    assert values["active_agent"] == "orchestrator"
    replies = replies_after(values["messages"], CONSULT)
    # each specialist's answer is its own message, under its label, then the orchestrator's
    assert [r["name"] for r in replies] == CONSULTED + ["orchestrator"], outline(replies)
    reply = replies[-1]
    assert "solution_architect" in text_of(reply) and "frontend_designer" in text_of(reply)
    chat.expect_user_message(CONSULT)
    chat.expect_replies_in_order(replies)
    chat.expect_no_error_toast()


QUICK = "Quick question: which css unit for the hero layout?"
HANDED_BACK = (
    "↩️ The frontend designer handed the conversation back: your next message comes to me, "
    "the orchestrator."
)


def test_a_specialist_that_answers_once_hands_back_and_the_orchestrator_says_so(chat: Chat):
    """A quick question goes to the frontend designer until it replied (`after_reply`); the
    orchestrator's note under its own label says who takes the next message."""
    chat.open()
    thread_id = chat.send(QUICK)
    values = chat.state(thread_id)["values"]
    messages = values["messages"]
    stored = outline(messages)
    (call,) = handover_calls(messages)
    assert call["args"]["specialist_profile"] == "frontend_designer", call
    assert call["args"]["return_condition"] == "after_reply", call
    assert values["active_agent"] == "orchestrator", stored
    answer, note = replies_after(messages, QUICK)
    assert answer["name"] == "frontend_designer" and note["name"] == "orchestrator", stored
    assert HANDED_BACK in text_of(note), stored
    chat.expect_user_message(QUICK)
    chat.expect_replies_in_order([answer, note])
    expect(chat.expect_reply(note, "orchestrator")).to_contain_text(HANDED_BACK)
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
    chat.fill_review(
        {chat.page.get_by_placeholder("Share feedback with the agent..."): REJECT_REASON}
    )
    expect_visible(chat.page.get_by_text("Currently selected: Reject"))
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
    assert CARRY_ON not in text_of(reply)  # the refusal's line for the model is not for people
    bubble = chat.expect_reply(reply, "orchestrator")
    chat.expect_speaker(bubble, "orchestrator")
    expect(bubble).not_to_contain_text(CARRY_ON)
    expect(chat.page.get_by_role("button", name="Submit rejection")).to_be_hidden(
        timeout=TIMEOUT_MS
    )
    chat.expect_no_error_toast()


EDITED_DECISIONS = ["Bold serif headline", "No carousel"]


def test_an_edit_in_the_review_hands_over_as_edited_in_a_new_call_the_page_shows(
    chat: Chat, reviewed_assistant: str
):
    """The UI's edit form sends every field as a string: two lines of decisions are read as a
    list of two. The edited call is answered, and the edited handover is a new call."""
    thread_id, call_id = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    expect_visible(chat.page.get_by_text("Edit/Approve", exact=True))
    chat.fill_review(
        {
            chat.edit_field("specialist_profile"): "quality_reviewer",
            chat.edit_field("decisions"): "\n".join(EDITED_DECISIONS),
        }
    )
    expect_visible(chat.page.get_by_text("Currently selected: Edit"))
    submit = chat.page.get_by_role("button", name="Submit", exact=True)
    chat.act(submit.click)

    (decision,) = chat.runs[-1]["command"]["resume"]["decisions"]
    assert decision["type"] == "edit", decision
    assert decision["edited_action"]["name"] == "handover_to_specialist", decision
    sent = decision["edited_action"]["args"]
    assert sent["specialist_profile"] == "quality_reviewer"
    assert sent["decisions"] == "\n".join(EDITED_DECISIONS)  # the form sends a string
    state = chat.state(thread_id)
    assert not pending_reviews(state)
    values = state["values"]
    messages = values["messages"]
    stored = outline(messages)
    assert values["active_agent"] == "quality_reviewer"
    first, again = handover_calls(messages)
    assert first["id"] == call_id and first["args"]["specialist_profile"] == "frontend_designer"
    assert again["args"]["specialist_profile"] == "quality_reviewer"
    assert again["args"]["decisions"] == EDITED_DECISIONS
    (note,) = answers_to(messages, call_id)
    assert text_of(note).startswith("The reviewer edited this handover ("), stored
    (done,) = answers_to(messages, again["id"])
    assert text_of(done).startswith("Handed over to quality_reviewer"), stored
    reply = replies_after(messages, HERO)[-1]
    assert reply["name"] == "quality_reviewer", stored

    call = chat.tool_call(again["id"])
    expect(arg_cell(call, "specialist_profile")).to_have_text("quality_reviewer")
    for item in EDITED_DECISIONS:
        expect(arg_cell(call, "decisions")).to_contain_text(item)
    chat.expect_tool_result(call_id, "The reviewer edited this handover (")
    chat.expect_tool_result(again["id"], "Handed over to quality_reviewer")
    chat.expect_speaker(chat.expect_reply(reply, "quality_reviewer"), "quality_reviewer")
    expect(submit).to_be_hidden(timeout=TIMEOUT_MS)
    chat.expect_no_error_toast()


NOT_APPLIED = "ERROR: the reviewer's edit was not applied: invalid return_condition 'bogus'"


def test_an_invalid_edit_brings_the_review_back_with_the_error_then_a_fixed_one_works(
    chat: Chat, reviewed_assistant: str, screenshots: list[Path]
):
    """An edit that does not validate is not applied: the conversation says so, and the
    review comes back with the reviewer's value in the form and the error in its description."""
    thread_id, call_id = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    condition = chat.edit_field("return_condition")
    chat.fill_review({condition: "bogus"})
    chat.act(chat.page.get_by_role("button", name="Submit", exact=True).click)

    (decision,) = chat.runs[-1]["command"]["resume"]["decisions"]
    assert (
        decision["type"] == "edit"
        and decision["edited_action"]["args"]["return_condition"] == "bogus"
    )
    state = chat.state(thread_id)
    (review,) = pending_reviews(state)
    (request,) = review["action_requests"]
    assert request["args"]["return_condition"] == "bogus"  # the reviewer's value, to fix
    assert "ERROR: invalid return_condition 'bogus'" in request["description"]
    messages = state["values"]["messages"]
    stored = outline(messages)
    (note,) = answers_to(messages, call_id)
    assert text_of(note).startswith(NOT_APPLIED), stored
    first, again = handover_calls(messages)
    assert messages[-1]["tool_calls"] == [again], stored  # the call made again waits
    assert again["args"]["return_condition"] == first["args"]["return_condition"]  # not applied

    chat.expect_tool_result(call_id, text_of(note))
    expect(condition).to_have_value("bogus", timeout=TIMEOUT_MS)
    condition.scroll_into_view_if_needed()
    save_screenshot(chat.page, screenshots, "test_an_invalid_edit_form")
    review_card = chat.page.locator("div.rounded-2xl.bg-gray-50.p-8")
    review_card.get_by_role("button", name="Description", exact=True).click()
    expect(review_card).to_contain_text(
        "Your last answer could not be used: ERROR: invalid return_condition 'bogus'",
        timeout=TIMEOUT_MS,
    )
    save_screenshot(chat.page, screenshots, "test_an_invalid_edit_description")
    review_card.locator("button:has(svg.lucide-x)").click()  # back to the form
    # approving now would approve what the form shows (`bogus`, failing again): fix it
    condition = chat.edit_field("return_condition")
    chat.fill_review({condition: "user_request"})
    approve = chat.page.get_by_role("button", name="Approve", exact=True)
    chat.act(chat.page.get_by_role("button", name="Submit", exact=True).click)

    (decision,) = chat.runs[-1]["command"]["resume"]["decisions"]
    assert decision["type"] == "edit", decision
    assert decision["edited_action"]["args"]["return_condition"] == "user_request"
    state = chat.state(thread_id)
    assert not pending_reviews(state)
    values = state["values"]
    stored = outline(values["messages"])
    assert values["active_agent"] == "frontend_designer", stored
    (done,) = answers_to(values["messages"], again["id"])
    assert text_of(done).startswith("Handed over to frontend_designer"), stored
    reply = replies_after(values["messages"], HERO)[-1]
    assert reply["name"] == "frontend_designer", stored
    chat.expect_speaker(chat.expect_reply(reply, "frontend_designer"), "frontend_designer")
    expect(approve).to_be_hidden(timeout=TIMEOUT_MS)
    chat.expect_no_error_toast()


RESOLVED = "✅ Marked as resolved: I did not hand this over to frontend_designer"


def test_mark_as_resolved_ends_the_review_without_a_handover_and_the_orchestrator_says_so(
    chat: Chat, reviewed_assistant: str
):
    """The UI's "Mark as Resolved" sends a run with `Command(goto="__end__")`."""
    thread_id, call_id = _ask_for_a_reviewed_handover(chat, reviewed_assistant)
    resolve = chat.page.get_by_role("button", name="Mark as Resolved", exact=True)
    chat.act(resolve.click)

    command = chat.runs[-1]["command"]
    assert command.get("goto") == "__end__" and "resume" not in command, command
    state = chat.state(thread_id)
    assert not pending_reviews(state) and not state["next"]
    values = state["values"]
    messages = values["messages"]
    stored = outline(messages)
    assert values["active_agent"] == "orchestrator" and not values.get("handover"), stored
    assert [h["kind"] for h in values.get("handovers") or []] == ["refused"]
    (answer,) = answers_to(messages, call_id)
    assert "marked as resolved" in text_of(answer), stored
    reply = replies_after(messages, HERO)[-1]
    assert reply["name"] == "orchestrator" and RESOLVED in text_of(reply), stored

    bubble = chat.expect_reply(reply, "orchestrator")
    chat.expect_speaker(bubble, "orchestrator")
    expect(bubble).to_contain_text(RESOLVED)
    expect(resolve).to_be_hidden(timeout=TIMEOUT_MS)
    expect(chat.page.get_by_text("Handed over to")).to_have_count(0)
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
    answers = answers_to(messages, call_id)
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
