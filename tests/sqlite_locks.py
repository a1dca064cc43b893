"""Another process holding a SQLite file's write lock, played by a connection of its own."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path


class HeldLock:
    """The file's write lock (`BEGIN IMMEDIATE`), taken now and held until `release`, or
    until a timer thread lets it go after `release_after` seconds, as another process
    would, whatever the thread under test is doing."""

    def __init__(self, path: Path | str, release_after: float | None = None) -> None:
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._conn.execute("BEGIN IMMEDIATE")
        self._guard = threading.Lock()
        self.released_at: float | None = None
        self._timer = threading.Timer(release_after or 0, self.release)
        if release_after is not None:
            self._timer.start()

    def release(self) -> None:
        with self._guard:
            if self.released_at is None:
                self._conn.execute("ROLLBACK")
                self._conn.close()
                self.released_at = time.monotonic()

    def close(self) -> None:
        self._timer.cancel()
        self.release()
