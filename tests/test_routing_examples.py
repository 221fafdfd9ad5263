"""Offline routing by example requests: profiles carry them, the router compares requests with them.

A profile lists example requests in its front matter (`examples:`) or one per line in
`<name>.examples.txt` beside its file; the built-ins ship theirs that way. The orchestrator's
examples are what it keeps (small talk, thanks, simple questions, planning).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from specialist_handover import Profile
from specialist_handover.nodes.models.offline.cues import choose_specialist
from specialist_handover.nodes.models.offline.examples import (
    build_example_index,
    example_index_for,
    features,
    profile_documents,
)
from specialist_handover.nodes.models.offline.scorer import is_chit_chat
from specialist_handover.specialists import ORCHESTRATOR_PROFILE, builtin_profiles
from specialist_handover.specialists.profile import (
    ProfileFileError,
    parse_profile,
    read_examples_file,
)
from specialist_handover.specialists.registry import load_profile_dir, resolve_profiles

DATA = Path(__file__).parent / "data"
PROFILE_DIR = Path(__file__).parent.parent / "specialists" / "profiles"

LIBRARIAN = Profile(
    name="librarian",
    emoji="📚",
    description="Looks after the team's reading list and book club.",
    keywords=("reading list", "book club"),
    prompt="You are the Librarian.",
)
LIBRARIAN_EXAMPLES = (
    "which novel should the engineers read next month?",
    "order three copies of the paperback for the office shelf",
    "someone borrowed the hardback on compilers and never gave it back",
)


def _profile_text(extra: str = "") -> str:
    return (
        "---\nname: librarian\nemoji: '📚'\ndescription: Looks after books.\n"
        f"keywords: [reading list]\n{extra}---\n\nYou are the Librarian.\n"
    )


# -- where examples come from ---------------------------------------------------------------
def test_examples_come_from_front_matter_and_the_file_beside_the_profile(tmp_path):
    (tmp_path / "librarian.md").write_text(
        _profile_text("examples:\n  - order a paperback\n"), "utf-8"
    )
    (tmp_path / "librarian.examples.txt").write_text(
        "# comments and blank lines are skipped\n\nreturn the compilers book\n", "utf-8"
    )
    (profile,) = load_profile_dir(tmp_path)
    assert profile.examples == ("order a paperback", "return the compilers book")


def test_examples_must_be_a_list_of_strings():
    with pytest.raises(ProfileFileError, match="examples must be a list of strings"):
        parse_profile(_profile_text("examples: order a paperback\n"), source="librarian.md")
    with pytest.raises(ProfileFileError, match="examples must be a list of strings"):
        Profile(name="x", description="d", prompt="p", examples=("ok", ""))


def test_a_missing_examples_file_is_no_examples(tmp_path):
    assert read_examples_file(tmp_path / "nobody.examples.txt") == ()


def test_every_builtin_profile_ships_examples_and_the_package_data_includes_them():
    for name, profile in builtin_profiles().items():
        assert len(profile.examples) >= 90, name
        assert len(set(profile.examples)) == len(profile.examples), name
    pyproject = (PROFILE_DIR.parent.parent / "pyproject.toml").read_text("utf-8")
    assert '"profiles/*.examples.txt"' in pyproject


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_no_routing_corpus_line_is_among_the_examples():
    # the corpora measure the router: a line copied into the examples would flatter it (bare
    # greetings such as "ok" or "hi there!" are decided before examples count)
    examples = {_normal(e) for p in builtin_profiles().values() for e in p.examples}
    for path in sorted(DATA.glob("routing_*.json")):
        corpus = json.loads(path.read_text("utf-8"))
        lines = [t for t, _ in corpus["requests"]] + corpus["chit_chat"]
        copied = [t for t in lines if _normal(t) in examples and not is_chit_chat(t)]
        assert not copied, (path.name, copied)


# -- how examples route ---------------------------------------------------------------------
def test_a_user_profile_takes_requests_its_examples_describe():
    text = "Could you get the hardback about compilers back from whoever borrowed it?"
    plain = resolve_profiles([LIBRARIAN])
    assert (choose_specialist(text, profiles=plain) or ("",))[0] != "librarian"
    taught = resolve_profiles([replace(LIBRARIAN, examples=LIBRARIAN_EXAMPLES)])
    assert choose_specialist(text, profiles=taught)[0] == "librarian"


def test_a_profile_with_few_examples_is_not_outvoted_by_profiles_with_many():
    # three examples against about two hundred for each built-in: the votes are balanced
    index = example_index_for(
        dict(resolve_profiles([replace(LIBRARIAN, examples=LIBRARIAN_EXAMPLES)]))
    )
    assert index.balance["librarian"] > 3 * index.balance["hacker"]
    close = index.closeness("order two more copies of that paperback for the shelf")
    assert max(close, key=close.get) == "librarian"


def test_a_profile_without_examples_is_indexed_by_its_description_and_each_keyword():
    assert profile_documents(LIBRARIAN) == [
        "librarian: Looks after the team's reading list and book club.",
        "reading list",
        "book club",
    ]
    assert (
        choose_specialist(
            "What should the book club read next?", profiles=resolve_profiles([LIBRARIAN])
        )[0]
        == "librarian"
    )


def test_features_are_stems_synonym_groups_and_word_pairs():
    found = features("The checkout is slow")
    assert found["checkout"] == 1.0 and found["slow"] == 1.0
    assert any(f.startswith("~") for f in found)  # `slow` is in a synonym group
    assert found["checkout|slow"] == 0.5


def test_the_example_index_is_deterministic_and_built_once_per_profile_set():
    profiles = dict(builtin_profiles())
    assert example_index_for(profiles) is example_index_for(dict(profiles))
    again = build_example_index(profiles.values())
    text = "the receipt emails show someone else's name"
    assert again.closeness(text) == example_index_for(profiles).closeness(text)


def test_the_orchestrators_examples_keep_small_talk_that_names_a_tool():
    assert ORCHESTRATOR_PROFILE in example_index_for(dict(builtin_profiles())).balance
    for text in (
        "haha the kubernetes meetup last night was a blast",
        "thanks, that was really helpful!",
    ):
        assert choose_specialist(text) is None, text


def test_phrases_tried_by_first_word_read_every_text_as_trying_them_all(monkeypatch):
    """The router tries only the synonym phrases whose first word the text holds (the index
    is built at the first request, so it must be quick); it reads every document and request
    exactly as trying every phrase would."""
    from specialist_handover.nodes.models.offline import reading
    from specialist_handover.nodes.models.offline.examples import profile_documents
    from specialist_handover.nodes.models.offline.lexicon import synonym_phrases

    texts = [text for p in builtin_profiles().values() for text in profile_documents(p)]
    texts += [
        "Can you take a second pair of eyes at the pull request before we log in?",
        "WITHOUT CHANGING WHAT IT DOES, split it; definition-of-done; catalog in place",
        "",
    ]
    fast = [reading.request_words(text) for text in texts]
    everything = list(range(len(synonym_phrases())))
    monkeypatch.setattr(reading, "_candidate_phrases", lambda lowered: everything)
    assert [reading.request_words(text) for text in texts] == fast
    assert sum(w.key == w.text and " " in w.key for words in fast for w in words) > 50
