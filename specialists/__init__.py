"""The specialist profiles: the allow-list, persona markers and prompts (one file a profile)."""

from .registry import (
    ORCHESTRATOR_PROFILE,
    PROFILES,
    SPECIALISTS,
    Profile,
    ProfileFileError,
    closest_profiles,
    parse_profile,
    persona_marker,
    unknown_profile_message,
)

__all__ = [
    "ORCHESTRATOR_PROFILE",
    "PROFILES",
    "SPECIALISTS",
    "Profile",
    "ProfileFileError",
    "closest_profiles",
    "parse_profile",
    "persona_marker",
    "unknown_profile_message",
]
