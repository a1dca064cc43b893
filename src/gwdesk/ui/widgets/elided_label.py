"""A one-line label that shortens its text with "…" to the width it is given.

The status bar packs several permanent items into one line; when the window is narrow
(or a profile's address is long) plain labels would push the last items out of view.
This label keeps `text()` whole (tests, tooltips and accessibility read it) and only
paints a shortened copy. It shows gateway errors and profile values, so it is a
`PlainLabel`: never rich text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from gwdesk.ui.plain_text import PlainLabel

MIN_WIDTH = 40


class ElidedLabel(PlainLabel):
    def __init__(
        self,
        text: str = "",
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(text, parent)
        self._mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), MIN_WIDTH), hint.height())

    def shown_text(self) -> str:
        """What is painted: the text, shortened to the label's width if it must be."""
        width = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), self._mode, width)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        self.style().drawItemText(
            painter,
            self.contentsRect(),
            int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
            self.palette(),
            self.isEnabled(),
            self.shown_text(),
            self.foregroundRole(),
        )
        painter.end()
