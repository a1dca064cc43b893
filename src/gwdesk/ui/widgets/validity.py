"""Dynamic style properties (`invalid`, `role`) that the stylesheet keys on.

Qt applies a stylesheet rule that depends on a dynamic property only when the
widget is polished again, so setting the property alone leaves the old look. A
widget not polished yet (one being built) takes its rules when it first is, so it is
left alone: polishing it now would style it twice (and again when it moves into its
parent), a good part of a tab's building.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget


def repolish(widget: QWidget) -> None:
    if not widget.testAttribute(Qt.WidgetAttribute.WA_WState_Polished):
        return
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()


def set_invalid(widget: QWidget, invalid: bool) -> None:
    """Mark an input as refused (red border) or clear the mark."""
    if bool(widget.property("invalid")) == invalid:
        return
    widget.setProperty("invalid", invalid)
    repolish(widget)


def is_invalid(widget: QWidget) -> bool:
    return bool(widget.property("invalid"))


def set_role(label: QLabel, role: str) -> None:
    """`hint`, `error`, `ok` or `warning`: the label's colour in the stylesheet."""
    if label.property("role") == role:
        return
    label.setProperty("role", role)
    repolish(label)
