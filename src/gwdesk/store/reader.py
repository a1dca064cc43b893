"""Reading a profile's data away from whoever waits for the answer (the console's GUI thread).

A `StoreReader` owns a read-only connection of its own to the profile's file (the log
cache), opened by the first read, and reads the shared data (replies, history) where
it lives: the same file (one connection for both), or the team's server (a connection
of its pool per read). `run(read)` hands the read a `Reading` and raises the store's
errors, never the engine's. `interrupt()` (from any thread) stops the statement
running now: the read then fails with `ReadInterrupted`, which is how a superseded
query (the operator typed another letter) costs nothing more. WAL lets these reads
overlap every writer of the file; a server's reads never wait on its writers.

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

from gwdesk.domain.settings import Place, Setting
from gwdesk.store.database import StoreError, store_errors
from gwdesk.store.engine import Database, Session, SqliteSession
from gwdesk.store.shared import FileData, SharedData
from gwdesk.store.stored_settings import read_setting

T = TypeVar("T")
CACHE_KIB: Final = 32 * 1024
"""Page cache of a reader's connection (KiB): a million-row log view stays warm."""
CANCEL_WAIT: Final = 5.0
"""Seconds the next read waits at most for a server to take the last one's cancel."""


class Reading:
    """What a read is handed: the profile's file and the shared store's session, used by
    one thread while the read runs."""

    def __init__(self, conn: sqlite3.Connection, shared: Session | None = None) -> None:
        self.sql = conn
        """The profile's own file (the log cache), for the query modules only."""
        self.shared: Session = shared if shared is not None else SqliteSession(conn)
        """The shared store (replies, history), for the query modules only: a session over
        the same file for one workstation, or the team's server."""
        self._apart = not (isinstance(self.shared, SqliteSession) and self.shared.conn is conn)

    @property
    def shared_file(self) -> sqlite3.Connection | None:
        """The shared store's connection when it is a SQLite file (None: a server)."""
        return self.shared.conn if isinstance(self.shared, SqliteSession) else None

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Everything read inside sees the data as it was at one moment (counts and rows
        agree): one transaction on a file, a repeatable-read one on a server."""
        with self.shared.snapshot():
            if self._apart:
                with SqliteSession(self.sql).snapshot():
                    yield
            else:
                yield

    def get(self, setting: Setting[T]) -> T:
        """A setting kept in the profile's stores (as `StoredSettings.get` reads it)."""
        if setting.place is Place.SHARED_STORE:
            return read_setting(self.shared, setting)
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
    """A read-only connection of its own to `path`, and the shared data's (`shared`; None:
    the same file); reads run one at a time."""

    def __init__(self, path: Path | str, shared: SharedData | None = None) -> None:
        self.path = path
        self.shared = shared
        self._conn: sqlite3.Connection | None = None
        self._shared_file: sqlite3.Connection | None = None
        """The shared data's file, when it is not `path`."""
        self._server: Database | None = None
        """The team's server, opened by the first read."""
        self._running: Session | None = None
        """The server's session of the read running now (what `interrupt` cancels)."""
        self._cancels: list[threading.Thread] = []
        self._lock = threading.Lock()
        """Guards the above (interrupt and close come from other threads)."""
        self._closed = False

    def _same_file(self) -> bool:
        shared = self.shared
        if shared is None:
            return True
        return isinstance(shared, FileData) and _resolved(shared.path) == _resolved(self.path)

    def _connections(self) -> tuple[sqlite3.Connection, sqlite3.Connection | None, Database | None]:
        with self._lock:
            if self._closed:
                raise StoreError("The reader was closed.")
            if self._conn is None:
                self._conn = open_read_only(self.path)
            shared = self.shared
            if not self._same_file():
                if isinstance(shared, FileData):
                    if self._shared_file is None:
                        self._shared_file = open_read_only(shared.path)
                elif shared is not None and self._server is None:
                    self._server = shared.open()
            return self._conn, self._shared_file, self._server

    def run(self, read: Callable[[Reading], T]) -> T:
        """`read(reading)` on this thread; the store's errors, `ReadInterrupted` if stopped."""
        conn, shared_file, server = self._connections()
        self._await_cancels()
        with store_errors():
            if server is None:
                return read(
                    Reading(conn, None if shared_file is None else SqliteSession(shared_file))
                )
            with server.session() as session:
                with self._lock:
                    self._running = session
                try:
                    return read(Reading(conn, session))
                finally:
                    with self._lock:
                        self._running = None

    def _await_cancels(self) -> None:
        """Let a server take the last read's cancel before the next read starts, so it
        never stops the next one's statement instead."""
        with self._lock:
            cancels, self._cancels = self._cancels, []
        for thread in cancels:
            thread.join(CANCEL_WAIT)

    def interrupt(self) -> None:
        """Stop the statement running now, if any (from any thread, without waiting: a
        server's cancel is sent from a thread of its own)."""
        with self._lock:
            for conn in (self._conn, self._shared_file):
                if conn is not None:
                    conn.interrupt()
            running = self._running
            if running is not None:
                thread = threading.Thread(
                    target=running.interrupt, name="gwdesk-read-cancel", daemon=True
                )
                self._cancels.append(thread)
                thread.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns = (self._conn, self._shared_file)
            server = self._server
            self._conn = self._shared_file = self._server = None
        for conn in conns:
            if conn is not None:
                conn.close()
        if server is not None:
            server.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolved(path: Path | str) -> str:
    return str(Path(path).resolve()) if is_file_path(path) else str(path)
