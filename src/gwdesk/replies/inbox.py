"""Where every reply goes in: one writer thread that commits them in groups.

An `OK` may be sent only once the reply is durably stored, and a durable commit
costs an fsync (milliseconds). One commit per request would cap the listener at a
few hundred replies a second; instead the writer takes everything queued since its
last commit, stores it in one transaction, then settles each waiting request's
future. Under a flood the groups grow by themselves; alone, a reply is committed
at once. A write that fails answers every request of that group with the error
(the listener says 503, the gateway retries); a group that fails for a reason
other than the file being unavailable is retried request by request, so one bad
reply cannot sink the others.

Subscribers hear of a group before its requests are answered, so a view never
lags behind what the gateway was told. WAL checkpoints run on a thread of their
own once a second, not inside whichever commit crosses SQLite's threshold.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from gwdesk.replies.feed import FeedCallback, ReplyBatch, ReplyFeed, Subscription
from gwdesk.store.database import StoreError, StoreUnavailable
from gwdesk.store.replies import AddResult, IncomingReply, ReplyStore

log = logging.getLogger("gwdesk.replies.inbox")
MAX_GROUP: Final = 4096
"""Replies per commit at most: bounds one transaction's time under a deep backlog."""
CHECKPOINT_EVERY: Final = 1.0
"""Seconds between WAL checkpoints, taken beside the writer instead of inside a commit."""

Results: TypeAlias = list[AddResult]
AnyFuture: TypeAlias = "asyncio.Future[Results] | concurrent.futures.Future[Results]"


class InboxClosed(RuntimeError):
    """The inbox is not running, so nothing can be stored now."""


@dataclass(slots=True)
class _Job:
    replies: Sequence[IncomingReply]
    future: AnyFuture
    loop: asyncio.AbstractEventLoop | None
    """The loop of an asyncio future (settled there); None for a concurrent future."""


@dataclass(slots=True)
class InboxStats:
    """Counters kept by the writer thread (read them for figures, not for control)."""

    commits: int = 0
    stored: int = 0
    duplicates: int = 0
    failures: int = 0


_STOP: Final = object()


def _settle_async(outcomes: list[tuple[asyncio.Future[Results], Results | BaseException]]) -> None:
    for future, outcome in outcomes:
        if future.done():
            continue  # the request was abandoned (client went away)
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class ReplyInbox:
    """Stores replies from any thread or loop through one group-committing writer thread."""

    def __init__(
        self,
        store: ReplyStore,
        *,
        max_group: int = MAX_GROUP,
        checkpoint_every: float = CHECKPOINT_EVERY,
    ) -> None:
        self.store = store
        self.checkpoint_every = checkpoint_every
        self.feed = ReplyFeed()
        self.stats = InboxStats()
        self._max_group = max_group
        self._queue: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._checkpointer: threading.Thread | None = None
        self._stop_checkpoints = threading.Event()
        self._accepting = False

    # ---- life cycle ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._accepting

    def start(self) -> ReplyInbox:
        """Start the writer thread (again after `close`); starting a running inbox is a no-op."""
        with self._lock:
            if self._accepting:
                return self
            self._thread = threading.Thread(
                target=self._run, name="gwdesk-reply-writer", daemon=True
            )
            self._thread.start()
            self.store.defer_checkpoints()
            self._stop_checkpoints.clear()
            self._checkpointer = threading.Thread(
                target=self._checkpoints, name="gwdesk-reply-checkpoints", daemon=True
            )
            self._checkpointer.start()
            self._accepting = True
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Store what is queued, then stop the writer."""
        with self._lock:
            if not self._accepting:
                return
            self._accepting = False
            self._queue.put(_STOP)
            thread, checkpointer = self._thread, self._checkpointer
        if thread is not None:
            thread.join(timeout)
        self._stop_checkpoints.set()
        if checkpointer is not None:
            checkpointer.join(timeout)
        self.store.defer_checkpoints(False)

    def _checkpoints(self) -> None:
        done = -1
        while True:
            stop = self._stop_checkpoints.wait(self.checkpoint_every)
            if self.stats.commits != done:
                done = self.stats.commits
                try:
                    self.store.checkpoint()
                except StoreError as exc:
                    log.warning("WAL checkpoint failed (%s); the next one will catch up", exc)
            if stop:
                return

    def __enter__(self) -> ReplyInbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def subscribe(self, callback: FeedCallback) -> Subscription:
        """`callback(batch)` after each commit that stored or completed replies, on the writer
        thread, before those replies are acknowledged: hand the batch over and return."""
        return self.feed.subscribe(callback)

    # ---- storing ---------------------------------------------------------------------------

    def _submit(self, job: _Job) -> None:
        with self._lock:
            if not self._accepting:
                raise InboxClosed("the reply inbox is not running")
            self._queue.put(job)

    async def add_async(self, replies: Sequence[IncomingReply]) -> Results:
        """Store `replies`; returns once they are committed (raises `StoreError` if not)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Results] = loop.create_future()
        self._submit(_Job(replies, future, loop))
        return await future

    def add(self, replies: Sequence[IncomingReply], timeout: float | None = None) -> Results:
        """Blocking `add_async`, for threads without an event loop."""
        future: concurrent.futures.Future[Results] = concurrent.futures.Future()
        self._submit(_Job(replies, future, None))
        return future.result(timeout)

    # ---- the writer thread -----------------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                break
            assert isinstance(first, _Job)
            jobs = [first]
            size = len(first.replies)
            while size < self._max_group:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stopping = True
                    break
                assert isinstance(more, _Job)
                jobs.append(more)
                size += len(more.replies)
            try:
                self._commit(jobs)
            except Exception as exc:  # the writer must outlive anything, or every add hangs
                log.exception("the reply writer failed on a group of %d request(s)", len(jobs))
                self._settle([(job, exc) for job in jobs])

    def _commit(self, jobs: list[_Job]) -> None:
        try:
            results = self.store.add([reply for job in jobs for reply in job.replies])
        except StoreUnavailable as exc:
            # The file is locked, full or gone: every job would fail the same way.
            self.stats.failures += len(jobs)
            log.warning("replies not stored (%s); %d request(s) answered 503", exc, len(jobs))
            self._settle([(job, exc) for job in jobs])
            return
        except Exception as exc:
            if len(jobs) > 1:
                for job in jobs:
                    self._commit([job])
                return
            self.stats.failures += 1
            log.exception("a reply could not be stored")
            self._settle([(jobs[0], exc)])
            return
        self.stats.commits += 1
        new = tuple(r.reply for r in results if r.new)
        self.stats.stored += len(new)
        self.stats.duplicates += len(results) - len(new)
        # Subscribers first: whoever is told `OK` can count on the views having the reply.
        self.feed.publish(ReplyBatch(new, tuple(r.reply for r in results if r.updated)))
        outcomes: list[tuple[_Job, Results | BaseException]] = []
        start = 0
        for job in jobs:
            outcomes.append((job, results[start : start + len(job.replies)]))
            start += len(job.replies)
        self._settle(outcomes)

    def _settle(self, outcomes: list[tuple[_Job, Results | BaseException]]) -> None:
        """Answer every waiter; asyncio ones with one wake-up per loop, not one per request."""
        by_loop: dict[
            asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Results], Results | BaseException]]
        ] = defaultdict(list)
        for job, outcome in outcomes:
            future = job.future
            if job.loop is not None and isinstance(future, asyncio.Future):
                by_loop[job.loop].append((future, outcome))
            elif isinstance(future, concurrent.futures.Future) and not future.done():
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle_async, items)
            except RuntimeError:
                log.debug("a caller's event loop closed before its replies were committed")
