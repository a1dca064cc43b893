"""Reading replies off the GUI thread on both engines: the replies and the team's history
where the shared data lives, the log cache in the profile's file, searches that ignore
case and take wildcards as text, snapshots that see one moment, and a long read stopped."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.domain.settings import OPT_OUT_KEYWORDS, REPLIES_SEEN_UP_TO
from gwdesk.store.database import ReadInterrupted, StoreError, connect
from gwdesk.store.engine import SqliteDatabase
from gwdesk.store.reader import Reading, StoreReader
from gwdesk.store.replies import IncomingReply, ReplyStore
from gwdesk.store.reply_queries import (
    ReplySearch,
    conversation,
    fetch_window,
    listing,
    position,
    unread_figures,
)
from gwdesk.store.shared import SharedData
from gwdesk.store.stored_settings import StoredSettings

AT = datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)
CUSTOMER = "61412345678"
OURS = "61400000000"
FOREVER = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"


def reply(text: str, seconds: int = 0, sender: str = CUSTOMER) -> IncomingReply:
    return IncomingReply(sender, OURS, text, AT + timedelta(seconds=seconds))


@pytest.fixture
def local(tmp_path: Path) -> Path:
    return tmp_path / "profile.sqlite3"


@pytest.fixture
def store(shared: SharedData, local: Path) -> Iterator[ReplyStore]:
    opened = ReplyStore(shared, local=local)
    yield opened
    opened.close()


@pytest.fixture
def reader(shared: SharedData, local: Path, store: ReplyStore) -> Iterator[StoreReader]:
    with StoreReader(local, shared) as opened:
        yield opened


def texts_found(reader: StoreReader, needle: str) -> list[str]:
    search = ReplySearch(needle)

    def read(reading: Reading) -> list[str]:
        with reading.snapshot():
            total = listing(reading, search).total
            return [row.text for row in fetch_window(reading, search, 0, total + 1)]

    return reader.run(read)


def test_a_search_ignores_case_and_takes_wildcards_quotes_and_backslashes_as_text(
    store: ReplyStore, reader: StoreReader
) -> None:
    texts = ["100% SURE_thing", "1000 sure things", 'O\'Brien: \\ "no"', "CAFÉ au lait"]
    store.add([reply(text, n) for n, text in enumerate(texts)])
    assert texts_found(reader, "100%") == [texts[0]]
    assert texts_found(reader, "sure_") == [texts[0]]
    assert texts_found(reader, "SURE") == texts[:2]
    assert texts_found(reader, "o'brien: \\ \"") == [texts[2]]
    assert texts_found(reader, "café") == [texts[3]]
    assert texts_found(reader, "%") == [texts[0]]
    assert texts_found(reader, "") == texts


def test_a_national_number_finds_the_replies_of_its_international_form(
    store: ReplyStore, reader: StoreReader
) -> None:
    store.add([reply("mine"), reply("theirs", 1, sender="61499999999")])
    assert texts_found(reader, "0412 345-678") == ["mine"]
    assert texts_found(reader, "+61 499") == ["theirs"]


def test_a_rows_position_counts_the_matching_rows_before_it(
    store: ReplyStore, reader: StoreReader
) -> None:
    results = store.add([reply(f"yes {n}", n) for n in range(3)] + [reply("no", 9)])
    last = results[2].reply
    search = ReplySearch("YES")
    at = reader.run(lambda r: position(r, search, (last.received_at.isoformat(), last.id)))
    assert at == 2


def test_a_conversation_joins_replies_the_teams_history_and_the_log_cache(
    shared: SharedData, store: ReplyStore, reader: StoreReader, local: Path
) -> None:
    store.add([reply("Is it ready?", 10)])
    with shared.open().session() as session:
        session.execute(
            "INSERT INTO history(at, channel, recipients, text, ok, message_id) "
            "VALUES (?, 'rest', ?, 'Ready now', 1, 'M-2')",
            ((AT + timedelta(seconds=20)).isoformat(), CUSTOMER),
        )
    conn = sqlite3.connect(local)
    conn.execute(
        "INSERT INTO log_records(message_id, status, date_lodged, to_number, message, synced) "
        "VALUES ('M-1', 'delivered', ?, ?, 'Your order', 0)",
        (int(AT.timestamp() * 1_000_000), CUSTOMER),
    )
    conn.commit()
    conn.close()
    entries = reader.run(lambda r: conversation(r, "+" + CUSTOMER))
    assert [(e.text, e.incoming) for e in entries] == [
        ("Your order", False), ("Is it ready?", True), ("Ready now", False),
    ]  # fmt: skip


def test_a_snapshot_sees_one_moment_while_a_listener_stores_more(
    store: ReplyStore, reader: StoreReader
) -> None:
    store.add([reply("first")])
    search = ReplySearch()

    def read(reading: Reading) -> tuple[int, int, int]:
        with reading.snapshot():
            before = listing(reading, search).total
            store.add([reply("meanwhile", 1)])
            return before, listing(reading, search).total, len(fetch_window(reading, search, 0, 9))

    assert reader.run(read) == (1, 1, 1)
    assert reader.run(lambda r: listing(r, search).total) == 2


def test_the_unread_figures_read_the_consoles_watermark_and_the_shared_replies(
    store: ReplyStore, reader: StoreReader
) -> None:
    results = store.add([reply(str(n), n) for n in range(4)])
    store.mark_seen(results[1].reply.id)
    figures = reader.run(unread_figures)
    assert (figures.seen_up_to, figures.latest_id, figures.unseen) == (
        results[1].reply.id, results[3].reply.id, 2,
    )  # fmt: skip


def test_a_reading_gets_each_setting_where_it_is_kept(
    shared: SharedData, local: Path, reader: StoreReader, store: ReplyStore
) -> None:
    own = SqliteDatabase(connect(local))
    StoredSettings(own, shared.open()).set(OPT_OUT_KEYWORDS, ("STOP", "HALT"))
    own.close()
    store.mark_seen(7)
    found = reader.run(lambda r: (r.get(OPT_OUT_KEYWORDS), r.get(REPLIES_SEEN_UP_TO)))
    assert found == (("STOP", "HALT"), 7)


def test_interrupting_a_read_that_would_never_end_stops_it_and_the_next_read_runs(
    store: ReplyStore, reader: StoreReader
) -> None:
    outcome: list[BaseException] = []

    def endless() -> None:
        try:
            reader.run(lambda r: r.shared.execute(FOREVER).fetchone())
        except StoreError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=endless)
    thread.start()
    deadline = time.monotonic() + 30
    while thread.is_alive():  # until the statement has started, an interrupt finds nothing
        assert time.monotonic() < deadline, "the read was never stopped"
        reader.interrupt()
        thread.join(0.1)
    assert len(outcome) == 1
    assert isinstance(outcome[0], ReadInterrupted)
    store.add([reply("after")])
    assert reader.run(lambda r: listing(r, ReplySearch()).total) == 1
