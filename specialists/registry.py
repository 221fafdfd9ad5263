"""The profile registry: one file a profile under `specialists/profiles/`.

A profile file is YAML front matter (name, marker, emoji, description,
keywords) followed by the Markdown system prompt. The allow-list is whatever
files are there: adding a specialist means adding a file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

import yaml

ORCHESTRATOR_PROFILE = "a0_software_orchestrator"
_REQUIRED = ("name", "marker", "emoji", "description", "keywords")


@dataclass(frozen=True)
class Profile:
    """A specialist profile as read from its file."""

    name: str
    marker: str
    emoji: str
    description: str
    keywords: tuple[str, ...]
    prompt: str

    @property
    def title(self) -> str:
        """The human name: `frontend designer`."""
        return self.name.replace("_", " ")

    @property
    def label(self) -> str:
        """Emoji plus marker, as the terminal prints it: `🖌️ [frontend designer]`."""
        return f"{self.emoji} {self.marker}"


class ProfileFileError(ValueError):
    """A profile file is malformed; the message names the file and the field."""


def persona_marker(name: str) -> str:
    """`frontend_designer` -> `[frontend designer]`."""
    return f"[{name.replace('_', ' ')}]"


def parse_profile(text: str, *, source: str) -> Profile:
    """Parse one profile file's text; raise ProfileFileError naming `source` on bad input."""
    if not text.startswith("---\n"):
        raise ProfileFileError(f"{source}: must start with '---' YAML front matter")
    try:
        _, front, body = text.split("---\n", 2)
    except ValueError as exc:
        raise ProfileFileError(f"{source}: front matter is not closed with '---'") from exc
    try:
        meta = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        raise ProfileFileError(f"{source}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ProfileFileError(f"{source}: front matter must be a mapping")
    missing = [key for key in _REQUIRED if not meta.get(key)]
    if missing:
        raise ProfileFileError(f"{source}: missing {', '.join(missing)}")
    name = str(meta["name"])
    if meta["marker"] != persona_marker(name):
        raise ProfileFileError(
            f"{source}: marker {meta['marker']!r} should be {persona_marker(name)!r}"
        )
    keywords = meta["keywords"]
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise ProfileFileError(f"{source}: keywords must be a list of strings")
    prompt = body.strip()
    if not prompt:
        raise ProfileFileError(f"{source}: the system prompt (body) is empty")
    return Profile(
        name=name,
        marker=str(meta["marker"]),
        emoji=str(meta["emoji"]),
        description=" ".join(str(meta["description"]).split()),
        keywords=tuple(k.lower() for k in keywords),
        prompt=prompt,
    )


def load_profiles() -> Mapping[str, Profile]:
    """Read every `profiles/*.md` file shipped with this package, sorted by name."""
    folder = resources.files(__package__).joinpath("profiles")
    profiles: dict[str, Profile] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".md"):
            continue
        profile = parse_profile(entry.read_text(encoding="utf-8"), source=entry.name)
        if profile.name != entry.name[: -len(".md")]:
            raise ProfileFileError(f"{entry.name}: name {profile.name!r} differs from file name")
        profiles[profile.name] = profile
    if ORCHESTRATOR_PROFILE not in profiles:
        raise ProfileFileError(f"profiles/: the {ORCHESTRATOR_PROFILE} profile is missing")
    return MappingProxyType(profiles)


PROFILES: Mapping[str, Profile] = load_profiles()
"""The allow-list: profile name -> Profile, derived from the files."""

SPECIALISTS: tuple[str, ...] = tuple(n for n in PROFILES if n != ORCHESTRATOR_PROFILE)
"""Every profile that gets a node of its own (all but the orchestrator)."""


def closest_profiles(name: str, limit: int = 3) -> list[str]:
    """Known profile names closest to a misspelt one."""
    probe = name.strip().lower().replace("-", "_").replace(" ", "_")
    return difflib.get_close_matches(probe, list(PROFILES), n=limit, cutoff=0.5)


def unknown_profile_message(name: str) -> str:
    """The ERROR text for a name not in the allow-list, with suggestions and the full list."""
    if not name.isprintable():
        name = name.encode("unicode_escape").decode("ascii")  # no raw control characters
    hint = closest_profiles(name)
    suggestion = f" Did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
    return (
        f"ERROR: unknown specialist profile '{name}'.{suggestion} "
        f"Known profiles: {', '.join(PROFILES)}"
    )
