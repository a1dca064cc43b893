"""Crossing threads in the console: the one module that does, used by every tab, widget and
service; nothing else in `gwdesk.ui` starts a task, hands work to a thread or posts to
the loop from one (`tests/unit/test_one_way_across_threads.py` holds them to it).

- `TaskRunner.run(coro, key=..., owner=...)`: async work started from a slot, on the
  GUI thread's event loop. The task is kept referenced; a newer task with the same
  key of the same owner cancels the older one (a second lookup supersedes the
  first); keys belong to their owner, so two instances of a tab never cancel each
  other's work; an owner's tasks are cancelled when it is destroyed; an exception
  nobody handled goes to the `ErrorReporter` instead of vanishing.
- `on_own_thread`: a wait as long as the console's life (a child's exit), on its own thread.
- `BlockingJob` (and `off_thread` for work without progress): blocking work on a
  worker thread (reading and checking 100,000 rows, a file, an export, starting a
  listener) that the GUI thread only awaits. Progress reaches the GUI thread through
  the loop; the work polls `cancelled()`, which is set when the operator cancels or
  the awaiting task is cancelled, so no abandoned work keeps a core busy. Work that
  starts something (threads, a port, an open file) can be given an `undo`, run when
  its caller went away before taking the result.
- `StoreReads`: reads from a profile's store on a reader thread of its own
  (the store's `StoreReader`), answered on the GUI thread through the event loop (the
  reader thread never touches a Qt object, so a widget deleted while its read runs
  cannot crash it). A read cancelled, superseded (same key, or `supersede()`), closed
  or destroyed before its answer lands is dropped, and `supersede()` interrupts the
  statement running now.
- `to_gui_thread(loop, owner, callback)`: a callback threads of their own (the team link's,
  a store writer's, a signal handler) may call; run on the GUI thread unless its owner went.
- `CoalescingRead`: a blocking read run whenever asked, one at a time; asked again while
  one runs, exactly one more follows (a burst of change notices costs two reads).
- `BackgroundTasks`: coroutines a service starts and nobody awaits (a count, a watermark
  written, a link started), kept referenced, a failure logged, cancelled on close.
- `FlowHandoff`: all of these as a flow of the core asks for them (`gwdesk.app.handoff`),
  for one profile's store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Generic, TypeVar

import shiboken6
from PySide6.QtCore import QObject

from gwdesk.app.handoff import Reading, cancel_and_wait
from gwdesk.app.profile_data import SharedData
from gwdesk.domain.errors import StoreError
from gwdesk.store.reader import StoreReader  # the one way the console reads the store
from gwdesk.ui.errors import ErrorReporter

log = logging.getLogger("gwdesk.ui.tasks")
T = TypeVar("T")
Report = Callable[[str, int, int], None]
"""(phase, done, total), called on the GUI thread."""
Read = Callable[[Reading], T]
Answer = Callable[[Any, BaseException | None], None]
"""(result, error) of a read, called on the GUI thread; the error is a `StoreError`
(or whatever else the read raised)."""


def alive(obj: QObject) -> bool:
    """Whether a Qt object still exists: work that ends after its widget closed must not
    touch it."""
    return bool(shiboken6.isValid(obj))


def to_gui_thread(
    loop: asyncio.AbstractEventLoop,
    owner: QObject,
    callback: Callable[..., object],
    *,
    orphaned: Callable[..., object] | None = None,
) -> Callable[..., None]:
    """A function any thread may call: it runs `callback(*args)` on the GUI thread's `loop`,
    or `orphaned(*args)` there instead if `owner` was destroyed by then. The calling thread
    touches no Qt object (emitting on one the GUI thread is deleting crashes the process)."""

    def land(args: tuple[object, ...]) -> None:
        if alive(owner):
            callback(*args)
        elif orphaned is not None:
            orphaned(*args)

    def post(*args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(land, args)

    return post


# ---- coroutines for slots ----------------------------------------------------------------------


class TaskRunner(QObject):
    """The console's async work: keyed per owner, superseding, reported, cancelled with its owner."""

    def __init__(self, reporter: ErrorReporter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reporter = reporter
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keyed: dict[tuple[int, str], asyncio.Task[Any]] = {}
        self._owned: dict[int, set[asyncio.Task[Any]]] = {}
        """Tasks by the id of their (living) owner."""

    def _scope(self, owner: QObject | None) -> int:
        """The owner's scope (0: the console's); its tasks are cancelled when it is destroyed."""
        if owner is None:
            return 0
        ident = id(owner)
        if ident not in self._owned:
            self._owned[ident] = set()
            # Not a bound method of the owner: by the time `destroyed` fires it is half gone.
            owner.destroyed.connect(lambda *_: self._owner_destroyed(ident))
        return ident

    def _owner_destroyed(self, ident: int) -> None:
        if not alive(self):
            return
        for task in self._owned.pop(ident, set()):
            task.cancel()
        for scoped in [k for k in self._keyed if k[0] == ident]:
            del self._keyed[scoped]

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        key: str | None = None,
        owner: QObject | None = None,
        context: str = "",
    ) -> asyncio.Task[T]:
        """Start `coro`; with `key`, the owner's earlier task of that key is cancelled first."""
        scope = self._scope(owner)
        if key is not None:
            self.cancel(key, owner=owner)
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        if scope:
            self._owned[scope].add(task)
        if key is not None:
            self._keyed[(scope, key)] = task

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            self._owned.get(scope, set()).discard(finished)
            if key is not None and self._keyed.get((scope, key)) is finished:
                del self._keyed[(scope, key)]
            if finished.cancelled():
                return
            exc = finished.exception()
            if exc is not None:
                self._reporter.report(exc, context or key or "background work")

        task.add_done_callback(done)
        return task

    def running(self, key: str, *, owner: QObject | None = None) -> bool:
        task = self._keyed.get((0 if owner is None else id(owner), key))
        return task is not None and not task.done()

    def cancel(self, key: str, *, owner: QObject | None = None) -> None:
        task = self._keyed.pop((0 if owner is None else id(owner), key), None)
        if task is not None:
            task.cancel()

    def cancel_owned(self, owner: QObject) -> None:
        """Cancel every task of `owner` (keyed or not)."""
        for task in list(self._owned.get(id(owner), ())):
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


