"""Reply times no gateway can mean: the reply is kept, received when it was stored, its
claimed time beside it; and no such time moves the start-up backfill's window."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gwdesk.replies import suggested_start
from gwdesk.store.replies import IncomingReply, ReplyStore, utc_seconds

NOW = datetime.now(UTC).replace(microsecond=0)


def reply(received_at: datetime, text: str = "Yes please", **fields: object) -> IncomingReply:
    return IncomingReply("61412345678", "61400000000", text, received_at, **fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ReplyStore]:
    opened = ReplyStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("claimed", "shown"),
    [
        (datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "9999-12-31T23:59:59+00:00"),
        (NOW + timedelta(days=2), (NOW + timedelta(days=2)).isoformat()),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00+00:00"),
        (datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), "1999-12-31T23:59:59+00:00"),
    ],
    ids=["year-9999", "two-days-ahead", "year-1", "before-2000"],  # the same in every process
)
def test_a_reply_with_an_unbelievable_time_is_kept_as_received_when_stored(
    store: ReplyStore, claimed: datetime, shown: str
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    [result] = store.add([reply(claimed)])
    after = datetime.now(UTC)
    [stored] = store.latest()
    assert result.new
    assert result.reply == stored
    assert before <= stored.received_at <= after
    assert stored.received_claimed == shown
    assert stored.as_json()["received_claimed"] == shown


def test_a_time_a_few_hours_ahead_is_believed(store: ReplyStore) -> None:
    ahead = NOW + timedelta(hours=20)  # a gateway clock or zone off by hours
    store.add([reply(ahead)])
    [stored] = store.latest()
    assert (stored.received_at, stored.received_claimed) == (ahead, None)


def test_a_retried_reply_with_an_unbelievable_time_is_stored_once(store: ReplyStore) -> None:
    claimed = datetime(9999, 12, 31, tzinfo=UTC)
    first = store.add([reply(claimed, message_id=None)])
    again = store.add([reply(claimed, message_id="M-1"), reply(claimed)])
    assert [r.new for r in first + again] == [True, False, False]
    assert again[0].updated
    [stored] = store.latest()
    assert stored.message_id == "M-1"


def test_an_unbelievable_sent_time_is_dropped_and_the_reply_kept(store: ReplyStore) -> None:
    store.add([reply(NOW, sent_at=datetime(9999, 1, 1, tzinfo=UTC))])
    [stored] = store.latest()
    assert (stored.received_at, stored.sent_at, stored.received_claimed) == (NOW, None, None)


def test_a_time_beyond_what_utc_can_hold_is_held_at_its_edge() -> None:
    west = datetime(9999, 12, 31, 23, tzinfo=ZoneInfo("America/New_York"))
    east = datetime(1, 1, 1, tzinfo=ZoneInfo("Australia/Sydney"))
    assert utc_seconds(west) == datetime.max.replace(microsecond=0, tzinfo=UTC)
    assert utc_seconds(east) == datetime.min.replace(tzinfo=UTC)


# ---- the backfill's window -----------------------------------------------------------------


def test_the_window_starts_an_hour_before_the_newest_reply(store: ReplyStore) -> None:
    newest = NOW - timedelta(hours=6)
    store.add([reply(newest)])
    assert suggested_start(store, NOW) == newest - timedelta(hours=1)


def test_a_reply_dated_9999_does_not_shrink_the_window(store: ReplyStore) -> None:
    newest = NOW - timedelta(hours=6)
    store.add([reply(newest), reply(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "Odd")])
    assert suggested_start(store, NOW) == newest - timedelta(hours=1)


def test_a_future_time_an_earlier_version_stored_does_not_shrink_the_window(
    store: ReplyStore, tmp_path: Path
) -> None:
    newest = NOW - timedelta(hours=6)
    store.add([reply(newest)])
    with sqlite3.connect(tmp_path / "profile.sqlite3") as old:  # as an earlier gwdesk stored it
        old.execute(
            "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
            "VALUES ('614', '615', 'Odd', '9999-12-31T23:59:59+00:00', 'webhook', ?)",
            (NOW.isoformat(),),
        )
    assert suggested_start(store, NOW) == newest - timedelta(hours=1)


def test_with_only_future_replies_the_first_window_is_a_day(store: ReplyStore) -> None:
    store.add([reply(NOW + timedelta(hours=20))])
    assert suggested_start(store, NOW) == NOW - timedelta(days=1)
