"""Briefings in a LangGraph store, so every replica reads what another one wrote.

A briefing file lives on the machine that ran the handover. When the graph has
a store (`build_graph(store=...)`, or the LangGraph server's own), each entry
is also put there: namespace `("briefings", <specialist>)`, key the handover
id (a resumed handover puts the same value again), value `{topic,
handover_id, markdown, created_at, from_agent}`. `read_briefing` then reads
the store, with the same caps and order as the files. The files stay: they are
the tool's contract.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ...state import TokenCounter
from .reader import _ENTRY, _Entry, _fit, _parse_when, _Refused, _validate

NAMESPACE = "briefings"
PAGE = 100
MAX_ITEMS = 10_000


def put_briefing(
    store: Any,
    *,
    specialist: str,
    topic: str,
    handover_id: str,
    markdown: str,
    created_at: datetime,
    from_agent: str,
) -> None:
    """Put one entry into the store (idempotent: its key is the handover id)."""
    store.put(
        (NAMESPACE, specialist),
        handover_id,
        {
            "topic": topic,
            "handover_id": handover_id,
            "markdown": markdown,
            "created_at": created_at.astimezone(UTC).isoformat(),
            "from_agent": from_agent,
        },
    )


def _items(store: Any, specialist: str, slug: str | None) -> list[Any]:
    found: list[Any] = []
    while len(found) < MAX_ITEMS:
        page = store.search(
            (NAMESPACE, specialist),
            filter={"topic": slug} if slug is not None else None,
            limit=PAGE,
            offset=len(found),
        )
        found += page
        if len(page) < PAGE:
            break
    return found


def _entry(item: Any, specialist: str, position: int) -> _Entry | None:
    value = item.value if isinstance(item.value, dict) else {}
    markdown = value.get("markdown")
    if not isinstance(markdown, str):
        return None
    match = _ENTRY.search(markdown)
    if match is None or match["specialist"] != specialist:
        return None
    topic = str(value.get("topic") or "")
    when = _parse_when(match["when"], str(value.get("created_at") or "")[:10])
    body = markdown[match.end() :].strip()
    heading = (
        f"## {match['kind']} {match['when']} {match['arrow']} {specialist} "
        f"(topic {topic}, from the store)"
    )
    return _Entry(when, (topic, position), f"{heading}\n\n{body}", match["kind"], body)


def read_briefing_from_store(
    store: Any,
    *,
    project_root: str,
    specialist: str,
    topic: str | None,
    max_tokens: int,
    counter: TokenCounter,
) -> str:
    """The specialist's entries from the store (one topic or all), newest first, within the cap.

    Never raises: invalid arguments and store failures come back as `ERROR: ...`.
    """
    try:
        slug = _validate(project_root, specialist, topic, max_tokens)
        entries = [
            entry
            for position, item in enumerate(_items(store, specialist, slug))
            if (entry := _entry(item, specialist, position)) is not None
        ]
        return _fit(entries, specialist, slug, [], max_tokens, counter)
    except _Refused as refused:
        return f"ERROR: {refused}"
    except Exception as exc:  # the reader never raises; name what went wrong
        return f"ERROR: reading the briefing from the store failed: {type(exc).__name__}: {exc}"
