"""What the Fax/MMS tab's tests share: real files, and driving the tab the operator's way.

Files are real (PNG, PDF and TIFF bytes the gateway's signature checks accept), written
to disk and added the way the operator adds them: through the attachments panel, or
dropped on it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QImage,
    QImageWriter,
    QLinearGradient,
    QPageSize,
    QPainter,
    QPdfWriter,
)
from PySide6.QtWidgets import QApplication, QMainWindow

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.fax_mms.attachments import AttachmentsPanel
from gwdesk.ui.fax_mms.tab import FaxMmsTab
from gwdesk.ui.main_window import MainWindow
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.screenshot_support import WINDOW

COLUMNS = ("type", "to_number", "subject", "message", "url", "attachments")


# ---- real files ---------------------------------------------------------------------------


def picture(width: int = 320, height: int = 200, hue: int = 200) -> bytes:
    """A PNG photo-like picture (a gradient with shapes), as a camera roll would hold."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    gradient = QLinearGradient(0, 0, width, height)
    gradient.setColorAt(0, QColor.fromHsv(hue, 160, 240))
    gradient.setColorAt(1, QColor.fromHsv((hue + 60) % 360, 200, 120))
    painter.fillRect(image.rect(), gradient)
    painter.setBrush(QColor(255, 255, 255, 160))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(QPointF(width * 0.7, height * 0.35), height * 0.22, height * 0.22)
    painter.setBrush(QColor(20, 40, 30, 180))
    painter.drawRect(0, int(height * 0.75), width, height)
    painter.end()
    return encoded(image, b"PNG")


def encoded(image: QImage, image_format: bytes) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert QImageWriter(buffer, QByteArray(image_format)).write(image)
    buffer.close()
    return bytes(data.data())


def document(pages: int = 2) -> bytes:
    """A real PDF of `pages` A4 pages with text on each, written by Qt."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setResolution(72)
    painter = QPainter(writer)
    font = QFont()
    for page in range(pages):
        if page:
            writer.newPage()
        font.setPointSize(28)
        painter.setFont(font)
        painter.drawText(QPointF(60, 90), f"Invoice 1042 · page {page + 1}")
        font.setPointSize(12)
        painter.setFont(font)
        for line in range(18):
            painter.drawText(
                QPointF(60, 150 + line * 22), f"Item {line + 1} ........ $ {12 * line}.00"
            )
    painter.end()
    buffer.close()
    return bytes(data.data())


def picture_tiff() -> bytes:
    """A grey-scale scan, as a fax machine's TIFF would be."""
    image = QImage.fromData(picture(400, 560, 120))
    return encoded(image.convertToFormat(QImage.Format.Format_Grayscale8), b"TIFF")


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lodged(sandbox: SandboxThread) -> list[dict[str, Any]]:
    rows = sandbox.query(f"SELECT {', '.join(COLUMNS)} FROM messages ORDER BY id")
    found = [dict(zip(COLUMNS, row, strict=True)) for row in rows]
    for row in found:
        row["attachments"] = json.loads(row["attachments"]) if row["attachments"] else []
    return found


# ---- driving the tab ----------------------------------------------------------------------


async def open_tab(ui: UiBundle, sandbox: SandboxThread | None, qtbot: Any) -> FaxMmsTab:
    if sandbox is not None:
        await ui.connect(sandbox)
    tab = FaxMmsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.resize(1260, 660)
    return tab


async def main_window(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any
) -> tuple[QMainWindow, FaxMmsTab]:
    await ui.connect(sandbox)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [FaxMmsTab])
    qtbot.addWidget(window)
    window.resize(WINDOW)
    window.show()
    tab = window.tabs[0]
    assert isinstance(tab, FaxMmsTab)
    return window, tab


async def attach(panel: AttachmentsPanel, *paths: Path) -> None:
    panel.add_paths(list(paths))
    await wait_until(lambda: not panel.reading(), message="files read")


async def send(tab: FaxMmsTab) -> None:
    tab.send_button.click()
    await wait_until(lambda: not tab.sending(), within=20, message="send finished")


def drop(widget: Any, *paths: Path | QUrl) -> None:
    """Drag `paths` (files, or URLs of any kind) onto `widget` and let go."""
    mime = QMimeData()
    mime.setUrls([p if isinstance(p, QUrl) else QUrl.fromLocalFile(str(p)) for p in paths])
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    dropped = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, dropped)
