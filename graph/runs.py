"""The terminal's run journal: a command run again after a kill never sends its message twice.

Before the terminal sends a message, it notes in
`<project_root>/.a0proj/runs/<thread>.json` the message id it will send it with
and a hash of its text (never the text: nothing secret is written outside the
checkpoint). The note is removed once the turn has finished and its answer is
shown. When a command is run again on that thread with the same text while the
note is there, the process that sent it was stopped before it could show the
answer: the terminal sends it under the same id, so `run_turn` recognises it
(stored: its unfinished turn is resumed, or its finished answer shown;
not stored: sent now), whatever moment the kill came at.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass

from ..nodes.briefing.writer import STATE_DIR
from .private_files import open_private_file

RUNS_DIR = "runs"


@dataclass(frozen=True)
class PendingRun:
    """A message the terminal sent (or was about to) and has not seen answered yet."""

    message_id: str
    text_sha256: str


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RunJournal:
    """The pending runs of one project, one small file per thread (0600, no links followed)."""

    def __init__(self, project_root: str) -> None:
        self.folder = os.path.join(project_root, STATE_DIR, RUNS_DIR)

    def _path(self, thread: str) -> str:
        return os.path.join(self.folder, f"{hashlib.sha256(thread.encode()).hexdigest()[:32]}.json")

    def _open(self, thread: str, flags: int, *, create: bool = False) -> int | None:
        """The descriptor of the thread's note (the caller closes it); None when there is none."""
        try:
            return open_private_file(self._path(thread), flags, create=create, what="run note").fd
        except FileNotFoundError:
            return None

    def pending(self, thread: str) -> PendingRun | None:
        """The thread's pending run, or None (also for an unreadable note)."""
        fd = self._open(thread, os.O_RDONLY)
        if fd is None:
            return None
        try:
            data = json.loads(os.read(fd, 4096).decode("utf-8"))
            return PendingRun(str(data["message_id"]), str(data["text_sha256"]))
        except (ValueError, KeyError, TypeError):
            return None
        finally:
            os.close(fd)

    def message_id_for(self, thread: str, text: str) -> str:
        """The id to send `text` with: the pending run's when it is this text, else a new one
        (noted before anything is sent)."""
        pending = self.pending(thread)
        if pending is not None and pending.text_sha256 == text_hash(text):
            return pending.message_id
        message_id = f"human-{uuid.uuid4().hex}"
        self._write(thread, {"message_id": message_id, "text_sha256": text_hash(text)})
        return message_id

    def done(self, thread: str) -> None:
        """The thread's turn is answered and shown: forget its note (emptied through a checked
        descriptor, never unlinked by path)."""
        self._write(thread, None)

    def _write(self, thread: str, note: dict[str, str] | None) -> None:
        """Write the thread's note (made when missing), or empty one that is there (None)."""
        fd = self._open(thread, os.O_WRONLY, create=note is not None)
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
            if note is not None:
                os.write(fd, json.dumps(note).encode())
                os.fsync(fd)
        finally:
            os.close(fd)
