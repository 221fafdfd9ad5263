"""specialist_handover: a LangGraph orchestrator that hands conversations to named specialists.

The repository's top-level folders are the subpackages of this one import name
(`specialist_handover.graph`, `.nodes`, `.specialists`, `.state`), so a user's
own `graph.py` or `state.py` never clashes with ours.

    from specialist_handover import build_graph, handover_tools, HandoverContext, Profile
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import build_graph
    from .graph.locking import ThreadBusyError
    from .nodes.agents.retry import ModelUnavailableError
    from .nodes.handover.transfer import handover_tools
    from .specialists import Profile, ProfileFileError
    from .state import HandoverContext, InputError

__all__ = [
    "HandoverContext",
    "InputError",
    "ModelUnavailableError",
    "Profile",
    "ProfileFileError",
    "ThreadBusyError",
    "build_graph",
    "handover_tools",
]

_EXPORTS = {
    "build_graph": ".graph",
    "HandoverContext": ".state",
    "InputError": ".state",
    "ModelUnavailableError": ".nodes.agents.retry",
    "Profile": ".specialists",
    "ProfileFileError": ".specialists",
    "ThreadBusyError": ".graph.locking",
    "handover_tools": ".nodes.handover.transfer",
}


def __getattr__(name: str) -> Any:
    """Import on first use, so `import specialist_handover.state` stays light."""
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
