"""Reading a file the operator attaches: checked by the gateway layer's rules, with a preview.

The type, name and size rules are the Lodge client's (`gwdesk.app.media` names them:
the same checks the client applies before sending), so the console refuses exactly
what the client would, but at the moment the file is added, next to the file. A file bigger than the
whole allowance is not read in full: its first bytes are enough to name its type.
`load_path` does blocking I/O and image decoding on purpose: callers run it on a
worker thread (QImage is safe there); a PDF's pages are counted and its first page
rendered afterwards on the GUI thread (`with_pdf_pages`), as QtPdf requires.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QImageReader, QPainter, QPainterPath, QPen

from gwdesk.app.media import FileRules, check_file
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.files import extension_of, format_size
from gwdesk.ui.fax_mms.pdf_preview import pdf_first_page

#: Bytes read from a file too big to send: enough for every signature check.
HEAD_BYTES: Final = 8192
#: The longest side of a preview image (the list shows it smaller).
PREVIEW_SIDE: Final = 640
#: A PDF's first page is rendered this big, for the list (the preview pane shows pages live).
THUMB_SIDE: Final = 160
KIND_COLOURS: Final = {
    "image": "#43a047",
    "pdf": "#e53935",
    "text": "#546e7a",
    "audio": "#8e24aa",
    "video": "#fb8c00",
    "other": "#78909c",
}


def kind_of(content_type: str) -> str:
    """`image`, `pdf`, `text`, `audio`, `video` or `other`: how a file is previewed."""
    if content_type == "application/pdf":
        return "pdf"
    major = content_type.partition("/")[0]
    return major if major in ("image", "text", "audio", "video") else "other"


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """One attached file as read: what it is, and why it cannot be sent (if it cannot)."""

    name: str
    size: int
    content: bytes | None
    """The whole file; None when it was refused before being read in full."""
    content_type: str
    """From the gateway layer's type table; "" when the extension is not allowed."""
    type_label: str
    error: str = ""
    preview: QImage | None = None
    dimensions: QSize | None = None
    pages: int | None = None
    """Page count of a PDF that could be opened."""
    note: str = ""
    """Something worth knowing that does not stop the send (a PDF pdfium cannot open)."""

    @property
    def ok(self) -> bool:
        return not self.error and self.content is not None

    @property
    def kind(self) -> str:
        return kind_of(self.content_type)

    def summary(self) -> str:
        """`PNG image · 12.3 KB · 640×480`, `PDF document · 1.2 MB · 3 pages`."""
        parts = [self.type_label or "unknown type", format_size(self.size)]
        if self.dimensions is not None:
            parts.append(f"{self.dimensions.width()}×{self.dimensions.height()}")
        if self.pages is not None:
            parts.append(f"{self.pages} page" if self.pages == 1 else f"{self.pages} pages")
        return " · ".join(parts)


def _type_label(name: str, rules: FileRules) -> tuple[str, str]:
    file_type = rules.types.get(extension_of(name))
    if file_type is None:
        extension = extension_of(name)
        return ("", f".{extension} file" if extension else "file without an extension")
    return (file_type.content_type, file_type.label)


def refused(name: str, size: int, reason: str, rules: FileRules) -> LoadedFile:
    content_type, label = _type_label(name, rules)
    return LoadedFile(name, size, None, content_type, label, error=reason)


def too_big(name: str, size: int, rules: FileRules) -> str:
    return (
        f"{name} is {format_size(size)}: {rules.kind} may carry {rules.size_label} "
        "in all, so this file cannot be sent."
    )


def analyse(name: str, data: bytes, size: int, rules: FileRules) -> LoadedFile:
    """Check `data` (the whole file, or its head when `size` is over the limit)."""
    try:
        checked = check_file(name, data, rules, "FileName")
    except ValidationError as exc:
        return refused(name, size, exc.message, rules)
    label = _type_label(checked.file_name, rules)[1]
    if size > rules.max_bytes:
        return LoadedFile(
            checked.file_name, size, None, checked.content_type, label, too_big(name, size, rules)
        )
    loaded = LoadedFile(checked.file_name, size, data, checked.content_type, label)
    return with_preview(loaded)


