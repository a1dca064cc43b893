"""A worker thread with its own read-only connection to the log cache.

The Logs tab never queries the cache on the GUI thread: a job (a function of the
connection) runs here and its result comes back to the GUI thread through a
queued signal, where the callback runs. Jobs run one at a time in the order given;
a job whose `Ticket` was cancelled before it started is skipped, and `interrupt()`
stops the statement running now (SQLite's `interrupt`), so a superseded query
(the operator typed another letter) costs nothing more.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from gwdesk.logs.cache import open_reader

Job = Callable[[sqlite3.Connection], Any]
Callback = Callable[[Any, BaseException | None], None]


class Ticket:
    """A submitted job; `cancel()` before it starts and it never runs."""

    def __init__(self) -> None:
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()


class Skipped(Exception):
    """The job was cancelled before it ran."""


class LogReader(QObject):
    """`submit(job, callback)`: `job(conn)` on the worker, `callback(result, error)` here."""

    _finished = Signal(object, object, object)

    def __init__(self, path: Path | str, name: str = "logs", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(
            1, thread_name_prefix=f"gwdesk-{name}-reader"
        )
        self._finished.connect(self._deliver)

    def _connection(self) -> sqlite3.Connection:
        with self._lock:
            if self._conn is None:
                self._conn = open_reader(self._path)
            return self._conn

    def submit(self, job: Job, callback: Callback) -> Ticket:
        ticket = Ticket()
        if self._executor is None:
            ticket.cancel()
            return ticket

        def run() -> None:
            if ticket.cancelled or self._executor is None:
                self._emit(callback, None, Skipped())
                return
            try:
                result = job(self._connection())
            except BaseException as exc:  # delivered to the callback, which decides
                self._emit(callback, None, exc)
            else:
                self._emit(callback, result, None)

        self._executor.submit(run)
        return ticket

    def _emit(self, callback: Callback, result: Any, error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the reader was deleted meanwhile
            self._finished.emit(callback, result, error)

    def _deliver(self, callback: Callback, result: Any, error: BaseException | None) -> None:
        if self._executor is None:
            return  # closed: nobody is waiting any more
        callback(result, error)

    def interrupt(self) -> None:
        """Stop the statement running now (it fails with `sqlite3.OperationalError`)."""
        with self._lock:
            if self._conn is not None:
                self._conn.interrupt()

    def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        self.interrupt()

        def shut() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        executor.submit(shut)  # after the queued jobs, which now skip at once
        executor.shutdown(wait=False)
