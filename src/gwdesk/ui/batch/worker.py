"""Blocking bulk work (reading and checking 100,000 rows) on a worker thread, safely.

The GUI thread only awaits: the work runs in the loop's executor, reports progress
through `call_soon_threadsafe` (so widgets are touched on the GUI thread only),
and checks a `threading.Event` to stop early when the operator cancels or a newer
import replaces it. If the awaiting task is cancelled the worker is told to stop
too, so no abandoned import keeps a core busy.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

import shiboken6
from PySide6.QtCore import QObject

T = TypeVar("T")
Report = Callable[[str, int, int], None]
"""(phase, done, total), called on the GUI thread."""


def alive(obj: QObject) -> bool:
    """Whether a widget still exists: work that ends after its tab closed must not touch it."""
    return bool(shiboken6.isValid(obj))


class BackgroundJob:
    """One piece of blocking work: run it once with `await job.run(fn)`."""

    def __init__(self, report: Report) -> None:
        self._report = report
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.thread_id: int | None = None
        """The thread the work ran on (tests check it was not the GUI thread)."""

    def cancel(self) -> None:
        self._stop.set()

    def cancelled(self) -> bool:
        """Polled by the work itself, from the worker thread."""
        return self._stop.is_set()

    def progress(self, phase: str) -> Callable[[int, int], None]:
        """A progress callback for the work, labelled with what it is doing."""

        def report(done: int, total: int) -> None:
            loop = self._loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._report, phase, done, total)

        return report

    async def run(self, work: Callable[[BackgroundJob], T]) -> T:
        self._loop = asyncio.get_running_loop()

        def call() -> T:
            self.thread_id = threading.get_ident()
            return work(self)

        try:
            return await self._loop.run_in_executor(None, call)
        except asyncio.CancelledError:
            self._stop.set()
            raise
