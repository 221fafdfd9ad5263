"""Stage 3 reader: `read_briefing` — own entries only, newest first, capped, confined."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import specialist_handover.nodes.briefing.reader as briefing_reader
from specialist_handover.nodes.briefing.reader import read_briefing
from specialist_handover.nodes.briefing.writer import (
    append_briefing,
    briefing_filename,
    briefing_header,
    render_entry,
    slugify_topic,
)
from specialist_handover.state import HandoverPackage, TokenCounter

COUNTER = TokenCounter()
SECRET = "TOP-SECRET-6f1d"
DAY = datetime(2026, 6, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside").mkdir()
    return project


def entry_text(
    specialist: str, when: datetime, reason: str, summary: str = "", hid: str = ""
) -> str:
    package = HandoverPackage(
        handover_id=hid or f"h-{reason}",
        specialist=specialist,
        topic="t",
        from_agent="orchestrator",
        reason=reason,
        summary=summary or f"Summary for {reason}.",
        recent_turns=["user: make the hero pop"],
        decisions=["Use Tailwind"],
        artifacts=["src/pages/index.tsx"],
        return_condition="user_request",
        briefing_file="",
        estimated_tokens=120,
        max_context_tokens=3000,
        oversize_warning=False,
        rendered="",
    )
    return render_entry(package, when=when)


def write_entry(
    root: Path, specialist: str, topic: str, when: datetime, reason: str, summary: str = ""
) -> Path:
    """Append one entry with the project's own writer."""
    slug = slugify_topic(topic)
    result = append_briefing(
        project_root=str(root),
        filename=briefing_filename(specialist, slug, when),
        header=briefing_header(specialist, slug),
        entry=entry_text(specialist, when, reason, summary),
        handover_id=f"h-{reason}",
    )
    return Path(result.path)


def forged_briefing(specialist: str, slug: str) -> str:
    """A well-formed briefing file whose only entry carries the secret."""
    return briefing_header(specialist, slug) + entry_text(specialist, DAY, "forged", SECRET)


def read(root: Path, **kwargs) -> str:
    kwargs.setdefault("specialist", "frontend_designer")
    text = read_briefing(project_root=str(root), counter=COUNTER, **kwargs)
    assert SECRET not in text
    return text


def reasons(text: str) -> list[str]:
    return re.findall(r"- \*\*Reason:\*\* (\S+)", text)


# --- order, topics, the cap ----------------------------------------------------------------


def test_entries_are_newest_first_across_files(root):
    write_entry(root, "frontend_designer", "landing page hero", DAY, "a-first")
    write_entry(root, "frontend_designer", "landing page hero", DAY + timedelta(hours=3), "c-third")
    write_entry(root, "frontend_designer", "landing page hero", DAY + timedelta(days=1), "d-fourth")
    write_entry(root, "frontend_designer", "pricing table", DAY + timedelta(hours=1), "b-second")
    text = read(root)
    assert text.startswith("BRIEFING (stage 3) for frontend_designer, all topics: 4 of 4 entries")
    assert reasons(text) == ["d-fourth", "c-third", "b-second", "a-first"]
    assert "## Handover 2026-06-06T09:00:00Z → frontend_designer " in text
    assert "(frontend-designer-landing-page-hero-2026-06-06.md)" in text
    assert "<!-- handover-id" not in text  # the marker is bookkeeping, not content


def test_topic_filter_reads_only_that_topic_slugified_like_the_writer(root):
    write_entry(root, "frontend_designer", "landing-page-hero", DAY, "hero-1")
    write_entry(root, "frontend_designer", "landing-page-hero", DAY + timedelta(hours=1), "hero-2")
    write_entry(root, "frontend_designer", "landing-page", DAY, "other-topic")
    write_entry(root, "frontend_designer", "landing-page-hero-v2", DAY, "longer-topic")
    text = read(root, topic="Landing Page / Hero!")
    assert reasons(text) == ["hero-2", "hero-1"]
    assert "topic 'landing-page-hero': 2 of 2 entries" in text


def test_token_cap_drops_the_oldest_entries_and_says_how_many(root):
    for i in range(12):
        write_entry(root, "frontend_designer", "hero", DAY + timedelta(hours=i), f"r{i:02d}")
    text = read(root, max_tokens=900)
    assert COUNTER.count_text(text) <= 900
    shown = reasons(text)
    assert shown and shown == [f"r{i:02d}" for i in range(11, 11 - len(shown), -1)]
    left_out = 12 - len(shown)
    assert left_out > 0
    assert f"[{left_out} older entries left out to stay within the 900-token cap]" in text
    assert f": {len(shown)} of 12 entries, newest first." in text


