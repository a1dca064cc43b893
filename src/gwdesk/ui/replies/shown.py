"""The Replies table as the view paints it: the rows on screen held as Qt's own items.

`RepliesTableModel` holds the replies (windows of the store, live growth, searches),
but a view that paints it calls into Python twice for every cell it paints (`index`,
then `multiData`): about 350 calls a paint, and under a flood each one waits for the
GIL the listener's threads hold, so a repaint after each drain took several frames.
So the view paints `ShownRows`, a `QStandardItemModel` with the same rows, and Qt
answers the paint from its own items without calling Python at all.

Only the rows about to be painted hold items: an event filter on the viewport (one
call into Python a paint) sees the region first and fills its rows in from the
model's cells (`RepliesTableModel.painted`, worked out once per row; a tooltip when
the pointer rests on a cell), and drops the items of rows far off screen, so it holds about a screenful however many replies
there are (its row count costs Qt a few pointers a row). Rows are appended and
reset as the model's are; a change of the model's cells (a window read, a name, the
opt-out marks) is filled in again at the next paint. Row numbers are the model's, so
the tab reads a row with `RepliesTableModel.row` whatever the view's index says.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QHelpEvent, QPaintEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QTableView

from gwdesk.ui.replies.table import COLUMN_TIPS, COLUMNS, Painted, RepliesTableModel

MARGIN: Final = 100
"""Rows beyond the painted ones that keep their items (a short scroll refills nothing)."""
FLAGS: Final = (
    Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
)
"""What a table model's cell is by default: read-only, no children."""
Index = QModelIndex | QPersistentModelIndex


class ShownRows(QStandardItemModel):
    """`source`'s rows for `view` to paint: items for the rows on screen only."""

    def __init__(self, source: RepliesTableModel, view: QTableView) -> None:
        super().__init__(source.total, len(COLUMNS), view)
        for column, (title, tip) in enumerate(zip(COLUMNS, COLUMN_TIPS, strict=True)):
            header = QStandardItem(title)
            header.setToolTip(tip)
            self.setHorizontalHeaderItem(column, header)
        self.source = source
        self._view = view
        self._filled: dict[int, Painted] = {}
        """The cells each row's items show now, by row number."""
        self._placeholder = source.placeholder()
        source.rowsInserted.connect(self._inserted)
        source.modelReset.connect(self._reset)
        source.dataChanged.connect(self._changed)
        view.viewport().installEventFilter(self)

    @property
    def held(self) -> int:
        """Rows holding items now (about a screenful, however many rows there are)."""
        return len(self._filled)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Paint and isinstance(event, QPaintEvent):
            self.fill(event.rect())
        elif kind == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._tip(self._view.indexAt(event.pos()))
        return False

    def fill(self, region: QRect) -> None:
        """Give the rows in `region` (of the viewport) the items they show now; drop the
        items of rows far from it. Signals stay blocked: the paint under way shows them."""
        view, total = self._view, self.rowCount()
        if total == 0:
            return
        first = view.rowAt(region.top())
        if first < 0:
            return  # below the last row
        last = view.rowAt(region.bottom())
        last = total - 1 if last < 0 else last
        blocked = self.blockSignals(True)
        try:
            for number in range(first, last + 1):
                row = self.source.row(number)  # a window not held is asked for
                painted = self._placeholder if row is None else self.source.painted(row)
                if self._filled.get(number) is not painted:
                    self._put(number, painted)
            self._drop_far(first - MARGIN, last + MARGIN)
        finally:
            self.blockSignals(blocked)

    def _drop_far(self, first: int, last: int) -> None:
        """Drop the items of rows outside `first … last`, but the current and selected
        rows' (taking an item also forgets the view's current index on it)."""
        selection = self._view.selectionModel()
        current = self._view.currentIndex().row()
        for number in [n for n in self._filled if not first <= n <= last]:
            if number == current or (selection is not None and selection.isRowSelected(number)):
                continue
            del self._filled[number]
            for column in range(len(COLUMNS)):
                self.takeItem(number, column)

    def _put(self, number: int, painted: Painted) -> None:
        """The row's items: a few calls into Qt a cell (tooltips wait until asked for)."""
        for column, (text, colour) in enumerate(painted):
            item = QStandardItem() if text is None else QStandardItem(text)
            item.setFlags(FLAGS)
            if colour is not None:
                item.setData(colour, Qt.ItemDataRole.ForegroundRole)
            self.setItem(number, column, item)
        self._filled[number] = painted

    def _tip(self, index: QModelIndex) -> None:
        """The tooltip of the cell under the pointer, put on its item just before the view
        asks for it (worked out for the cells pointed at, not for every cell painted)."""
        item = self.itemFromIndex(index) if index.isValid() else None
        row = self.source.row(index.row()) if item is not None else None
        if item is not None and row is not None:
            item.setData(self.source.tip(row, index.column()), Qt.ItemDataRole.ToolTipRole)

    # ---- following the model ---------------------------------------------------------------

    def _inserted(self, _parent: Index, first: int, last: int) -> None:
        if first != self.rowCount():
            self._reset()  # the model only appends; anything else is shown anew
            return
        self.insertRows(first, last - first + 1)

    def _reset(self) -> None:
        self._filled.clear()
        self.setRowCount(0)
        self.setRowCount(self.source.total)

    def _changed(self, top_left: Index, bottom_right: Index, _roles: object = None) -> None:
        first, last = top_left.row(), bottom_right.row()
        stale = [number for number in self._filled if first <= number <= last]
        for number in stale:
            del self._filled[number]
        if stale:
            self._view.viewport().update()
