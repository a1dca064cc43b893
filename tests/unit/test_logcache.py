"""The log cache stores each record once, keeps what it does not know, and finds text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gwdesk.logs.cache import LogCache, LogCacheError
from gwdesk.logs.query import LogFilter, count, split_text
from gwdesk.logs.rows import TimeReader, parse_page, time_us
from gwdesk.store.local import LocalStore
from tests.unit.logcache_support import ZONE, cache, reading, record, write


def test_a_record_written_twice_is_stored_once(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        first = write(writer, [record(1), record(2)])
        again = write(writer, [record(1), record(2)])
        assert (first.inserted, first.updated) == (2, 0)
        assert (again.inserted, again.updated) == (0, 0)
        assert LogCache(store).total() == 2


def test_a_status_change_updates_the_stored_record(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, status="ACTIVE")])
        result = write(
            writer,
            [record(1, status="DELIVERED", deliveryReceiptReceived="2025-03-01T20:01:05+11:00")],
        )
        assert (result.inserted, result.updated) == (0, 1)
        held = LogCache(store).record("20250301090000000001")
        assert held is not None
        assert held["status"] == "DELIVERED"
        assert held["receipt"] == time_us("2025-03-01T09:01:05+00:00", UTC)
        assert LogCache(store).total() == 1


def test_the_same_record_twice_in_one_batch_is_stored_once(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, status="ACTIVE"), record(1, status="DELIVERED")])
        held = LogCache(store).record("20250301090000000001")
        assert held is not None
        assert held["status"] == "DELIVERED"


def test_fields_the_spec_does_not_list_are_kept(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, campaign="spring", cost={"cents": 6})])
        held = LogCache(store).record("20250301090000000001")
        assert held is not None
        assert json.loads(held["extra"]) == {"campaign": "spring", "cost": {"cents": 6}}


def test_a_value_of_an_unexpected_type_is_kept_as_text(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, subject={"en": "Hi"}, parts="2", deliveryReceiptReceived=True)])
        held = LogCache(store).record("20250301090000000001")
        assert held is not None
        assert json.loads(held["subject"]) == {"en": "Hi"}
        assert held["parts"] == 2
        assert (held["receipt"], held["receipt_raw"]) == (None, "true")


def test_a_record_without_identity_is_skipped_and_counted(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        result = write(
            writer,
            [record(1), record(2, messageId=None), record(3, dateLodged="yesterday"), "junk"],  # type: ignore[list-item]
        )
        assert (result.inserted, result.dropped) == (1, 3)
        assert LogCache(store).total() == 1


def test_times_are_read_the_same_by_the_fast_and_the_careful_reader() -> None:
    reader = TimeReader(ZONE)
    for text in (
        "2025-03-01T20:01:05.123456+11:00",
        "2025-10-05T01:59:59.999999+10:00",
        "2025-10-05T03:00:00.000001+11:00",
        "2025-03-01T09:01:05.5Z",
        "2025-03-01T09:01:05+00:00",
    ):
        assert reader(text) == time_us(text, ZONE), text


def test_a_time_without_offset_is_read_in_the_gateway_zone() -> None:
    assert time_us("2025-01-15T10:00:00", ZONE) == time_us("2025-01-15T10:00:00+11:00", UTC)
    assert TimeReader(ZONE)("not a time") is None


def test_a_page_that_is_not_a_listing_is_refused_in_plain_words() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_page(b"<html>busy</html>")
    with pytest.raises(ValueError, match="no list of messages"):
        parse_page(b'{"totalRecords": 3}')
    assert parse_page(b'\xef\xbb\xbf{"totalRecords": 0, "messages": []}').total == 0


def test_text_search_matches_word_starts_in_any_order(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(
            writer,
            [
                record(1, message="Your parcel is waiting at Westfield"),
                record(2, message="Payment received, thank you"),
                record(3, message="Parcel delivered"),
            ],
        )
        conn = reading(store)
        assert count(conn, LogFilter(text="parc")) == 2
        assert count(conn, LogFilter(text="westfield parcel")) == 1
        assert count(conn, LogFilter(text="PAYMENT")) == 1
        assert count(conn, LogFilter(text="nothing-like-this")) == 0


def test_text_search_finds_text_outside_the_gsm_alphabet(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(
            writer,
            [
                record(1, message="Dzień dobry, zażółć gęślą jaźń!"),
                record(2, message="Привет, ваш заказ готов"),
                record(3, message="Happy birthday Björn! 🎉🎂"),
                record(4, message="您的包裹已到达，请取件"),
                record(5, message="Καλημέρα σας"),
                record(6, message="Plain ASCII only", subject="Ελληνικά θέμα"),
            ],
        )
        conn = reading(store)
        assert count(conn, LogFilter(text="zażółć")) == 1
        assert count(conn, LogFilter(text="gesla")) == 1  # diacritics folded
        assert count(conn, LogFilter(text="заказ")) == 1
        assert count(conn, LogFilter(text="bjorn")) == 1
        assert count(conn, LogFilter(text="🎉")) == 1
        assert count(conn, LogFilter(text="已到达")) == 1
        assert count(conn, LogFilter(text="ΚΑΛΗΜΈΡΑ")) == 1  # case folded
        assert count(conn, LogFilter(text="θέμα")) == 1


def test_search_text_with_query_syntax_is_taken_literally(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, message='Say "NEAR" AND 100% off_now *')])
        for text in ('"NEAR', "AND", "100%", "off_now", "*", "NEAR( x OR", "^-", "'; DROP"):
            count(reading(store), LogFilter(text=text))  # never a syntax error
        assert count(reading(store), LogFilter(text='"near" and')) == 1
        assert count(reading(store), LogFilter(text="100%")) == 1
        assert count(reading(store), LogFilter(text="0%")) == 0


def test_search_text_is_split_into_words_and_literal_pieces() -> None:
    assert split_text("  parcel  Westf ") == (["parcel", "Westf"], [])
    assert split_text("$291.68") == (["291", "68"], [])
    assert split_text("🎉 party") == (["party"], ["🎉"])
    assert split_text("包裹") == ([], ["包裹"])
    assert split_text('quote"s 100%') == (["quote", "s", "100"], [])


def test_an_in_memory_store_has_no_log_cache() -> None:
    store = LocalStore(":memory:")
    try:
        memory = LogCache(store)
        assert not memory.usable
        with pytest.raises(LogCacheError, match="profile data file"):
            memory.writer()
    finally:
        store.close()


def test_clearing_the_cache_forgets_records_and_text(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1), record(2)])
        writer.clear()
        assert LogCache(store).total() == 0
        assert count(reading(store), LogFilter(text="message")) == 0
        write(writer, [record(3)])
        assert count(reading(store), LogFilter(text="message")) == 1
        assert LogCache(store).state().cursor is None


def test_utc_microseconds_keep_their_instant() -> None:
    moment = datetime(2025, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)
    assert time_us(moment, UTC) == int(moment.timestamp()) * 1_000_000 + 123456
