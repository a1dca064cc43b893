"""Where the Batch tab's parts sit: recipients and merge fields on the left, the message,
totals and requests on the right, each split draggable.

The message keeps its natural height and the requests table the rest (the operator
drags the split to see more requests of a big batch); the merge fields, when a
template shows them, take the height they need and the recipients the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget


@dataclass(frozen=True, slots=True)
class Splits:
    outer: QSplitter
    left: QSplitter
    """The recipients above the merge fields."""
    right: QSplitter
    """The message above the totals and requests."""

    def room_for(self, merge: QWidget) -> None:
        """The merge fields appeared: they get the height they need, the list the rest."""
        total, wanted = sum(self.left.sizes()), merge.sizeHint().height()
        if total > wanted:
            self.left.setSizes([total - wanted, wanted])


def _split(orientation: Qt.Orientation, *widgets: QWidget) -> QSplitter:
    splitter = QSplitter(orientation)
    splitter.setChildrenCollapsible(False)
    for widget in widgets:
        splitter.addWidget(widget)
    return splitter


def lay_out(
    tab: QWidget,
    recipients: QWidget,
    merge: QWidget,
    compose: QWidget,
    totals: QWidget,
    results: QWidget,
) -> Splits:
    sending = QWidget()
    sending_layout = QVBoxLayout(sending)
    sending_layout.setContentsMargins(0, 0, 0, 0)
    sending_layout.addWidget(totals)
    sending_layout.addWidget(results, 1)
    right = _split(Qt.Orientation.Vertical, compose, sending)
    right.setStretchFactor(0, 0)
    right.setStretchFactor(1, 1)
    left = _split(Qt.Orientation.Vertical, recipients, merge)
    left.setStretchFactor(0, 1)
    left.setStretchFactor(1, 0)
    outer = _split(Qt.Orientation.Horizontal, left, right)
    outer.setStretchFactor(0, 3)
    outer.setStretchFactor(1, 7)
    outer.setSizes([360, 900])
    layout = QVBoxLayout(tab)
    layout.addWidget(outer)
    return Splits(outer, left, right)
