"""A store's small writes (drafts, send history), applied in order by a thread of its own.

The console hands these writes over and goes on: another process (`gwdesk send`,
`gwdesk outbox resume`, a second console) may hold the file's write lock for
seconds, and the window must not wait for it. One worker thread per open store
applies the writes in the order they came, on a connection of its own. A newer
write with the same key (a draft's) replaces an older one not yet written, so
only the newest draft of a key reaches the file. A busy file is retried with
back-off for `retry_for` seconds; a write that still fails is logged and
reported once through `on_failure` (until a write succeeds again), never raised
at whoever handed it over (its future holds a `StoreError`). `flush()` settles
once everything handed over before it is written or given up; `close()` flushes
and stops the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from gwdesk.store.database import is_busy, store_error

log = logging.getLogger("gwdesk.store.writer")
T = TypeVar("T")

RETRY_FOR: Final = 30.0
"""Seconds a busy file is retried before a write is given up (SQLite's own wait is 5)."""
BUSY_TIMEOUT_MS: Final = 100
"""SQLite's own wait per attempt: short, so that writes handed over meanwhile join the next."""
FIRST_BACKOFF: Final = 0.02
MAX_BACKOFF: Final = 0.5

Apply = Callable[[sqlite3.Connection], Any]


@dataclass(eq=False)
class _Write:
    apply: Apply | None
    """None: a flush marker, settled when the writes before it are."""
    future: Future[Any]
    key: Hashable | None = None
    what: str = ""
    replaced: list[Future[Any]] = field(default_factory=list)
    """Futures of older writes of the same key that this one stands for."""

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        if isinstance(error, sqlite3.Error):
            error = store_error(error)  # whoever waits catches the store's errors only
        for future in (self.future, *self.replaced):
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)


def _running_future() -> Future[Any]:
    """A future nobody can cancel: a write handed over is written (or given up), whoever waits."""
    future: Future[Any] = Future()
    future.set_running_or_notify_cancel()
    return future


def _merge(into: list[_Write], writes: list[_Write]) -> None:
    """Append `writes` in order; one with a key replaces (and stands for) an older one."""
    for write in writes:
        if write.key is not None:
            for index, older in enumerate(into):
                if older.key == write.key:
                    del into[index]
                    write.replaced.extend((older.future, *older.replaced))
                    break
        into.append(write)


