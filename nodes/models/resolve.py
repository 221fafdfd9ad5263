"""Choosing the chat model an agent talks to.

`build_graph(model=...)` may fix a model for every agent, or a mapping
profile -> model with a `"default"` entry. Without one, the run's context names
the model: `offline` (the built-in model) or any `init_chat_model` string such
as `openai:gpt-4o` (ChatOpenAI honours OPENAI_BASE_URL).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from .offline import OfflineChatModel

ModelSpec = BaseChatModel | Mapping[str, BaseChatModel] | None

_cache: dict[str, BaseChatModel] = {}
_lock = threading.Lock()


def model_from_string(spec: str) -> BaseChatModel:
    """`offline` -> the built-in model; anything else through `init_chat_model` (cached)."""
    spec = (spec or "offline").strip()
    with _lock:
        if spec not in _cache:
            if spec == "offline":
                _cache[spec] = OfflineChatModel()
            else:
                from langchain.chat_models import init_chat_model

                _cache[spec] = init_chat_model(spec)
        return _cache[spec]


def check_model_spec(model: Any) -> ModelSpec:
    """Validate `build_graph(model=...)`; raise TypeError/ValueError naming the fix."""
    if model is None or isinstance(model, BaseChatModel):
        return model
    if isinstance(model, Mapping):
        for key, value in model.items():
            if not isinstance(value, BaseChatModel):
                raise TypeError(
                    f"model[{key!r}] must be a LangChain chat model, got {type(value).__name__}"
                )
        return model
    raise TypeError(
        "model must be a LangChain chat model, a mapping profile -> model "
        f"(with an optional 'default'), or None; got {type(model).__name__}"
    )


def model_for(agent_profile: str, spec: ModelSpec, context_model: str) -> BaseChatModel:
    """The model `agent_profile` uses under this build spec and run context."""
    if isinstance(spec, BaseChatModel):
        return spec
    if isinstance(spec, Mapping):
        if agent_profile in spec:
            return spec[agent_profile]
        if "default" in spec:
            return spec["default"]
    return model_from_string(context_model)
