"""Built-in read-only workspace tools for agents: list_files, read_file and search_files.

The pure functions take the project root as an argument; the LangChain tools made
by `make_workspace_tools` take it from the LangGraph run context
(`HandoverContext.project_root`), never from the model. Nothing here writes. The
functions never raise: every failure is one line starting `ERROR: ` that names
the bad value and the fix, and every result is capped at `max_tokens` (a cut
result says so on its last line).

Confinement rules, applied before anything is opened:

* `path` and `query` are non-empty strings without NUL bytes; `path` is relative
  to the project root. Absolute paths are refused (the root's own too), and so
  is a path whose `..` climbs out of the root.
* The path is resolved with `os.path.realpath` (the root too) and must stay
  inside the real root (`os.path.commonpath`): a symlink that leads outside -- a
  file, a folder, one in the middle of a path, a chain -- is refused; a symlink
  that stays inside is followed.
* Nothing named `.a0proj` (the run's private state: briefings, checkpoints) is
  read, listed or searched, whether named directly or reached through a symlink.
* The checked real path is then opened one component at a time from the real
  root's descriptor with `O_NOFOLLOW`, so a symlink swapped in after the check is
  refused instead of followed; only regular files are read (POSIX only).
* Listing and search never follow symlinks (a listing marks them) and do not
  descend into the noise folders .git, .venv, node_modules and __pycache__; an
  explicit path into a noise folder is allowed.
* Binary files (a NUL byte in the first 8 KiB, or not UTF-8) are refused by
  read_file and skipped by search_files, which also skips files over 2 MB.
* `list_files` given a file lists just that file, with a note to use read_file.

The modules, one job each: `limits` (the caps), `errors` (the ERROR line),
`arguments` (argument checks), `paths` (resolution, confinement, safe opening),
`walk` (folder walking), `results` (printable text and the token cap), `listing`,
`reading` and `searching` (the three functions) and `tools` (the LangChain tools).
"""

from __future__ import annotations

from .limits import WORKSPACE_MAX_TOKENS
from .listing import list_files
from .reading import read_file
from .searching import search_files
from .tools import READ_FILE_DESCRIPTION, WORKSPACE_TOOL_NAMES, make_workspace_tools

__all__ = [
    "READ_FILE_DESCRIPTION",
    "WORKSPACE_MAX_TOKENS",
    "WORKSPACE_TOOL_NAMES",
    "list_files",
    "make_workspace_tools",
    "read_file",
    "search_files",
]
