"""Specialists that remember: an outcome entry at every return, a "last time" section at the next
handover.

When a specialist hands the conversation back (`return_to_orchestrator`, or a plain reply under
`after_reply` / `task_complete`), the graph appends an **outcome entry** to the briefing file of
the handover it ends: its hand-back summary (or the first sentences of its last reply) and the
decisions it names, with the hold's model calls. The entry is written once per handover (id
`<handover_id>-outcome`, so a resumed run does not write it twice) and, when the graph has a
store, put there too (namespace `("briefings", <specialist>)`, key `<handover_id>:outcome`).

The next handover to the same specialist in the same project carries a bounded **last time**
section built from its newest outcomes (any topic): at most `LAST_TIME_ENTRIES` of them within
`LAST_TIME_MAX_TOKENS`, counted in the package's `estimated_tokens` like the rest of the
package. The store is read when the graph has one (every replica sees the same outcomes; an
outcome records its project root, and only the project's own are recalled), else
the newest briefing files' last `OUTCOME_TAIL_BYTES` each, so a handover reads little however
long the briefings grow. Nothing here raises into a turn: memory that cannot be written or read
is left out.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ...state import HoldUsage, TokenCounter
from ...state.defaults import (
    LAST_TIME_ENTRIES,
    LAST_TIME_ENTRY_TOKENS,
    LAST_TIME_MAX_TOKENS,
    OUTCOME_FILES_READ,
    OUTCOME_SUMMARY_MAX_CHARS,
    OUTCOME_SUMMARY_WORDS,
    OUTCOME_TAIL_BYTES,
)
from ..history.extractive import extractive_summary
from ..redaction import redact, redact_all
from .reader import read_outcomes
from .shared import NAMESPACE
from .writer import (
    _ID_MARKER,
    _bullets,
    _escape,
    append_briefing,
    briefing_header,
    now_utc,
    slugify_topic,
)

OUTCOME_SUFFIX = "-outcome"
"""An outcome entry's id: its handover's id with this suffix."""
_SUMMARY = re.compile(r"^### Summary\n\n(?P<text>.*?)(?:\n\n### |\Z)", re.DOTALL | re.MULTILINE)
_DECISIONS = re.compile(r"^### Decisions\n\n(?P<text>.*?)(?:\n\n### |\Z)", re.DOTALL | re.MULTILINE)


def reply_summary(text: str) -> str:
    """A plain reply condensed for the outcome entry: its first sentences."""
    return extractive_summary(
        [line for line in text.splitlines() if line.strip()][:8], max_words=OUTCOME_SUMMARY_WORDS
    )


def write_outcome(
    *,
    project_root: str | None,
    handover: dict[str, Any],
    how: str,
    summary: str,
    decisions: Sequence[str] = (),
    usage: HoldUsage | None = None,
    store: Any = None,
    artifacts: Sequence[str] = (),
) -> str | None:
    """Append the outcome of `handover` to its briefing file (and put it into `store`); None,
    or what went wrong (the return goes on either way)."""
    specialist = str(handover.get("specialist") or "")
    handover_id = str(handover.get("handover_id") or "")
    path = str(handover.get("briefing_file") or "")
    if not (project_root and specialist and handover_id and path):
        return None  # a thread stored by an older version: nothing to attach it to
    # the entry (Markdown) under its own id marker (`<handover_id>-outcome`), its texts
    # redacted and its summary bounded (`OUTCOME_SUMMARY_MAX_CHARS`)
    when = now_utc()
    if len(summary) > OUTCOME_SUMMARY_MAX_CHARS:
        summary = summary[:OUTCOME_SUMMARY_MAX_CHARS].rstrip() + " … [cut: the summary was longer]"
    decided, _ = redact_all([str(d) for d in decisions])
    made, _ = redact_all([str(a) for a in artifacts])
    calls = (
        f"{usage['model_calls']} ({usage['input_tokens']:,} tokens in, "
        f"{usage['output_tokens']:,} out)"
        if usage
        else "(not known)"
    )
    entry = (
        f"\n## Outcome {when.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ} ← {specialist}\n"
        f"{_ID_MARKER.format(handover_id + OUTCOME_SUFFIX)}\n\n"
        f"- **Handover id:** `{handover_id}`\n"
        f"- **Handed back:** {_escape(how)}\n"
        f"- **Model calls:** {calls}\n\n"
        f"### Summary\n\n{_escape(redact(summary).text).strip() or '(no summary)'}\n\n"
        f"### Decisions\n\n{_bullets(decided)}\n"
        + (f"\n### Artifacts\n\n{_bullets(made)}\n" if made else "")
    )
    topic = slugify_topic(str(handover.get("topic") or ""))
    problem = None
    try:
        append_briefing(
            project_root=project_root,
            filename=os.path.basename(path),
            header=briefing_header(specialist, topic),
            entry=entry,
            handover_id=handover_id + OUTCOME_SUFFIX,
        )
    except Exception as exc:  # noqa: BLE001 - the hand-back must not fail on its memory
        problem = f"outcome not written to {path}: {exc}"
    if store is not None:
        try:
            value = {
                "kind": "outcome",
                "project_root": project_root,
                "topic": topic,
                "handover_id": handover_id,
                "markdown": entry,
                "created_at": when.isoformat(),
                "from_agent": specialist,
            }
            store.put((NAMESPACE, specialist), f"{handover_id}:outcome", value)
            _remember(store, specialist, project_root, value)
        except Exception as exc:  # noqa: BLE001
            problem = f"outcome not put into the store: {exc}"
    return problem


def _from_body(body: str) -> tuple[str, list[str]]:
    summary = _SUMMARY.search(body)
    decisions = _DECISIONS.search(body)
    found = [
        line[2:].strip()
        for line in (decisions["text"] if decisions else "").splitlines()
        if line.startswith("- ") and line.strip() != "- (none)"
    ]
    return (summary["text"].strip() if summary else ""), found


def _recent_key(project_root: str) -> str:
    return "recent-outcomes-" + hashlib.sha256(project_root.encode()).hexdigest()[:16]


def _remember(store: Any, specialist: str, project_root: str, value: dict[str, Any]) -> None:
    """Keep the project's newest outcomes in one store item, so a handover reads one item."""
    others = _recent(store, specialist, project_root)
    kept = [value, *(o for o in others if o.get("handover_id") != value["handover_id"])]
    item: dict[str, Any] = {"kind": "recent_outcomes", "project_root": project_root}
    item["outcomes"] = kept[:LAST_TIME_ENTRIES]
    store.put((NAMESPACE, specialist), _recent_key(project_root), item)