# ---- blocking work -----------------------------------------------------------------------------


class BlockingJob(Generic[T]):
    """One piece of blocking work, run once with `await job.run(work)`; `work(job)` runs on a
    worker thread, polls `job.cancelled()` and reports through `job.progress(phase)`."""

    def __init__(self, report: Report | None = None) -> None:
        self._report = report
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[T] | None = None
        self._undo: Callable[[T], object] | None = None
        self._undone = False
        self._undoing: asyncio.Future[object] | None = None
        self.thread_id: int | None = None
        """The thread the work ran on (tests check it was not the GUI thread)."""

    def cancel(self) -> None:
        self._stop.set()

    def cancelled(self) -> bool:
        """Polled by the work itself, from the worker thread."""
        return self._stop.is_set()

    def progress(self, phase: str) -> Callable[[int, int], None]:
        """A progress callback for the work (any thread), labelled with what it is doing."""

        def report(done: int, total: int) -> None:
            loop, report = self._loop, self._report
            if report is not None and loop is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(report, phase, done, total)

        return report

    async def run(
        self, work: Callable[[BlockingJob[T]], T], *, undo: Callable[[T], object] | None = None
    ) -> T:
        """The work's result. Cancelled while it runs: the work is told to stop and, with
        `undo`, what it started is undone once it finishes (see `settle`)."""
        loop = self._loop = asyncio.get_running_loop()

        def call() -> T:
            self.thread_id = threading.get_ident()
            return work(self)

        future = self._future = loop.run_in_executor(None, call)
        if undo is None:
            try:
                return await future
            except asyncio.CancelledError:
                self._stop.set()
                raise
        self._undo = undo
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self._stop.set()
            future.add_done_callback(self._undo_abandoned)
            raise

    def _undo_abandoned(self, finished: asyncio.Future[T]) -> None:
        if self._undone or finished.cancelled() or finished.exception() is not None:
            return
        self._undone = True
        assert self._undo is not None
        assert self._loop is not None
        self._undoing = self._loop.run_in_executor(None, self._undo, finished.result())

    async def settle(self) -> None:
        """Wait until the work has finished and undo what it started (once), whether or not
        its caller took the result: the owner is shutting down."""
        future = self._future
        if future is None:
            return
        await asyncio.wait([future])
        if (
            self._undo is not None
            and not self._undone
            and not future.cancelled()
            and future.exception() is None
        ):
            self._undone = True
            await asyncio.get_running_loop().run_in_executor(None, self._undo, future.result())
        if self._undoing is not None:
            with contextlib.suppress(Exception):
                await self._undoing


