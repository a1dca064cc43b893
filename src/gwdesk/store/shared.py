"""Where a profile's shared data lives: its own file, or the team's PostgreSQL server.

The shared stores (replies, history, the outbox, opt-outs, templates, contacts, the
team's notes) each ask a `SharedData` for the `Database` they need, and never learn
which engine answers:

- `FileData` (a profile's SQLite file): each store gets a connection of its own, as it
  always had (a writer that must survive a power cut asks for `durable=True`:
  `synchronous=FULL`), closed with the store;
- `ServerData` (a team's server): every store borrows the one pool, which outlives
  them and is closed with the profile.

`kind` names the engine where a store must do a thing its own way (an outbox claim is
an OS lock file beside a file, an advisory lock on a server).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Protocol

from gwdesk.store.database import connect
from gwdesk.store.engine import Database, Session, SqliteDatabase


class SharedData(Protocol):
    """What a shared store is opened on (see the module docstring)."""

    @property
    def kind(self) -> str: ...

    @property
    def where(self) -> str:
        """The file or server, for messages."""
        ...

    def open(self, *, durable: bool = False) -> Database: ...

    def close(self) -> None: ...


class FileData:
    """A profile's own SQLite file."""

    kind = "sqlite"

    def __init__(self, path: Path | str) -> None:
        self.path = path

    @property
    def where(self) -> str:
        return str(self.path)

    def open(self, *, durable: bool = False) -> Database:
        conn = connect(self.path)
        if durable:
            conn.execute("PRAGMA synchronous=FULL")
        return SqliteDatabase(conn)

    def close(self) -> None:
        """Each store closed its own connections."""


class _Borrowed(Database):
    """The pool, lent to one store: its `close()` leaves the pool to its owner."""

    kind: ClassVar[str] = "postgresql"

    def __init__(self, database: Database) -> None:
        self.database = database

    @property
    def location(self) -> str:
        return self.database.location

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        with self.database.session() as session:
            yield session

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Session]:
        with self.database.transaction() as session:
            yield session

    def close(self) -> None:
        """The pool stays open for the profile's other stores."""


class ServerData:
    """A team's PostgreSQL server (`gwdesk.store.postgres.PostgresDatabase`)."""

    kind = "postgresql"

    def __init__(self, database: Database) -> None:
        self.database = database

    @property
    def where(self) -> str:
        return self.database.location

    def open(self, *, durable: bool = False) -> Database:
        return _Borrowed(self.database)

    def close(self) -> None:
        self.database.close()


def shared_data(source: Path | str | SharedData) -> SharedData:
    """A store's shared data from what it was given: a path is a profile's own file."""
    if isinstance(source, Path | str):
        return FileData(source)
    return source


def database_for(
    source: Path | str | SharedData | Database, *, durable: bool = False
) -> tuple[Database, bool]:
    """A store's database from what it was given, and whether the store closes it: a
    `Database` handed over (a connection another store of the profile already has) stays
    its giver's; one opened here from a path or a `SharedData` is the store's own."""
    if isinstance(source, Database):
        return (source, False)
    return (shared_data(source).open(durable=durable), True)


def server_of(source: Path | str | SharedData | Database) -> Database | None:
    """The team's server behind `source` (its pool, whose `connect()` gives a connection
    of its own), or None for a profile's file."""
    if isinstance(source, ServerData):
        return source.database
    if isinstance(source, _Borrowed):
        return source.database
    if isinstance(source, Database) and source.kind == "postgresql":
        return source
    return None
