"""Views of the cache: windows of rows, positions, per-day counts and CSV export are right."""

from __future__ import annotations

import csv
import sqlite3
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from gwdesk.domain.spreadsheet import restored
from gwdesk.logs.export import ExportCancelled, export_csv
from gwdesk.logs.query import (
    LogFilter,
    LogQuery,
    LogSort,
    count,
    distinct,
    fetch_window,
    per_day,
    position,
)
from gwdesk.logs.rows import FIELDS, ID_INDEX, from_us, time_us
from gwdesk.store.reader import Reading
from tests.unit.logcache_support import ZONE, cache, reading, record, write
from tests.unit.spreadsheet_support import (
    HOSTILE_CELLS,
    PLAIN_WITH_DELIMITERS,
    formulas_seen,
    read_back,
)

N = 1234
STATUSES = ("DELIVERED", "DELIVERED", "ACTIVE", "FAILED")
MID = FIELDS.index(next(f for f in FIELDS if f.column == "message_id"))


def sample(n: int) -> dict[str, Any]:
    """A mix: statuses, two types, 97 recipients (so sorts have ties), spread over days."""
    return record(
        n * 37,  # minutes apart: ~1,234 records over a month
        status=STATUSES[n % 4],
        type="MMS" if n % 10 == 0 else "SMS",
        to=f"61400{n % 97:06d}",
        message=f"{'parcel' if n % 3 == 0 else 'payment'} reminder {n}",
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reading]:
    path = tmp_path_factory.mktemp("logs") / "p.sqlite3"
    with cache(path) as (_store, writer):
        # Out of order on purpose: row ids must not decide the order.
        write(writer, [sample(n) for n in range(N) if n % 2 == 1])
        write(writer, [sample(n) for n in range(N) if n % 2 == 0])
    conn = sqlite3.connect(path)
    yield Reading(conn)
    conn.close()


def expected(db: Reading, query: LogQuery) -> list[str]:
    """The view computed the slow way: every record in Python, filtered and sorted."""
    columns = f"message_id, status, type, to_number, message, date_lodged, id, {query.sort.column}"
    rows = db.sql.execute(f"SELECT {columns} FROM log_records").fetchall()
    flt = query.filter
    kept = [
        r
        for r in rows
        if (flt.status is None or r[1] == flt.status)
        and (flt.type is None or r[2] == flt.type)
        and r[3].startswith(flt.recipient)
        and all(word.lower() in r[4].lower() for word in flt.text.split())
    ]
    kept.sort(key=lambda r: (r[7], r[5], r[6]), reverse=query.sort.descending)
    return [r[0] for r in kept]


QUERIES = [
    LogQuery(),
    LogQuery(LogFilter(status="FAILED"), LogSort("to_number", descending=False)),
    LogQuery(LogFilter(text="parcel"), LogSort("to_number", descending=True)),
    LogQuery(LogFilter(type="SMS", text="payment"), LogSort("date_lodged", descending=False)),
    LogQuery(LogFilter(recipient="6140000"), LogSort("status", descending=False)),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q.filter}-{q.sort}")
def test_windows_at_the_edges_and_across_boundaries_hold_the_right_rows(
    db: sqlite3.Connection, query: LogQuery
) -> None:
    want = expected(db, query)
    total = count(db, query.filter)
    assert total == len(want)
    for start, size in ((0, 1), (total - 1, 1), (0, 500), (490, 20), (500, 500), (total - 7, 50)):
        start = max(0, start)
        got = [r[MID] for r in fetch_window(db, query, start, size, total)]
        assert got == want[start : start + size], (start, size)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q.filter}-{q.sort}")
