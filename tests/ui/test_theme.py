"""The palettes: what an operator must see stays visible in the dark one too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QCheckBox, QRadioButton, QWidget
from pytestqt.qtbot import QtBot

from tests.ui.conftest import UiBundle

#: WCAG 2.1's least contrast for the parts of a control an operator must see (1.4.11).
NON_TEXT_CONTRAST = 3.0


def luminance(colour: QColor) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.red())
        + 0.7152 * channel(colour.green())
        + 0.0722 * channel(colour.blue())
    )


def contrast(a: QColor, b: QColor) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def indicator_contrast(widget: QWidget) -> float:
    """The most a pixel of the indicator (the control's left square) stands out of the window."""
    image = widget.grab().toImage()
    window = widget.palette().color(QPalette.ColorRole.Window)
    side = min(image.height(), image.width(), round(18 * image.devicePixelRatio()))
    return max(contrast(image.pixelColor(x, y), window) for x in range(side) for y in range(side))


@pytest.fixture
def dark(ui: UiBundle) -> Iterator[None]:
    was = ui.theme.dark
    ui.theme.set_dark(True)
    yield
    ui.theme.set_dark(was)


@pytest.mark.usefixtures("dark")
async def test_an_unchecked_radio_button_stands_out_of_a_dark_window(qtbot: QtBot) -> None:
    radio = QRadioButton("Lodge SMS")
    qtbot.addWidget(radio)
    radio.show()
    assert indicator_contrast(radio) >= NON_TEXT_CONTRAST


@pytest.mark.usefixtures("dark")
async def test_an_unchecked_check_box_stands_out_of_a_dark_window(qtbot: QtBot) -> None:
    box = QCheckBox("Keep the text")
    qtbot.addWidget(box)
    box.show()
    assert indicator_contrast(box) >= NON_TEXT_CONTRAST


async def test_the_light_palette_keeps_its_own_indicators(ui: UiBundle, qtbot: QtBot) -> None:
    ui.theme.set_dark(False)
    radio = QRadioButton("Lodge SMS")
    qtbot.addWidget(radio)
    radio.show()
    assert indicator_contrast(radio) >= NON_TEXT_CONTRAST
