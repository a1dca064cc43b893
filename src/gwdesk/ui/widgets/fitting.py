"""Windows and forms that fit the screen they open on.

A dialog sized for a 1920x1080 desktop is taller than a 1366x768 laptop at 125%
(1093x614 logical pixels): its buttons end up below the screen's edge. Dialogs ask
for their comfortable size through `fit_on_screen`, which never exceeds the screen's
free area, and long forms sit in `scrolling`, which scrolls what does not fit.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


def screen_room(widget: QWidget) -> QSize:
    """The free area of the screen `widget` is on (the primary one before it is shown)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry().size()


def fit_on_screen(widget: QWidget, wanted: QSize) -> None:
    """Resize `widget` to `wanted`, or to the screen's free area where that is smaller."""
    widget.resize(wanted.boundedTo(screen_room(widget)))


def scrolling(content: QWidget, *, sideways: bool = True) -> QScrollArea:
    """`content` in a frameless scroll area: as wide and tall as it is given, scrolled when
    that is less than `content` needs (up and down only, never cut at the side, when not
    `sideways`: the area then asks for the width `content` needs)."""
    area = scroll_area()
    area.setWidget(content)
    if not sideways:
        # Here, not at the top: the tab pages' scroll areas are made before the first
        # paint, and the first use of `Qt`'s enums costs ~18 ms.
        from PySide6.QtCore import Qt

        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = area.verticalScrollBar().sizeHint().width()
        area.setMinimumWidth(content.minimumSizeHint().width() + bar)
    return area


def scroll_area() -> QScrollArea:
    """An empty frameless scroll area whose content gets the room it is given
    (`scrolling`'s, for content that comes later)."""
    area = QScrollArea()
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    return area