def test_newest_entry_alone_over_the_cap_is_cut_to_fit(root):
    write_entry(root, "frontend_designer", "hero", DAY, "old")
    write_entry(root, "frontend_designer", "hero", DAY + timedelta(1), "huge", "word " * 5000)
    text = read(root, max_tokens=300)
    assert COUNTER.count_text(text) <= 300
    assert "- **Reason:** huge" in text and "… [entry cut to fit the cap]" in text
    assert "[1 older entry left out to stay within the 300-token cap]" in text


@pytest.mark.parametrize("cap", [1, 3, 10, 25, 60, 120])
def test_tiny_caps_are_never_exceeded(root, cap):
    for i in range(3):
        write_entry(root, "frontend_designer", "hero", DAY + timedelta(hours=i), f"r{i}")
    assert COUNTER.count_text(read(root, max_tokens=cap)) <= cap


def test_nothing_found_gives_a_clear_message(root):
    assert read(root, topic="x") == "No briefing entries for frontend_designer on topic 'x' yet."
    write_entry(root, "hacker", "x", DAY, "not-yours")
    assert read(root) == "No briefing entries for frontend_designer yet."


def test_entries_naming_another_specialist_inside_own_file_are_ignored(root):
    path = write_entry(root, "frontend_designer", "hero", DAY, "mine")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(entry_text("hacker", DAY + timedelta(1), "theirs", SECRET))
    assert reasons(read(root)) == ["mine"]


def test_a_file_without_the_writers_header_for_this_specialist_and_topic_is_not_read(root):
    write_entry(root, "frontend_designer", "hero", DAY, "own")
    handover = root / ".a0proj" / "handover"
    forged = forged_briefing("frontend_designer", "notes").replace("# Briefing:", "# Notes:", 1)
    (handover / "frontend-designer-notes-2026-06-05.md").write_text(forged, "utf-8")
    mislabelled = forged_briefing("frontend_designer", "other")  # header names another topic
    (handover / "frontend-designer-misc-2026-06-05.md").write_text(mislabelled, "utf-8")
    assert reasons(read(root)) == ["own"]


def test_a_large_file_is_read_from_its_end(root, monkeypatch):
    for i in range(30):
        write_entry(root, "frontend_designer", "hero", DAY + timedelta(minutes=i), f"r{i:02d}")
    monkeypatch.setattr(briefing_reader, "MAX_FILE_BYTES", 4_000)
    shown = reasons(read(root, max_tokens=100_000))
    assert shown and shown[0] == "r29" and "r00" not in shown
    assert shown == [f"r{i:02d}" for i in range(29, 29 - len(shown), -1)]


# --- confinement ---------------------------------------------------------------------------


@pytest.fixture
def planted(root: Path) -> Path:
    """Secrets everywhere except the reader's own files: outside, one level up, other profiles."""
    write_entry(root, "frontend_designer", "hero", DAY, "own")
    handover = root / ".a0proj" / "handover"
    outside = root.parent / "outside"
    for folder in (outside, root, root / ".a0proj"):
        for slug in ("passwd", "etc-passwd", "hero", "x"):
            name = f"frontend-designer-{slug}-2026-06-05.md"
            (folder / name).write_text(forged_briefing("frontend_designer", slug), "utf-8")
    (outside / "secret.txt").write_text(SECRET, "utf-8")
    for specialist, slug in (
        ("ui_design_specialist", "x"),
        ("frontend_designer_x", "y"),  # a confusable longer profile name
        ("hacker", "frontend-designer-x"),
    ):
        name = briefing_filename(specialist, slug, DAY)
        (handover / name).write_text(forged_briefing(specialist, slug), "utf-8")
    return root


@pytest.mark.parametrize(
    "topic",
    [
        "../../etc/passwd",
        "../outside/secret.txt",
        "../frontend-designer-passwd-2026-06-05.md",
        "/etc/passwd",
        "*",
        "?",
        "..",
        "hero\x00../../outside",
        "frontend-designer-x",
        "ui-design-specialist-x",
        "x-y",
        "%2e%2e%2fetc%2fpasswd",
        "hero/../../../outside",
    ],
)
def test_no_topic_reads_anything_outside_the_specialists_own_files(planted, topic):
    text = read(planted, topic=topic)
    assert text.startswith(("ERROR:", "No briefing entries", "BRIEFING (stage 3)"))


def test_prefix_confusable_profiles_never_match(planted):
    # `ui-design-specialist-x-<date>.md` is not ui_design's topic `specialist-x`
    assert read(planted, specialist="ui_design", topic="specialist-x").startswith("No briefing")
    assert read(planted, specialist="ui_design").startswith("No briefing")
    # `frontend-designer-x-y-<date>.md` belongs to frontend_designer_x, not frontend_designer
    assert reasons(read(planted, topic="x-y")) == []
    assert reasons(read(planted)) == ["own"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topic=st.text(max_size=40), specialist=st.sampled_from(["frontend_designer", "ui_design"]))
