"""The truth kept live, Qt-free: which rows a log sync changes, the batched status read,
and when the next sync runs (`gwdesk.app.live_status`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gwdesk.app.live_status import (
    HURRY,
    INTERVAL,
    SOON,
    SyncPace,
    followed,
    sent_statuses,
    watched_ids,
)
from gwdesk.logs.query import STATUS_CHUNK
from gwdesk.logs.sync import SyncReport
from gwdesk.store.history import HistoryEntry
from tests.unit.logcache_support import cache, reading, record, write

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def sent(message_id: str | None, status: str | None = "ACTIVE", *, ok: bool = True) -> HistoryEntry:
    return HistoryEntry(
        at=AT,
        channel="SMS (REST)",
        recipients="61412345678",
        text="Your table is ready.",
        ok=ok,
        message_id=message_id,
        status=status,
    )


def test_a_send_the_log_holds_shows_the_logs_status() -> None:
    entries = [sent("m-1"), sent("m-2")]
    changed = followed(entries, {"m-2": "DELIVERED"})
    assert list(changed) == [1]
    assert changed[1].status == "DELIVERED"
    assert changed[1].message_id == "m-2"
    assert changed[1].text == entries[1].text


def test_a_status_the_row_already_shows_changes_nothing() -> None:
    assert followed([sent("m-1", "DELIVERED")], {"m-1": "DELIVERED"}) == {}


def test_a_send_that_did_not_go_keeps_what_it_says() -> None:
    failed = sent("m-1", None, ok=False)
    assert followed([failed], {"m-1": "DELIVERED"}) == {}
    assert watched_ids([failed, sent(None), sent("m-2"), sent("m-2")]) == ["m-2"]


def test_the_statuses_of_many_messages_are_read_at_once(tmp_path: Path) -> None:
    count = STATUS_CHUNK + 20  # more than one statement's worth
    with cache(tmp_path / "profile.sqlite3") as (store, writer):
        write(writer, [record(n, status="ACTIVE" if n % 2 else "DELIVERED") for n in range(count)])
        ids = [record(n)["messageId"] for n in range(count)]
        held = sent_statuses(reading(store), [*ids, "not-in-the-cache", ""])
    assert len(held) == count
    assert held[ids[0]] == "DELIVERED"
    assert held[ids[-1]] == "ACTIVE"
    assert "not-in-the-cache" not in held


def test_a_send_brings_a_sync_soon() -> None:
    pace = SyncPace()
    assert pace.sent(100.0) == SOON


def test_syncs_hurry_while_a_recent_send_may_still_change_status() -> None:
    pace = SyncPace()
    pace.sent(100.0)
    assert pace.after(SyncReport(active_left=True), 110.0) == HURRY
    assert pace.after(SyncReport(active_left=False), 115.0) == INTERVAL


def test_without_a_recent_send_syncs_keep_the_usual_interval() -> None:
    pace = SyncPace()
    assert pace.after(SyncReport(active_left=True), 10.0) == INTERVAL
    pace.sent(100.0)
    assert pace.after(SyncReport(active_left=True), 100.0 + pace.hurry_for) == INTERVAL


def test_a_failed_sync_waits_the_usual_interval() -> None:
    pace = SyncPace()
    pace.sent(100.0)
    assert pace.after(None, 101.0) == INTERVAL
