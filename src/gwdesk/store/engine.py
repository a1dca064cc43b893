"""Where the shared stores run their SQL: a profile's SQLite file, or a PostgreSQL server.

An office shares one gateway account's replies, history, outbox, opt-outs, templates
and contacts between workstations; one workstation keeps them in its profile's file.
The stores that hold that shared data (`replies.py`, `history.py`, `outbox.py`,
`optouts.py`, ...) are written once, against `Database`: a few typed calls that every
engine answers alike.

- `session()` lends one connection for a few statements, each its own transaction;
  `transaction()` lends one for a transaction (SQLite `BEGIN IMMEDIATE`: the write
  lock first, so a read-then-write cannot be raced).
- SQL is written once, with `?` placeholders and what both engines take (`ON CONFLICT`,
  `RETURNING`, `COALESCE(SUM(..), 0)` rather than SQLite's `TOTAL`); the PostgreSQL
  side turns the placeholders into its own. What differs (a table's DDL, claims,
  change notification) is each engine's, in `database.py` and `postgres.py`.
- Rows read by column name or by position, on both engines.
- A read that must see one moment runs in `Session.snapshot()`; `Session.interrupt()`
  (from another thread) stops the statement running now, and the read then fails with
  `ReadInterrupted`.
- Every error of an engine leaves a store as the store's own (`StoreError`), so the
  console and the command line never see which engine it was.

`SqliteDatabase` wraps one connection and the lock its users take, as every store of
the file did before; `gwdesk.store.postgres.PostgresDatabase` lends connections of a
pool and is imported only when a profile names a server (psycopg stays out of the
console's start-up otherwise).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar, Protocol

from gwdesk.store.database import savepoint, store_errors, transaction


def containing(needle: str) -> str:
    """A LIKE pattern, for `LIKE ? ESCAPE '\\'`, of text that contains `needle` as typed
    (its `%`, `_` and `\\` are no wildcards)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Result(Protocol):
    """What `Session.execute` returns: rows read by name or position."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Session(ABC):
    """One connection, lent for a few statements (see `Database`)."""

    audited_by_server: ClassVar[bool] = False
    """The server keeps the record itself (a team's PostgreSQL server, `pg_rules.py`): it
    writes the audit log, derives the current opt-out state from each change, and takes
    setting changes through its own function. A profile's file leaves all three to the
    stores."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[object] = ()) -> Result: ...

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> int:
        """The rows changed."""

    @abstractmethod
    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """A read-only transaction: every read inside sees the data as it was at one moment."""

    @abstractmethod
    def interrupt(self) -> None:
        """Stop the statement running now, if any (from any thread): it raises
        `ReadInterrupted`."""


class Database(ABC):
    """The connections of one shared store (see the module docstring)."""

    kind: ClassVar[str]
    """`sqlite` or `postgresql`."""

    @abstractmethod
    def session(self) -> contextlib.AbstractContextManager[Session]: ...

    @abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager[Session]: ...

    @abstractmethod
    def close(self) -> None: ...

    def group(self) -> contextlib.AbstractContextManager[None]:
        """Where an engine can, one transaction for what this thread does inside the block
        (each transaction a savepoint of it), committed once at its end; elsewhere (a
        team's server) each stays its own."""
        return contextlib.nullcontext()

    @property
    def location(self) -> str:
        """Where the data is, for messages (a file's path, a server's address)."""
        return ""


class SqliteSession(Session):
    """A session on one SQLite connection (the caller holds its lock, if it has one)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> Result:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> int:
        return self.conn.executemany(sql, rows).rowcount

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        conn = self.conn
        conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read
        try:
            yield
        finally:
            if conn.in_transaction:  # an interrupted statement may have ended it already
                conn.execute("COMMIT")

    def interrupt(self) -> None:
        self.conn.interrupt()


class SqliteDatabase(Database):
    """A profile's file, through one connection and its lock (a store may hold several
    of these: a writer with `synchronous=FULL`, a reader that never waits on it)."""

    kind: ClassVar[str] = "sqlite"

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock | None = None) -> None:
        self.conn = conn
        self.lock = lock or threading.Lock()
        self._grouping: int | None = None
        """The thread whose `group` holds the connection now (None: nobody's)."""

    @property
    def location(self) -> str:
        return next((str(row[2]) for row in self.conn.execute("PRAGMA database_list")), "")

    @contextlib.contextmanager
    def group(self) -> Iterator[None]:
        """One transaction (one commit: with `synchronous=FULL`, one sync to disk) for the
        sessions and transactions this thread opens inside the block: a transaction is a
        savepoint of it (one that fails is undone alone), a session's statements join it.
        Other threads wait for the lock as they would for any transaction."""
        with self.lock, store_errors(), transaction(self.conn):
            self._grouping = threading.get_ident()
            try:
                yield
            finally:
                self._grouping = None

    @contextlib.contextmanager
    def unsynced(self) -> Iterator[Session]:
        """A transaction whose commit need not reach the disk before it returns (WAL: it
        does with the next synced commit or checkpoint): for a write a power cut may lose
        without harm (a batch's claim: every claim dies with its process anyway)."""
        if self._grouped():
            with self.transaction() as session:
                yield session
            return
        with self.lock, store_errors():
            level = int(self.conn.execute("PRAGMA synchronous").fetchone()[0])
            self.conn.execute("PRAGMA synchronous=NORMAL")
            try:
                with transaction(self.conn):
                    yield SqliteSession(self.conn)
            finally:
                self.conn.execute(f"PRAGMA synchronous={level}")

    def _grouped(self) -> bool:
        return self._grouping is not None and self._grouping == threading.get_ident()

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        if self._grouped():
            with store_errors():
                yield SqliteSession(self.conn)
            return
        with self.lock, store_errors():
            yield SqliteSession(self.conn)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Session]:
        if self._grouped():
            with store_errors(), savepoint(self.conn):
                yield SqliteSession(self.conn)
            return
        with self.lock, store_errors(), transaction(self.conn):
            yield SqliteSession(self.conn)

    def close(self) -> None:
        with self.lock:
            self.conn.close()
