"""How a flow of the core crosses threads, without knowing whose threads they are.

A flow (the reply inbox, for one) runs on an event loop and has blocking work to do:
starting a listener's thread and port, writing a watermark, reading a count. It asks
its `Handoff` for each, never `asyncio.to_thread` itself, so the console keeps one way
across threads (`gwdesk.ui.tasks`: reads on a reader thread of the profile's file, an
abandoned start undone, answers dropped once their owner is gone) and a test or the
command line can hand over another.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol, TypeVar

from gwdesk.store.reader import Reading

__all__ = ["Handoff", "Reading", "Rereads"]
"""`Reading` is what a read is handed, named here for the reads the console writes."""

T = TypeVar("T")


class Rereads(Protocol):
    """A blocking read run whenever asked, one at a time: asked again while one runs, once
    more after it (however often it was asked); a read that fails waits for the next ask."""

    def request(self) -> None: ...

    def stop(self) -> None:
        """No more reads; one under way is dropped (its answer is never handed over)."""
        ...


class Handoff(Protocol):
    """The ways a flow's work leaves the event loop and comes back to it."""

    async def blocking(
        self, work: Callable[[], T], *, undo: Callable[[T], object] | None = None
    ) -> T:
        """`work()` on a worker thread. With `undo`: if the caller goes away before it
        finishes, what it started is undone once it has (and `settle` waits for that)."""
        ...

    async def read(self, read: Callable[[Reading], T], *, key: str | None = None) -> T:
        """`read` on a reader of the profile's store; a newer read of the same `key`
        cancels an older one not yet answered (`CancelledError`)."""
        ...

    def background(self, work: Coroutine[Any, Any, None], what: str) -> None:
        """Run `work` nobody awaits (a count, a watermark written); cancelled by `settle`."""
        ...

    def rereads(self, read: Callable[[], T], done: Callable[[T], None], what: str) -> Rereads:
        """A read run off the loop whenever asked (`Rereads`); `done(result)` on the loop."""
        ...

    async def settle(self) -> None:
        """The flow is closing: background work cancelled, abandoned starts undone, reads
        stopped; nothing it started outlives the store it uses."""
        ...


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel `tasks` (but the one running this) and wait until each has ended, however
    it ends: what they held is let go before the caller goes on."""
    current = asyncio.current_task()
    ending = [task for task in tasks if task is not current]
    for task in ending:
        task.cancel()
    for task in ending:
        with contextlib.suppress(BaseException):
            await task
