"""A question before a send (plain text, Cancel by default), answered without blocking the loop.

`question_box` builds it; `answered` opens it window-modal and waits for the
operator's answer as a coroutine, so a send task can ask ("the credits do not cover
it: send anyway?") and go on, while Qt and asyncio keep running.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from gwdesk.ui.plain_text import plain_box


def question_box(
    parent: QWidget, title: str, text: str, yes: str
) -> tuple[QMessageBox, QPushButton]:
    """The box and its accepting button; Cancel is the default."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=parent)
    accept = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    plain_box(box)
    return box, accept


async def answered(box: QMessageBox, accept: QPushButton) -> bool:
    """Open `box` and wait for the answer: True when `accept` was clicked."""
    future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def finished(_result: int) -> None:
        if not future.done():
            future.set_result(box.clickedButton() is accept)

    box.finished.connect(finished)
    box.open()
    try:
        return await future
    finally:
        box.deleteLater()
