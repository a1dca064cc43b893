"""Reading a profile's file away from whoever waits for the answer (the console's GUI thread).

A `StoreReader` owns a read-only connection of its own, opened by the first read;
`run(read)` hands the read a `Reading` and raises the store's errors, never the
engine's. `interrupt()` (from any thread) stops the statement running now: the
read then fails with `ReadInterrupted`, which is how a superseded query (the
operator typed another letter) costs nothing more. WAL lets these reads overlap
every writer of the file.

A read is a function of a `Reading`: the query modules of the store
(`reply_queries`) and of the log (`gwdesk.logs.query`) take one, so whoever only
shows their answers never sees SQL.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, TypeVar

from gwdesk.domain.settings import Setting
from gwdesk.store.database import StoreError, store_errors
from gwdesk.store.settings import read_setting

T = TypeVar("T")
CACHE_KIB: Final = 32 * 1024
"""Page cache of a reader's connection (KiB): a million-row log view stays warm."""


class Reading:
    """What a read is handed: one connection, used by one thread while the read runs."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.sql = conn
        """For the query modules (`gwdesk.store.*`, `gwdesk.logs.*`) only."""

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Everything read inside sees the file as it was at one moment (counts and rows agree)."""
        conn = self.sql
        conn.execute("BEGIN")
        try:
            yield
        finally:
            if conn.in_transaction:  # an interrupted statement may have ended it already
                conn.execute("COMMIT")

    def get(self, setting: Setting[T]) -> T:
        """A setting kept in the profile's store (as `StoredSettings.get` reads it)."""
        return read_setting(self.sql, setting)


def is_file_path(path: Path | str) -> bool:
    """Whether `path` names a file other connections can open (not `:memory:`)."""
    text = str(path)
    return bool(text) and text != ":memory:" and not text.startswith("file:")


def open_read_only(path: Path | str) -> sqlite3.Connection:
    """A read-only connection to a profile's file, for one worker thread."""
    if not is_file_path(path):
        raise StoreError("Reading off the GUI thread needs a profile data file, not memory.")
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    with store_errors():
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        conn.execute("PRAGMA query_only=1")
    return conn


class StoreReader:
    """A read-only connection of its own to `path`; reads run one at a time."""

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        """Guards `_conn` (interrupt and close come from other threads)."""
        self._closed = False

    def _connection(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise StoreError("The reader was closed.")
            if self._conn is None:
                self._conn = open_read_only(self.path)
            return self._conn

    def run(self, read: Callable[[Reading], T]) -> T:
        """`read(reading)` on this thread; the store's errors, `ReadInterrupted` if stopped."""
        conn = self._connection()
        with store_errors():
            return read(Reading(conn))

    def interrupt(self) -> None:
        """Stop the statement running now, if any (from any thread)."""
        with self._lock:
            if self._conn is not None:
                self._conn.interrupt()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
