"""Wiring: `build_graph`, the routing functions, and the module-level `graph` served by langgraph.json."""

from .builder import build_graph

graph = build_graph()
"""The compiled graph `langgraph.json` serves (no checkpointer: the server supplies one)."""

__all__ = ["build_graph", "graph"]
