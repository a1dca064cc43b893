"""Send history on both engines: rows handed to the writer reach the shared store with
their operator, are listed once before and after, and wait out a server restart."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import StoreError
from gwdesk.store.engine import Database
from gwdesk.store.history import HistoryEntry, HistoryStore
from gwdesk.store.outbox import NewEntry, OutboxStore
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.shared import SharedData
from tests.postgres_server import PostgresServer

WAIT = 60.0


def row(text: str, at: datetime | None = None, **values: object) -> HistoryEntry:
    return HistoryEntry(at or datetime.now(UTC), "REST SMS", "+61412345678", text, True, **values)  # type: ignore[arg-type]


@pytest.fixture
def database(shared: SharedData) -> Iterator[Database]:
    opened = shared.open()
    yield opened
    opened.close()


@pytest.fixture
def writer(database: Database) -> Iterator[BackgroundWriter]:
    written = BackgroundWriter(database)
    yield written
    written.close(WAIT)


def test_a_queued_row_reaches_the_store_with_its_operator(
    shared: SharedData, writer: BackgroundWriter
) -> None:
    history = HistoryStore(shared, writer, operator="alex")
    entry = history.queue(row("Hi <b>there</b>", message_id="M1")).result(WAIT)
    assert entry.id is not None
    other_console = HistoryStore(shared, writer, operator="sam")
    [stored] = other_console.since(datetime.now(UTC) - timedelta(minutes=1))
    assert (stored.text, stored.operator, stored.message_id, stored.id) == (
        "Hi <b>there</b>",
        "alex",
        "M1",
        entry.id,
    )
    history.close()
    other_console.close()


def test_a_row_naming_its_operator_keeps_it(shared: SharedData, writer: BackgroundWriter) -> None:
    history = HistoryStore(shared, writer, operator="alex")
    added = history.add(row("Sent by the listener", operator="receiver"))
    [stored] = history.since(datetime.now(UTC) - timedelta(minutes=1))
    assert stored == added
    assert stored.operator == "receiver"
    history.close()


def test_rows_are_listed_newest_first_from_a_moment(
    shared: SharedData, writer: BackgroundWriter
) -> None:
    history = HistoryStore(shared, writer)
    now = datetime.now(UTC)
    for minutes, text in ((30, "old"), (3, "middle"), (1, "newest")):
        history.add(row(text, now - timedelta(minutes=minutes)))
    assert [e.text for e in history.since(now - timedelta(minutes=10))] == ["newest", "middle"]
    history.close()


def test_a_queued_row_is_listed_once_before_and_after_it_is_written(
    shared: SharedData, database: Database
) -> None:
    gate = threading.Event()
    writer = BackgroundWriter(database)
    history = HistoryStore(shared, writer, operator="alex")
    writer.submit(lambda _session: gate.wait(WAIT), what="a held write")  # the writer waits
    try:
        written = history.queue(row("Hi"))
        before = history.since(datetime.now(UTC) - timedelta(minutes=1))
        gate.set()
        entry = written.result(WAIT)
        after = history.since(datetime.now(UTC) - timedelta(minutes=1))
    finally:
        gate.set()
        writer.close(WAIT)
        history.close()
    assert [(e.text, e.id, e.operator) for e in before] == [("Hi", None, "alex")]
    assert [(e.text, e.id, e.operator) for e in after] == [("Hi", entry.id, "alex")]


# ---- on a team's server ------------------------------------------------------------------


def test_a_row_the_server_refuses_fails_alone_and_is_reported_once(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)
    writer = BackgroundWriter(database)
    reported: list[str] = []
    writer.on_failure = reported.append
    history = HistoryStore(database, writer, operator="alex")
    try:
        first = history.queue(row("first"))
        refused = history.queue(row("a NUL \x00 in the text"))  # PostgreSQL text cannot hold it
        last = history.queue(row("last"))
        writer.flush().result(WAIT)
        with pytest.raises(StoreError, match="NUL"):
            refused.result()
        assert first.exception() is None
        assert last.exception() is None
        texts = [e.text for e in history.since(datetime.now(UTC) - timedelta(minutes=1))]
        assert sorted(texts) == ["first", "last"]
        assert len(reported) == 1
        assert reported[0].startswith("The send history could not be saved: ")
    finally:
        writer.close(WAIT)
        database.close()


def test_the_writer_waits_out_a_server_restart_and_reports_a_longer_absence(
    postgres: PostgresServer, pg_url: str
) -> None:
    database = PostgresDatabase(pg_url)
    writer = BackgroundWriter(database, retry_for=0.5)
    reported: list[str] = []
    writer.on_failure = reported.append
    history = HistoryStore(database, writer, operator="alex")
    try:
        history.add(row("before the restart"))
        postgres.stop()
        try:
            lost = history.queue(row("given up"))
            with pytest.raises(StoreError, match="cannot be reached"):
                lost.result(WAIT)
            assert len(reported) == 1
            assert "(tried for 0.5 s)" in reported[0]
            writer.retry_for = WAIT
            written = history.queue(row("queued while the server was away"))
        finally:
            postgres.start()
        entry = written.result(WAIT)
        assert entry.id is not None
        texts = [e.text for e in history.since(datetime.now(UTC) - timedelta(minutes=1))]
        assert sorted(texts) == ["before the restart", "queued while the server was away"]
        assert len(reported) == 1
    finally:
        writer.close(WAIT)
        database.close()


def test_a_list_sent_is_found_with_the_numbers_its_lodged_requests_reached(
    shared: SharedData, writer: BackgroundWriter
) -> None:
    """A list's history row names its first lodged request; its outbox batch says whom
    each lodged request reached (one still pending reached nobody yet)."""
    outbox = OutboxStore(shared)
    numbers = [(f"614120{i:05d}",) for i in range(3)]
    _batch, entries = outbox.record(
        gateway="demo@http://gw", channel="sms", label="Closed", send_id="gwd-list",
        entries=[NewEntry(i, n, {"text": "Closed"}, f"gwd-list-{i:04d}") for i, n in enumerate(numbers, 1)],
    )  # fmt: skip
    for entry in entries[:2]:
        outbox.begin(entry.id)
        outbox.lodged(entry.id, batch_code=f"B{entry.id}")
    history = HistoryStore(shared, writer)
    now = datetime.now(UTC)
    history.add(
        HistoryEntry(
            now, "REST batch", "3 recipients", "Closed", False, external_system_id="gwd-list-0001"
        )
    )
    history.add(row("Open late", now, external_system_id="gwd-list-0001"))
    [reached] = history.reached_with("Closed", now - timedelta(minutes=1))
    assert reached.numbers == {"61412000000", "61412000001"}
    assert history.reached_with("Closed", now + timedelta(minutes=1)) == []
    history.close()
    outbox.close()
