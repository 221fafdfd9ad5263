"""Specialist profiles: the built-in files, the user's, persona markers and prompts."""

from .profile import NAME_PATTERN, Profile, ProfileFileError, parse_profile, persona_marker
from .registry import (
    ORCHESTRATOR_PROFILE,
    ProfileRegistry,
    ProfilesSpec,
    builtin_profiles,
    load_profile_dir,
    read_profile_file,
    resolve_profiles,
)
from .remote import Remote, RemoteError

__all__ = [
    "NAME_PATTERN",
    "ORCHESTRATOR_PROFILE",
    "Profile",
    "ProfileFileError",
    "ProfileRegistry",
    "ProfilesSpec",
    "Remote",
    "RemoteError",
    "builtin_profiles",
    "load_profile_dir",
    "parse_profile",
    "persona_marker",
    "read_profile_file",
    "resolve_profiles",
]