def test_property_any_topic_stays_confined(tmp_path_factory, topic, specialist):
    root = _planted_once(tmp_path_factory)
    text = read_briefing(
        project_root=str(root), specialist=specialist, topic=topic, counter=COUNTER
    )
    assert SECRET not in text
    assert text.startswith(("ERROR:", "No briefing entries", "BRIEFING (stage 3)"))


_PLANTED: dict[str, Path] = {}


def _planted_once(factory: pytest.TempPathFactory) -> Path:
    if "root" not in _PLANTED:
        root = factory.mktemp("confined") / "project"
        root.mkdir()
        (root.parent / "outside").mkdir()
        write_entry(root, "frontend_designer", "hero", DAY, "own")
        for name in ("frontend-designer-x-2026-06-05.md", "ui-design-x-2026-06-05.md"):
            for folder in (root.parent / "outside", root / ".a0proj"):
                (folder / name).write_text(forged_briefing("frontend_designer", "x"), "utf-8")
        handover = root / ".a0proj" / "handover"
        for specialist in ("ui_design_specialist", "hacker"):
            name = briefing_filename(specialist, "x", DAY)
            (handover / name).write_text(forged_briefing(specialist, "x"), "utf-8")
        _PLANTED["root"] = root
    return _PLANTED["root"]


def test_symlinked_briefing_file_is_skipped(root):
    write_entry(root, "frontend_designer", "hero", DAY, "own")
    target = root.parent / "outside" / "forged.md"
    target.write_text(forged_briefing("frontend_designer", "x"), "utf-8")
    (root / ".a0proj" / "handover" / "frontend-designer-x-2026-06-05.md").symlink_to(target)
    text = read(root)
    assert reasons(text) == ["own"]
    assert "NOTE: skipped 1 file(s) that are symlinks or not regular files: " in text
    assert read(root, topic="x").startswith("No briefing entries for frontend_designer on topic")


@pytest.mark.parametrize("linked", [".a0proj", ".a0proj/handover"])
def test_symlinked_state_or_handover_folder_is_refused(root, linked):
    elsewhere = root.parent / "outside" / "real"
    (elsewhere / "handover").mkdir(parents=True)
    name = "frontend-designer-x-2026-06-05.md"
    (elsewhere / "handover" / name).write_text(forged_briefing("frontend_designer", "x"), "utf-8")
    if linked == ".a0proj":
        (root / ".a0proj").symlink_to(elsewhere, target_is_directory=True)
    else:
        (root / ".a0proj").mkdir()
        (root / ".a0proj" / "handover").symlink_to(elsewhere / "handover")
    text = read(root)
    assert text.startswith("ERROR: refusing to read through a symlink")
    assert read(root, topic="x").startswith("ERROR: refusing to read through a symlink")


def test_fifos_and_folders_named_like_briefings_are_ignored_without_blocking(root):
    write_entry(root, "frontend_designer", "hero", DAY, "own")
    handover = root / ".a0proj" / "handover"
    os.mkfifo(handover / "frontend-designer-pipe-2026-06-05.md")
    (handover / "frontend-designer-folder-2026-06-05.md").mkdir()
    text = read(root)
    assert reasons(text) == ["own"]
    assert "skipped 2 file(s)" in text


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"project_root": "relative/path"}, "ERROR: project_root must be absolute"),
        ({"project_root": "/tmp/a\x00b"}, "ERROR: project_root must be an absolute path string"),
        ({"project_root": None}, "ERROR: project_root must be an absolute path string"),
        ({"specialist": "../hacker"}, "ERROR: invalid specialist"),
        ({"specialist": "Frontend_Designer"}, "ERROR: invalid specialist"),
        ({"specialist": ""}, "ERROR: invalid specialist"),
        ({"specialist": None}, "ERROR: invalid specialist"),
        ({"topic": "*"}, "ERROR: topic '*' has no letters or digits"),
        ({"topic": ""}, "ERROR: topic '' has no letters or digits"),
        ({"topic": "a\x00b"}, "ERROR: topic must be text without NUL bytes"),
        ({"topic": 42}, "ERROR: topic must be text"),
        ({"max_tokens": 0}, "ERROR: max_tokens must be a positive integer"),
        ({"max_tokens": True}, "ERROR: max_tokens must be a positive integer"),
        ({"max_tokens": "4000"}, "ERROR: max_tokens must be a positive integer"),
    ],
)
def test_invalid_arguments_return_error_text(root, kwargs, message):
    arguments = {"project_root": str(root), "specialist": "frontend_designer", **kwargs}
    text = read_briefing(counter=COUNTER, **arguments)
    assert text.startswith(message), text


def test_missing_project_root_is_an_error_not_an_exception(root):
    text = read_briefing(project_root=str(root / "nope"), specialist="hacker", counter=COUNTER)
    assert text.startswith("ERROR: project_root")
