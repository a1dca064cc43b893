"""The team tests' engines: a profile's SQLite file, and a real PostgreSQL server (the
session's throwaway one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.store.database import connect
from gwdesk.store.engine import Database, SqliteDatabase
from gwdesk.store.shared import FileData, ServerData, SharedData
from tests.postgres_server import PostgresServer, postgres_server

ENGINES = ["sqlite", "postgresql"]


def open_database(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if kind == "sqlite":
        return SqliteDatabase(connect(tmp_path / "profile.sqlite3"))
    from gwdesk.store.postgres import PostgresDatabase

    url: str = request.getfixturevalue("pg_url")
    return PostgresDatabase(url)


@pytest.fixture(params=ENGINES)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A shared store's database on each engine in turn."""
    opened = open_database(request.param, tmp_path, request)
    yield opened
    opened.close()


@pytest.fixture(params=ENGINES)
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SharedData]:
    """Where a profile's shared stores live, on each engine in turn: the profile's own
    file, or a fresh database on the session's PostgreSQL server."""
    data: SharedData
    if request.param == "sqlite":
        data = FileData(tmp_path / "profile.sqlite3")
    else:
        from gwdesk.store.postgres import PostgresDatabase

        data = ServerData(PostgresDatabase(request.getfixturevalue("pg_url")))
    yield data
    data.close()


@pytest.fixture
def lone_postgres() -> Iterator[PostgresServer]:
    """A throwaway server of the test's own, to stop and start (the session's is shared)."""
    with postgres_server() as server:
        yield server
