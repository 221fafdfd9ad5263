"""The profiles of one build: the built-in files plus the user's, as one allow-list.

Nothing here is fixed at import time. `resolve_profiles(...)` makes a
`ProfileRegistry` for one `build_graph` call; the nodes, routing, the handover
tool's enum, error suggestions and terminal listings all derive from it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .profile import Profile, ProfileFileError, read_profile_file

ORCHESTRATOR_PROFILE = "a0_software_orchestrator"
"""The profile the orchestrator node runs as; every other profile gets a node of its own."""

RESERVED_NAMES = ("orchestrator", "handover")
"""Node names of the graph itself; no profile may take them."""

ProfilesSpec = str | os.PathLike[str] | Sequence[Profile] | None
"""What `build_graph(profiles=...)` takes: a folder of profile files or Profile objects."""


class ProfileRegistry(Mapping[str, Profile]):
    """An allow-list of profiles, sorted by name; it must hold the orchestrator's profile."""

    def __init__(self, profiles: Iterable[Profile]) -> None:
        by_name: dict[str, Profile] = {}
        for profile in profiles:
            if profile.name in RESERVED_NAMES:
                where = profile.source or f"profile {profile.name!r}"
                raise ProfileFileError(
                    f"{where}: name {profile.name!r} is taken by the graph's own node; "
                    "choose another name"
                )
            by_name[profile.name] = profile
        if ORCHESTRATOR_PROFILE not in by_name:
            raise ProfileFileError(f"the {ORCHESTRATOR_PROFILE} profile is missing")
        orchestrator = by_name[ORCHESTRATOR_PROFILE]
        if orchestrator.remote is not None:
            raise ProfileFileError(
                f"{orchestrator.source or ORCHESTRATOR_PROFILE}: remote: the orchestrator runs "
                "in process (it carries out the handovers); only specialists may be remote"
            )
        self._profiles = dict(sorted(by_name.items()))

    def __getitem__(self, name: str) -> Profile:
        return self._profiles[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._profiles)

    def __len__(self) -> int:
        return len(self._profiles)

    def __repr__(self) -> str:
        return f"ProfileRegistry({', '.join(self._profiles)})"

    @property
    def specialists(self) -> tuple[str, ...]:
        """Every profile that gets a node of its own (all but the orchestrator's)."""
        return tuple(name for name in self._profiles if name != ORCHESTRATOR_PROFILE)

    def closest(self, name: str, limit: int = 3) -> list[str]:
        """Known profile names closest to a misspelt one."""
        probe = name.strip().lower().replace("-", "_").replace(" ", "_")
        return difflib.get_close_matches(probe, list(self._profiles), n=limit, cutoff=0.5)

    def _did_you_mean(self, name: str) -> str:
        hint = self.closest(name)
        return f" Did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""

    def key(self, name: object, what: str) -> str:
        """The profile a `build_graph` mapping key names: a profile's name, or `orchestrator`
        (the orchestrator's node) for its profile; else ValueError with a did-you-mean."""
        if name == "orchestrator":
            return ORCHESTRATOR_PROFILE
        if isinstance(name, str) and name in self._profiles:
            return name
        suggestion = self._did_you_mean(name) if isinstance(name, str) else ""
        raise ValueError(
            f"{what}[{name!r}] names no profile of this build.{suggestion} Known profiles: "
            f"{', '.join(self._profiles)} (and 'orchestrator' for the orchestrator's)"
        )

    def unknown_profile_message(self, name: str) -> str:
        """The ERROR text for a name not in the allow-list, with suggestions and the full list."""
        if not name.isprintable():
            name = name.encode("unicode_escape").decode("ascii")  # no raw control characters
        return (
            f"ERROR: unknown specialist profile '{name}'.{self._did_you_mean(name)} "
            f"Known profiles: {', '.join(self._profiles)}"
        )


def load_profile_dir(folder: str | os.PathLike[str]) -> list[Profile]:
    """Every `*.md` profile file in a folder (other files and folders are ignored), by name.

    A `*.md` entry that is no regular file (a FIFO, a device, a dangling symlink) is refused
    with a ProfileFileError naming it, rather than skipped or read.
    """
    path = Path(folder)
    if not path.is_dir():
        raise ProfileFileError(f"{path}: is not a folder of profile files")
    return [read_profile_file(entry) for entry in sorted(path.glob("*.md")) if not entry.is_dir()]


@lru_cache(maxsize=1)
def builtin_profiles() -> ProfileRegistry:
    """The 13 profiles shipped in `specialists/profiles/` (read once per process)."""
    folder = resources.files(__package__).joinpath("profiles")
    try:
        return ProfileRegistry(
            read_profile_file(Path(str(entry)), source=entry.name)
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".md")
        )
    except ProfileFileError as exc:
        raise ProfileFileError(f"profiles/: {exc}") from exc


def resolve_profiles(profiles: ProfilesSpec | ProfileRegistry = None) -> ProfileRegistry:
    """The registry of one build: the built-ins, plus (or replaced by name by) the user's.

    `profiles` is None, a folder of profile files (str or PathLike), a sequence of
    `Profile` objects and folders (mixed as you like), or a ready `ProfileRegistry`
    (used as it is).
    """
    if isinstance(profiles, ProfileRegistry):
        return profiles
    if profiles is None:
        return builtin_profiles()
    if isinstance(profiles, str | os.PathLike):
        added = load_profile_dir(profiles)
    elif isinstance(profiles, Sequence) and not isinstance(profiles, bytes | str):
        added = []
        for index, item in enumerate(profiles):
            if isinstance(item, str | os.PathLike):
                added += load_profile_dir(item)
            elif isinstance(item, Profile):
                added.append(item)
            else:
                raise TypeError(
                    f"profiles[{index}] must be a Profile or a folder of profile files, got "
                    f"{type(item).__name__}"
                )
        names = [p.name for p in added]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"profiles: the name(s) {', '.join(duplicates)} appear more than once")
    else:
        raise TypeError(
            "profiles must be None, a folder of profile files (str or PathLike) or a sequence "
            f"of Profile objects and folders; got {type(profiles).__name__}"
        )
    return ProfileRegistry([*builtin_profiles().values(), *added])
