"""A store's small writes (drafts, send history), applied in order by a thread of its own.

The console hands these writes over and goes on: another process (`gwdesk send`,
`gwdesk outbox resume`, a second console) may hold the file's write lock for
seconds, or a team's server may be restarting, and the window must not wait for
it. One worker thread per writer applies the writes in the order they came, each
`apply(session)` inside one transaction of a `Database` (`gwdesk.store.engine`): a
profile's file, on a connection of the writer's own, or a team's server (its pool).
So drafts (always the local file) and history rows (the shared store) each have a
writer; on a one-desk profile one writer serves both.

A newer write with the same key (a draft's) replaces an older one not yet written,
so only the newest draft of a key reaches the file. A busy file (SQLite) or a server
that cannot be reached (PostgreSQL) is retried with back-off for `retry_for`
seconds; a write that still fails is logged and reported once through `on_failure`
(until a write succeeds again), never raised at whoever handed it over (its future
holds a `StoreError`). `flush()` settles once everything handed over before it is
written or given up; `close()` flushes and stops the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from gwdesk.store.database import (
    StoreError,
    StoreUnavailable,
    is_busy,
    store_error,
    store_errors,
)
from gwdesk.store.engine import Database, Session, SqliteDatabase

log = logging.getLogger("gwdesk.store.writer")
T = TypeVar("T")

RETRY_FOR: Final = 30.0
"""Seconds a busy file is retried before a write is given up (SQLite's own wait is 5)."""
BUSY_TIMEOUT_MS: Final = 100
"""SQLite's own wait per attempt: short, so that writes handed over meanwhile join the next."""
FIRST_BACKOFF: Final = 0.02
MAX_BACKOFF: Final = 0.5

Apply = Callable[[Session], Any]


def as_store_error(error: BaseException, where: str = "") -> BaseException:
    """The store's error for an engine's (SQLite's or psycopg's), so whoever waits on a
    write catches the store's errors only; any other error as it is."""
    if isinstance(error, sqlite3.Error):
        return store_error(error)
    psycopg = sys.modules.get("psycopg")  # loaded only when a team's server is used
    if psycopg is not None and isinstance(error, psycopg.Error):
        from gwdesk.store.postgres import store_error as server_error

        return server_error(error, where)
    return error


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
        if error is not None:
            error = as_store_error(error)  # whoever waits catches the store's errors only
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
    """The writer of one store file or server; `submit` returns at once with a concurrent
    future.

    `target`: a profile file's path (the writer opens a connection of its own, with a
    short busy wait), or a `Database` it writes through (a team's server; it stays its
    giver's). `shared`: the store's own connection, for `:memory:` files."""

    def __init__(
        self,
        target: Path | str | Database,
        *,
        retry_for: float = RETRY_FOR,
        shared: sqlite3.Connection | None = None,
    ) -> None:
        self._given = target if isinstance(target, Database) else None
        self.path: Path | str = target.location if isinstance(target, Database) else target
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

    @property
    def kind(self) -> str:
        """The engine written to: `sqlite` or `postgresql`."""
        return self._given.kind if self._given is not None else SqliteDatabase.kind

    def submit(
        self, apply: Callable[[Session], T], *, key: Hashable | None = None, what: str
    ) -> Future[T]:
        """Hand a write over: `apply(session)` runs on the writer thread inside a
        transaction (SQL written for both engines, see `gwdesk.store.engine`).

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
        database: Database | None = None
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
                    database = self._write(database, batch)
                finally:
                    with self._cond:
                        self._busy = False
                        self._cond.notify_all()
        finally:
            with self._cond:  # ended by an error: the next write starts a thread again
                if self._thread is threading.current_thread():
                    self._running = False
            self._let_go(database)

    def _open(self) -> Database:
        if self._given is not None:
            return self._given
        if self._shared is not None:
            return SqliteDatabase(self._shared)
        conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous=NORMAL")
        return SqliteDatabase(conn)

    def _let_go(self, database: Database | None) -> None:
        """Close a connection the writer opened itself (a given one stays its giver's)."""
        if database is None or database is self._given:
            return
        if isinstance(database, SqliteDatabase) and database.conn is self._shared:
            return
        with contextlib.suppress(StoreError, sqlite3.Error):
            database.close()

    def _worth_retrying(self, exc: BaseException) -> bool:
        """A lock another holds (SQLite), or a server away (PostgreSQL): it may pass."""
        if is_busy(exc):
            return True
        return self.kind == "postgresql" and isinstance(exc, StoreUnavailable)

    def _write(self, database: Database | None, batch: list[_Write]) -> Database | None:
        """Apply `batch` in one transaction, retrying a busy file or an unreachable server;
        returns the database to keep (None after an error that may have broken it)."""
        deadline = time.monotonic() + self.retry_for
        delay = FIRST_BACKOFF
        while True:
            try:
                if database is None:
                    with store_errors():
                        database = self._open()
                with database.transaction() as session:
                    outcomes = apply_all(session, [w.apply for w in batch if w.apply is not None])
            except Exception as exc:
                again = self._worth_retrying(exc)
                if again and time.monotonic() + delay < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, MAX_BACKOFF)
                    with self._cond:  # what came meanwhile joins (and coalesces) now
                        _merge(batch, self._queue)
                        self._queue = []
                    continue
                self._given_up(batch, exc)
                if not is_busy(exc):
                    self._let_go(database)
                    database = None
                return database
            self._settle(batch, outcomes)
            return database

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
        if is_busy(exc) and self.kind == "sqlite":
            why = f"the profile's file stayed locked by another program for {self.retry_for:g} s"
        elif self._worth_retrying(exc):
            why = f"{str(exc).rstrip('.')} (tried for {self.retry_for:g} s)"
        else:
            why = str(as_store_error(exc)) or type(exc).__name__
        message = f"{what[:1].upper()}{what[1:]} could not be saved: {why.rstrip('.')}."
        log.warning("%s (%s)", message, self.path)
        if self._reported or self.on_failure is None:
            return
        self._reported = True
        try:
            self.on_failure(message)
        except Exception:
            log.exception("reporting a failed write failed")


def apply_all(session: Session, writes: list[Apply]) -> list[tuple[Any, BaseException | None]]:
    """Apply `writes` in the session's transaction; one that fails (not for the lock) is
    rolled back alone and the others still go in. A busy lock anywhere, or a connection
    lost (rolling back to the savepoint fails too), undoes them all."""
    outcomes: list[tuple[Any, BaseException | None]] = []
    for apply in writes:
        session.execute("SAVEPOINT write")
        try:
            result = apply(session)
        except Exception as exc:
            if is_busy(exc):
                raise
            session.execute("ROLLBACK TO SAVEPOINT write")
            session.execute("RELEASE SAVEPOINT write")
            outcomes.append((None, exc))
        else:
            session.execute("RELEASE SAVEPOINT write")
            outcomes.append((result, None))
    return outcomes