async def off_thread(work: Callable[[], T], *, undo: Callable[[T], object] | None = None) -> T:
    """`work()` on a worker thread, awaited (a `BlockingJob` without progress)."""
    job: BlockingJob[T] = BlockingJob()
    return await job.run(lambda _job: work(), undo=undo)


async def on_own_thread(work: Callable[[], T], *, name: str) -> T:
    """`work()` on a daemon thread of its own, awaited; it runs on until it returns."""
    done: Future[T] = Future()

    def run() -> None:
        with contextlib.suppress(InvalidStateError):  # no longer awaited
            try:
                done.set_result(work())
            except BaseException as exc:  # the work's own: the awaiting task's to see
                done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await asyncio.wrap_future(done)


# ---- reads from the store ----------------------------------------------------------------------


class Ticket:
    """A submitted read; once cancelled it never answers."""

    def __init__(self, answer: Answer, key: str | None, dropped: Callable[[], None] | None) -> None:
        self.answer = answer
        self.key = key
        self._dropped = dropped
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def drop(self) -> None:
        """Tell whoever waits that no answer will come (once)."""
        dropped, self._dropped = self._dropped, None
        if dropped is not None:
            dropped()


class StoreReads(QObject):
    """Reads of one profile's file on a reader thread of its own, answered on the GUI thread.

    `submit(read, answer)`: `read(reading)` on the reader, `answer(result, error)` here.
    Reads run one at a time in the order given; one cancelled before it starts never runs.
    """

    def __init__(
        self,
        path: Path | str,
        name: str = "store",
        parent: QObject | None = None,
        *,
        shared: SharedData | None = None,
    ) -> None:
        """`shared`: where the profile's shared data is read (None: the same file)."""
        super().__init__(parent)
        self._reader = StoreReader(path, shared)
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(
            1, thread_name_prefix=f"gwdesk-{name}-reader"
        )
        self._outstanding: set[Ticket] = set()
        self._keyed: dict[str, Ticket] = {}

    def submit(self, read: Read[Any], answer: Answer, *, key: str | None = None) -> Ticket:
        """Queue `read`; with `key`, an earlier read of that key not yet answered is dropped."""
        return self._submit(read, answer, key, None)

    def _submit(
        self, read: Read[Any], answer: Answer, key: str | None, dropped: Callable[[], None] | None
    ) -> Ticket:
        ticket = Ticket(answer, key, dropped)
        executor = self._executor
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the console's loop stopped (a signal or timer after quitting)
            executor = None
        if executor is None:
            ticket.cancel()
            ticket.drop()
            return ticket
        # Answered on the GUI thread; dropped there if this object was destroyed meanwhile.
        post = to_gui_thread(loop, self, self._deliver, orphaned=lambda t, *_: t.drop())
        if key is not None:
            older = self._keyed.get(key)
            if older is not None:
                older.cancel()
            self._keyed[key] = ticket
        self._outstanding.add(ticket)
        reader = self._reader

        def run() -> None:
            if ticket.cancelled:
                post(ticket, None, None)
                return
            try:
                result = reader.run(read)
            except BaseException as exc:  # answered to the caller, who decides
                post(ticket, None, exc)
            else:
                post(ticket, result, None)

        executor.submit(run)
        return ticket

    async def fetch(self, read: Read[T], *, key: str | None = None) -> T:
        """`read` on the reader, awaited; `StoreError` when it fails, and `CancelledError`
        when it is dropped (superseded or closed) before it answered."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def answer(result: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        def dropped() -> None:
            future.cancel()

        ticket = self._submit(read, answer, key, dropped)
        try:
            return await future
        except asyncio.CancelledError:
            ticket.cancel()
            raise

    def _deliver(self, ticket: Ticket, result: Any, error: BaseException | None) -> None:
        self._outstanding.discard(ticket)
        if ticket.key is not None and self._keyed.get(ticket.key) is ticket:
            del self._keyed[ticket.key]
        if ticket.cancelled or self._executor is None:
            ticket.drop()
            return
        ticket.answer(result, error)

    def supersede(self) -> None:
        """Drop every read not yet answered and stop the statement running now."""
        for ticket in list(self._outstanding):
            ticket.cancel()
        self._reader.interrupt()

    def close(self) -> None:
        """Drop what is outstanding and close the reader's connection (on its own thread)."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        outstanding, self._outstanding = self._outstanding, set()
        self._keyed.clear()
        for ticket in outstanding:
            ticket.cancel()
        self._reader.interrupt()
        for ticket in outstanding:
            ticket.drop()
        executor.submit(self._reader.close)  # after the queued reads, which now skip at once
        executor.shutdown(wait=False)


