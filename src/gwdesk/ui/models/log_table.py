"""The Logs tab's table model: a million cached records without a million Python objects.

Design (fixed row count, windowed data; no `canFetchMore`):

- `rowCount()` is the view's SQL `COUNT`, cached per filter until the cache changes,
  so the scroll bar is true from the start and "scroll to the end" is one jump.
- Rows live in windows of `WINDOW` rows (tuples, as SQLite returns them), at most
  `MAX_WINDOWS` of them, least recently used dropped first. `data()` for a row whose
  window is missing asks for it and shows a placeholder; the windows asked for
  during one paint are fetched on the reader thread (`LogReader`) after it, and a
  window scrolled past before its turn is never read.
- Filtering and sorting are SQL (`gwdesk.store.logcache_query`). A new filter or
  sort is one job (count and first window) and then one model reset; until it
  lands the old rows stay on screen.
- A refresh after a sync is one job too: the new count, the new rows of the
  records the operator is looking at (the selected one and the top visible one,
  by messageId) and the windows the view will show there, then one reset. The
  table never flashes empty and the tab puts the selection and the scroll position
  back on the same records (`Refreshed`), wherever new rows were added.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from gwdesk.store.logcache_query import (
    LogFilter,
    LogQuery,
    LogSort,
    count,
    fetch_window,
    position,
)
from gwdesk.store.logcache_rows import FIELDS, RECEIPT_RAW_INDEX, from_us
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.log_reader import LogReader, Skipped, Ticket

Index = QModelIndex | QPersistentModelIndex
Row = tuple[Any, ...]
WINDOW: Final = 500
MAX_WINDOWS: Final = 24
#: More windows than this on their way, and those no longer on screen are dropped.
MAX_IN_FLIGHT: Final = 4
PLACEHOLDER: Final = "…"
MESSAGE_ID: Final = next(i for i, f in enumerate(FIELDS) if f.column == "message_id")
STATUS: Final = next(i for i, f in enumerate(FIELDS) if f.column == "status")


@dataclass(frozen=True, slots=True)
class Anchor:
    """What the operator is looking at, to be kept in place by a refresh."""

    selected: str | None = None
    selected_offset: int = -1
    """The selected row's distance from the first visible row; -1 when it is not visible."""
    top: str | None = None
    first_row: int = 0
    visible_rows: int = 40


@dataclass(frozen=True, slots=True)
class Refreshed:
    first_row: int
    selected_row: int | None


def plan_first_row(anchor: Anchor, total: int, selected: int | None, top: int | None) -> int:
    """Where the view should start after a refresh so the same records stay in sight."""
    if selected is not None and 0 <= anchor.selected_offset < anchor.visible_rows:
        first = selected - anchor.selected_offset
    elif anchor.first_row == 0:
        first = 0  # at the top: stay there and see the new records come in
    elif top is not None:
        first = top
    else:
        first = anchor.first_row
    return max(0, min(first, total - 1))


def cell_text(column: int, row: Row) -> str:
    field = FIELDS[column]
    value = row[column]
    if field.kind in ("time", "receipt") and isinstance(value, int):
        return local_time(from_us(value))
    if value is None:
        raw = row[RECEIPT_RAW_INDEX] if field.kind == "receipt" else None
        return "" if raw is None else str(raw)
    if field.column == "message":
        return " ".join(str(value).split())
    return str(value)


