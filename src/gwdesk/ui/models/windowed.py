"""A table model over SQLite rows held a window at a time: what the Logs and Replies tables share.

A table of a million rows cannot hold a million Python objects, and the GUI
thread must never wait on SQLite. So the row count is fixed by an SQL `COUNT`
(the subclass sets it with `_reset`), and rows live in windows of `window_rows`,
at most `max_windows` of them, least recently used dropped first. `row(n)` answers
from a held window or asks for the missing one and returns None (the cell shows a
placeholder); the windows asked for during one paint are read on the reader
thread (`tasks.StoreReads`) right after it, and land with one `dataChanged` each.

A new query or re-read calls `_supersede`: every read not yet answered is dropped
(cancelled before it starts, or its late answer discarded) and the statement
running now is interrupted, so old rows never land in a new listing.

A subclass says how one window is read (`window_read`) and sets the class
attributes below; everything else about windows lives here, once.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Signal,
)

from gwdesk.app.profile_data import SharedData
from gwdesk.domain.errors import ReadInterrupted, StoreError
from gwdesk.ui.tasks import Read, StoreReads, Ticket
from gwdesk.ui.timers import single_shot

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex


class WindowedModel(QAbstractTableModel, Generic[R]):
    """Rows `0 … total-1`, read from SQLite `window_rows` at a time off the GUI thread."""

    failed = Signal(str)
    """A read failed (an operator-facing sentence)."""

    window_rows: ClassVar[int] = 500
    max_windows: ClassVar[int] = 24
    max_in_flight: ClassVar[int | None] = None
    """With more windows than this on their way, those no longer wanted are cancelled
    (scrolled past before their turn); None: every window asked for is read."""
    partial_windows: ClassVar[bool] = False
    """Rows are appended live, so a held window may be shorter than it will be: a row
    beyond its end is read again when asked for. Without it a held window is final."""
    what: ClassVar[str] = "The table"
    """What a failed read names ("… could not be read")."""

    def __init__(
        self,
        path: Path | str,
        reader: str,
        parent: QObject | None = None,
        *,
        shared: SharedData | None = None,
    ) -> None:
        super().__init__(parent)
        self._reads = StoreReads(path, reader, self, shared=shared)
        self._total = 0
        self._windows: OrderedDict[int, list[R]] = OrderedDict()
        self._wanted: set[int] = set()
        self._in_flight: dict[int, Ticket] = {}
        self._tick = single_shot(self, 0, self._fetch_wanted)

    def window_read(self, window: int) -> Read[list[R]]:
        """The read of window `window` for the query shown now (run on the reader)."""
        raise NotImplementedError

    # ---- Qt ----------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._total

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Answered here in one Python call: Qt's own `index` asks `rowCount` and
        `columnCount` (both Python) for every cell a view paints, and each call into
        Python waits for the GIL the listener's threads hold under a flood."""
        if parent.isValid() or not (0 <= row < self._total and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    # ---- rows --------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return self._total

    def row(self, number: int) -> R | None:
        """Row `number` if its window is held; otherwise None, and the window is asked for."""
        if not 0 <= number < self._total:
            return None
        window, offset = divmod(number, self.window_rows)
        rows = self._windows.get(window)
        if rows is None or (self.partial_windows and offset >= len(rows)):
            self._wanted.add(window)
            self._tick.start()
            return None
        self._windows.move_to_end(window)
        return rows[offset] if offset < len(rows) else None

    def has_rows(self, first: int, last: int) -> bool:
        """Whether rows `first … last` are all held (tests and benchmarks wait on this)."""
        size = self.window_rows
        last = min(last, self._total - 1)
        if last < first:
            return True
        for window in range(max(0, first) // size, last // size + 1):
            rows = self._windows.get(window)
            if rows is None:
                return False
            if self.partial_windows and len(rows) <= min(last, window * size + size - 1) % size:
                return False
        return True

    def _fetch_wanted(self) -> None:
        wanted, self._wanted = self._wanted, set()
        limit = self.max_in_flight
        if limit is not None and len(self._in_flight) + len(wanted) > limit:
            for window, ticket in list(self._in_flight.items()):
                if window not in wanted:
                    ticket.cancel()  # scrolled past before its turn
                    del self._in_flight[window]
        due = wanted - self._in_flight.keys()
        if not self.partial_windows:
            due -= self._windows.keys()
        for window in sorted(due):
            self._in_flight[window] = self._fetch(window)

    def _fetch(self, window: int) -> Ticket:
        """Read one window on the reader; it lands only if nothing superseded it meanwhile."""

        def done(rows: Any, error: BaseException | None) -> None:
            if self._in_flight.get(window) is ticket:
                del self._in_flight[window]
            if error is not None:
                self._report(error)
                return
            self._store(window, rows)
            first = window * self.window_rows
            last = min(first + len(rows), self._total) - 1
            if last >= first:
                self.dataChanged.emit(
                    self.index(first, 0), self.index(last, self.columnCount() - 1)
                )

        ticket = self._reads.submit(self.window_read(window), done)
        return ticket

    def _store(self, window: int, rows: list[R]) -> None:
        self._windows[window] = rows
        self._windows.move_to_end(window)
        while len(self._windows) > self.max_windows:
            self._windows.popitem(last=False)

    def _report(self, error: BaseException) -> None:
        if isinstance(error, ReadInterrupted):
            return  # superseded on purpose
        if isinstance(error, StoreError):
            self.failed.emit(f"{self.what} could not be read: {error}.")
            return
        raise error

    # ---- new listings ----------------------------------------------------------------------

    def _supersede(self) -> None:
        """A new listing is coming: drop every read on its way (none of them answers)."""
        self._in_flight.clear()
        self._wanted.clear()
        self._reads.supersede()

    def _reset(self, total: int, windows: dict[int, list[R]]) -> None:
        """Show a new listing (its count and the windows read with it) in one reset."""
        self.beginResetModel()
        self._total = total
        self._windows = OrderedDict(sorted(windows.items()))
        self._wanted.clear()
        self.endResetModel()

    def close(self) -> None:
        self._supersede()
        self._tick.stop()
        self._reads.close()
