"""Built-in tool sets a profile may name in its front matter (`tools: [workspace]`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from langchain_core.tools import BaseTool

from ...state import HandoverContext, TokenCounter

CounterFor = Callable[[HandoverContext], TokenCounter]


def workspace_tool_set(counter_for: CounterFor) -> list[BaseTool]:
    """Read-only `list_files`, `read_file` and `search_files`, confined to the project root.

    Made once per process and shared by every agent and build (their schemas cost pydantic
    about 10 ms a tool to make): the tools take the project root from the run context and the
    token counter from the running agent (its `MemberRun`, the same `counter_for` gives)."""
    return list(_shared_workspace_tools())


@cache
def _shared_workspace_tools() -> tuple[BaseTool, ...]:
    from .workspace import make_workspace_tools

    return tuple(make_workspace_tools())


TOOL_SETS: dict[str, Callable[[CounterFor], list[BaseTool]]] = {"workspace": workspace_tool_set}
"""Tool-set name -> a factory of its tools (given the agent's token counter)."""
