"""A group on a profile's file: the transactions of one thread committed once, each undone alone.

The outbox runner's commit groups (`app/outbox_groups.py`) rest on this: the changes
of several sends made in one transaction, one of them failing without the others.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.store.database import StoreError
from gwdesk.store.engine import SqliteDatabase


@pytest.fixture
def file(tmp_path: Path) -> Iterator[tuple[SqliteDatabase, sqlite3.Connection]]:
    """The file through a database, and another connection looking at it."""
    path = tmp_path / "profile.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t(x INTEGER)")
    other = sqlite3.connect(path, isolation_level=None)
    yield SqliteDatabase(conn), other
    other.close()
    conn.close()


def values(conn: sqlite3.Connection) -> list[int]:
    return [int(row[0]) for row in conn.execute("SELECT x FROM t ORDER BY x")]


def insert_then_fail(database: SqliteDatabase) -> None:
    """A transaction whose second statement fails after its first changed a row."""
    with database.transaction() as session:
        session.execute("INSERT INTO t VALUES (2)")
        raise sqlite3.IntegrityError("refused after a change")


def test_a_transaction_that_fails_in_a_group_is_undone_alone(
    file: tuple[SqliteDatabase, sqlite3.Connection],
) -> None:
    database, other = file
    with database.group():
        with database.transaction() as session:
            session.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(StoreError, match="refused after a change"):
            insert_then_fail(database)
        with database.transaction() as session:
            session.execute("INSERT INTO t VALUES (3)")
    assert values(other) == [1, 3]


def test_a_groups_transactions_are_committed_together_at_its_end(
    file: tuple[SqliteDatabase, sqlite3.Connection],
) -> None:
    database, other = file
    with database.group():
        with database.transaction() as session:
            session.execute("INSERT INTO t VALUES (1)")
        with database.session() as session:
            session.execute("INSERT INTO t VALUES (2)")
        assert values(other) == []
    assert values(other) == [1, 2]
