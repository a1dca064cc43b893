"""Where the Batch tab's parts sit: recipients and merge fields on the left, the message,
totals and requests on the right, each split draggable.

The message keeps its natural height (scrolled when the window is smaller) and the
requests table the rest (the operator
drags the split to see more requests of a big batch); the merge fields, when a
template shows them, take the height they need and the recipients the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from gwdesk.ui.widgets.fitting import scrolling
from gwdesk.ui.widgets.panes import column, panes

MESSAGE_LINES = 12
"""Lines of the message's form kept in view before it scrolls: its tools and text box."""


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


def lay_out(
    tab: QWidget,
    recipients: QWidget,
    merge: QWidget,
    compose: QWidget,
    totals: QWidget,
    results: QWidget,
) -> Splits:
    sending = column(totals, (results, 1))
    # The message's form scrolls in its pane on a small screen, so the totals and the
    # send buttons under it stay in view.
    message = scrolling(compose, sideways=False)
    message.setMinimumHeight(MESSAGE_LINES * compose.fontMetrics().lineSpacing())
    right = panes(Qt.Orientation.Vertical, message, sending, stretch=(0, 1))
    left = panes(Qt.Orientation.Vertical, recipients, merge, stretch=(1, 0))
    outer = panes(Qt.Orientation.Horizontal, left, right, stretch=(3, 7), sizes=(360, 900))
    layout = QVBoxLayout(tab)
    layout.addWidget(outer)
    return Splits(outer, left, right)
