"""The workspace tools' limits: token cap, line and size limits, folders never walked."""

from __future__ import annotations

from ....state.defaults import WORKSPACE_MAX_TOKENS as WORKSPACE_MAX_TOKENS

NOISE_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
MAX_READ_LINES = 2000
MAX_LINE_CHARS = 4000
"""read_file shows at most this many characters of a line, then says how many it cut."""
READ_CHUNK_BYTES = 64 * 1024
"""read_file reads a file this much at a time, so a file of one huge line never sits in memory."""
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_QUERY_CHARS = 500
MAX_HIT_CHARS = 200
MAX_HITS = 1000
MAX_WALK_ENTRIES = 10000
MAX_DEPTH = 64
BINARY_PROBE_BYTES = 8192
