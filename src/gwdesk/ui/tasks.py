"""Starting async work from the GUI: one way, used by every tab.

A slot calls `tasks.run(coro, key=...)`; the task is kept referenced, a newer
task with the same key cancels the older one (a second lookup supersedes the
first), and an exception nobody handled goes to the `ErrorReporter` instead of
vanishing. Tabs cancel their work when they are destroyed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject

from gwdesk.ui.errors import ErrorReporter

T = TypeVar("T")


class TaskRunner(QObject):
    def __init__(self, reporter: ErrorReporter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reporter = reporter
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keyed: dict[str, asyncio.Task[Any]] = {}

    def run(
        self, coro: Coroutine[Any, Any, T], *, key: str | None = None, context: str = ""
    ) -> asyncio.Task[T]:
        if key is not None:
            self.cancel(key)
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        if key is not None:
            self._keyed[key] = task

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if key is not None and self._keyed.get(key) is finished:
                del self._keyed[key]
            if finished.cancelled():
                return
            exc = finished.exception()
            if exc is not None:
                self._reporter.report(exc, context or key or "background work")

        task.add_done_callback(done)
        return task

    def running(self, key: str) -> bool:
        task = self._keyed.get(key)
        return task is not None and not task.done()

    def cancel(self, key: str) -> None:
        task = self._keyed.pop(key, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._keyed.clear()

    async def drain(self) -> None:
        """Cancel everything and wait until it has stopped (window closing, tests)."""
        tasks = list(self._tasks)
        self.cancel_all()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
