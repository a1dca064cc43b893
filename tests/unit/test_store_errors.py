"""The store raises its own errors (`StoreError` and kin), never the engine's: whoever calls it
(the console, the command line, the application layer) catches one family, whichever
database sits below."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.settings import LISTENER_HOST
from gwdesk.logs.cache import LogCache
from gwdesk.store.database import StoreBusy, StoreError, StoreUnavailable, connect
from gwdesk.store.history import HistoryEntry
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import IncomingReply
from tests.sqlite_locks import HeldLock


@pytest.fixture
def damaged(tmp_path: Path) -> Iterator[LocalStore]:
    """A store whose file lost its tables after it was opened (a damaged or foreign file)."""
    store = LocalStore(tmp_path / "profile.sqlite3")
    raw = sqlite3.connect(tmp_path / "profile.sqlite3")
    for table in (
        "drafts", "history", "settings", "replies", "outbox_entries", "log_records",
        "templates", "contact_numbers",
    ):  # fmt: skip
        raw.execute(f"DROP TABLE {table}")
    raw.commit()
    raw.close()
    yield store
    store.close()


CALLS: dict[str, Callable[[LocalStore], Any]] = {
    "drafts.load": lambda s: s.drafts.load("send"),
    "drafts.save": lambda s: s.drafts.save("send", {"text": "x"}),
    "history.add": lambda s: s.history.add(
        HistoryEntry(datetime.now(UTC), "SMS", "61400000000", "x", True)
    ),
    "history.since": lambda s: s.history.since(datetime(2000, 1, 1, tzinfo=UTC)),
    "settings.get": lambda s: s.settings.get(LISTENER_HOST),
    "settings.set": lambda s: s.settings.set(LISTENER_HOST, "127.0.0.1"),
    "replies.count": lambda s: s.replies.count(),
    "replies.add": lambda s: s.replies.add(
        [IncomingReply("61400000000", "61400000001", "hi", datetime.now(UTC))]
    ),
    "replies.secret": lambda s: s.replies.secret(),
    "outbox.entries": lambda s: s.outbox.entries(1),
    "log cache total": lambda s: LogCache(s).total(),
    "templates.listing": lambda s: s.templates.listing(),
    "templates.add": lambda s: s.templates.add("Reminder", "Hi {name}"),
    "contacts.names": lambda s: s.contacts.names(["61400000000"]),
    "contacts.add": lambda s: s.contacts.add(ContactCard("Ann", ("61400000000",))),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_store_call_on_a_damaged_file_raises_the_stores_error(
    damaged: LocalStore, call: Callable[[LocalStore], Any]
) -> None:
    with pytest.raises(StoreError) as raised:
        call(damaged)
    assert not isinstance(raised.value, sqlite3.Error)
    assert isinstance(raised.value.__cause__, sqlite3.Error)  # the engine's words, kept
    assert "no such table" in str(raised.value)


def test_a_file_locked_past_the_wait_is_store_busy(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "profile.sqlite3")
    store.conn.execute("PRAGMA busy_timeout=50")
    lock = HeldLock(store.path)
    try:
        with pytest.raises(StoreBusy, match="locked"):
            store.settings.set(LISTENER_HOST, "127.0.0.1")
    finally:
        lock.close()
        store.close()


def test_a_file_that_is_not_a_store_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    path.write_bytes(b"not a database at all" * 64)
    with pytest.raises(StoreError, match="not a database") as raised:
        connect(path)
    assert not isinstance(raised.value, sqlite3.Error)
    with pytest.raises(StoreError):
        LocalStore(path)
    assert issubclass(StoreBusy, StoreUnavailable)
