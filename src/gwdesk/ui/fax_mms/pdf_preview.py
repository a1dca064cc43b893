"""PDF pages with QtPdf: a scrollable view of every page, and a first-page thumbnail.

A fax goes out as the pages of its files, so the operator should see those pages and
their count before sending, not only a file name. The documents are loaded from
memory (the bytes already read and checked), never from the path again, so what is
previewed is exactly what will be sent.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtPdf import QPdfDocument
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget


def pdf_first_page(data: bytes, box: QSize) -> tuple[QImage | None, int | None]:
    """(first page on white, fitted in `box`; page count), or (None, None) when the PDF
    cannot be opened. GUI thread only (pdfium is not thread-safe)."""
    document = QPdfDocument()
    buffer = QBuffer(document)  # owned by the document, so it outlives the document's use
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    try:
        document.load(buffer)
        if document.status() != QPdfDocument.Status.Ready or document.pageCount() < 1:
            return (None, None)
        pages = document.pageCount()
        page_size = document.pagePointSize(0).toSize()
        if page_size.isEmpty():
            page_size = QSize(612, 792)
        size = page_size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio)
        rendered = document.render(0, size)
        if rendered.isNull():
            return (None, pages)
        page = QImage(size, QImage.Format.Format_RGB32)
        page.fill(QColor("#ffffff"))
        painter = QPainter(page)
        painter.drawImage(0, 0, rendered)
        painter.end()
        return (page, pages)
    finally:
        document.close()


class PdfPreview(QWidget):
    """Every page, fitted to the width, with "Page n of N" and page buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = QPdfDocument(self)
        self._buffer: QBuffer | None = None
        self.view = QPdfView()
        self.view.setAccessibleName("PDF pages")
        self.view.setDocument(self.document)
        self.view.setPageMode(QPdfView.PageMode.MultiPage)
        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        self.view.setPageSpacing(8)
        self.pages_label = QLabel()
        self.pages_label.setAccessibleName("Page count")
        self.previous = QToolButton()
        self.previous.setArrowType(Qt.ArrowType.UpArrow)
        self.previous.setToolTip("Previous page")
        self.previous.setAccessibleName("Previous page")
        self.previous.clicked.connect(lambda: self.go_to(self.current_page() - 1))
        self.next = QToolButton()
        self.next.setArrowType(Qt.ArrowType.DownArrow)
        self.next.setToolTip("Next page")
        self.next.setAccessibleName("Next page")
        self.next.clicked.connect(lambda: self.go_to(self.current_page() + 1))
        self.view.pageNavigator().currentPageChanged.connect(lambda _page: self._update_label())

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.pages_label, 1)
        bar.addWidget(self.previous)
        bar.addWidget(self.next)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)

    def page_count(self) -> int:
        return (
            self.document.pageCount() if self.document.status() == QPdfDocument.Status.Ready else 0
        )

    def current_page(self) -> int:
        return self.view.pageNavigator().currentPage()

    def set_data(self, data: bytes) -> int:
        """Show this PDF; its page count (0 when it cannot be opened)."""
        self.clear()
        buffer = QBuffer(self)
        buffer.setData(QByteArray(data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self._buffer = buffer
        self.document.load(buffer)
        self.go_to(0)
        self._update_label()
        return self.page_count()

    def clear(self) -> None:
        self.document.close()
        if self._buffer is not None:
            self._buffer.close()
            self._buffer.deleteLater()
            self._buffer = None
        self._update_label()

    def go_to(self, page: int) -> None:
        count = self.page_count()
        if count:
            self.view.pageNavigator().jump(max(0, min(page, count - 1)), QPointF())
            self._update_label()

    def _update_label(self) -> None:
        count = self.page_count()
        if not count:
            self.pages_label.setText("No pages to show")
        else:
            self.pages_label.setText(f"Page {self.current_page() + 1} of {count}")
        self.previous.setEnabled(count > 1 and self.current_page() > 0)
        self.next.setEnabled(count > 1 and self.current_page() < count - 1)
