"""Pictures of the console: checked in every run, saved as PNGs only with `GWDESK_SCREENSHOTS`.

A screenshot test builds a real state and takes its picture; the picture is then
checked whether or not it is saved (the right size, and something drawn on it), so
the test fails when the window renders nothing, and a saved PNG is never blank.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMainWindow, QWidget
from pytestqt.qtbot import QtBot

WINDOW = QSize(1280, 800)
"""The size every window picture is taken at."""
MIN_COLOURS = 8
"""Distinct colours a picture of text and controls shows at least (a blank one shows 1)."""
SAMPLE_STEP = 4
"""Every fourth pixel both ways is looked at: enough for text, quick for 1280x800."""


async def settle(seconds: float = 0.3) -> None:
    """Let posted layouts, timers and repaints run before a picture is taken."""
    await asyncio.sleep(seconds)


def colours(image: QImage) -> set[int]:
    """The distinct colours of a grid of `image`'s pixels."""
    return {
        image.pixel(x, y)
        for x in range(0, image.width(), SAMPLE_STEP)
        for y in range(0, image.height(), SAMPLE_STEP)
    }


def drawn(widget: QWidget, size: QSize | None = None) -> QImage:
    """`widget` as drawn now, checked: visible, of `size` (its own if None), not blank."""
    assert widget.isVisible(), f"{type(widget).__name__} is not shown"
    expected = size if size is not None else widget.size()
    assert widget.size() == expected, f"{widget.size()} instead of {expected}"
    image = widget.grab().toImage()
    assert not image.isNull(), f"{type(widget).__name__} drew nothing"
    ratio = image.devicePixelRatio()
    drawn = QSize(round(image.width() / ratio), round(image.height() / ratio))
    assert drawn == expected, f"the picture is {drawn}, not {expected}"
    shown = colours(image)
    assert len(shown) >= MIN_COLOURS, f"{type(widget).__name__} is blank: {len(shown)} colours"
    return image


async def shot(
    widget: QWidget,
    folder: Path | None,
    name: str,
    size: QSize | None = None,
    *,
    after: float = 0.3,
) -> QImage:
    """Settle for `after` seconds, take `widget`'s checked picture, and save it as
    `folder/name` when a folder is given."""
    await settle(after)
    image = drawn(widget, size)
    if folder is not None:
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        assert image.save(str(folder / name)), f"{name} could not be saved in {folder}"
    return image


def in_window(qtbot: QtBot, widget: QWidget) -> QMainWindow:
    """`widget` as the console shows a tab: the central widget of a shown window of `WINDOW`
    size (closed with the test)."""
    window = QMainWindow()
    qtbot.addWidget(window)
    window.setCentralWidget(widget)
    window.resize(WINDOW)
    window.show()
    return window
