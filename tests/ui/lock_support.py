"""The GUI thread's liveness while another connection holds the profile file's write lock."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QTimer

from tests.sqlite_locks import HeldLock


class Heartbeat:
    """A 10 ms timer on the GUI thread; `longest` is the longest it went without a tick."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._last = time.monotonic()
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self._last)
        self._last = now

    def start(self) -> None:
        self._last = time.monotonic()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._tick()


@dataclass(frozen=True)
class Locked:
    waited: bool
    """The work ended only after the lock was let go (it really met the lock)."""
    longest_stall: float
    """The longest the GUI thread went without a heartbeat tick meanwhile."""


async def while_locked(
    path: Path | str, work: Callable[[], Awaitable[object]], hold: float
) -> Locked:
    """Run `work` while another connection holds the file's write lock for `hold` s."""
    heartbeat = Heartbeat()
    heartbeat.start()
    lock = HeldLock(path, release_after=hold)
    try:
        await work()
        ended = time.monotonic()
    finally:
        lock.close()
        heartbeat.stop()
    return Locked(lock.released_at is not None and ended >= lock.released_at, heartbeat.longest)
