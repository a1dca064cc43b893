"""How Qt shows a string that might be rich text, read without loading anything it names.

Qt shows a tooltip, or a label in `AutoText`, as rich text when `Qt.mightBeRichText`
says so; rich text is laid out by `QTextDocument`. These helpers parse it the same
way into a document that never loads a resource (an `<img src="/dev/zero">` that
slipped through would otherwise take the test down with it), then say which
characters it shows and which markup took effect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QFont, Qt, QTextDocument
from PySide6.QtWidgets import QLabel


class InertDocument(QTextDocument):
    """A text document that loads nothing: every image or style sheet it names is empty."""

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        return None


@dataclass
class Shown:
    """What the operator sees of a string: its characters and any markup that took effect."""

    text: str
    rich: bool
    images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    bold: list[str] = field(default_factory=list)


def shown(text: str, rich: bool | None = None) -> Shown:
    """`text` as Qt shows it: rich when `rich` says so, or when Qt would guess it is."""
    if rich is None:
        rich = Qt.mightBeRichText(text)
    if not rich:
        return Shown(text, False)
    document = InertDocument()
    document.setHtml(text)
    raw = document.toRawText().replace("\u2028", "\n").replace("\u2029", "\n")
    result = Shown(raw, True)
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            form = fragment.charFormat()
            if form.isImageFormat():
                result.images.append(form.toImageFormat().name())
            if form.isAnchor() or form.anchorHref():
                result.links.append(form.anchorHref())
            if form.fontWeight() >= QFont.Weight.DemiBold:
                result.bold.append(fragment.text())
            iterator += 1
        block = block.next()
    return result


def tooltip_shows(text: str) -> str:
    """The characters a tooltip shows (what Qt's tooltip label would render)."""
    return shown(text).text


def label_shows(label: QLabel) -> Shown:
    """What a label shows, by its text format."""
    kind = label.textFormat()
    rich = None if kind == Qt.TextFormat.AutoText else kind != Qt.TextFormat.PlainText
    return shown(label.text(), rich)