# ---- reads asked for again and again, and work nobody awaits -----------------------------------


class CoalescingRead(Generic[T]):
    """A blocking read run off the GUI thread whenever asked, one at a time: asked again
    while one runs, exactly one more follows, however often it was asked. `done(result)`
    is called on the GUI thread; a read that fails with the store's error (a server away)
    is logged and waits for the next request (the change feed asks again when the server
    is back), so a failure never leaves it busy."""

    def __init__(self, read: Callable[[], T], done: Callable[[T], None], what: str) -> None:
        self._read = read
        self._done = done
        self._what = what
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._stopped = False

    @property
    def busy(self) -> bool:
        return self._task is not None

    def request(self) -> None:
        if self._stopped:
            return
        if self._task is not None:
            self._again = True
            return
        task = self._task = asyncio.ensure_future(self._run())
        task.add_done_callback(self._ended)  # even when cancelled before it ever ran

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self._task is task:
            self._task = None
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: the read failed", self._what, exc_info=task.exception())

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                result = await off_thread(self._read)
            except StoreError as exc:
                log.info("%s: not read (%s)", self._what, exc)
            else:
                if self._stopped:
                    return
                self._done(result)
            if not self._again or self._stopped:
                return

    def stop(self) -> None:
        """No more reads; one under way is dropped (its result is never handed over)."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()


class BackgroundTasks:
    """Coroutines started from the loop that nobody awaits: kept referenced until they end,
    a failure nobody handled logged (never left unretrieved), all cancelled by `cancel`."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)

        def ended(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("%s failed", what, exc_info=finished.exception())

        task.add_done_callback(ended)
        return task

    async def wait(self) -> None:
        """Wait until every task started so far has ended (without cancelling it)."""
        current = asyncio.current_task()
        tasks = [task for task in self._tasks if task is not current]
        if tasks:
            await asyncio.wait(tasks)

    async def cancel(self) -> None:
        """Cancel every task still running and wait until each has ended."""
        await cancel_and_wait(list(self._tasks))


# ---- a flow's hand-off -------------------------------------------------------------------------


class FlowHandoff:
    """How a flow of the core (`gwdesk.app.handoff.Handoff`) crosses threads in the console,
    for one profile's store: blocking work as `BlockingJob`s (a start its caller abandoned
    is undone, and `settle` waits for that), reads on a `StoreReads` of the store (answered
    here, dropped once closed), `BackgroundTasks` and `CoalescingRead`s."""

    def __init__(
        self, owner: QObject, path: Path | str, name: str, *, shared: SharedData | None = None
    ) -> None:
        """`owner`: the Qt object the reads answer through (their answers are dropped once
        it is destroyed)."""
        self._reads: StoreReads | None = StoreReads(path, name, owner, shared=shared)
        self._starts: set[BlockingJob[Any]] = set()
        self._background = BackgroundTasks()
        self._rereads: list[CoalescingRead[Any]] = []

    async def blocking(
        self, work: Callable[[], T], *, undo: Callable[[T], object] | None = None
    ) -> T:
        if undo is None:
            return await off_thread(work)
        job: BlockingJob[T] = BlockingJob()
        self._starts.add(job)
        try:
            result = await job.run(lambda _job: work(), undo=undo)
        except asyncio.CancelledError:
            raise  # the job stays tracked until `settle` has undone what it started
        except BaseException:
            self._starts.discard(job)
            raise
        self._starts.discard(job)
        return result

    async def read(self, read: Callable[[Reading], T], *, key: str | None = None) -> T:
        reads = self._reads
        if reads is None:
            raise asyncio.CancelledError  # closed: no answer will come
        return await reads.fetch(read, key=key)

    def background(self, work: Coroutine[Any, Any, None], what: str) -> None:
        self._background.start(work, what)

    def rereads(
        self, read: Callable[[], T], done: Callable[[T], None], what: str
    ) -> CoalescingRead[T]:
        rereads = CoalescingRead(read, done, what)
        self._rereads.append(rereads)
        return rereads

    async def settle(self) -> None:
        for rereads in self._rereads:
            rereads.stop()
        reads, self._reads = self._reads, None
        if reads is not None:
            reads.close()
            reads.deleteLater()
        await self._background.cancel()
        while self._starts:
            job = self._starts.pop()
            try:
                await job.settle()
            except Exception as exc:
                log.debug("an abandoned start failed (nothing to undo): %s", exc)
