"""A window saved on a larger screen reopens inside the screen it opens on."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QApplication

from gwdesk.domain.settings import WINDOW_GEOMETRY
from gwdesk.ui.main_window import MainWindow, clamped
from gwdesk.ui.window_state import keep


def test_a_window_saved_at_1920x1200_fits_a_1600x1000_screen() -> None:
    fitted = clamped(QRect(0, 0, 1920, 1200), QRect(0, 0, 1600, 1000))
    assert fitted == QRect(0, 0, 1600, 1000)


def test_a_window_saved_off_the_edge_is_moved_onto_the_screen() -> None:
    fitted = clamped(QRect(1400, 900, 800, 600), QRect(0, 0, 1600, 1000))
    assert fitted == QRect(800, 400, 800, 600)


def test_a_window_that_fits_stays_where_it_was_left() -> None:
    assert clamped(QRect(100, 80, 1280, 800), QRect(0, 0, 1600, 1000)) == QRect(100, 80, 1280, 800)


def test_the_restored_main_window_is_no_bigger_than_its_screen(
    qapp: QApplication, qtbot, tmp_path: Path
) -> None:
    big = MainWindow(QSettings(str(tmp_path / "first.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(big)
    room = big.screen().availableGeometry()
    big.resize(room.width() + 320, room.height() + 200)  # saved on a larger screen
    settings = QSettings(str(tmp_path / "console.ini"), QSettings.Format.IniFormat)
    keep(settings, WINDOW_GEOMETRY, bytes(big.saveGeometry().data()))
    assert big.width() > room.width()

    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.show()
    assert room.contains(window.geometry()), (window.geometry(), room)
