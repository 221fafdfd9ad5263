"""Node functions and the tools agents call: orchestrator, handover, specialists, models."""

from nodes.handover import handover_node
from nodes.handover_tool import handover_to_specialist, perform_handover
from nodes.models import check_model_spec, model_from_string
from nodes.offline_model import OfflineChatModel
from nodes.orchestrator import make_orchestrator_node
from nodes.specialist import make_specialist_node, make_specialist_nodes

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
