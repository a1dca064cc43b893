"""The settings kept in the console's window state (`console.ini`), through their declarations:
each round-trips through the file, reads as its default when absent, and a garbled value
(a file edited by hand or written by something else) is the default, the window opening
as on a first start. A file written before the declarations keeps working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QByteArray, QSettings

from gwdesk.domain.settings import WINDOW_GEOMETRY, WINDOW_TAB, Place, kept_in
from gwdesk.ui.main_window import DEFAULT_SIZE, MainWindow
from gwdesk.ui.status.tab import StatusTab
from gwdesk.ui.window_state import keep, kept
from tests.settings_support import GARBLED, SAMPLES
from tests.ui.conftest import UiBundle


def console_ini(path: Path) -> QSettings:
    return QSettings(str(path), QSettings.Format.IniFormat)


def test_every_window_setting_round_trips_through_console_ini(tmp_path: Path) -> None:
    settings = kept_in(Place.WINDOW_STATE)
    assert settings
    first = console_ini(tmp_path / "console.ini")
    for setting in settings:
        keep(first, setting, SAMPLES[setting.name])
    first.sync()
    again = console_ini(tmp_path / "console.ini")  # read back from the file, as after a restart
    for setting in settings:
        assert kept(again, setting) == SAMPLES[setting.name], setting.name


def test_a_new_console_ini_reads_every_window_setting_as_its_default(tmp_path: Path) -> None:
    settings = console_ini(tmp_path / "console.ini")
    for setting in kept_in(Place.WINDOW_STATE):
        assert kept(settings, setting) == setting.default


#: What console.ini may hold instead (QSettings keeps numbers of at most 64 bits; a
#: longer one comes back as text).
INI_GARBLED = [g for g in GARBLED if not isinstance(g, int) or abs(g) < 2**62]
INI_GARBLED += ["1" * 30, QByteArray(b"\x00\x01")]


@pytest.mark.parametrize("garbage", INI_GARBLED, ids=repr)
def test_a_garbled_window_setting_reads_as_its_default(tmp_path: Path, garbage: Any) -> None:
    first = console_ini(tmp_path / "console.ini")
    for setting in kept_in(Place.WINDOW_STATE):
        first.setValue(setting.stored_as, garbage)
    first.sync()
    again = console_ini(tmp_path / "console.ini")
    for setting in kept_in(Place.WINDOW_STATE):
        value = kept(again, setting)
        assert setting.write(value) == value, setting.name  # whatever is read is allowed


def test_a_window_setting_is_not_read_from_another_place(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="profile store"):
        kept(console_ini(tmp_path / "console.ini"), kept_in(Place.PROFILE_STORE)[0])


def test_a_console_ini_from_before_the_declarations_still_restores_the_window(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    path = tmp_path / "old.ini"
    old = console_ini(path)
    first = MainWindow.build(ui.session, ui.tasks, ui.theme, old, [StatusTab, StatusTab])
    qtbot.addWidget(first)
    first.show()
    first.resize(1000, 700)
    old.setValue("window/geometry", first.saveGeometry())  # the keys older versions wrote
    old.setValue("window/tab", 1)
    old.sync()
    first.hide()

    window = MainWindow.build(
        ui.session, ui.tasks, ui.theme, console_ini(path), [StatusTab, StatusTab]
    )
    qtbot.addWidget(window)
    assert window.size().height() == 700
    assert window.tab_widget.currentIndex() == 1


def test_a_garbled_console_ini_opens_the_window_as_on_a_first_start(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    path = tmp_path / "garbled.ini"
    garbled = console_ini(path)
    garbled.setValue(WINDOW_GEOMETRY.stored_as, "not a geometry")
    garbled.setValue(WINDOW_TAB.stored_as, "-7")
    garbled.sync()
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, console_ini(path), [StatusTab])
    qtbot.addWidget(window)
    first_start = DEFAULT_SIZE.boundedTo(window.screen().availableGeometry().size())
    assert window.size() == first_start  # 1280x800, or the whole of a smaller screen
    assert window.tab_widget.currentIndex() == 0
