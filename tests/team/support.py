"""Helpers of the team tests: a second console's opening of the same shared data, and
the way a child process opens it again."""

from __future__ import annotations

from pathlib import Path

from gwdesk.store.database import connect
from gwdesk.store.engine import Database, SqliteDatabase
from gwdesk.store.shared import FileData, ServerData, SharedData


def address(data: SharedData) -> tuple[str, str]:
    """(kind, file path or server URL): what another process needs to open `data`."""
    if isinstance(data, FileData):
        return ("sqlite", str(data.path))
    assert isinstance(data, ServerData)
    url: str = data.database.url  # type: ignore[attr-defined]
    return ("postgresql", url)


def reopen(kind: str, where: str) -> SharedData:
    """The shared data at `where`, opened anew (its own connections, or its own pool)."""
    if kind == "sqlite":
        return FileData(Path(where))
    from gwdesk.store.postgres import PostgresDatabase

    return ServerData(PostgresDatabase(where))


def another(data: SharedData) -> SharedData:
    """Another console's opening of the same shared data."""
    return reopen(*address(data))


def database_address(database: Database) -> tuple[str, str]:
    """(kind, file path or server URL) of `database`, for another process."""
    if isinstance(database, SqliteDatabase):
        return ("sqlite", database.location)
    url: str = database.url  # type: ignore[attr-defined]
    return ("postgresql", url)


def database_at(kind: str, where: str) -> Database:
    """A `Database` on the file or server at `where`, opened anew."""
    if kind == "sqlite":
        return SqliteDatabase(connect(where))
    from gwdesk.store.postgres import PostgresDatabase

    return PostgresDatabase(where)
