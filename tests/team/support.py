"""Helpers of the team tests: a second console's opening of the same shared data, and
the way a child process opens it again."""

from __future__ import annotations

import threading
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


def declaring(data: SharedData, operator: str, console: str) -> SharedData:
    """`data` as a desk that says who it is opens it: on a server, a pool of its own whose
    connections declare `operator` and `console` (what the server's audit entries name for
    a login it cannot tell apart); a file's stores say it themselves."""
    kind, where = address(data)
    if kind == "sqlite":
        return data
    from gwdesk.store.postgres import PostgresDatabase

    return ServerData(PostgresDatabase(where, operator=operator, console=console))


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


class Heard:
    """What a link told: tables changed and connection states, with events to wait on."""

    def __init__(self) -> None:
        self.tables: list[frozenset[str]] = []
        self.states: list[bool] = []
        self.changed = threading.Condition()

    def on_change(self, tables: frozenset[str]) -> None:
        with self.changed:
            self.tables.append(tables)
            self.changed.notify_all()

    def on_state(self, connected: bool) -> None:
        with self.changed:
            self.states.append(connected)
            self.changed.notify_all()

    def wait_for(self, table: str, after: int = 0, timeout: float = 20) -> int:
        """Until `table` is named (after the first `after` calls); how many calls there were."""
        with self.changed:
            assert self.changed.wait_for(
                lambda: any(table in t for t in self.tables[after:]), timeout
            ), f"{table} never named: {self.tables}"
            return len(self.tables)

    def wait_for_more(self, after: int, timeout: float = 30) -> int:
        """Until there is a notification past the first `after`; how many there are."""
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.tables) > after, timeout), (
                f"nothing named after {after}: {self.tables}"
            )
            return len(self.tables)

    def wait_for_states(self, states: list[bool], timeout: float = 30) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.states[: len(states)] == states, timeout), (
                f"states {self.states}"
            )
