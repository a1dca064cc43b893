"""What a layout gets wrong, found by walking a shown window's widgets.

A window is checked as the operator sees it: every visible widget, its text measured
with its own font. Four faults are looked for:

- clipped: a label's (or a button's) text wider than the widget and not elided, or a
  wrapped label taller than the room it has;
- overlap: two visible siblings laid over each other (a layout bypassed);
- short box: a text box to type in shorter than three lines, a list or table with
  room for fewer than three rows;
- outside: a widget placed beyond its parent's edges (pushed out of the window),
  but for the content of a scroll area, which is meant to scroll.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QCheckBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollBar,
    QSizeGrip,
    QTextEdit,
    QWidget,
)

SLACK = 1
"""Pixels of rounding forgiven (scaled layouts round each edge)."""
MIN_LINES = 3
"""Lines a text box shows at least; rows a list shows at least."""


@dataclass(frozen=True)
class Finding:
    """One fault: its kind, the widget by its place in the window, and what was measured."""

    kind: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.detail}"


def name_of(widget: QWidget) -> str:
    """A widget as a person would find it: its class and the name or text it shows."""
    label = widget.accessibleName() or widget.objectName()
    if not label and isinstance(widget, (QLabel, QAbstractButton)):
        label = widget.text()[:40]
    return f"{type(widget).__name__}({label!r})" if label else type(widget).__name__


def path_of(widget: QWidget) -> str:
    """The widget and the two named ancestors nearest it."""
    names = [name_of(widget)]
    parent = widget.parentWidget()
    while parent is not None and len(names) < 4:
        if parent.accessibleName() or parent.objectName():
            names.append(name_of(parent))
        parent = parent.parentWidget()
    return " < ".join(names)


def plain_lines(label: QLabel) -> list[str]:
    """The lines a label shows, markup rendered to its text when it is rich text."""
    text = label.text()
    shown = getattr(label, "shown_text", None)  # an eliding label paints a shortened copy
    if callable(shown):
        text = str(shown())
    elif label.textFormat().name != "PlainText" and "<" in text:
        document = QTextDocument()
        document.setHtml(text)
        text = document.toPlainText()
    elif label.buddy() is not None:  # "&To": the & marks the shortcut, it is not shown
        text = text.replace("&&", "\0").replace("&", "").replace("\0", "&")
    return [line for line in text.splitlines() if line.strip()]


def clipped(widget: QWidget) -> str | None:
    """Why `widget`'s text does not fit it, or None."""
    if isinstance(widget, QLabel) and widget.text() and widget.pixmap().isNull():
        room = widget.contentsRect()
        margin = 2 * widget.margin() + max(widget.indent(), 0)
        width = room.width() - margin
        metrics = widget.fontMetrics()
        if widget.wordWrap():
            needed = widget.heightForWidth(widget.width())
            if needed > widget.height() + SLACK:
                return f"wraps to {needed}px in {widget.height()}px"
            return None
        lines = plain_lines(widget)
        if not lines:
            return None
        needed = max(metrics.horizontalAdvance(line) for line in lines)
        if needed > width + SLACK:
            return f"text {needed}px wide in {width}px: {lines[0][:60]!r}"
        tall = len(lines) * metrics.lineSpacing()
        if tall > room.height() + metrics.leading() + SLACK + metrics.descent():
            return f"{len(lines)} lines ({tall}px) in {room.height()}px"
        return None
    if isinstance(widget, (QPushButton, QCheckBox, QRadioButton)) and widget.text():
        hint = widget.minimumSizeHint() if isinstance(widget, QPushButton) else widget.sizeHint()
        if widget.width() + SLACK < hint.width():
            return f"{hint.width()}px of text and frame in {widget.width()}px"
        if widget.height() + SLACK < widget.fontMetrics().height():
            return f"{widget.height()}px high for a {widget.fontMetrics().height()}px line"
    return None


def short(widget: QWidget) -> str | None:
    """Why `widget` shows too little to work with, or None."""
    if isinstance(widget, (QPlainTextEdit, QTextEdit)) and not widget.isReadOnly():
        room = widget.viewport().height()
        lines = MIN_LINES * widget.fontMetrics().lineSpacing()
        if room + SLACK < lines:
            return f"{room}px high: fewer than {MIN_LINES} lines ({lines}px)"
    if (
        isinstance(widget, QAbstractItemView)
        and not isinstance(widget, QHeaderView)
        and widget.model() is not None
    ):
        room = widget.viewport().height()
        rows = MIN_LINES * widget.fontMetrics().height()
        if room + SLACK < rows:
            return f"{room}px high: fewer than {MIN_LINES} rows ({rows}px)"
    return None


def scrolled_content(widget: QWidget) -> bool:
    """True for the content of a scroll area: it may lie beyond its viewport."""
    parent = widget.parentWidget()
    area = parent.parentWidget() if parent is not None else None
    return isinstance(area, QAbstractScrollArea) and area.viewport() is parent


def ignored(widget: QWidget) -> bool:
    """Qt's own parts that sit over their siblings by design."""
    return isinstance(widget, (QSizeGrip, QScrollBar)) or widget.objectName().startswith("qt_")


def overlapping(children: list[QWidget]) -> list[tuple[QWidget, QWidget, QRect]]:
    """Pairs of laid-out siblings whose rectangles share more than a rounding pixel."""
    pairs = []
    for index, first in enumerate(children):
        for second in children[index + 1 :]:
            shared = first.geometry().intersected(second.geometry())
            if shared.width() > SLACK and shared.height() > SLACK:
                pairs.append((first, second, shared))
    return pairs


def faults(window: QWidget) -> list[Finding]:
    """Every fault of the shown `window`."""
    found: list[Finding] = []
    widgets = [window, *window.findChildren(QWidget)]
    shown = [w for w in widgets if w.isVisible() and (w is window or not w.isWindow())]
    for widget in shown:
        why = clipped(widget)
        if why:
            found.append(Finding("clipped", path_of(widget), why))
        why = short(widget)
        if why:
            found.append(Finding("short box", path_of(widget), why))
        if widget is window:
            continue
        parent = widget.parentWidget()
        assert parent is not None
        inside = parent.rect().adjusted(-SLACK, -SLACK, SLACK, SLACK)
        if not scrolled_content(widget) and not inside.contains(widget.geometry()):
            box = widget.geometry()
            found.append(
                Finding(
                    "outside",
                    path_of(widget),
                    f"{box.x()},{box.y()} {box.width()}x{box.height()} "
                    f"in {parent.width()}x{parent.height()}",
                )
            )
    for parent in shown:
        children = [
            c
            for c in parent.findChildren(QWidget, options=_direct())
            if c.isVisible() and not c.isWindow() and not ignored(c)
        ]
        for first, second, shared in overlapping(children):
            found.append(
                Finding(
                    "overlap",
                    f"{path_of(first)} / {name_of(second)}",
                    f"{shared.width()}x{shared.height()} shared",
                )
            )
    return found


def _direct():  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    return Qt.FindChildOption.FindDirectChildrenOnly


def fits(window: QWidget, screen: QSize) -> str | None:
    """Why `window` does not fit a screen of `screen` logical pixels, or None."""
    size = window.frameGeometry().size()
    if size.width() > screen.width() + SLACK or size.height() > screen.height() + SLACK:
        return f"{size.width()}x{size.height()} on a {screen.width()}x{screen.height()} screen"
    return None
