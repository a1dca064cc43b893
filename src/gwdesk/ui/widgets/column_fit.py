"""Preset column widths that give way on a narrow table, so its stretching column stays
readable.

A table of fixed widths beside a conversation pane got ~500 px on a 1024 px window:
its five preset columns (630 px) left the Message column 25 px wide. Here the preset
widths shrink in proportion whenever they would leave the stretching column less than
its share of the viewport (never below their own titles), and come back as the
table widens; once the operator drags a column themselves, their widths are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableView

STRETCH_SHARE = 0.35
"""The least part of the viewport the stretching column keeps while presets can shrink."""
NARROWEST = 48
"""No preset column is made narrower than this, nor than its title (device-independent
pixels)."""


class ColumnFit(QObject):
    """Keeps `widths` (column -> preset width) fitted to `table`'s viewport."""

    def __init__(self, table: QTableView, widths: Mapping[int, int]) -> None:
        super().__init__(table)
        self._table = table
        self._widths = dict(widths)
        self._applying = False
        self.operator_sized = False
        table.horizontalHeader().sectionResized.connect(self._resized)
        table.viewport().installEventFilter(self)
        self.fit()

    def fitted_widths(self, room: int) -> dict[int, int]:
        """The preset widths, shrunk in proportion (not below their titles) if they leave
        too little of `room`."""
        wanted = sum(self._widths.values())
        allowed = int(room * (1 - STRETCH_SHARE))
        if room <= 0 or wanted <= allowed:
            return dict(self._widths)
        ratio = allowed / wanted
        header = self._table.horizontalHeader()
        # No column narrower than its own title: a clipped "eceive" says nothing.
        return {
            c: max(NARROWEST, header.sectionSizeHint(c), int(w * ratio))
            for c, w in self._widths.items()
        }

    def reset(self) -> None:
        """A new model's columns start from the presets again."""
        self.operator_sized = False
        self.fit()

    def fit(self) -> None:
        if self.operator_sized:
            return
        self._applying = True
        try:
            for column, width in self.fitted_widths(self._table.viewport().width()).items():
                self._table.setColumnWidth(column, width)
        finally:
            self._applying = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def _resized(self, column: int, _old: int, _new: int) -> None:
        # A preset column resized while we are not applying widths was dragged by hand
        # (the stretching column's own resizes follow the viewport and are not counted).
        if not self._applying and column in self._widths and self._table.isVisible():
            header = self._table.horizontalHeader()
            if header.sectionResizeMode(column) == header.ResizeMode.Interactive:
                self.operator_sized = True
