"""The built-in agents: LangChain's `create_agent`, made from a profile.

A built-in agent is made the way a user makes one: `create_agent` with the
profile's prompt, the tools `handover_tools` gives every agent of the graph
(plus the profile's tool sets and the user's tools), and the middleware of
`middleware.py`. Its loop is `create_agent`'s own: a `model` step and a `tools`
step (one task per call), each its own checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from ...specialists import ORCHESTRATOR_PROFILE, Profile
from ...state import HandoverContext, ProfileAgentState
from .middleware import ModelRetries, RequestBudget, RunModel, SafeReplies, ToolErrors, TurnLimit

ModelFor = Callable[[HandoverContext], BaseChatModel]


class RunChosenModel(BaseChatModel):
    """Stands in for the model `RunModel` chooses per run; it is never asked anything."""

    @property
    def _llm_type(self) -> str:
        return "chosen-per-run"

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        raise RuntimeError("the run chooses this agent's model (RunModel middleware)")


def system_prompt(profile: Profile) -> str:
    """The agent's system prompt: the profile's, then who it is in this graph."""
    if profile.name == ORCHESTRATOR_PROFILE:
        role = (
            f"You are the orchestrator (profile `{ORCHESTRATOR_PROFILE}`). Handover notes, when "
            "there are any, open the conversation below: the handovers so far (use them to "
            "recall who worked on what) and a summary of the turns before the recent ones."
        )
    else:
        role = (
            f"You are the {profile.title} (profile `{profile.name}`), {profile.emoji}. You hold "
            "the conversation because of the handover package that opens the conversation "
            "below; its last user turn is the request to work on, and its return condition "
            "says when to hand back. Call return_to_orchestrator(summary) when the user asks "
            "to go back or the task is complete."
        )
    return f"{profile.prompt}\n\n---\n{role}"


def build_profile_agent(
    *,
    agent: str,
    profile: Profile,
    model_for: ModelFor,
    tools: Sequence[BaseTool],
    warmers: list[Callable[[], None]] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """One built-in agent: `create_agent` with the profile's prompt, `tools` and our middleware.
    `warmers` (when given) gets what prepares the agent before its first request."""
    budget = RequestBudget(tools)
    if warmers is not None:
        warmers.append(budget.warm_up)
    return create_agent(
        RunChosenModel(),
        list(tools),
        system_prompt=system_prompt(profile),
        middleware=[
            TurnLimit(agent, profile),
            RunModel(model_for),
            budget,
            ModelRetries(agent),
            SafeReplies(agent, profile),
            ToolErrors([t.name for t in tools]),
        ],
        state_schema=ProfileAgentState,
        context_schema=HandoverContext,
        name=agent,
    )
