"""Choosing the chat model an agent talks to, and the token counter that goes with it.

`build_graph(model=...)` may fix one model for every agent, or a mapping
profile -> model with an optional `"default"`. Where neither names a model,
the run's context does: `offline` (the built-in deterministic model) or any
`init_chat_model` string such as `openai:gpt-4o` (ChatOpenAI honours
OPENAI_BASE_URL). Token counts follow the model an agent actually uses.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from ...specialists import ProfileRegistry
from ...state import HandoverContext, TokenCounter, token_counter

ModelSpec = BaseChatModel | Mapping[str, BaseChatModel] | None

OFFLINE = "offline"

_cache: dict[tuple[Any, ...], BaseChatModel] = {}
_lock = threading.Lock()


def model_from_string(spec: str, *, profiles: ProfileRegistry | None = None) -> BaseChatModel:
    """`offline` -> the built-in model (knowing these profiles); else `init_chat_model` (cached)."""
    spec = (spec or "").strip() or OFFLINE
    key = (spec, id(profiles)) if spec == OFFLINE else (spec, _client_environment())
    with _lock:
        if key not in _cache:
            if spec == OFFLINE:
                from .offline import OfflineChatModel  # one model among others, made by name

                _cache[key] = OfflineChatModel(profiles=profiles)
            else:
                _cache[key] = _init_without_client_retries(spec)
        return _cache[key]


def _init_without_client_retries(spec: str) -> BaseChatModel:
    """`init_chat_model(spec)`, with the client's own retries off where it has them: the
    graph retries transient errors itself (the run context's `model_attempts`)."""
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec, max_retries=0)
    except (TypeError, ValueError) as exc:
        if "max_retries" not in str(exc):
            raise
        return init_chat_model(spec)


def _client_environment() -> tuple[tuple[str, str], ...]:
    """The environment a client reads its URL and key from: a change makes a new client."""
    wanted = ("_API_KEY", "_BASE_URL", "_API_BASE", "_ENDPOINT")
    return tuple(sorted((n, v) for n, v in os.environ.items() if n.endswith(wanted)))


def check_model_spec(model: Any, profiles: ProfileRegistry) -> ModelSpec:
    """Validate `build_graph(model=...)`; raise TypeError/ValueError naming the fix."""
    if model is None or isinstance(model, BaseChatModel):
        return model
    if isinstance(model, Mapping):
        named: dict[str, BaseChatModel] = {}
        for key, value in model.items():
            named[key if key == "default" else profiles.key(key, "model")] = value
            if not isinstance(value, BaseChatModel):
                raise TypeError(
                    f"model[{key!r}] must be a LangChain chat model, got {type(value).__name__}"
                )
        return named
    raise TypeError(
        "model must be a LangChain chat model, a mapping profile -> model "
        f"(with an optional 'default'), or None; got {type(model).__name__}"
    )


def model_name(model: BaseChatModel) -> str | None:
    """The model's own name (`gpt-4o`), as LangChain integrations expose it, if any."""
    names = (getattr(model, attr, None) for attr in ("model_name", "model", "model_id"))
    return next((name for name in names if isinstance(name, str) and name), None)


class ModelChoice:
    """The models of one build: which model each profile's agent uses under a run context."""

    def __init__(self, spec: ModelSpec, profiles: ProfileRegistry) -> None:
        self.spec = check_model_spec(spec, profiles)
        self.profiles = profiles

    def declared(self, profile: str) -> str:
        """The model string the profile's own `model:` names, or ""."""
        return self.profiles[profile].model if profile in self.profiles else ""

    def fixed(self, profile: str) -> BaseChatModel | None:
        """The model this profile's agent uses whatever the run context says, or None.

        In order: the build's model for this profile (`model={name: ...}`), the
        profile's own `model:`, the build's model for every agent (one model, or
        the mapping's "default"); None when the run context's `model` decides.
        """
        if isinstance(self.spec, Mapping) and profile in self.spec:
            return self.spec[profile]
        if self.declared(profile):
            return model_from_string(self.declared(profile), profiles=self.profiles)
        return self._built(profile)

    def uses_context_model(self) -> bool:
        """Whether some agent of this build talks to the model the run context names."""
        return any(
            self.declared(name) == "" and self._built(name) is None for name in self.profiles
        )

    def _built(self, profile: str) -> BaseChatModel | None:
        if isinstance(self.spec, Mapping):
            return self.spec.get(profile, self.spec.get("default"))
        return self.spec

    def model_for(self, profile: str, ctx: HandoverContext) -> BaseChatModel:
        """The chat model `profile`'s agent talks to in this run."""
        return self.fixed(profile) or model_from_string(ctx.model, profiles=self.profiles)

    def counter_for(self, profile: str, ctx: HandoverContext) -> TokenCounter:
        """The token counter of that model (o200k_base when its encoding is unknown)."""
        if self.declared(profile) and not (isinstance(self.spec, Mapping) and profile in self.spec):
            return token_counter(self.declared(profile))
        fixed = self._built(profile)
        return token_counter(model_name(fixed) if fixed is not None else ctx.model)
