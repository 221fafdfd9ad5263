"""Tools the agents are bound to: the graph's own, the built-in tool sets, name checks."""
