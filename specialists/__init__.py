"""Specialist profiles: the built-in files, the user's, persona markers and prompts."""

from .profile import Profile, ProfileFileError, parse_profile, persona_marker
from .registry import (
    ORCHESTRATOR_PROFILE,
    ProfileRegistry,
    ProfilesSpec,
    builtin_profiles,
    load_profile_dir,
    resolve_profiles,
)
from .remote import Remote

__all__ = [
    "ORCHESTRATOR_PROFILE",
    "Profile",
    "ProfileFileError",
    "ProfileRegistry",
    "ProfilesSpec",
    "Remote",
    "builtin_profiles",
    "load_profile_dir",
    "parse_profile",
    "persona_marker",
    "resolve_profiles",
]
