"""The error line under a form field, and the field stacked above it.

Every form (Send, Batch, Fax/MMS) shows a refusal at the field that caused it, in
the same way: a plain-text, word-wrapped label styled by its `error` role, hidden
until there is something to say.
"""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from gwdesk.ui.plain_text import PlainLabel


def error_label(accessible_name: str) -> PlainLabel:
    """A hidden error line; plain text, so a refused value is never read as markup."""
    label = PlainLabel()
    label.setAccessibleName(accessible_name)
    label.setProperty("role", "error")
    label.setWordWrap(True)
    label.hide()
    return label


def stacked(*widgets: QWidget) -> QWidget:
    """`widgets` one above the other with no margins: a field and its error line."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box
