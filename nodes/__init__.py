"""Node functions and the tools agents call."""

from nodes.handover_tool import handover_to_specialist, perform_handover

__all__ = ["handover_to_specialist", "perform_handover"]
