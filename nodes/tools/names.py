"""Names of the tools the graph itself gives its agents."""

HANDOVER = "handover_to_specialist"
RETURN = "return_to_orchestrator"
FULL_HISTORY = "request_full_history"
READ_BRIEFING = "read_briefing"
CONSULT = "consult_specialists"

GRAPH_TOOLS = (HANDOVER, RETURN, FULL_HISTORY, READ_BRIEFING, CONSULT)
"""Names a user's tool may not take."""
