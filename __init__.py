"""specialist_handover: a LangGraph orchestrator that hands conversations to named specialists.

The repository's top-level folders are the subpackages of this one import name
(`specialist_handover.graph`, `.nodes`, `.specialists`, `.state`), so a user's
own `graph.py` or `state.py` never clashes with ours.
"""

from .graph import build_graph
from .specialists import Profile, ProfileFileError
from .state import HandoverContext

__all__ = ["HandoverContext", "Profile", "ProfileFileError", "build_graph"]
