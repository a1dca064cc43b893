"""The controls every compose form ends with: the send button, a busy bar, Cancel, the result line.

The Send and Fax / MMS tabs build theirs here, so that they look and read alike (the
same accessible names, the result line plain text the operator can select and copy).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar, QPushButton

from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.theme import Theme


def send_button(theme: Theme, text: str, tip: str, width: int = 120) -> QPushButton:
    button = QPushButton(theme.icon("send"), text)
    button.setProperty("primary", True)
    button.setAccessibleName("Send")
    button.setToolTip(tip)
    button.setMinimumWidth(width)
    return button


def cancel_button(theme: Theme, tip: str) -> QPushButton:
    """Stops waiting for a send under way: hidden until one is (`tip`: what a cancel
    means for that kind of send)."""
    button = QPushButton(theme.icon("cancel"), "Cancel")
    button.setAccessibleName("Cancel sending")
    button.setToolTip(tip)
    button.hide()
    return button


def busy_bar() -> QProgressBar:
    """A small indeterminate bar, hidden until a send is under way."""
    bar = QProgressBar()
    bar.setRange(0, 0)
    bar.setTextVisible(False)
    bar.setFixedSize(90, 8)
    bar.setAccessibleName("Sending")
    bar.hide()
    return bar


def result_line(text: str) -> PlainLabel:
    """The line that says what the last send came to (plain text, selectable)."""
    label = PlainLabel(text)
    label.setAccessibleName("Send result")
    label.setProperty("role", "hint")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
