"""The LangChain tools: descriptions, argument schemas and coercion, the run context's root."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import Field, ValidationError, WithJsonSchema

from ....state import HandoverContext, TokenCounter, coerce_context, token_counter
from ....state.agent import current_member
from .errors import _failed
from .limits import MAX_LINE_CHARS, MAX_READ_LINES, WORKSPACE_MAX_TOKENS
from .listing import list_files
from .reading import read_file
from .searching import search_files

WORKSPACE_TOOL_NAMES = ("list_files", "read_file", "search_files")

_ListPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Folder to list, relative to the project root, e.g. 'src'. "
        "Default '.' (the whole project)."
    ),
]
_ReadPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(description="File to read, relative to the project root, e.g. 'src/app.py'."),
]
_StartLine = Annotated[
    Any,
    WithJsonSchema({"type": "integer", "minimum": 1}),
    Field(description="First line to show, 1-based. Default 1."),
]
_MaxLines = Annotated[
    Any,
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_READ_LINES}),
    Field(description=f"Most lines to show, at most {MAX_READ_LINES}. Default 400."),
]
_Query = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Text to find: a plain substring matched case-insensitively within one "
        "line (not a regular expression), e.g. 'def handover'."
    ),
]
_SearchPath = Annotated[
    Any,
    WithJsonSchema({"type": "string"}),
    Field(
        description="Folder (or file) to search, relative to the project root, e.g. 'src'. "
        "Default '.' (the whole project)."
    ),
]

LIST_FILES_DESCRIPTION = (
    "List the files and folders under a folder of the project, recursively and sorted, one "
    "path per line relative to the project root; folders end with '/', symlinks are marked "
    "'-> (symlink)' and never followed. Read-only. The run's private .a0proj/ folder and the "
    "noise folders .git, .venv, node_modules and __pycache__ are left out. Use it first to "
    f"find what to read. Results over {WORKSPACE_MAX_TOKENS} tokens are cut; then list a "
    "subfolder."
)
READ_FILE_DESCRIPTION = (
    "Read a UTF-8 text file of the project with numbered lines (like `cat -n`), starting at "
    f"start_line and showing at most max_lines lines (up to {MAX_READ_LINES}). Read-only; the "
    "path is relative to the project root and must stay inside it. Folders, binary files and "
    ".a0proj/ are refused. When more lines remain, the last line tells you the start_line to "
    f"continue from. A line over {MAX_LINE_CHARS} characters is cut and ends with "
    "'…[line cut: N more characters; ...]'. Control characters are shown, never passed "
    "through: ESC as ␛, CR as ␍, NUL as ␀, other C0 controls as their Unicode control "
    "pictures, DEL as ␡ and C1 controls as \\x80-\\x9f; tabs are kept. Results over "
    f"{WORKSPACE_MAX_TOKENS} tokens are cut."
)
SEARCH_FILES_DESCRIPTION = (
    "Search the project's text files for a plain substring (case-insensitive, not a regular "
    "expression) and get each matching line as 'path:line: text'. Read-only; searches under "
    "path (default: the whole project), skipping binary files, files over 2 MB, symlinks, "
    ".a0proj/ and noise folders; control characters in a hit are shown as read_file shows "
    "them (ESC as ␛). Use it to find where something is defined or used, then "
    f"read_file the hit. Results over {WORKSPACE_MAX_TOKENS} tokens are cut; then narrow the "
    "path or the query."
)
_USAGE = {
    "list_files": "list_files(path='src')",
    "read_file": "read_file(path='src/app.py', start_line=1, max_lines=400)",
    "search_files": "search_files(query='def main', path='.')",
}


def _int_like(value: Any) -> Any:
    """A JSON number sent as '12' or 12.0 becomes 12; anything else is left for the check."""
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _argument_refusal(name: str, error: ValidationError) -> str:
    """The tool's answer when its arguments do not validate (a required one is missing)."""
    fields = sorted({str(item["loc"][0]) for item in error.errors() if item["loc"]})
    if "runtime" in fields:
        return (
            f"ERROR: {name} needs the LangGraph run context; call it through a ToolNode, "
            "which injects the runtime, not directly."
        )
    return (
        f"ERROR: {name} is missing required argument(s) {', '.join(fields) or '?'}; call "
        f"it as {_USAGE[name]}."
    )


def make_workspace_tools(
    *, counter_for: Callable[[HandoverContext], TokenCounter] | None = None
) -> list[BaseTool]:
    """The three read-only tools; the project root comes from the run context, not the model."""

    def run(name: str, runtime: Any, call: Callable[[str, TokenCounter], str]) -> str:
        """Resolve the run's context and counter, then call a pure function; never raise."""
        try:
            ctx = coerce_context(getattr(runtime, "context", None))
            member = current_member()
            own = member.counter if member is not None else None  # the agent's, in our graph
            counter = (
                counter_for(ctx) if counter_for is not None else own or token_counter(ctx.model)
            )
            return call(ctx.project_root, counter)
        except Exception as exc:
            return _failed(name, exc)

    def list_files_tool(runtime: ToolRuntime[Any, Any], path: _ListPath = ".") -> str:
        """list_files with the run's project root and counter."""
        return run("list_files", runtime, lambda root, c: list_files(root, path, counter=c))

    def read_file_tool(
        runtime: ToolRuntime[Any, Any],
        path: _ReadPath,
        start_line: _StartLine = 1,
        max_lines: _MaxLines = 400,
    ) -> str:
        """read_file with the run's project root and counter."""
        start, most = _int_like(start_line), _int_like(max_lines)
        return run(
            "read_file", runtime, lambda root, c: read_file(root, path, start, most, counter=c)
        )

    def search_files_tool(
        runtime: ToolRuntime[Any, Any], query: _Query, path: _SearchPath = "."
    ) -> str:
        """search_files with the run's project root and counter."""
        return run(
            "search_files", runtime, lambda root, c: search_files(root, query, path, counter=c)
        )

    made = (
        (list_files_tool, "list_files", LIST_FILES_DESCRIPTION),
        (read_file_tool, "read_file", READ_FILE_DESCRIPTION),
        (search_files_tool, "search_files", SEARCH_FILES_DESCRIPTION),
    )
    return [
        StructuredTool.from_function(
            func,
            name=name,
            description=description,
            handle_validation_error=partial(_argument_refusal, name),
        )
        for func, name, description in made
    ]