def _recent(store: Any, specialist: str, root: str) -> list[dict[str, Any]]:
    """The project's newest outcomes, as `_remember` keeps them in one store item."""
    item = store.get((NAMESPACE, specialist), _recent_key(root))
    kept = item.value.get("outcomes") if item is not None and isinstance(item.value, dict) else []
    return [o for o in kept if isinstance(o, dict)] if isinstance(kept, list) else []


def _store_outcomes(store: Any, specialist: str, root: str) -> list[tuple[datetime, str, str]]:
    found = []
    for value in _recent(store, specialist, root):
        markdown = value.get("markdown")
        try:
            when = datetime.fromisoformat(str(value.get("created_at")))
        except ValueError:
            continue
        if isinstance(markdown, str):
            found.append((when, str(value.get("topic") or ""), markdown))
    found.sort(key=lambda f: f[0], reverse=True)
    return found


def last_time(
    *, project_root: str | None, specialist: str, counter: TokenCounter, store: Any = None
) -> list[str]:
    """The "last time" lines of a package to `specialist`: its newest outcomes, one line each
    (`2026-11-30, topic landing-page-hero: <summary> Decisions: a; b.`), each within
    `LAST_TIME_ENTRY_TOKENS` and together within `LAST_TIME_MAX_TOKENS`. Never raises."""
    try:
        if store is not None and project_root:
            found = _store_outcomes(store, specialist, project_root)[:LAST_TIME_ENTRIES]
        elif project_root:
            found = read_outcomes(
                project_root=project_root,
                specialist=specialist,
                limit=LAST_TIME_ENTRIES,
                tail_bytes=OUTCOME_TAIL_BYTES,
                max_files=OUTCOME_FILES_READ,
            )
        else:
            found = []
        lines: list[str] = []
        used = 0
        for when, topic, body in found:
            summary, decisions = _from_body(body)
            line = f"{when:%Y-%m-%d}, topic {topic or '(none)'}: {summary or '(no summary)'}"
            if decisions:
                line += f" Decisions: {'; '.join(decisions)}."
            line = counter.truncate(" ".join(line.split()), LAST_TIME_ENTRY_TOKENS)
            cost = counter.count_text(line) + 2
            if used + cost > LAST_TIME_MAX_TOKENS:
                break
            lines.append(line)
            used += cost
        return lines
    except Exception:  # noqa: BLE001 - a handover without memory is better than none
        return []