def test_a_record_is_found_at_its_row(db: sqlite3.Connection, query: LogQuery) -> None:
    want = expected(db, query)
    total = len(want)
    for row in (0, 1, total // 2, total - 1):
        assert position(db, query, want[row], total) == row


def test_a_record_the_filter_hides_has_no_row(db: sqlite3.Connection) -> None:
    query = LogQuery(LogFilter(status="FAILED"))
    delivered = db.sql.execute(
        "SELECT message_id FROM log_records WHERE status = 'DELIVERED' LIMIT 1"
    ).fetchone()[0]
    assert position(db, query, delivered, count(db, query.filter)) is None
    assert position(db, query, "no such id", 10) is None


def test_a_window_past_the_end_is_empty(db: sqlite3.Connection) -> None:
    assert fetch_window(db, LogQuery(), N, 500, N) == []
    assert len(fetch_window(db, LogQuery(), N - 3, 500, N)) == 3


def test_the_value_lists_count_each_value(db: sqlite3.Connection) -> None:
    assert dict(distinct(db, "status")) == {
        "ACTIVE": N // 4 + (1 if N % 4 > 2 else 0),
        "DELIVERED": sum(1 for n in range(N) if n % 4 in (0, 1)),
        "FAILED": N // 4,
    }
    with pytest.raises(ValueError, match="no value list"):
        distinct(db, "message")


def test_per_day_counts_match_a_direct_query(db: sqlite3.Connection) -> None:
    flt = LogFilter(type="SMS")
    chart = per_day(db, flt, ZONE)
    rows = db.sql.execute(
        "SELECT date_lodged, status FROM log_records WHERE type = 'SMS'"
    ).fetchall()
    direct: dict[tuple[str, str], int] = {}
    for lodged, status in rows:
        day = from_us(lodged).astimezone(ZONE).date().isoformat()
        direct[(day, status)] = direct.get((day, status), 0) + 1
    charted = {
        (day.isoformat(), status): n
        for status, counts in chart.series.items()
        for day, n in zip(chart.days, counts, strict=True)
        if n
    }
    assert charted == direct
    assert chart.total() == len(rows)
    assert chart.days == sorted(chart.days)
    assert len(set(chart.days)) == len(chart.days)


def test_per_day_counts_follow_the_local_day_across_a_daylight_saving_change(
    tmp_path: Path,
) -> None:
    # Sydney leaves daylight saving at 03:00 on 6 April 2025 (back to 02:00).
    times = ["2025-04-05T23:30:00+11:00", "2025-04-06T02:30:00+11:00", "2025-04-06T23:59:00+10:00"]
    times.append("2025-04-07T00:00:00+10:00")
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(i, dateLodged=t) for i, t in enumerate(times)])
        chart = per_day(reading(store), LogFilter(), ZONE)
    assert [d.isoformat() for d in chart.days] == ["2025-04-05", "2025-04-06", "2025-04-07"]
    assert chart.series["DELIVERED"] == [1, 2, 1]


def test_an_export_writes_exactly_the_filtered_rows_in_view_order(
    db: sqlite3.Connection, tmp_path: Path
) -> None:
    query = LogQuery(LogFilter(status="FAILED", text="parcel"), LogSort("to_number", False))
    target = tmp_path / "out.csv"
    written = export_csv(
        db, query, target, columns=["message_id", "to_number", "date_lodged"], zone=UTC
    )
    with target.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.reader(handle))
    assert lines[0] == ["Message ID", "Recipient", "Lodged"]
    assert [line[0] for line in lines[1:]] == expected(db, query)
    assert written == len(lines) - 1
    first = db.sql.execute(
        "SELECT date_lodged FROM log_records WHERE message_id = ?", (lines[1][0],)
    ).fetchone()[0]
    assert time_us(lines[1][2], UTC) == first


def test_an_export_defuses_cells_a_spreadsheet_would_run(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1, message='=HYPERLINK("http://x")', to="+61400000001")])
        target = tmp_path / "out.csv"
        export_csv(reading(store), LogQuery(), target, columns=["message", "to_number"], zone=UTC)
    with target.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[1] == ['\'=HYPERLINK("http://x")', "'+61400000001"]


def exported_messages(tmp_path: Path, *messages: str) -> str:
    """The text of an export of records holding `messages`, with their senders' names."""
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(n, message=m, sender=m) for n, m in enumerate(messages, 1)])
        target = tmp_path / "out.csv"
        export_csv(reading(store), LogQuery(), target, columns=["message", "sender"], zone=UTC)
    return target.read_text(encoding="utf-8-sig")


def test_an_export_runs_no_formula_whichever_delimiter_it_is_read_with(tmp_path: Path) -> None:
    text = exported_messages(tmp_path, *HOSTILE_CELLS)
    assert formulas_seen(text) == []
    assert sorted(restored(row[0]) for row in read_back(text)[1:]) == sorted(HOSTILE_CELLS)


def test_an_export_keeps_text_with_delimiters_as_it_was(tmp_path: Path) -> None:
    rows = read_back(exported_messages(tmp_path, PLAIN_WITH_DELIMITERS))
    assert rows[1] == [PLAIN_WITH_DELIMITERS, PLAIN_WITH_DELIMITERS]


def test_a_cancelled_export_leaves_no_file(db: sqlite3.Connection, tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(ExportCancelled):
        export_csv(db, LogQuery(), target, columns=["message_id"], zone=UTC, cancelled=lambda: True)
    assert list(tmp_path.iterdir()) == []


def test_window_rows_carry_their_row_id(tmp_path: Path) -> None:
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1)])
        (row,) = fetch_window(reading(store), LogQuery(), 0, 1, 1)
    assert isinstance(row[ID_INDEX], int)
