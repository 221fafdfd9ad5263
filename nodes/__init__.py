"""Node functions and the tools agents call: orchestrator, handover, specialists, models."""

from .agents.orchestrator import make_orchestrator_node
from .agents.specialist import make_specialist_node, make_specialist_nodes
from .handover.node import handover_node
from .handover.tool import handover_to_specialist, perform_handover
from .models.offline import OfflineChatModel
from .models.resolve import check_model_spec, model_from_string

__all__ = [
    "OfflineChatModel",
    "check_model_spec",
    "handover_node",
    "handover_to_specialist",
    "make_orchestrator_node",
    "make_specialist_node",
    "make_specialist_nodes",
    "model_from_string",
    "perform_handover",
]
