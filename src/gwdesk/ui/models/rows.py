"""A small read-only table model over a list of rows, described by columns.

For result lists of tens to thousands of rows (status results, history, invalid
CSV rows); the log browser, which must handle a million, has its own windowed
SQL model instead. Values are data from outside (gateway answers, file cells):
cells show them `visible`, tooltips through `plain_text.tooltip`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from gwdesk.ui.plain_text import tooltip, visible

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex
ROW_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
TOOLTIP_CHARS = 2000


@dataclass(frozen=True)
class Column(Generic[R]):
    title: str
    value: Callable[[R], Any]
    tooltip: str = ""
    sort_key: Callable[[R], Any] | None = None
    colour: Callable[[R], QColor | None] | None = None
    tip: Callable[[R], str] | None = None
    """A cell's tooltip when it is not the cell's own text (the whole of a shortened one)."""


class RowsModel(QAbstractTableModel, Generic[R]):
    def __init__(self, columns: Sequence[Column[R]], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self.rows: list[R] = []

    def set_rows(self, rows: Sequence[R]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def prepend(self, row: R) -> None:
        self.beginInsertRows(QModelIndex(), 0, 0)
        self.rows.insert(0, row)
        self.endInsertRows()

    def replace(self, changed: dict[int, R]) -> None:
        """Rows that now read otherwise (by position): repainted where they stand, the
        selection kept."""
        for row, value in changed.items():
            if 0 <= row < len(self.rows):
                self.rows[row] = value
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.columns) - 1))

    def row_at(self, row: int) -> R:
        return self.rows[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        column = self.columns[index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if role == Qt.ItemDataRole.ToolTipRole and column.tip is not None:
                return tooltip(column.tip(row)[:TOOLTIP_CHARS]) or None
            value = column.value(row)
            text = "" if value is None else str(value)
            if role == Qt.ItemDataRole.DisplayRole:
                return visible(text)
            return tooltip(text[:TOOLTIP_CHARS]) or None
        if role == SORT_ROLE:
            key = column.sort_key or column.value
            return key(row)
        if role == Qt.ItemDataRole.ForegroundRole and column.colour is not None:
            return column.colour(row)
        if role == ROW_ROLE:
            return row
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section].tooltip or None
        return None
