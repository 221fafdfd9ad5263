"""The built-in profiles: 13 profile files, the registry derived from them, unknown-name errors."""

from __future__ import annotations

import shutil
import unicodedata
from pathlib import Path

import pytest
import yaml

import specialist_handover.specialists as specialists
from specialist_handover.nodes import handover_to_specialist
from specialist_handover.specialists import (
    ProfileFileError,
    ProfileRegistry,
    builtin_profiles,
    load_profile_dir,
    parse_profile,
    resolve_profiles,
)

PROFILES = builtin_profiles()
unknown_profile_message = PROFILES.unknown_profile_message


PROFILE_DIR = Path(specialists.__file__).parent / "profiles"

SPECIFIED_PROFILES = [
    "a0_software_orchestrator",
    "codebase_explorer",
    "implementation_engineer",
    "quality_reviewer",
    "release_auditor",
    "requirements_analyst",
    "runtime_devops_engineer",
    "security_data_engineer",
    "solution_architect",
    "ui_design_specialist",
    "test_debug_engineer",
    "hacker",
]
ALL_PROFILES = sorted([*SPECIFIED_PROFILES, "frontend_designer"])
KNOWN_LIST = ", ".join(ALL_PROFILES)


def front_matter(name: str) -> tuple[dict, str, str]:
    """(metadata, raw front matter text, body) of a profile file, parsed independently."""
    text = (PROFILE_DIR / f"{name}.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), front, body


def test_thirteen_profile_files_twelve_seed_profiles_plus_frontend_designer():
    files = sorted(p.stem for p in PROFILE_DIR.glob("*.md"))
    assert len(SPECIFIED_PROFILES) == 12
    assert files == ALL_PROFILES
    assert len(files) == 13


def test_profiles_mapping_is_derived_from_the_files():
    assert list(PROFILES) == ALL_PROFILES
    for name, profile in PROFILES.items():
        meta, _front, body = front_matter(name)
        assert profile.name == meta["name"] == name
        assert profile.marker == meta["marker"]
        assert profile.emoji == meta["emoji"]
        assert profile.prompt == body.strip()


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_each_profile_has_name_marker_emoji_description_and_a_real_prompt(name):
    profile = PROFILES[name]
    meta, front, _body = front_matter(name)
    # persona marker: the name with spaces, in brackets
    assert profile.marker == "[" + name.replace("_", " ") + "]"
    assert specialists.persona_marker(name) == profile.marker
    # emoji: at least one pictographic symbol, no letters
    assert profile.emoji.strip() == profile.emoji != ""
    assert any(unicodedata.category(ch) == "So" for ch in profile.emoji)
    assert not any(ch.isalnum() for ch in profile.emoji)
    # one-line description, written on one line in the file
    description_lines = [line for line in front.splitlines() if line.startswith("description:")]
    assert len(description_lines) == 1
    assert "\n" not in meta["description"]
    assert 30 <= len(profile.description) <= 200
    # a real system prompt, not a placeholder
    assert profile.prompt.startswith("You are the ")
    assert len(profile.prompt) >= 1000
    assert profile.prompt.count("\n## ") >= 3
    assert "handover_to_specialist" in profile.prompt


def test_prompts_and_descriptions_are_distinct_per_profile():
    assert len({p.prompt for p in PROFILES.values()}) == 13
    assert len({p.description for p in PROFILES.values()}) == 13
    assert len({p.marker for p in PROFILES.values()}) == 13


def test_unknown_profile_error_names_it_suggests_the_closest_and_lists_all():
    message = unknown_profile_message("frontend_desginer")
    assert message.startswith(
        "ERROR: unknown specialist profile 'frontend_desginer'. Did you mean 'frontend_designer'"
    )
    assert message.endswith(f"? Known profiles: {KNOWN_LIST}")


@pytest.mark.parametrize(
    ("typo", "closest"),
    [
        ("frontend-designer", "frontend_designer"),
        ("Frontend Designer", "frontend_designer"),
        ("hackr", "hacker"),
        ("solution_architekt", "solution_architect"),
        ("codebase_explore", "codebase_explorer"),
    ],
)
def test_unknown_profile_suggests_the_closest_name_first(typo, closest):
    message = unknown_profile_message(typo)
    assert message.startswith(
        f"ERROR: unknown specialist profile '{typo}'. Did you mean '{closest}'"
    )
    assert message.endswith(f"Known profiles: {KNOWN_LIST}")


def test_unknown_profile_without_a_close_match_has_no_suggestion():
    assert unknown_profile_message("zzzz") == (
        f"ERROR: unknown specialist profile 'zzzz'. Known profiles: {KNOWN_LIST}"
    )


def test_tool_refuses_unknown_profile_with_the_registry_message(project_root):
    answer = handover_to_specialist.invoke(
        {"specialist_profile": "qa_reviewer", "topic": "t", "project_root": str(project_root)}
    )
    assert answer == unknown_profile_message("qa_reviewer")
    assert answer.startswith("ERROR: unknown specialist profile 'qa_reviewer'.")
    assert "Did you mean 'quality_reviewer'" in answer
    assert list(project_root.iterdir()) == []


@pytest.fixture
def profile_copy(tmp_path) -> Path:
    """A copy of the built-in profile folder."""
    shutil.copytree(PROFILE_DIR, tmp_path / "profiles")
    return tmp_path / "profiles"


def test_the_allow_list_is_whatever_files_are_in_the_folder(profile_copy):
    text = (profile_copy / "hacker.md").read_text(encoding="utf-8")
    text = text.replace("name: hacker", "name: data_scientist").replace(
        'marker: "[hacker]"', 'marker: "[data scientist]"'
    )
    (profile_copy / "data_scientist.md").write_text(text, encoding="utf-8")
    (profile_copy / "hacker.md").unlink()
    (profile_copy / "README.txt").write_text("not a profile", encoding="utf-8")
    loaded = ProfileRegistry(load_profile_dir(profile_copy))
    assert "data_scientist" in loaded
    assert "hacker" not in loaded
    assert loaded["data_scientist"].marker == "[data scientist]"
    assert len(loaded) == 13


def test_profile_whose_name_differs_from_its_file_is_refused(profile_copy):
    (profile_copy / "hacker.md").rename(profile_copy / "hackerz.md")
    with pytest.raises(ProfileFileError, match=r"hackerz\.md: name 'hacker' differs"):
        load_profile_dir(profile_copy)


def test_missing_orchestrator_profile_is_refused(profile_copy):
    (profile_copy / "a0_software_orchestrator.md").unlink()
    with pytest.raises(ProfileFileError, match="a0_software_orchestrator profile is missing"):
        ProfileRegistry(load_profile_dir(profile_copy))


GOOD = (
    '---\nname: data_scientist\nmarker: "[data scientist]"\nemoji: "📊"\n'
    "description: Analyses data.\nkeywords: [data]\n---\n\nYou are the Data Scientist.\n"
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("name: x\n", "x.md: must start with '---' YAML front matter"),
        ("---\nname: x\n", "x.md: front matter is not closed with '---'"),
        ("---\n- a list\n---\nbody", "x.md: front matter must be a mapping"),
        (GOOD.replace('emoji: "📊"\n', ""), "x.md: missing emoji"),
        (GOOD.replace("description: Analyses data.\n", ""), "x.md: missing description"),
        (
            GOOD.replace("[data scientist]", "[Data Scientist]"),
            "x.md: marker '[Data Scientist]' should be '[data scientist]'",
        ),
        (GOOD.replace("keywords: [data]", "keywords: data"), "x.md: keywords must be a list"),
        (GOOD.replace("You are the Data Scientist.\n", "  \n"), "x.md: the system prompt"),
    ],
)
def test_malformed_profile_file_is_refused_naming_the_file(text, error):
    with pytest.raises(ProfileFileError) as info:
        parse_profile(text, source="x.md")
    assert str(info.value).startswith(error)


def test_well_formed_profile_file_parses():
    profile = parse_profile(GOOD, source="x.md")
    assert profile.name == "data_scientist"
    assert profile.label == "📊 [data scientist]"
    assert profile.prompt == "You are the Data Scientist."


def test_keywords_and_examples_are_optional_and_such_a_profile_still_routes_offline(tmp_path):
    from specialist_handover.nodes.models.offline import choose_specialist

    bare = (
        '---\nname: data_scientist\nemoji: "📊"\n'
        'description: "Analyses data sets: statistics, dataset profiling, churn forecasts and '
        'charts."\n---\n\nYou are the Data Scientist.\n'
    )
    (tmp_path / "data_scientist.md").write_text(bare, encoding="utf-8")
    (profile,) = load_profile_dir(tmp_path)
    assert profile.keywords == () and profile.examples == ()
    registry = resolve_profiles([profile])
    chosen = choose_specialist("Can you forecast churn for next quarter?", profiles=registry)
    assert chosen is not None and chosen[0] == "data_scientist"
    assert choose_specialist("hello there, how are you?", profiles=registry) is None