def load_path(path: Path, rules: FileRules) -> LoadedFile:
    """Measure, read (no more than the allowance) and check one file; never raises."""
    name = path.name or str(path)
    try:
        if not path.is_file():
            return refused(name, 0, f"{name} is not a file.", rules)
        size = path.stat().st_size
        with path.open("rb") as stream:
            data = stream.read(HEAD_BYTES if size > rules.max_bytes else rules.max_bytes + 1)
    except OSError as exc:
        return refused(name, 0, f"Cannot read {name}: {exc.strerror or exc}.", rules)
    # The file may have grown or shrunk since it was measured: what was read counts.
    size = max(size, len(data)) if size > rules.max_bytes else len(data)
    return analyse(name, data, size, rules)


def load_bytes(name: str, data: bytes, rules: FileRules) -> LoadedFile:
    """A file the console already holds (pasted, generated)."""
    return analyse(name, data, len(data), rules)


def with_preview(loaded: LoadedFile) -> LoadedFile:
    """Images are decoded here (on the caller's thread: QImageReader is reentrant)."""
    assert loaded.content is not None
    if loaded.kind != "image":
        return loaded
    image, dimensions = image_preview(loaded.content)
    if image is None:
        return replace(loaded, note="No preview: the image data could not be decoded.")
    return replace(loaded, preview=image, dimensions=dimensions)


def with_pdf_pages(loaded: LoadedFile) -> LoadedFile:
    """A PDF's first page and page count. GUI thread only: pdfium is not thread-safe, and
    QtPdf's documents belong to the thread that made them."""
    if loaded.kind != "pdf" or loaded.content is None or loaded.error:
        return loaded
    page, pages = pdf_first_page(loaded.content, QSize(THUMB_SIDE, THUMB_SIDE))
    if pages is None:
        note = "No preview: the PDF could not be opened here (the gateway may still take it)."
        return replace(loaded, note=note)
    return replace(loaded, preview=page, pages=pages)


def image_preview(data: bytes) -> tuple[QImage | None, QSize | None]:
    """The image decoded at preview size (a big photo is never decoded at full size)."""
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    try:
        # The reader must be gone before its device: some format plugins (TIFF) touch
        # the device as the reader is destroyed.
        return _decode(buffer)
    finally:
        buffer.close()


def _decode(device: QBuffer) -> tuple[QImage | None, QSize | None]:
    reader = QImageReader(device)
    reader.setAutoTransform(True)
    size = reader.size()
    if size.isValid() and (size.width() > PREVIEW_SIDE or size.height() > PREVIEW_SIDE):
        reader.setScaledSize(
            size.scaled(PREVIEW_SIDE, PREVIEW_SIDE, Qt.AspectRatioMode.KeepAspectRatio)
        )
    image = reader.read()
    if image.isNull():
        return (None, None)
    return (image, size if size.isValid() else image.size())


def file_badge(name: str, kind: str, side: int = 56) -> QImage:
    """A page with a folded corner and the file's extension: the icon of a file with no
    picture to show (audio, video, text, a refused file)."""
    image = QImage(side, side, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    colour = QColor(KIND_COLOURS.get(kind, KIND_COLOURS["other"]))
    width, height = side * 0.72, side * 0.9
    left, top = (side - width) / 2, (side - height) / 2
    fold = width * 0.3
    page = QPainterPath()
    page.moveTo(left, top)
    page.lineTo(left + width - fold, top)
    page.lineTo(left + width, top + fold)
    page.lineTo(left + width, top + height)
    page.lineTo(left, top + height)
    page.closeSubpath()
    painter.setPen(QPen(colour.darker(130), 1.2))
    painter.setBrush(QColor("#ffffff"))
    painter.drawPath(page)
    painter.setBrush(colour.lighter(160))
    corner = QPainterPath()
    corner.moveTo(left + width - fold, top)
    corner.lineTo(left + width - fold, top + fold)
    corner.lineTo(left + width, top + fold)
    corner.closeSubpath()
    painter.drawPath(corner)
    band = QRectF(left - side * 0.06, top + height * 0.5, width + side * 0.12, height * 0.28)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawRoundedRect(band, 2, 2)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(7, int(side * 0.18)))
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    label = (extension_of(name) or "?").upper()[:4]
    painter.drawText(band, Qt.AlignmentFlag.AlignCenter, label)
    painter.end()
    return image
