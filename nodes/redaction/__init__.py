"""Secrets in text become `[REDACTED:<kind>]` (`redact.py`): everything the graph writes
outside the checkpoint goes through it (briefings, the store, the trail, reviewers'
answers, the terminal's history). The rules by family: `tokens.py` (well-known token
shapes), `vendors.py` (detect-secrets' plugins and ours), `platforms.py` (more
providers), `assignments.py`, `commands.py`, `context.py` (prose), on `engine.py`."""

from .redact import REDACTION_KINDS, Redaction, redact, redact_all

__all__ = ["REDACTION_KINDS", "Redaction", "redact", "redact_all"]
