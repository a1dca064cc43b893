"""The store's background writer: order, coalescing, a busy file retried, flush and close.

A real SQLite file; "another process" is a second connection holding the write lock
(`BEGIN IMMEDIATE`), let go by a timer thread as that process would.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import StoreBusy, StoreUnavailable
from gwdesk.store.history import HistoryEntry
from gwdesk.store.local import LocalStore
from tests.sqlite_locks import HeldLock

WAIT = 10.0
"""Seconds a test waits for a future: far beyond what any write here needs."""


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A file with a `log` table (and WAL, like a profile's store)."""
    file = tmp_path / "writes.sqlite3"
    conn = sqlite3.connect(str(file), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
    conn.close()
    return file


@pytest.fixture
def reported() -> list[str]:
    return []


@pytest.fixture
def writer(path: Path, reported: list[str]) -> Iterator[BackgroundWriter]:
    writer = BackgroundWriter(path)
    writer.on_failure = reported.append
    yield writer
    writer.close(WAIT)


@pytest.fixture
def locks() -> Iterator[list[HeldLock]]:
    held: list[HeldLock] = []
    yield held
    for lock in held:
        lock.close()


def log_item(item: str) -> Callable[[sqlite3.Connection], int]:
    def apply(conn: sqlite3.Connection) -> int:
        cursor = conn.execute("INSERT INTO log(item) VALUES (?)", (item,))
        return cursor.lastrowid or 0

    return apply


def logged(path: Path) -> list[str]:
    conn = sqlite3.connect(str(path))
    try:
        return [row[0] for row in conn.execute("SELECT item FROM log ORDER BY id")]
    finally:
        conn.close()


def writer_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("gwdesk-store-writer")]


def test_writes_are_applied_in_the_order_they_were_handed_over(
    writer: BackgroundWriter, path: Path
) -> None:
    items = [f"item-{i}" for i in range(200)]
    futures = [writer.submit(log_item(item), what="the log") for item in items]
    writer.flush().result(WAIT)
    assert logged(path) == items
    ids = [f.result() for f in futures]
    assert ids == sorted(ids)


def test_only_the_newest_write_of_a_key_reaches_the_file_after_the_writes_before_it(
    writer: BackgroundWriter, path: Path, locks: list[HeldLock]
) -> None:
    locks.append(HeldLock(path, release_after=0.5))
    futures = [writer.submit(log_item("before"), what="the log")]
    for version in range(1, 6):
        futures.append(writer.submit(log_item(f"draft v{version}"), key="draft", what="the draft"))
        if version == 2:
            futures.append(writer.submit(log_item("between"), what="the log"))
    writer.flush().result(WAIT)
    assert logged(path) == ["before", "between", "draft v5"]
    assert all(f.done() and f.exception() is None for f in futures)


def test_a_write_that_meets_a_locked_file_is_retried_until_the_lock_is_let_go(
    writer: BackgroundWriter, path: Path, locks: list[HeldLock], reported: list[str]
) -> None:
    lock = HeldLock(path, release_after=0.6)
    locks.append(lock)
    written = writer.submit(log_item("patient"), what="the log")
    written.result(WAIT)
    assert lock.released_at is not None
    assert time.monotonic() >= lock.released_at
    assert logged(path) == ["patient"]
    assert reported == []


def test_a_write_still_locked_out_after_retry_for_fails_and_is_reported_once(
    writer: BackgroundWriter, path: Path, locks: list[HeldLock], reported: list[str]
) -> None:
    writer.retry_for = 0.3
    locks.append(HeldLock(path))
    for item in ("first", "second", "third"):
        written = writer.submit(log_item(item), what="the draft")
        with pytest.raises(StoreBusy, match="locked"):  # the store's error, not SQLite's
            written.result(WAIT)
    assert reported == [
        "The draft could not be saved: the profile's file stayed locked by another "
        "program for 0.3 s."
    ]


def test_a_failure_is_reported_again_after_a_write_went_in(
    writer: BackgroundWriter, path: Path, locks: list[HeldLock], reported: list[str]
) -> None:
    writer.retry_for = 0.2
    lock = HeldLock(path)
    locks.append(lock)
    with pytest.raises(StoreBusy):
        writer.submit(log_item("lost"), what="the draft").result(WAIT)
    lock.release()
    writer.submit(log_item("saved"), what="the draft").result(WAIT)
    locks.append(HeldLock(path))
    with pytest.raises(StoreBusy):
        writer.submit(log_item("lost again"), what="the draft").result(WAIT)
    assert len(reported) == 2


