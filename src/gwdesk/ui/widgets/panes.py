"""How the console's tabs and forms share their room, made one way.

Two or more panes divide a tab's room with a draggable split that never squeezes a
pane to nothing (`panes`); a pane is often a titled box around one widget (`titled`)
or a column of widgets without margins (`column`). A compose tab sends on Ctrl+Enter
from anywhere inside it (`on_ctrl_enter`), as its text box does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QGroupBox, QLayout, QSplitter, QVBoxLayout, QWidget


def panes(
    orientation: Qt.Orientation,
    *widgets: QWidget,
    stretch: Sequence[int] = (),
    sizes: Sequence[int] = (),
) -> QSplitter:
    """`widgets` side by side (or one above another), sharing new room by `stretch`,
    first laid out at `sizes`; none can be dragged away to nothing."""
    splitter = QSplitter(orientation)
    splitter.setChildrenCollapsible(False)
    for widget in widgets:
        splitter.addWidget(widget)
    for index, factor in enumerate(stretch):
        splitter.setStretchFactor(index, factor)
    if sizes:
        splitter.setSizes(list(sizes))
    return splitter


def titled(title: str, widget: QWidget) -> QGroupBox:
    """`widget` in a box with a title."""
    box = QGroupBox(title)
    QVBoxLayout(box).addWidget(widget)
    return box


def column(
    *items: QWidget | QLayout | tuple[QWidget, int],
    spacing: int = -1,
    margins: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> QWidget:
    """`items` one above another, by default without margins (a `(widget, stretch)`
    pair takes its share of the room)."""
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(*margins)
    if spacing >= 0:
        layout.setSpacing(spacing)
    for item in items:
        if isinstance(item, QLayout):
            layout.addLayout(item)
        elif isinstance(item, tuple):
            layout.addWidget(*item)
        else:
            layout.addWidget(item)
    return holder


def on_ctrl_enter(widget: QWidget, slot: Callable[[], object]) -> None:
    """Ctrl+Enter (either key) anywhere inside `widget` runs `slot`."""
    for keys in ("Ctrl+Return", "Ctrl+Enter"):
        shortcut = QShortcut(QKeySequence(keys), widget)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)
