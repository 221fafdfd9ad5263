"""Built-in tool sets a profile may name in its front matter (`tools: [workspace]`)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.tools import BaseTool

from ...state import HandoverContext, TokenCounter

CounterFor = Callable[[HandoverContext], TokenCounter]


def workspace_tool_set(counter_for: CounterFor) -> list[BaseTool]:
    """Read-only `list_files`, `read_file` and `search_files`, confined to the project root."""
    from .workspace import make_workspace_tools

    return make_workspace_tools(counter_for=counter_for)


TOOL_SETS: dict[str, Callable[[CounterFor], list[BaseTool]]] = {
    "workspace": workspace_tool_set,
}
"""Tool-set name -> a factory of its tools (given the agent's token counter)."""
