"""A form's text fields, the error line under a field, and the field stacked above it.

Every text field is built one way (`text_field`): named for screen readers, bounded
in length, with its placeholder and tooltip. Every form (Send, Batch, Fax/MMS) shows
a refusal at the field that caused it, in the same way: a plain-text, word-wrapped
label styled by its `error` role, hidden until there is something to say.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from gwdesk.ui.plain_text import PlainLabel


def text_field(
    name: str,
    *,
    limit: int | None = None,
    placeholder: str = "",
    tip: str = "",
    clear: bool = False,
) -> QLineEdit:
    """A one-line text field: `name` for screen readers, at most `limit` characters,
    `clear`: with a button that empties it."""
    edit = QLineEdit()
    edit.setAccessibleName(name)
    if limit is not None:
        edit.setMaxLength(limit)
    if placeholder:
        edit.setPlaceholderText(placeholder)
    if tip:
        edit.setToolTip(tip)
    edit.setClearButtonEnabled(clear)
    return edit


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