class BackgroundWriter:
    """The writer of one store file; `submit` returns at once with a concurrent future."""

    def __init__(
        self,
        path: Path | str,
        *,
        retry_for: float = RETRY_FOR,
        shared: sqlite3.Connection | None = None,
    ) -> None:
        self.path = path
        self.retry_for = retry_for
        self.on_failure: Callable[[str], None] | None = None
        """Told (on the writer thread) when a write is given up; once until one succeeds."""
        self._shared = shared
        """The store's own connection, for `:memory:` files (which no other can open)."""
        self._cond = threading.Condition()
        self._queue: list[_Write] = []
        self._busy = False
        self._closing = False
        self._thread: threading.Thread | None = None
        """The newest worker thread (`close` joins it)."""
        self._running = False
        """Whether that thread still takes writes (it stops when closing and idle)."""
        self._reported = False

    def submit(
        self, apply: Callable[[sqlite3.Connection], T], *, key: Hashable | None = None, what: str
    ) -> Future[T]:
        """Hand a write over: `apply(conn)` runs on the writer thread inside a transaction.

        `key`: a newer write with the same key replaces this one if it is not written
        yet (both futures then settle with the newer). `what`: the operator's name for
        what is saved ("the draft"), for the failure message.
        """
        future = _running_future()
        self._enqueue(_Write(apply, future, key, what))
        return future

    def flush(self) -> Future[None]:
        """Settles (never with an error) when every write handed over before is settled."""
        future = _running_future()
        if self.idle:
            future.set_result(None)
        else:
            self._enqueue(_Write(None, future))
        return future

    async def flushed(self) -> None:
        """`flush()`, awaited on the event loop without blocking it."""
        await asyncio.wrap_future(self.flush())

    @property
    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._busy

    def close(self, timeout: float | None = None) -> bool:
        """Write what was handed over, then stop the thread; False if it is still busy
        after `timeout`. A write handed over later still goes in: a thread starts for
        it and stops again."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    # ---- the writer thread -------------------------------------------------------------

    def _enqueue(self, write: _Write) -> None:
        with self._cond:
            _merge(self._queue, [write])
            if not self._running:
                name = f"gwdesk-store-writer:{Path(str(self.path)).name}"
                self._thread = threading.Thread(target=self._run, name=name, daemon=True)
                self._running = True
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        self._cond.wait()
                    if not self._queue:  # closing, and nothing left to write
                        self._running = False
                        return
                    batch, self._queue = self._queue, []
                    self._busy = True
                try:
                    conn = self._write(conn, batch)
                finally:
                    with self._cond:
                        self._busy = False
                        self._cond.notify_all()
        finally:
            with self._cond:  # ended by an error: the next write starts a thread again
                if self._thread is threading.current_thread():
                    self._running = False
            if conn is not None and conn is not self._shared:
                conn.close()

    def _connect(self) -> sqlite3.Connection:
        if self._shared is not None:
            return self._shared
        conn = sqlite3.connect(str(self.path), isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _write(
        self, conn: sqlite3.Connection | None, batch: list[_Write]
    ) -> sqlite3.Connection | None:
        """Apply `batch` in one transaction, retrying a busy file; returns the connection
        to keep (None after an error that may have broken it)."""
        deadline = time.monotonic() + self.retry_for
        delay = FIRST_BACKOFF
        while True:
            try:
                if conn is None:
                    conn = self._connect()
                outcomes = _transaction(conn, [w.apply for w in batch if w.apply is not None])
            except Exception as exc:
                busy = is_busy(exc)
                if busy and time.monotonic() + delay < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, MAX_BACKOFF)
                    with self._cond:  # what came meanwhile joins (and coalesces) now
                        _merge(batch, self._queue)
                        self._queue = []
                    continue
                self._given_up(batch, exc)
                if not busy and conn is not None and conn is not self._shared:
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                    conn = None
                return conn
            self._settle(batch, outcomes)
            return conn

    def _settle(
        self, batch: list[_Write], outcomes: list[tuple[Any, BaseException | None]]
    ) -> None:
        failed: list[tuple[_Write, BaseException]] = []
        results = iter(outcomes)
        for write in batch:
            if write.apply is None:
                continue
            result, error = next(results)
            if error is None:
                write.settle(result)
            else:
                failed.append((write, error))
        if failed:
            for write, error in failed:
                self._failed([write], error)
                write.settle(error=error)
        else:
            self._reported = False
        for write in batch:
            if write.apply is None:
                write.settle()

    def _given_up(self, batch: list[_Write], exc: BaseException) -> None:
        writes = [w for w in batch if w.apply is not None]
        self._failed(writes, exc)
        for write in writes:
            write.settle(error=exc)
        for write in batch:
            if write.apply is None:
                write.settle()

    def _failed(self, writes: list[_Write], exc: BaseException) -> None:
        whats = list(dict.fromkeys(w.what for w in writes if w.what)) or ["a change"]
        what = " and ".join(whats)
        if is_busy(exc):
            why = f"the profile's file stayed locked by another program for {self.retry_for:g} s"
        else:
            why = str(exc) or type(exc).__name__
        message = f"{what[:1].upper()}{what[1:]} could not be saved: {why}."
        log.warning("%s (%s)", message, self.path)
        if self._reported or self.on_failure is None:
            return
        self._reported = True
        try:
            self.on_failure(message)
        except Exception:
            log.exception("reporting a failed write failed")


def _transaction(
    conn: sqlite3.Connection, writes: list[Apply]
) -> list[tuple[Any, BaseException | None]]:
    """Apply `writes` under one write lock; one that fails (not for the lock) is rolled
    back alone and the others still go in. A busy lock anywhere undoes them all."""
    outcomes: list[tuple[Any, BaseException | None]] = []
    if not writes:
        return outcomes
    conn.execute("BEGIN IMMEDIATE")
    try:
        for apply in writes:
            conn.execute("SAVEPOINT write")
            try:
                result = apply(conn)
            except Exception as exc:
                if is_busy(exc):
                    raise
                conn.execute("ROLLBACK TO write")
                conn.execute("RELEASE write")
                outcomes.append((None, exc))
            else:
                conn.execute("RELEASE write")
                outcomes.append((result, None))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    return outcomes
