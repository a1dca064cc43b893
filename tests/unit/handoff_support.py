"""A flow's hand-off in plain asyncio, for Qt-free tests of the flows' decisions.

The console's own (`gwdesk.ui.tasks.FlowHandoff`) is tested with Qt; here blocking work
runs on asyncio's worker threads, reads on a `StoreReader` of the profile's store, and a
re-read runs once per request, one at a time (the coalescing is the console's, tested
there). `idle()` waits until everything started has ended, so a test asserts on a
settled flow, never after a fixed sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from gwdesk.store.database import StoreError
from gwdesk.store.reader import Reading, StoreReader
from gwdesk.store.shared import SharedData

T = TypeVar("T")


class SerialRead:
    """`read` off the loop once per request, one at a time; a `StoreError` is counted and
    the read waits for the next request."""

    def __init__(self, handoff: LoopHandoff, read: Callable[[], Any], done: Callable[[Any], None]):
        self._handoff = handoff
        self._read = read
        self._done = done
        self._lock = asyncio.Lock()
        self.stopped = False
        self.failures = 0

    def request(self) -> None:
        if not self.stopped:
            self._handoff.background(self._run(), "a re-read")

    async def _run(self) -> None:
        async with self._lock:
            try:
                result = await asyncio.to_thread(self._read)
            except StoreError:
                self.failures += 1
                return
            if not self.stopped:
                self._done(result)

    def stop(self) -> None:
        self.stopped = True


class LoopHandoff:
    """`gwdesk.app.handoff.Handoff` over asyncio's default executor."""

    def __init__(self, path: Path | str, shared: SharedData | None = None) -> None:
        self._reader: StoreReader | None = StoreReader(path, shared)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.rereads_made: list[SerialRead] = []
        self.undone: list[object] = []

    async def blocking(
        self, work: Callable[[], T], *, undo: Callable[[T], object] | None = None
    ) -> T:
        return await asyncio.to_thread(work)

    async def read(self, read: Callable[[Reading], T], *, key: str | None = None) -> T:
        reader = self._reader
        if reader is None:
            raise asyncio.CancelledError
        return await asyncio.to_thread(reader.run, read)

    def background(self, work: Coroutine[Any, Any, None], what: str) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def rereads(self, read: Callable[[], T], done: Callable[[T], None], what: str) -> SerialRead:
        rereads = SerialRead(self, read, done)
        self.rereads_made.append(rereads)
        return rereads

    async def idle(self) -> None:
        """Wait until every task started (and every task those started) has ended."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def settle(self) -> None:
        for rereads in self.rereads_made:
            rereads.stop()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