def test_one_failing_write_does_not_undo_the_others(
    writer: BackgroundWriter, path: Path, reported: list[str]
) -> None:
    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO log(item) VALUES ('half')")
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    first = writer.submit(log_item("first"), what="the log")
    bad = writer.submit(broken, what="the send history")
    last = writer.submit(log_item("last"), what="the log")
    writer.flush().result(WAIT)
    assert logged(path) == ["first", "last"]
    assert first.exception() is None
    assert last.exception() is None
    with pytest.raises(StoreUnavailable, match="no_such_table"):
        bad.result()
    assert reported == ["The send history could not be saved: no such table: no_such_table."]


async def test_flush_settles_on_the_event_loop_once_every_earlier_write_is_in(
    writer: BackgroundWriter, path: Path, locks: list[HeldLock]
) -> None:
    lock = HeldLock(path, release_after=0.5)
    locks.append(lock)
    for item in ("a", "b", "c"):
        writer.submit(log_item(item), what="the log")
    flushing = asyncio.ensure_future(writer.flushed())
    await asyncio.sleep(0.2)
    assert not flushing.done()  # the loop kept running meanwhile
    await asyncio.wait_for(flushing, WAIT)
    assert lock.released_at is not None
    assert logged(path) == ["a", "b", "c"]


def test_flushing_an_idle_writer_is_settled_at_once(writer: BackgroundWriter) -> None:
    flushed = writer.flush()
    assert flushed.done()
    assert writer.idle


def test_close_writes_what_was_handed_over_and_stops_its_thread(
    path: Path, locks: list[HeldLock]
) -> None:
    writer = BackgroundWriter(path)
    locks.append(HeldLock(path, release_after=0.3))
    for item in ("kept", "also kept"):
        writer.submit(log_item(item), what="the log")
    assert writer.close(WAIT)
    assert logged(path) == ["kept", "also kept"]
    assert writer_threads() == []


def test_a_write_handed_over_after_close_still_reaches_the_file(path: Path) -> None:
    writer = BackgroundWriter(path)
    writer.close()
    writer.submit(log_item("late"), what="the log").result(WAIT)
    assert writer.close(WAIT)
    assert logged(path) == ["late"]
    assert writer_threads() == []


# ---- through the profile's store: what it answers before a write is in -------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    store = LocalStore(tmp_path / "profile.sqlite3")
    yield store
    store.close()


def stored_draft(path: Path | str, key: str) -> str | None:
    conn = sqlite3.connect(str(path))
    try:
        row = conn.execute("SELECT value FROM drafts WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])


def test_a_queued_draft_is_what_the_store_answers_until_it_is_in_the_file(
    store: LocalStore, locks: list[HeldLock]
) -> None:
    store.drafts.save("send", {"text": "old"})
    lock = HeldLock(Path(store.path))
    locks.append(lock)
    written: Future[None] = store.drafts.queue("send", {"text": "newest ✓"})
    assert store.drafts.load("send") == {"text": "newest ✓"}
    assert stored_draft(store.path, "send") == '{"text": "old"}'
    lock.release()
    written.result(WAIT)
    assert stored_draft(store.path, "send") == '{"text": "newest ✓"}'
    assert store.drafts.load("send") == {"text": "newest ✓"}


def test_a_queued_history_row_is_listed_once_before_and_after_it_is_written(
    store: LocalStore, locks: list[HeldLock]
) -> None:
    now = datetime.now(UTC)
    lock = HeldLock(Path(store.path))
    locks.append(lock)
    written = store.history.queue(HistoryEntry(now, "REST SMS", "+61412345678", "Hi", True))
    before = store.history.since(now - timedelta(minutes=1))
    lock.release()
    entry = written.result(WAIT)
    after = store.history.since(now - timedelta(minutes=1))
    assert [(e.text, e.id) for e in before] == [("Hi", None)]
    assert entry.id is not None
    assert [(e.text, e.id) for e in after] == [("Hi", entry.id)]
