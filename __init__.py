"""A LangGraph orchestrator that hands conversations to named specialists.

    from specialist_handover import build_graph, handover_tools, HandoverContext, Profile

The public names (each imported on first use, so `import specialist_handover.state`
stays light):

    build_graph             compile the graph: orchestrator, handover node, one node per specialist
    handover_tools          the handover tools for an agent of your own: hand over, return
    HandoverContext         the run context: project root, model, token budgets and guards
    Profile                 a specialist (or the orchestrator): name, prompt, tools, examples
    ProfileFileError        a profile file that cannot be read or is invalid, and why
    InputError              input refused before anything was stored (a ValueError)
    ModelUnavailableError   a model kept failing; the turn is stored and resumable
    ThreadBusyError         another run held the thread for too long

`__version__` is the installed distribution's version (`specialist-handover`).
The repository's top-level folders are the subpackages of this one import name
(`specialist_handover.graph`, `.nodes`, `.specialists`, `.state`), so a user's
own `graph.py` or `state.py` never clashes with ours.
"""

import typing as _typing

if _typing.TYPE_CHECKING:
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

_SUBPACKAGES = ("graph", "nodes", "specialists", "state")


def __getattr__(name: str) -> _typing.Any:
    """Import on first use, so `import specialist_handover.state` stays light.
    `__version__` is the installed distribution's version; `0+unknown` from a source tree not
    installed (`graph/cli.py` reads it the same way for `--version`, without importing this
    module)."""
    from importlib import import_module, metadata

    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    if name == "__version__":
        try:
            return metadata.version("specialist-handover")
        except metadata.PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and `__version__`, beside the module's own dunders and the
    subpackages imported so far; not the helpers."""
    own = (n for n in globals() if (n.startswith("__") and n.endswith("__")) or n in _SUBPACKAGES)
    return sorted({*__all__, "__version__", *own})
