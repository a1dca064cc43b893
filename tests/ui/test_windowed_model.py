"""The windowed model the Logs and Replies tables share, over a plain table in a real file.

Small windows (10 rows) so the edges, the eviction and the reader's queue are easy
to reach; the reader thread and SQLite are the real ones.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt

from gwdesk.store.reader import Reading
from gwdesk.ui.models.windowed import WindowedModel
from gwdesk.ui.tasks import Read
from tests.ui.conftest import wait_until

SIZE = 10


class Numbers(WindowedModel[int]):
    """Rows `n` of table `items`, in order; notes each window it reads."""

    window_rows = SIZE
    max_windows = 3

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(path, "test", parent)
        self.path = path
        self.read: list[int] = []
        self.gate: threading.Event | None = None
        """When set, reads wait for it (to hold the reader busy)."""

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 1

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        return self.row(index.row()) if role == Qt.ItemDataRole.DisplayRole else None

    def window_read(self, window: int) -> Read[list[int]]:
        gate = self.gate

        def read(reading: Reading) -> list[int]:
            if gate is not None:
                gate.wait(10)
            self.read.append(window)
            found = reading.sql.execute(
                "SELECT n FROM items ORDER BY n LIMIT ? OFFSET ?", (SIZE, window * SIZE)
            )
            return [int(n) for (n,) in found]

        return read

    def show(self, total: int) -> None:
        """A new listing of `total` rows, nothing read yet (as a new query lands)."""
        self._supersede()
        self._reset(total, {})

    def grow(self, count: int) -> None:
        """Rows appended at the end (as a live delivery does)."""
        self.beginInsertRows(QModelIndex(), self._total, self._total + count - 1)
        self._total += count
        self.endInsertRows()


class Growing(Numbers):
    partial_windows = True


class Hasty(Numbers):
    max_in_flight = 3


def add_items(path: Path, numbers: range) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS items (n INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO items VALUES (?)", [(n,) for n in numbers])
        conn.commit()
    finally:
        conn.close()


Make = Callable[..., Numbers]


@pytest.fixture
def make(ui: Any, tmp_path: Path) -> Iterator[Make]:
    """A model of `kind` over a table of `count` rows, listing them all."""
    models: list[Numbers] = []

    def build(count: int, kind: type[Numbers] = Numbers) -> Numbers:
        path = tmp_path / "items.sqlite3"
        add_items(path, range(count))
        model = kind(path)
        model.show(count)
        models.append(model)
        return model

    yield build
    for model in models:
        model.close()


async def held(model: Numbers, rows: list[int]) -> list[int | None]:
    for number in rows:
        model.row(number)  # asks for the window, as painting does
    await wait_until(lambda: all(model.has_rows(r, r) for r in rows), message="windows")
    return [model.row(r) for r in rows]


async def test_rows_at_the_edges_of_windows_are_the_right_ones(make: Make) -> None:
    model = make(2 * SIZE + 3)
    edges = [0, SIZE - 1, SIZE, 2 * SIZE - 1, 2 * SIZE, 2 * SIZE + 2]
    assert await held(model, edges) == edges
    assert model.has_rows(0, 2 * SIZE + 2)
    assert sorted(model.read) == [0, 1, 2]


async def test_rows_outside_the_table_are_nothing_and_read_nothing(make: Make) -> None:
    model = make(2 * SIZE + 3)
    assert model.row(-1) is None
    assert model.row(2 * SIZE + 3) is None
    await held(model, [0])
    assert model.read == [0]


async def test_the_least_recently_used_window_is_dropped_first(make: Make) -> None:
    model = make(4 * SIZE)
    await held(model, [0, SIZE, 2 * SIZE])
    model.row(0)  # window 0 used again: window 1 is now the oldest
    await held(model, [3 * SIZE])
    assert model.has_rows(0, 0)
    assert not model.has_rows(SIZE, SIZE)
    assert model.has_rows(2 * SIZE, 4 * SIZE - 1)


async def test_a_window_that_lands_after_a_new_listing_is_dropped(make: Make) -> None:
    model = make(2 * SIZE + 3)
    gate = model.gate = threading.Event()
    model.row(0)
    await wait_until(lambda: model._in_flight, message="window 0 on its way")
    model.show(2 * SIZE + 3)  # a new query: window 0 of the old one must not land
    model.gate = None
    gate.set()
    await held(model, [SIZE])  # the reader runs in order: window 0 was answered first
    assert model.read == [0, 1]
    assert not model.has_rows(0, 0)


async def test_windows_scrolled_past_before_their_turn_are_never_read(make: Make) -> None:
    model = make(6 * SIZE, Hasty)
    gate = model.gate = threading.Event()
    model.row(0)
    await wait_until(lambda: model._in_flight, message="window 0 on its way")
    model.row(SIZE)
    model.row(2 * SIZE)
    await wait_until(lambda: len(model._in_flight) == 3, message="windows queued")
    model.row(5 * SIZE)  # scrolled far on: windows 1 and 2 are no longer wanted
    # Their reads are dropped on the model's next tick; the reader is let go only then
    # (let go sooner, it could start window 1 before the tick: a race, not the model).
    await wait_until(lambda: 5 in model._in_flight, message="window 5 asked for")
    model.gate = None
    gate.set()
    await held(model, [5 * SIZE])
    assert model.read == [0, 5]


async def test_without_partial_windows_a_held_short_window_is_final(make: Make) -> None:
    model = make(5)
    await held(model, [0])
    add_items(model.path, range(5, 8))
    model.grow(3)
    assert model.row(6) is None
    assert not model._wanted  # not asked for again: a held window is final here
    assert model.has_rows(0, 7)


async def test_a_short_window_is_read_again_when_rows_grow_past_it(make: Make) -> None:
    model = make(5, Growing)
    await held(model, [4])
    add_items(model.path, range(5, 8))
    model.grow(3)
    assert not model.has_rows(0, 7)
    assert await held(model, [7]) == [7]
    assert model.read == [0, 0]


async def test_a_failed_read_is_reported_in_words(make: Make) -> None:
    model = make(5)
    messages: list[str] = []
    model.failed.connect(messages.append)
    conn = sqlite3.connect(model.path)
    conn.execute("DROP TABLE items")
    conn.close()
    model.row(0)
    await wait_until(lambda: messages, message="the failure")
    assert messages == ["The table could not be read: no such table: items."]
