"""Words the terminal prints: counts with the right plural, who is who, one line per tool call."""

from __future__ import annotations

import json
import re
from typing import Any

from ...specialists import ORCHESTRATOR_PROFILE, ProfileRegistry
from ...state import ORCHESTRATOR

STAGE_TOOLS = ("request_full_history", "read_briefing")
"""Stages 2 and 3: shown as `📚 name: first line of the result`."""

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters but tab and newline."""


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 event`, `2 events`, `0 events`; `many` for irregular plurals."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def profile_name(agent: str) -> str:
    """The profile behind a graph node or agent name: `orchestrator` -> its profile."""
    return ORCHESTRATOR_PROFILE if agent == ORCHESTRATOR else agent


def agent_label(agent: str, profiles: ProfileRegistry, marker: str = "") -> str:
    """`🖌️ [frontend designer]`; `🧭 [a0 software orchestrator]` for the orchestrator."""
    profile = profiles.get(profile_name(agent or ""))
    if profile is not None:
        return profile.label
    return marker or f"[{agent or 'assistant'}]"


def agent_title(agent: str, profiles: ProfileRegistry) -> str:
    """`frontend designer`, as in `frontend designer is thinking…`."""
    profile = profiles.get(profile_name(agent or ""))
    return profile.title if profile is not None else (agent or "the agent").replace("_", " ")


def one_line(text: str, width: int = 100) -> str:
    """The text on one line (control characters shown as spaces), cut to `width`."""
    flat = " ".join(CONTROL.sub(" ", text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def call_text(name: str, args: Any, width: int = 80) -> str:
    """`read_file(path="src/app.py")`: the call as a person reads it, cut to `width`."""
    if not isinstance(args, dict):
        shown = one_line(str(args or ""), 40)
    else:
        shown = ", ".join(f"{key}={_argument(value)}" for key, value in args.items())
    if len(shown) > width:
        shown = shown[: width - 1] + "…"
    return f"{name}({shown})"


def _argument(value: Any) -> str:
    """A call's argument as JSON, cut in its middle to 40 characters (its closing quote kept)."""
    rendered = json.dumps(value, ensure_ascii=False)
    return rendered if len(rendered) <= 40 else rendered[:38] + "…" + rendered[-1:]


_READ_HEADER = re.compile(r"\(lines (\d+)-(\d+) of (\d+)\)\s*$")


def result_text(name: str, result: str) -> str:
    """What a tool's result comes to: `7 lines`, `lines 3-4 of 7`, or its first line."""
    lines = result.splitlines()
    first = lines[0] if lines else ""
    if name == "read_file" and not first.startswith("ERROR"):
        found = _READ_HEADER.search(first)
        if found:
            start, end, total = (int(g) for g in found.groups())
            if start == 1 and end == total:
                return plural(total, "line")
            return f"lines {start}-{end} of {total}"
    return one_line(first) if first else "(nothing)"


def tool_line(name: str, args: Any, result: str) -> str:
    """`🔧 read_file(path="src/app.py") → 7 lines`, or `📚 request_full_history: ...` for the
    stages."""
    if name in STAGE_TOOLS:
        first = result.splitlines()[0] if result else ""
        return f"📚 {name}: {first}"
    return f"🔧 {call_text(name, args)} → {result_text(name, result)}"
