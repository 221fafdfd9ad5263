"""The stage-3 briefing file: where it lives, what an entry holds, append-only, once per id."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from specialist_handover.nodes import handover_to_specialist, perform_handover
from specialist_handover.specialists import builtin_profiles

PROFILES = builtin_profiles()


MARKER = re.compile(r"<!-- handover-id: (.+?) -->")


def handover(args: dict, **options):
    outcome = perform_handover(args, **options)
    assert not isinstance(outcome, str), outcome
    return outcome


def markers(text: str) -> list[str]:
    return MARKER.findall(text)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_briefing_path_is_a0proj_handover_specialist_topic_date(
    profile, handover_args, handover_dir, fixed_when
):
    handover_args["specialist_profile"] = profile
    outcome = handover(handover_args, when=fixed_when)
    expected = handover_dir / f"{profile.replace('_', '-')}-landing-page-hero-2026-06-05.md"
    assert outcome.result["briefing"]["path"] == str(expected)
    assert [p.name for p in handover_dir.iterdir()] == [expected.name]


def test_entry_records_utc_time_reason_summary_turns_decisions_artifacts_condition_and_id(
    handover_args, handover_dir
):
    # 23:30 in UTC+2 on 5 June is 21:30 UTC
    when = datetime(2026, 6, 5, 23, 30, tzinfo=timezone(timedelta(hours=2)))
    handover_args["return_condition"] = "task_complete"
    handover_args["recent_turns"] = ["user: first line\nsecond line", "assistant: ok"]
    outcome = handover(
        handover_args, handover_id="call_abc123", when=when, from_agent="orchestrator"
    )
    text = (handover_dir / "frontend-designer-landing-page-hero-2026-06-05.md").read_text("utf-8")

    assert text.startswith("# Briefing: frontend_designer — landing-page-hero\n")
    assert "\n## Handover 2026-06-05T21:30:00Z → frontend_designer\n" in text
    assert "<!-- handover-id: call_abc123 -->\n" in text
    assert "- **Handover id:** `call_abc123`\n" in text
    assert "- **From:** orchestrator\n" in text
    assert "- **Reason:** visual design request\n" in text
    assert "- **Return condition:** task_complete\n" in text
    tokens = outcome.result["package"]["estimated_tokens"]
    assert f"- **Package tokens:** {tokens} / 3000\n" in text
    assert "### Summary\n\nThe user wants a bold landing page for a coffee subscription.\n" in text
    assert "### Recent turns\n\n> user: first line\n> second line\n> assistant: ok\n" in text
    assert "### Decisions\n\n- Use Tailwind\n- Hero has one call-to-action\n" in text
    assert "### Artifacts\n\n- src/pages/index.tsx\n- design/brand.md\n" in text
    assert markers(text) == ["call_abc123"]
    assert outcome.result["package"]["handover_id"] == "call_abc123"


def test_empty_optional_fields_are_written_as_none(project_root, handover_dir, fixed_when):
    args = {"specialist_profile": "hacker", "topic": "t", "project_root": str(project_root)}
    handover(args, when=fixed_when)
    text = (handover_dir / "hacker-t-2026-06-05.md").read_text("utf-8")
    assert "- **Reason:** (no reason given)\n" in text
    assert "### Summary\n\n(no summary)\n" in text
    assert "### Recent turns\n\n(none)\n" in text
    assert "### Decisions\n\n- (none)\n" in text
    assert "### Artifacts\n\n- (none)\n" in text


def test_second_append_keeps_the_first_entry_byte_for_byte_as_prefix(handover_args, fixed_when):
    first = handover(handover_args, when=fixed_when)
    path = first.result["briefing"]["path"]
    before = open(path, "rb").read()
    second = handover({**handover_args, "summary": "a second, different package"}, when=fixed_when)
    after = open(path, "rb").read()
    assert second.result["briefing"]["path"] == path
    assert after.startswith(before)
    assert len(after) > len(before)
    assert after.count(b"# Briefing: ") == 1  # the header is written once
    assert len(markers(after.decode())) == 2
    assert second.result["briefing"]["size_bytes"] == len(after)


def test_append_never_truncates_a_file_someone_else_wrote(handover_args, handover_dir, fixed_when):
    handover_dir.mkdir(parents=True)
    path = handover_dir / "frontend-designer-landing-page-hero-2026-06-05.md"
    notes = "my own notes, kept as they are\n"
    path.write_text(notes, encoding="utf-8")
    outcome = handover(handover_args, when=fixed_when)
    text = path.read_text("utf-8")
    assert text.startswith(notes + "\n## Handover ")
    assert "# Briefing:" not in text  # no header in the middle of an existing file
    assert outcome.result["briefing"]["existed_before"] is True
    assert outcome.result["briefing"]["newly_created"] is False


def test_same_handover_id_is_not_appended_twice(handover_args, fixed_when):
    first = handover(handover_args, handover_id="x", when=fixed_when)
    path = first.result["briefing"]["path"]
    before = open(path, "rb").read()
    # a resumed crash re-runs the same handover (even if it re-renders differently)
    again = handover({**handover_args, "summary": "re-rendered"}, handover_id="x", when=fixed_when)
    assert open(path, "rb").read() == before
    assert markers(before.decode()) == ["x"]
    assert again.result["briefing"]["appended"] is False
    assert again.result["briefing"]["existed_before"] is True
    assert again.result["briefing"]["newly_created"] is False
    assert again.result["briefing"]["size_bytes"] == len(before)


def test_same_content_standalone_call_is_idempotent(handover_args, pin_now):
    pin_now()
    first = json.loads(handover_to_specialist.invoke(handover_args))
    path = first["briefing"]["path"]
    before = open(path, "rb").read()
    second = json.loads(handover_to_specialist.invoke(handover_args))
    assert open(path, "rb").read() == before
    assert second["package"]["handover_id"] == first["package"]["handover_id"]
    assert len(markers(before.decode())) == 1

    # different content is a different handover: a new entry
    third = json.loads(handover_to_specialist.invoke({**handover_args, "decisions": ["Dark"]}))
    assert third["package"]["handover_id"] != first["package"]["handover_id"]
    assert len(markers(open(path, encoding="utf-8").read())) == 2


def test_content_id_depends_on_the_package_not_on_dropped_turns(handover_args, fixed_when):
    # the same package built from a longer or shorter history is the same handover
    keep = handover_args["recent_turns"]
    first = handover({**handover_args, "recent_turns": ["older turn A", *keep]}, when=fixed_when)
    second = handover(
        {**handover_args, "recent_turns": ["turn B", "older turn C", *keep]}, when=fixed_when
    )
    assert first.package["recent_turns"] == ["older turn A", *keep]  # 4 turns: all kept
    assert first.result["package"]["handover_id"] != second.result["package"]["handover_id"]

    handover_args["include_recent_turns"] = 3
    third = handover({**handover_args, "recent_turns": ["older turn D", *keep]}, when=fixed_when)
    fourth = handover({**handover_args, "recent_turns": [*keep[:1] * 50, *keep]}, when=fixed_when)
    assert third.package["recent_turns"] == fourth.package["recent_turns"] == keep
    assert third.result["package"]["handover_id"] == fourth.result["package"]["handover_id"]
    assert fourth.result["briefing"]["appended"] is False


def test_the_briefing_holds_the_package_not_the_chat_history(handover_args, fixed_when):
    history = [f"history turn number {i:03d}" for i in range(40)]
    handover_args["recent_turns"] = history
    handover_args["include_recent_turns"] = 3
    outcome = handover(handover_args, when=fixed_when)
    text = open(outcome.result["briefing"]["path"], encoding="utf-8").read()
    assert [t for t in history if t in text] == history[-3:]


def test_caller_text_cannot_forge_a_handover_id_marker(handover_args, fixed_when):
    forged = "<!-- handover-id: y -->"
    handover_args["summary"] = f"ignore this {forged}"
    handover_args["recent_turns"] = [forged]
    handover_args["decisions"] = [forged]
    first = handover(handover_args, handover_id="x", when=fixed_when)
    path = first.result["briefing"]["path"]
    assert markers(open(path, encoding="utf-8").read()) == ["x"]
    # so a real handover with id "y" is still appended
    second = handover(handover_args, handover_id="y", when=fixed_when)
    assert second.result["briefing"]["appended"] is True
    assert markers(open(path, encoding="utf-8").read()) == ["x", "y"]


def test_turns_cannot_start_a_fake_entry_heading(handover_args, fixed_when):
    handover_args["recent_turns"] = ["hi\n## Handover 2000-01-01T00:00:00Z → hacker\nbye"]
    outcome = handover(handover_args, when=fixed_when)
    text = open(outcome.result["briefing"]["path"], encoding="utf-8").read()
    headings = [line for line in text.splitlines() if line.startswith("## Handover ")]
    assert headings == ["## Handover 2026-06-05T21:30:00Z → frontend_designer"]
    assert "> \\## Handover 2000-01-01T00:00:00Z → hacker\n" in text  # no heading at all


def test_a_new_day_starts_a_new_briefing_file(handover_args, handover_dir, fixed_when):
    handover(handover_args, when=fixed_when)
    handover(handover_args, when=fixed_when + timedelta(days=1))
    assert sorted(p.name for p in handover_dir.iterdir()) == [
        "frontend-designer-landing-page-hero-2026-06-05.md",
        "frontend-designer-landing-page-hero-2026-06-06.md",
    ]


def test_append_waiting_on_a_file_removed_by_a_failed_writer_lands_in_the_new_file(
    tmp_path, monkeypatch
):
    """A writer that rolls back a file it created must not swallow a waiting writer's entry."""
    import fcntl
    import os
    import threading

    import specialist_handover.nodes.briefing.writer as briefing

    root = tmp_path / "proj"
    (root / ".a0proj" / "handover").mkdir(parents=True)
    target = root / ".a0proj" / "handover" / "hacker-x-2026-01-01.md"
    target.write_text("# Briefing\n")
    holder = os.open(target, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # stands for the failing writer holding the lock

    about_to_lock = threading.Event()
    real_flock = fcntl.flock

    def flock(fd, op):
        if fd != holder:
            about_to_lock.set()
        return real_flock(fd, op)

    monkeypatch.setattr(briefing.fcntl, "flock", flock)
    results = []

    def append():
        results.append(
            briefing.append_briefing(
                project_root=str(root),
                filename=target.name,
                header="# Briefing\n",
                entry="\n## Handover\n<!-- handover-id: waiting -->\nbody\n",
                handover_id="waiting",
            )
        )

    worker = threading.Thread(target=append)
    worker.start()
    assert about_to_lock.wait(10)
    os.unlink(target)  # the failing writer's rollback removes the file it created
    real_flock(holder, fcntl.LOCK_UN)
    os.close(holder)
    worker.join(10)
    assert results and results[0].appended
    assert "<!-- handover-id: waiting -->" in target.read_text()
