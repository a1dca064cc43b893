"""The selected attachment, large: the picture, every PDF page, the text, or why it is refused."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPixmap, QResizeEvent
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QStackedWidget, QVBoxLayout, QWidget

from gwdesk.ui.fax_mms.attachment_files import LoadedFile, file_badge
from gwdesk.ui.fax_mms.pdf_preview import PdfPreview
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.validity import set_role

#: Text files are shown up to this many characters (an MMS text file is small anyway).
TEXT_SHOWN: Final = 20_000
NO_PREVIEW: Final = {
    "audio": "Audio is sent as it is; gwdesk does not play it.",
    "video": "Video is sent as it is; gwdesk does not play it.",
    "other": "This file cannot be previewed.",
}


class ScaledImage(QLabel):
    """A picture that shrinks with the pane but is never blown up past its size."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.setMinimumSize(120, 120)
        self._pixmap = QPixmap()

    def set_image(self, pixmap: QPixmap) -> None:
        self._pixmap = pixmap
        self._rescale()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._rescale()

    def _rescale(self) -> None:
        if self._pixmap.isNull():
            self.clear()
            return
        box = self.size().boundedTo(self._pixmap.size())
        self.setPixmap(
            self._pixmap.scaled(
                box,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        )

    def sizeHint(self) -> QSize:
        return QSize(240, 240)


class AttachmentPreview(QWidget):
    """Title line + a page per kind of content."""

    def __init__(self, empty_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = PlainLabel()
        self.title.setAccessibleName("Previewed file")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.info = PlainLabel()
        self.info.setAccessibleName("Previewed file details")
        self.info.setProperty("role", "hint")
        self.info.hide()
        self.empty = QLabel(empty_text)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setProperty("role", "hint")
        self.image = ScaledImage()
        self.image.setAccessibleName("Image preview")
        self.pdf = PdfPreview()
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Text preview")
        self.message = PlainLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.badge = QLabel()
        self.badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        other = QWidget()
        other_layout = QVBoxLayout(other)
        other_layout.addStretch(1)
        other_layout.addWidget(self.badge)
        other_layout.addWidget(self.message)
        other_layout.addStretch(2)
        self.stack = QStackedWidget()
        for page in (self.empty, self.image, self.pdf, self.text, other):
            self.stack.addWidget(page)
        self._other = other
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.info)
        layout.addWidget(self.stack, 1)
        self.show_file(None)

    def show_file(self, loaded: LoadedFile | None, reading: str = "") -> None:
        """Preview `loaded`; `reading` names a file still being read."""
        self.pdf.clear()
        if loaded is None:
            self.info.hide()
            self.title.setText(f"Reading {reading}…" if reading else "Preview")
            self.stack.setCurrentWidget(self.empty)
            return
        self.title.setText(loaded.name)
        self.info.setText(loaded.summary())
        self.info.setVisible(True)
        if loaded.error or loaded.content is None:
            self._show_other(loaded, loaded.error or "This file cannot be sent.", "error")
            return
        if loaded.kind == "image" and loaded.preview is not None:
            self.image.set_image(QPixmap.fromImage(loaded.preview))
            self.stack.setCurrentWidget(self.image)
            return
        if loaded.kind == "pdf" and self.pdf.set_data(loaded.content) > 0:
            self.stack.setCurrentWidget(self.pdf)
            return
        if loaded.kind == "text":
            shown = loaded.content[:TEXT_SHOWN].decode("utf-8", errors="replace")
            self.text.setPlainText(shown)
            self.stack.setCurrentWidget(self.text)
            return
        self._show_other(loaded, loaded.note or NO_PREVIEW.get(loaded.kind, NO_PREVIEW["other"]))

    def _show_other(self, loaded: LoadedFile, text: str, role: str = "hint") -> None:
        self.badge.setPixmap(QPixmap.fromImage(file_badge(loaded.name, loaded.kind, 96)))
        self.message.setText(text)
        set_role(self.message, role)
        self.stack.setCurrentWidget(self._other)
