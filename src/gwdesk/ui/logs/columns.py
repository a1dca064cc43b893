"""The Logs table's columns: which are shown, in what order and width, kept per profile.

Every field of a log record is a column of the model; the operator chooses which
are shown from the header's context menu (or the Columns button). The header's
whole state (order, widths, hidden columns, sort) is saved in the profile's store
a moment after each change and restored when the tab opens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QByteArray, QObject, QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHeaderView, QMenu, QWidget

from gwdesk.logs.rows import FIELDS
from gwdesk.ui.timers import single_shot

#: Shown on first use; the rest are a right-click away.
DEFAULT_SHOWN: Final = frozenset({"date_lodged", "status", "to_number", "type", "parts", "message"})
DEFAULT_SORT: Final = "date_lodged"
DEFAULT_WIDTHS: Final = {
    "date_lodged": 150,
    "status": 92,
    "to_number": 120,
    "message": 360,
    "type": 56,
    "parts": 48,
    "from_number": 110,
    "date_sent": 150,
    "receipt": 150,
    "message_id": 170,
    "tracking_id": 250,
    "batch_tracking_id": 250,
}
Load = Callable[[], object]
Save = Callable[[str], None]


class LogColumns(QObject):
    """Owns the header's column choice: menu, defaults, and persistence via `load`/`save`."""

    def __init__(self, header: QHeaderView, load: Load, save: Save) -> None:
        super().__init__(header)
        self.header = header
        self._load = load
        self._save = save
        self._saving = single_shot(self, 500, self.save)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self._links = [
            (
                header.customContextMenuRequested,
                header.customContextMenuRequested.connect(self._context_menu),
            ),
            (header.sectionResized, header.sectionResized.connect(self._changed)),
            (header.sectionMoved, header.sectionMoved.connect(self._changed)),
            (header.sortIndicatorChanged, header.sortIndicatorChanged.connect(self._changed)),
        ]

    def _changed(self, *_args: object) -> None:
        self._saving.start()

    def detach(self) -> None:
        """Let go of the header (its table shows another profile next); nothing more is saved."""
        self._saving.stop()
        for signal, link in self._links:
            signal.disconnect(link)
        self._links = []
        self.deleteLater()

    def restore(self) -> None:
        """The saved layout, or the defaults when there is none (or it cannot be read)."""
        saved = self._load()
        if (
            isinstance(saved, str)
            and saved.isascii()
            and self.header.restoreState(QByteArray.fromBase64(saved.encode("ascii")))
            and self.visible_columns()
        ):
            return
        self.defaults()

    def defaults(self) -> None:
        header = self.header
        for logical, field in enumerate(FIELDS):
            header.moveSection(header.visualIndex(logical), logical)
            header.setSectionHidden(logical, field.column not in DEFAULT_SHOWN)
            header.resizeSection(logical, DEFAULT_WIDTHS.get(field.column, 110))
        lodged = next(i for i, f in enumerate(FIELDS) if f.column == DEFAULT_SORT)
        header.setSortIndicator(lodged, Qt.SortOrder.DescendingOrder)  # newest first
        self._saving.start()

    def save(self) -> None:
        self._saving.stop()
        self._save(bytes(self.header.saveState().toBase64().data()).decode("ascii"))

    def visible_columns(self) -> list[str]:
        """The columns shown, in the order shown (what an export writes)."""
        header = self.header
        logical = [header.logicalIndex(v) for v in range(header.count())]
        return [
            FIELDS[i].column
            for i in logical
            if 0 <= i < len(FIELDS) and not header.isSectionHidden(i)
        ]

    def set_shown(self, column: str, shown: bool) -> None:
        logical = next(i for i, f in enumerate(FIELDS) if f.column == column)
        if not shown and self.visible_columns() == [column]:
            return  # the last column stays: a table without columns cannot be got back
        self.header.setSectionHidden(logical, not shown)
        if shown and self.header.sectionSize(logical) < 30:
            self.header.resizeSection(logical, DEFAULT_WIDTHS.get(column, 110))
        self._saving.start()

    def menu(self, parent: QWidget) -> QMenu:
        menu = QMenu("Columns", parent)
        shown = set(self.visible_columns())
        for field in FIELDS:
            action = QAction(field.title, menu)
            action.setCheckable(True)
            action.setChecked(field.column in shown)
            if field.tip:
                action.setToolTip(field.tip)
            action.toggled.connect(lambda on, c=field.column: self.set_shown(c, on))
            menu.addAction(action)
        menu.setToolTipsVisible(True)
        menu.addSeparator()
        every = menu.addAction("Show every column")
        every.triggered.connect(self.show_all)
        reset = menu.addAction("Default columns")
        reset.triggered.connect(self.defaults)
        return menu

    def show_all(self) -> None:
        for field in FIELDS:
            self.set_shown(field.column, True)

    def popup(self, parent: QWidget, where: QPoint) -> None:
        menu = self.menu(parent)
        menu.exec(where)
        menu.deleteLater()

    def _context_menu(self, point: QPoint) -> None:
        self.popup(self.header, self.header.mapToGlobal(point))
