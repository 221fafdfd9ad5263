"""Wiring: `build_graph`, routing, the terminal, and the graph `langgraph.json` serves."""

from __future__ import annotations

from typing import Any

from .builder import build_graph

__all__ = ["build_graph", "graph"]


def __getattr__(name: str) -> Any:
    """`graph`: the built-in graph without a checkpointer, compiled on first use."""
    if name == "graph":
        compiled = build_graph()
        globals()[name] = compiled
        return compiled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
