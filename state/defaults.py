"""Every default and bound of the project, in one place.

The run context, the handover tool's arguments, the stage-2 and stage-3 tools,
the workspace tools and the agents all read their numbers from here, so a
default is written once.
"""

from __future__ import annotations

MAX_CONTEXT_TOKENS = 3000
"""Token budget of a stage-1 package; over it, the handover carries a warning."""
INCLUDE_RECENT_TURNS = 5
"""Turns a package carries verbatim."""
RECOMMENDED_SUMMARY_TOKENS = 300
"""A longer summary gets a NOTE in the handover's answer."""

MAX_HANDOVER_DEPTH = 3
"""Longest handover chain (orchestrator -> A -> B -> C)."""
MAX_HANDOVERS_PER_TURN = 3
"""Handovers one user turn may make, returns included."""
CONSULT_ANSWER_MAX_TOKENS = 600
"""Cap of one specialist's answer to a consult (`consult_specialists`); longer ones are cut."""
CONSULT_MIN_ENTRIES = 2
"""Fewest specialists one consult asks (one alone is a handover, or a question to one)."""
CONSULT_MAX_ENTRIES = 4
"""Most specialists one consult asks at once."""
MAX_TURNS = 10
"""Model calls one agent may make in a row."""
MODEL_ATTEMPTS = 3
"""Attempts per model call on transient errors."""
MAX_INPUT_TOKENS = 32_000
"""Largest user message the graph accepts."""

FULL_HISTORY_MAX_TOKENS = 50_000
"""Cap of stage 2 (`request_full_history`)."""
FULL_HISTORY_VERBATIM_MESSAGES = 10
"""Stage 2 keeps the last messages verbatim, however tight the cap."""
READ_BRIEFING_MAX_TOKENS = 4000
"""Cap of stage 3 (`read_briefing`)."""
WORKSPACE_MAX_TOKENS = 4000
"""Cap of one workspace tool result (`list_files`, `read_file`, `search_files`)."""

AGENT_WINDOW_USER_TURNS = 6
"""Whole recent user turns an agent's view carries (the orchestrator's of the conversation, a
specialist's since its handover); what came before is summarised in the handover notes."""
ORCHESTRATOR_SUMMARY_LOOKBACK = 40
"""Messages before that window condensed into the notes' 'earlier in this conversation' line."""
ORCHESTRATOR_SUMMARY_WORDS = 150

WINDOW_MESSAGES = 200
"""Messages the graph state keeps at least (what `get_state`, Studio and chat UIs show); older
whole turns are archived in the checkpointer's write log (`nodes/history/archive.py`)."""
WINDOW_SLACK = 50
"""Messages the window may grow past `WINDOW_MESSAGES` before the oldest turns are archived
(archiving then happens once every ~20 turns, not on every step)."""

TRAIL_WINDOW = 100
"""Trail records the graph state keeps (the newest); the whole trail is in the write log."""

MAX_MESSAGE_TOKENS = 16_000
"""Largest message any agent (local or remote) may add to the conversation; a longer one is cut
with a visible marker before it is stored (`nodes/agents/replies.py`)."""
MAX_REPLY_TOKENS = 48_000
"""Most tokens one agent's run may add to the conversation in all (its replies and tool
results); past it the oldest of them are left out, with a note, before they are stored."""
MAX_REPLY_MESSAGES = 200
"""Most messages one agent's run may add to the conversation (a remote agent may return
thousands); past it the oldest are left out, with a note."""
MAX_QUESTION_TOKENS = 1_000
"""Longest consult question; a longer one is cut, with a visible marker, before it is stored."""
MAX_REVIEW_MESSAGE_TOKENS = 1_000
"""Longest reviewer's reject message or edit note; a longer one is cut, with a visible marker."""

UPPER_BOUNDS = {
    "max_turns": 100,
    "max_handovers_per_turn": 20,
    "model_attempts": 10,
    "max_message_tokens": 200_000,
    "max_reply_tokens": 400_000,
}
"""Bounds that keep every run finite (the graph's recursion limit is sized for them)."""
LOWER_BOUNDS = {"max_input_tokens": 4000, "max_message_tokens": 1000, "max_reply_tokens": 4000}
"""Every request must fit: a specialist's system prompt and tool schemas take up to ~2,500."""

LAST_TIME_ENTRIES = 3
"""Outcomes of a specialist's earlier handovers its next package recalls ("last time")."""
LAST_TIME_MAX_TOKENS = 400
"""Cap of a package's "last time" section (counted in the package's tokens)."""
LAST_TIME_ENTRY_TOKENS = 160
"""Cap of one "last time" line."""
OUTCOME_SUMMARY_WORDS = 80
"""An outcome entry's summary of a plain reply."""
OUTCOME_SUMMARY_MAX_CHARS = 4000
"""A return's own summary in its outcome entry is cut past this, with a marker."""
OUTCOME_TAIL_BYTES = 64 * 1024
"""Bytes read from the end of each briefing file when looking for outcomes."""
OUTCOME_FILES_READ = 8
"""Newest briefing files read when looking for outcomes."""
REMOTE_TIMEOUT = 120.0
"""Seconds a remote specialist's run may take in all before it counts as failed."""
MAX_REMOTE_TIMEOUT = 3600.0
"""Longest `remote.timeout` a profile may set (one hour): every run stays finite."""

LEDGER_MAX_ENTRIES = 60
"""Entries the thread ledger keeps (`state/ledger.py`); past it the oldest superseded, then the
oldest current entries leave."""
LEDGER_MAX_TOKENS = 2000
"""Tokens the thread ledger's texts may hold in all (the same rule makes room)."""
LEDGER_ENTRY_MAX_TOKENS = 60
"""Longest ledger entry; a longer statement is cut with an ellipsis."""
LEDGER_ENTRIES_PER_MESSAGE = 8
"""Most entries the extractor takes from one message (a pasted document is not a ledger)."""
LEDGER_PACKAGE_RESERVE = 600
"""Tokens of a package kept for the ledger before recent turns may take them: the graph cuts
the longest recent turns (with a marker) rather than leave the ledger out."""
RECENT_TURN_MIN_TOKENS = 120
"""A recent turn is never cut below this many tokens to make room for the ledger."""
EARLIER_TURNS_MAX = 4
"""Earlier turns a package may carry as relevant to the handover (retrieved, not the last N)."""
EARLIER_TURN_MAX_TOKENS = 160
"""Longest earlier turn in a package; a longer one is cut with an ellipsis."""
RECALL_MAX_CARDS = 300
"""Archived turns retrieval can still find without reading the archive (the newest)."""
RECALL_CARD_CHARS = 240
"""Characters kept of an archived turn for retrieval."""
