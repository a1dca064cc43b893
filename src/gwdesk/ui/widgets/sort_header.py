"""A table header whose sort arrow points the way operators read it.

Qt draws `DescendingOrder` as an up arrow (and ascending as a down arrow), the
opposite of what file managers and web tables show: newest-first logs under a ▲
read as "oldest first". This header swaps the two arrows when painting; the sort
order itself (`sortIndicatorOrder`) is untouched.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QStyleOptionHeader, QWidget

SortIndicator = QStyleOptionHeader.SortIndicator
SWAPPED: Final = {
    SortIndicator.SortUp: SortIndicator.SortDown,
    SortIndicator.SortDown: SortIndicator.SortUp,
}


class SortHeader(QHeaderView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)  # as QTableView's own header is

    def initStyleOptionForIndex(self, option: QStyleOptionHeader, logicalIndex: int) -> None:
        super().initStyleOptionForIndex(option, logicalIndex)
        option.sortIndicator = SWAPPED.get(option.sortIndicator, option.sortIndicator)
