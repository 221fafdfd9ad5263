"""Stage 1: the token-bounded handover package and its one rendering.

`render_package` is the only way a package becomes text: the tool counts
`estimated_tokens` over its output and the specialist node shows the very same
output to the specialist, so the figure is what the specialist really costs.

Its second line, `Specialist: <profile>`, names who the package is for: a
routing hint any model (the built-in offline one included) can read without
guessing from prose.
"""

from __future__ import annotations

from typing import Any

from ...specialists import persona_marker
from ...state import RETURN_CONDITIONS, TokenCounter

RECOMMENDED_SUMMARY_TOKENS = 300


def trim_recent_turns(recent_turns: list[str], include_recent_turns: int) -> list[str]:
    """The last `include_recent_turns` turns, oldest first (none when 0)."""
    if include_recent_turns <= 0:
        return []
    return list(recent_turns[-include_recent_turns:])


def render_package(package: dict[str, Any]) -> str:
    """The stage-1 package as the specialist reads it (and as its tokens are counted)."""
    specialist = package["specialist"]
    marker = package.get("label") or persona_marker(specialist)
    condition = package.get("return_condition", "user_request")
    lines = [
        f"{marker} HANDOVER PACKAGE (stage 1)",
        f"Specialist: {specialist}",
        f"Topic: {package['topic']}",
        f"From: {package.get('from_agent') or 'orchestrator'}",
        f"Reason: {package.get('reason') or '(not given)'}",
        f"Return condition: {condition} — {RETURN_CONDITIONS.get(condition, '')}",
        "",
        "## Summary",
        package.get("summary") or "(no summary)",
        "",
        "## Recent turns (verbatim, oldest first)",
    ]
    turns = package.get("recent_turns") or []
    lines += [f"{i}. {turn}" for i, turn in enumerate(turns, 1)] or ["(none)"]
    lines += ["", "## Decisions so far"]
    lines += [f"- {d}" for d in package.get("decisions") or []] or ["(none)"]
    lines += ["", "## Artifacts"]
    lines += [f"- {a}" for a in package.get("artifacts") or []] or ["(none)"]
    lines += [
        "",
        "## More context if you need it",
        f"Briefing file (stage 3, earlier handovers on this topic): {package['briefing_file']}",
        "Full conversation (stage 2): call request_full_history().",
    ]
    return "\n".join(lines)


def build_stage1_package(
    *,
    specialist: str,
    topic: str,
    summary: str,
    recent_turns: list[str],
    decisions: list[str],
    artifacts: list[str],
    return_condition: str,
    reason: str,
    briefing_file: str,
    max_context_tokens: int,
    include_recent_turns: int,
    counter: TokenCounter,
    from_agent: str = "",
    label: str = "",
) -> dict[str, Any]:
    """The package dict (the tool's `package` block plus what rendering needs).

    Recent turns are trimmed to the last `include_recent_turns`; `estimated_tokens`
    is counted over `render_package` of the result; `oversize_warning` is set when
    that exceeds `max_context_tokens`; `notes` says when the summary is longer than
    the recommended 300 tokens. `label` is the specialist's emoji and marker.
    """
    package: dict[str, Any] = {
        "specialist": specialist,
        "topic": topic,
        "summary": summary,
        "briefing_file": briefing_file,
        "estimated_tokens": 0,
        "max_context_tokens": max_context_tokens,
        "oversize_warning": False,
        "return_condition": return_condition,
        "reason": reason,
        "from_agent": from_agent,
        "recent_turns": trim_recent_turns(recent_turns, include_recent_turns),
        "decisions": list(decisions),
        "artifacts": list(artifacts),
        "label": label,
    }
    rendered = render_package(package)
    package["estimated_tokens"] = counter.count_text(rendered)
    package["oversize_warning"] = package["estimated_tokens"] > max_context_tokens
    package["rendered"] = rendered
    notes = []
    summary_tokens = counter.count_text(summary) if summary else 0
    package["summary_tokens"] = summary_tokens
    if summary_tokens > RECOMMENDED_SUMMARY_TOKENS:
        notes.append(
            f"NOTE: the summary is {summary_tokens} tokens; at most "
            f"{RECOMMENDED_SUMMARY_TOKENS} are recommended."
        )
    package["notes"] = notes
    return package
