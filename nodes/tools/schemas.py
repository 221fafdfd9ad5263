"""Tool schemas the agents are bound to inside the graph.

The graph executes these itself (the handover node, or the specialist's own
node for its local tools); the schemas are what the model sees. The graph's
`handover_to_specialist` omits `recent_turns` and `project_root`: the graph
supplies them, so a model never copies text or invents paths.
"""

from __future__ import annotations

from typing import Any

from ...specialists import ORCHESTRATOR_PROFILE, PROFILES
from ...state import RETURN_CONDITIONS

HANDOVER = "handover_to_specialist"
RETURN = "return_to_orchestrator"
FULL_HISTORY = "request_full_history"
READ_BRIEFING = "read_briefing"


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def handover_schema(*, caller: str) -> dict[str, Any]:
    """The handover tool as `caller` sees it: every other profile, with its description."""
    targets = [name for name in PROFILES if name != caller]
    if caller == ORCHESTRATOR_PROFILE:
        listing = "; ".join(f"{n}: {PROFILES[n].description}" for n in targets)
    else:
        listing = (
            "; ".join(
                f"{n}: {PROFILES[n].description}" for n in targets if n != ORCHESTRATOR_PROFILE
            )
            + f"; {ORCHESTRATOR_PROFILE}: hand back to the orchestrator"
        )
    return _function(
        HANDOVER,
        "Transfer the conversation to another specialist with a small stage-1 package "
        "(summary, decisions, artifacts; the graph adds the recent turns). Use it when the "
        "request is clearly better handled by that specialist. Available agents: " + listing,
        {
            "specialist_profile": {
                "type": "string",
                "enum": targets,
                "description": "Name of the profile to hand over to.",
            },
            "topic": {
                "type": "string",
                "description": "Short slug for the briefing file, e.g. 'landing-page-hero'.",
            },
            "summary": {
                "type": "string",
                "description": "Curated summary of the conversation so far, at most ~300 tokens.",
            },
            "handover_reason": {
                "type": "string",
                "description": "Brief explanation of why this handover is needed.",
            },
            "decisions": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Decisions made so far.",
            },
            "artifacts": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Relevant file paths or references.",
            },
            "return_condition": {
                "type": "string",
                "enum": list(RETURN_CONDITIONS),
                "description": "When control comes back: "
                + "; ".join(f"{k}: {v}" for k, v in RETURN_CONDITIONS.items()),
            },
        },
        ["specialist_profile", "topic", "summary", "handover_reason"],
    )


RETURN_SCHEMA = _function(
    RETURN,
    "Hand the conversation back to the orchestrator, with a concise summary of what you "
    "did and decided. Use it when the user asks to go back or your task is complete.",
    {"summary": {"type": "string", "description": "What was done and decided."}},
    ["summary"],
)

FULL_HISTORY_SCHEMA = _function(
    FULL_HISTORY,
    "Stage 2: get the whole conversation so far (capped, older parts compacted) when the "
    "handover package is not enough.",
    {},
    [],
)

READ_BRIEFING_SCHEMA = _function(
    READ_BRIEFING,
    "Stage 3: read your own briefing file(s): earlier handovers to you, newest first.",
    {
        "topic": {
            "type": "string",
            "description": "Only this topic (slug); omit for all of your topics.",
        }
    },
    [],
)


def specialist_tools(profile: str) -> list[dict[str, Any]]:
    """Every tool a specialist is bound to."""
    return [
        handover_schema(caller=profile),
        RETURN_SCHEMA,
        FULL_HISTORY_SCHEMA,
        READ_BRIEFING_SCHEMA,
    ]


def orchestrator_tools() -> list[dict[str, Any]]:
    """The orchestrator's one tool."""
    return [handover_schema(caller=ORCHESTRATOR_PROFILE)]
