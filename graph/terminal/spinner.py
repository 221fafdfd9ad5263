"""A one-line spinner with elapsed seconds, `⠋ frontend designer is thinking… 3s`, on a TTY only."""

from __future__ import annotations

import os
import shutil
import threading
import time
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CLEAR = "\r\x1b[K"
INTERVAL = 0.1  # seconds between two frames


def is_terminal(out: TextIO) -> bool:
    """True when `out` is a terminal that understands `\\r` and `ESC [K` (not TERM=dumb)."""
    try:
        return bool(out.isatty()) and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


class Spinner:
    """Draws `⠋ <label> <seconds>s` on the current line from a background thread.

    `start(label)` shows it (a new label restarts the seconds; the same label keeps
    counting), `stop()` wipes the line. Disabled, both do nothing: no escape code is
    ever written to a file or a pipe. Every write holds `lock`, which the printer
    holds too, so the spinner never draws into the middle of other output.
    """

    def __init__(self, out: TextIO, lock: threading.RLock, *, enabled: bool) -> None:
        self.out = out
        self.lock = lock
        self.enabled = enabled
        self.label = ""
        self.since = 0.0
        self._frame = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, label: str) -> None:
        if not self.enabled:
            return
        with self.lock:
            if self.running and label == self.label:
                return  # the same work goes on: keep counting
            self.label, self.since = label, time.monotonic()
            if self.running:
                self._draw()
                return
            self._stop = threading.Event()
            self._draw()
            self._thread = threading.Thread(
                target=self._spin, args=(self._stop,), name="handover-spinner", daemon=True
            )
            self._thread.start()

    def relabel(self, label: str) -> None:
        """A new label, drawn by the spinner's own thread: safe in a signal handler, which
        must not write or wait for the lock."""
        self.label, self.since = label, time.monotonic()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        if thread is not threading.current_thread():
            thread.join(timeout=1)
        with self.lock:
            self._write(CLEAR)

    def text(self) -> str:
        """What the spinner shows now, cut to the terminal's width (a wrapped line could not
        be redrawn in place)."""
        seconds = f" {int(time.monotonic() - self.since)}s"
        label = self.label
        room = shutil.get_terminal_size((80, 24)).columns - len(seconds) - 3
        if len(label) > room > 0:
            label = label[: room - 1] + "…"
        return f"{FRAMES[self._frame % len(FRAMES)]} {label}{seconds}"

    def _spin(self, stop: threading.Event) -> None:
        while not stop.wait(INTERVAL):
            with self.lock:
                if stop.is_set():
                    return
                self._frame += 1
                self._draw()

    def _draw(self) -> None:
        self._write(f"\r{self.text()}\x1b[K")

    def _write(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self._stop.set()
