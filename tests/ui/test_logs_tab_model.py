"""The Logs table model: right rows at window edges, and right after the cache grows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from gwdesk.logs.cache import LogCache, LogCacheWriter
from gwdesk.logs.query import LogFilter, LogQuery, LogSort
from gwdesk.logs.rows import FIELDS
from gwdesk.store.local import LocalStore
from gwdesk.ui.logs.table import WINDOW, Anchor, LogTableModel, Refreshed, plan_first_row
from tests.ui.conftest import wait_until
from tests.unit.logcache_support import record, write

TO = next(i for i, f in enumerate(FIELDS) if f.column == "to_number")


def sample(n: int) -> dict[str, Any]:
    return record(
        n,
        status=("DELIVERED", "FAILED", "ACTIVE")[n % 3],
        to=f"61400{n % 89:06d}",
        message=f"{'parcel' if n % 2 else 'payment'} note {n}",
    )


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[tuple[Path, LogCacheWriter]]:
    path = tmp_path / "profile.sqlite3"
    store = LocalStore(path)
    writer = LogCache(store).writer()
    write(writer, [sample(n) for n in range(1234)])
    yield path, writer
    writer.close()
    store.close()


def expected(path: Path, query: LogQuery) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT message_id, status, to_number, message, date_lodged, id FROM log_records"
        ).fetchall()
    finally:
        conn.close()
    flt = query.filter
    kept = [
        r
        for r in rows
        if (flt.status is None or r[1] == flt.status) and flt.text.lower() in r[3].lower()
    ]
    key = {"date_lodged": 4, "to_number": 2, "status": 1}[query.sort.column]
    kept.sort(key=lambda r: (r[key], r[4], r[5]), reverse=query.sort.descending)
    return [r[0] for r in kept]


async def loaded(model: LogTableModel, query: LogQuery) -> None:
    model.set_query(query)
    await wait_until(lambda: not model.pending, message="the query to load")


async def ids(model: LogTableModel, rows: list[int]) -> list[str | None]:
    for row in rows:
        model.row(row)  # asks for the window, as painting does
    await wait_until(lambda: all(model.has_rows(r, r) for r in rows), message="windows")
    return [model.message_id_at(r) for r in rows]


async def test_rows_at_the_edges_of_windows_are_the_right_ones(
    ui: Any, cache: tuple[Path, LogCacheWriter]
) -> None:
    path, _writer = cache
    model = LogTableModel(path)
    try:
        query = LogQuery()
        await loaded(model, query)
        want = expected(path, query)
        assert model.rowCount() == len(want) == 1234
        edges = [0, 1, WINDOW - 1, WINDOW, WINDOW + 1, 2 * WINDOW - 1, 2 * WINDOW, 1232, 1233]
        assert await ids(model, edges) == [want[r] for r in edges]
    finally:
        model.close()


async def test_a_row_out_of_range_is_nothing(ui: Any, cache: tuple[Path, LogCacheWriter]) -> None:
    path, _writer = cache
    model = LogTableModel(path)
    try:
        await loaded(model, LogQuery())
        assert model.row(-1) is None
        assert model.row(1234) is None
        assert model.data(model.index(1234, 0)) is None
    finally:
        model.close()


async def test_sorting_by_a_header_click_reorders_by_sql(
    ui: Any, cache: tuple[Path, LogCacheWriter]
) -> None:
    path, _writer = cache
    model = LogTableModel(path)
    try:
        await loaded(model, LogQuery())
        model.sort(TO, Qt.SortOrder.AscendingOrder)
        await wait_until(lambda: not model.pending)
        want = expected(path, LogQuery(sort=LogSort("to_number", descending=False)))
        rows = [0, 499, 500, 1233]
        assert await ids(model, rows) == [want[r] for r in rows]
        assert model.data(model.index(0, TO)) == "61400000000"
    finally:
        model.close()


async def test_filter_sort_and_new_records_together_stay_right(
    ui: Any, cache: tuple[Path, LogCacheWriter]
) -> None:
    path, writer = cache
    model = LogTableModel(path)
    try:
        query = LogQuery(LogFilter(status="FAILED", text="parcel"), LogSort("to_number", True))
        await loaded(model, query)
        before = expected(path, query)
        assert model.rowCount() == len(before)
        selected = before[100]
        # The sync adds records (some fit the filter, some sort before the selected one)
        # and changes the status of others.
        write(writer, [sample(n) for n in range(1234, 1800)])
        write(writer, [sample(n) | {"status": "FAILED"} for n in range(0, 60, 3)])
        results: list[Refreshed] = []
        model.refreshed.connect(results.append)
        model.forget_counts()
        model.refresh(Anchor(selected=selected, selected_offset=3, top=before[97], first_row=97))
        await wait_until(lambda: bool(results), message="the refresh")
        after = expected(path, query)
        assert model.rowCount() == len(after) > len(before)
        assert results[0].selected_row == after.index(selected)
        assert results[0].first_row == after.index(selected) - 3
        rows = [0, results[0].first_row, len(after) // 2, len(after) - 1]
        assert await ids(model, rows) == [after[r] for r in rows]
    finally:
        model.close()


def test_a_refresh_keeps_the_view_at_the_top_when_it_was_there() -> None:
    assert plan_first_row(Anchor(first_row=0), 100, None, None) == 0
    assert plan_first_row(Anchor(top="x", first_row=50), 100, None, 60) == 60
    assert plan_first_row(Anchor(selected="s", selected_offset=2, first_row=5), 100, 40, 9) == 38
    assert plan_first_row(Anchor(first_row=500), 100, None, None) == 99
