"""The PostgreSQL engine itself: schema upgrades, rows, errors and the change feed, on a real server."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest

from gwdesk.store.changes import RESYNC, ChangeFeed
from gwdesk.store.database import StoreError, StoreUnavailable
from gwdesk.store.pg_schema import PG_MIGRATIONS
from gwdesk.store.postgres import PostgresDatabase, migrate, pg_sql, schema_version
from tests.postgres_server import PostgresServer


def _open_and_read_version(url: str) -> int:
    database = PostgresDatabase(url)
    try:
        with database.session() as session:
            return int(session.execute("SELECT version FROM gwdesk_schema").fetchone()[0])
    finally:
        database.close()


def test_four_processes_racing_the_first_migration_each_find_the_schema_whole(pg_url: str) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        versions = pool.map(_open_and_read_version, [pg_url] * 4)
    assert versions == [len(PG_MIGRATIONS)] * 4
    database = PostgresDatabase(pg_url)
    with database.session() as session:
        assert session.execute("SELECT COUNT(*) FROM gwdesk_schema").fetchone()[0] == 1
    database.close()


def test_a_schema_newer_than_this_gwdesk_is_refused(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)
    with database.session() as session:
        session.execute("UPDATE gwdesk_schema SET version = 999")
    database.close()
    with pytest.raises(StoreError, match="newer than this gwdesk"):
        PostgresDatabase(pg_url)


def test_rows_read_by_name_and_position_and_placeholders_keep_percent_signs(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)
    with database.transaction() as session:
        session.execute(
            "INSERT INTO templates(name_key, name, text, updated_us) VALUES (?, ?, ?, 1)",
            ("a%b", "a%b", "100%"),
        )
    with database.session() as session:
        row = session.execute("SELECT name, text FROM templates WHERE name LIKE 'a%'").fetchone()
    assert (row["name"], row[1]) == ("a%b", "100%")
    assert pg_sql("SELECT ? WHERE x LIKE '%'") == "SELECT %s WHERE x LIKE '%%'"
    database.close()


def test_a_failed_transaction_leaves_nothing_behind(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)

    def half_a_transaction() -> None:
        with database.transaction() as session:
            session.execute("INSERT INTO claims VALUES ('kept', 'desk', 'alex', 1)")
            session.execute("INSERT INTO nosuch VALUES (1)")

    with pytest.raises(StoreError):
        half_a_transaction()
    with database.session() as session:
        assert session.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    database.close()


def test_a_server_that_is_not_there_is_a_clear_store_error(postgres: PostgresServer) -> None:
    url = f"postgresql://gwdesk_test@127.0.0.1:{postgres.port + 1}/nosuch"
    with pytest.raises(StoreUnavailable, match="cannot be reached") as raised:
        PostgresDatabase(url)
    assert "check that the server is running" in str(raised.value)


def test_the_password_never_shows_in_an_error(postgres: PostgresServer) -> None:
    url = f"postgresql://gwdesk_test@127.0.0.1:{postgres.port + 1}/nosuch"
    with pytest.raises(StoreError) as raised:
        PostgresDatabase(url, password="s3cret-Pa55")
    assert "s3cret-Pa55" not in str(raised.value)


def test_the_change_feed_names_what_changed_and_resyncs_after_a_reconnect(
    postgres: PostgresServer, pg_url: str
) -> None:
    database = PostgresDatabase(pg_url)
    seen: list[frozenset[str]] = []
    states: list[bool] = []
    arrived = threading.Condition()

    def on_change(tables: frozenset[str]) -> None:
        with arrived:
            seen.append(tables)
            arrived.notify_all()

    def wait_for(predicate: object, within: float = 20.0) -> None:
        deadline = time.monotonic() + within
        with arrived:
            while not predicate():  # type: ignore[operator]
                assert arrived.wait(max(0.0, deadline - time.monotonic())), (seen, states)

    feed = ChangeFeed(database.connect, on_change, states.append).start()
    try:
        wait_for(lambda: any(RESYNC in s for s in seen))
        with database.transaction() as session:
            session.execute("SELECT gwdesk_set('sending.marketing_default', 'true')")
        wait_for(lambda: any("settings" in s for s in seen))
        resyncs = sum(RESYNC in s for s in seen)
        postgres.restart()
        wait_for(lambda: sum(RESYNC in s for s in seen) > resyncs)
        assert states[:3] == [True, False, True]
    finally:
        feed.close()
        database.close()


def test_migrate_reports_the_version_it_reached(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn) == len(PG_MIGRATIONS)
        assert schema_version(conn) == len(PG_MIGRATIONS)