class LogTableModel(QAbstractTableModel):
    """Rows of the log cache for a `LogQuery`, read a window at a time off the GUI thread."""

    loaded = Signal(int)
    """A new query's count and first rows are in (the count)."""
    refreshed = Signal(object)
    """A refresh landed (`Refreshed`): where to scroll and what to select."""
    failed = Signal(str)

    def __init__(self, path: Path | str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reader = LogReader(path, "table", self)
        self.query = LogQuery()
        self._generation = 0
        self._total = 0
        self._windows: OrderedDict[int, list[Row]] = OrderedDict()
        self._wanted: set[int] = set()
        self._in_flight: dict[int, Ticket] = {}
        self._counts: dict[LogFilter, int] = {}
        self._refreshing = False
        self._again: Anchor | None = None
        self.pending = False
        """A new query or a refresh is on its way."""
        self._tick = QTimer(self)
        self._tick.setSingleShot(True)
        self._tick.setInterval(0)
        self._tick.timeout.connect(self._fetch_wanted)

    # ---- Qt ----------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._total

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(FIELDS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role not in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
            Qt.ItemDataRole.ForegroundRole,
            Qt.ItemDataRole.TextAlignmentRole,
        ):
            return None
        column = index.column()
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if FIELDS[column].kind == "int":
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        row = self.row(index.row())
        if row is None:
            return PLACEHOLDER if role == Qt.ItemDataRole.DisplayRole and column == 0 else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return status_colour(row[STATUS]) if column == STATUS else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if FIELDS[column].column not in ("message", "extra", "replypath", "subject"):
                return None
            value = row[column]
            return None if value is None else str(value)[:2000]
        return cell_text(column, row)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(FIELDS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return FIELDS[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return FIELDS[section].tip or None
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if 0 <= column < len(FIELDS):
            descending = order == Qt.SortOrder.DescendingOrder
            self.set_query(replace(self.query, sort=LogSort(FIELDS[column].column, descending)))

    # ---- rows --------------------------------------------------------------------------------

    def row(self, number: int) -> Row | None:
        """Row `number` if its window is here; otherwise None, and the window is asked for."""
        if not 0 <= number < self._total:
            return None
        window = number // WINDOW
        rows = self._windows.get(window)
        if rows is None:
            self._wanted.add(window)
            self._tick.start()
            return None
        self._windows.move_to_end(window)
        offset = number - window * WINDOW
        return rows[offset] if offset < len(rows) else None

    def message_id_at(self, number: int) -> str | None:
        row = self.row(number)
        return None if row is None else str(row[MESSAGE_ID])

    def row_of(self, message_id: str) -> int | None:
        """The row of a record among the windows held (the view's neighbourhood)."""
        for window, rows in self._windows.items():
            for offset, row in enumerate(rows):
                if row[MESSAGE_ID] == message_id:
                    return window * WINDOW + offset
        return None

    def has_rows(self, first: int, last: int) -> bool:
        """Whether rows `first … last` are all held (tests and benchmarks wait on this)."""
        last = min(last, self._total - 1)
        return (
            all(w in self._windows for w in range(max(0, first) // WINDOW, last // WINDOW + 1))
            if last >= first
            else True
        )

    def _fetch_wanted(self) -> None:
        wanted, self._wanted = self._wanted, set()
        if len(self._in_flight) + len(wanted) > MAX_IN_FLIGHT:
            for window, ticket in list(self._in_flight.items()):
                if window not in wanted:
                    ticket.cancel()  # scrolled past before its turn
                    del self._in_flight[window]
        generation, query, total = self._generation, self.query, self._total
        for window in sorted(wanted - self._windows.keys() - self._in_flight.keys()):
            self._in_flight[window] = self._fetch(generation, query, total, window)

    def _fetch(self, generation: int, query: LogQuery, total: int, window: int) -> Ticket:
        def job(conn: sqlite3.Connection) -> list[Row]:
            return fetch_window(conn, query, window * WINDOW, WINDOW, total)

        def done(rows: Any, error: BaseException | None) -> None:
            if self._in_flight.get(window) is ticket:
                del self._in_flight[window]
            if generation != self._generation or isinstance(error, Skipped):
                return
            if error is not None:
                self._report(error)
                return
            self._store(window, rows)
            first = window * WINDOW
            last = min(first + len(rows), self._total) - 1
            if last >= first:
                self.dataChanged.emit(self.index(first, 0), self.index(last, len(FIELDS) - 1))

        ticket = self._reader.submit(job, done)
        return ticket

    def _store(self, window: int, rows: list[Row]) -> None:
        self._windows[window] = rows
        self._windows.move_to_end(window)
        while len(self._windows) > MAX_WINDOWS:
            self._windows.popitem(last=False)

    def _report(self, error: BaseException) -> None:
        if isinstance(error, sqlite3.OperationalError) and "interrupt" in str(error):
            return  # superseded on purpose
        if isinstance(error, sqlite3.Error):
            self.failed.emit(f"The log cache could not be read: {error}.")
            return
        raise error

    # ---- queries and refreshes -----------------------------------------------------------------

    def _supersede(self) -> int:
        self._generation += 1
        for ticket in self._in_flight.values():
            ticket.cancel()
        self._in_flight.clear()
        self._wanted.clear()
        self._reader.interrupt()
        return self._generation

    def set_query(self, query: LogQuery) -> None:
        """Show another filter or sort: the table changes when its first rows are in."""
        generation = self._supersede()
        self.query = query
        self.pending = True
        self._refreshing = False
        known = self._counts.get(query.filter)

        def job(conn: sqlite3.Connection) -> tuple[int, list[Row]]:
            total = known if known is not None else count(conn, query.filter)
            return total, fetch_window(conn, query, 0, WINDOW, total)

        def done(result: Any, error: BaseException | None) -> None:
            if generation != self._generation or isinstance(error, Skipped):
                return
            self.pending = False
            if error is not None:
                self._report(error)
                return
            total, rows = result
            self._counts[query.filter] = total
            self._reset(total, {0: rows} if rows else {})
            self.loaded.emit(total)

        self._reader.submit(job, done)

    def refresh(self, anchor: Anchor) -> None:
        """Re-read the view after the cache changed, keeping `anchor`'s records in place."""
        if self._refreshing:
            self._again = anchor  # one refresh at a time; the latest wish runs next
            return
        generation = self._generation
        query = self.query
        self._refreshing = True
        self.pending = True

        def job(conn: sqlite3.Connection) -> tuple[int, int | None, int, dict[int, list[Row]]]:
            total = count(conn, query.filter)
            selected = position(conn, query, anchor.selected, total) if anchor.selected else None
            top = None
            if anchor.top and anchor.first_row > 0:
                top = position(conn, query, anchor.top, total)
            first = plan_first_row(anchor, total, selected, top)
            windows: dict[int, list[Row]] = {}
            last = min(total - 1, first + anchor.visible_rows)
            for window in range(first // WINDOW, last // WINDOW + 1) if total else ():
                windows[window] = fetch_window(conn, query, window * WINDOW, WINDOW, total)
            return total, selected, first, windows

        def done(result: Any, error: BaseException | None) -> None:
            self._refreshing = False
            again, self._again = self._again, None
            if generation == self._generation and not isinstance(error, Skipped):
                self.pending = False
                if error is not None:
                    self._report(error)
                else:
                    total, selected, first, windows = result
                    self._counts = {query.filter: total}
                    self._reset(total, windows)
                    self.refreshed.emit(Refreshed(first, selected))
            if again is not None:
                self.refresh(again)

        self._reader.submit(job, done)

    def _reset(self, total: int, windows: dict[int, list[Row]]) -> None:
        self.beginResetModel()
        self._total = total
        self._windows = OrderedDict(sorted(windows.items()))
        self._wanted.clear()
        self.endResetModel()

    def forget_counts(self) -> None:
        """The cache changed: counts of other filters are no longer right."""
        self._counts.clear()

    def close(self) -> None:
        self._supersede()
        self._tick.stop()
        self._reader.close()
