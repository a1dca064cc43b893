"""The Logs tab's table model: a million cached records without a million Python objects.

Design (fixed row count, windowed data; no `canFetchMore`):

- `rowCount()` is the view's SQL `COUNT`, cached per filter until the cache changes,
  so the scroll bar is true from the start and "scroll to the end" is one jump.
- Rows live in windows of `WINDOW` rows (tuples, as SQLite returns them), at most
  `MAX_WINDOWS` of them, least recently used dropped first. `data()` for a row whose
  window is missing asks for it and shows a placeholder; the windows asked for
  during one paint are fetched on the reader thread (`StoreReads`) after it, and a
  window scrolled past before its turn is never read (`windowed.WindowedModel`,
  shared with the Replies table).
- Filtering and sorting are SQL (`gwdesk.logs.query`). A new filter or
  sort is one job (count and first window) and then one model reset; until it
  lands the old rows stay on screen.
- A refresh after a sync is one job too: the new count, the new rows of the
  records the operator is looking at (the selected one and the top visible one,
  by messageId) and the windows the view will show there, then one reset. The
  table never flashes empty and the tab puts the selection and the scroll position
  back on the same records (`Refreshed`), wherever new rows were added.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from gwdesk.logs.query import (
    LogFilter,
    LogQuery,
    LogSort,
    Reading,
    count,
    fetch_window,
    position,
)
from gwdesk.logs.rows import FIELDS, RECEIPT_RAW_INDEX, from_us
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.windowed import WindowedModel
from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.tasks import Read

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
        return "" if raw is None else visible(str(raw))
    if field.column == "message":
        return " ".join(visible(str(value)).split())
    return visible(str(value))


class LogTableModel(WindowedModel[Row]):
    """Rows of the log cache for a `LogQuery`, read a window at a time off the GUI thread."""

    loaded = Signal(int)
    """A new query's count and first rows are in (the count)."""
    refreshed = Signal(object)
    """A refresh landed (`Refreshed`): where to scroll and what to select."""

    window_rows = WINDOW
    max_windows = MAX_WINDOWS
    max_in_flight = MAX_IN_FLIGHT
    what = "The log cache"

    def __init__(self, path: Path | str, parent: QObject | None = None) -> None:
        super().__init__(path, "table", parent)
        self.query = LogQuery()
        self._counts: dict[LogFilter, int] = {}
        self._refreshing = False
        self._again: Anchor | None = None
        self.pending = False
        """A new query or a refresh is on its way."""

    # ---- Qt ----------------------------------------------------------------------------------

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
            return None if value is None else tooltip(str(value)[:2000]) or None
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

    def window_read(self, window: int) -> Read[list[Row]]:
        query, total = self.query, self._total

        def read(reading: Reading) -> list[Row]:
            return fetch_window(reading, query, window * WINDOW, WINDOW, total)

        return read

    # ---- queries and refreshes -----------------------------------------------------------------

    def set_query(self, query: LogQuery) -> None:
        """Show another filter or sort: the table changes when its first rows are in."""
        self._supersede()  # a refresh on its way is dropped with the windows
        self.query = query
        self.pending = True
        self._refreshing = False
        self._again = None
        known = self._counts.get(query.filter)

        def read(reading: Reading) -> tuple[int, list[Row]]:
            total = known if known is not None else count(reading, query.filter)
            return total, fetch_window(reading, query, 0, WINDOW, total)

        def done(result: Any, error: BaseException | None) -> None:
            self.pending = False
            if error is not None:
                self._report(error)
                return
            total, rows = result
            self._counts[query.filter] = total
            self._reset(total, {0: rows} if rows else {})
            self.loaded.emit(total)

        self._reads.submit(read, done)

    def refresh(self, anchor: Anchor) -> None:
        """Re-read the view after the cache changed, keeping `anchor`'s records in place."""
        if self._refreshing:
            self._again = anchor  # one refresh at a time; the latest wish runs next
            return
        query = self.query
        self._refreshing = True
        self.pending = True

        def read(reading: Reading) -> tuple[int, int | None, int, dict[int, list[Row]]]:
            total = count(reading, query.filter)
            selected = None
            if anchor.selected:
                selected = position(reading, query, anchor.selected, total)
            top = None
            if anchor.top and anchor.first_row > 0:
                top = position(reading, query, anchor.top, total)
            first = plan_first_row(anchor, total, selected, top)
            windows: dict[int, list[Row]] = {}
            last = min(total - 1, first + anchor.visible_rows)
            for window in range(first // WINDOW, last // WINDOW + 1) if total else ():
                windows[window] = fetch_window(reading, query, window * WINDOW, WINDOW, total)
            return total, selected, first, windows

        def done(result: Any, error: BaseException | None) -> None:
            self._refreshing = False
            again, self._again = self._again, None
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

        self._reads.submit(read, done)

    def forget_counts(self) -> None:
        """The cache changed: counts of other filters are no longer right."""
        self._counts.clear()
