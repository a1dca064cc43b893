"""Start-up in two steps: the frame is painted before the gateway stack is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings

from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.ui.controller import AppController
from gwdesk.ui.main_window import STARTING_TEXT, MainWindow
from gwdesk.ui.status.tab import StatusTab
from tests.ui.conftest import UiBundle
from tests.ui.tab_titles import TAB_TITLES

#: Runs the real `gwdesk.ui.app.main`, noting at the first paint of its window what was
#: imported and shown, and after the tabs came what is shown then; then closes it.
PROBE = r"""
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

HEAVY = ("httpx", "zeep", "pydantic", "keyring", "qasync", "gwdesk.gateway", "gwdesk.ui.session")
notes = {}

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if "first_paint" not in notes and event.type() == QEvent.Type.Paint and isinstance(obj, QMainWindow):
            notes["first_paint"] = {
                "imported": sorted(m for m in HEAVY if m in sys.modules),
                "tabs": obj.tab_widget.count(),
                "starting_visible": obj.starting.isVisible(),
                "profiles_enabled": obj.profiles_action.isEnabled(),
            }
            QTimer.singleShot(0, lambda: after_tabs(obj))
        return False

def after_tabs(window):
    notes["after"] = {
        "tabs": [window.tab_widget.tabText(i) for i in range(window.tab_widget.count())],
        "starting_visible": window.starting.isVisible(),
        "profiles_enabled": window.profiles_action.isEnabled(),
    }
    print(json.dumps(notes), flush=True)
    window.close()

app = QApplication(sys.argv[:1])
spy = FirstPaint()
app.installEventFilter(spy)
from gwdesk.ui.app import main
sys.exit(main([]))
"""


def run_probe(tmp_path: Path) -> dict[str, dict[str, object]]:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        GWDESK_CONFIG_DIR=str(tmp_path / "config"),
        GWDESK_DATA_DIR=str(tmp_path / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    notes: dict[str, dict[str, object]] = json.loads(lines[-1])
    return notes


def test_the_frame_paints_before_the_gateway_stack_is_imported_and_the_tabs_follow(
    tmp_path: Path,
) -> None:
    notes = run_probe(tmp_path)

    first = notes["first_paint"]
    assert first["imported"] == []
    assert first["tabs"] == 0
    assert first["starting_visible"] is True
    assert first["profiles_enabled"] is False
    after = notes["after"]
    assert after["tabs"] == TAB_TITLES
    assert after["starting_visible"] is False
    assert after["profiles_enabled"] is True


def test_the_frame_keeps_the_saved_geometry_and_tab_for_the_full_window(
    ui: UiBundle, qtbot
) -> None:
    ui.settings.setValue("window/tab", 0)
    first = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [StatusTab])
    qtbot.addWidget(first)
    first.show()
    first.resize(1000, 700)
    first.close()

    frame = MainWindow(ui.settings)
    qtbot.addWidget(frame)
    assert frame.size().height() == 700  # not the 800 of a first start
    assert frame.starting.text() == STARTING_TEXT
    frame.close()  # closed before its tabs came: the saved tab stays
    assert ui.settings.value("window/tab") == 0


async def test_a_frame_closed_while_starting_ends_the_console_without_connecting(
    ui: UiBundle, qtbot
) -> None:
    frame = MainWindow(QSettings(ui.settings.fileName(), QSettings.Format.IniFormat))
    qtbot.addWidget(frame)
    frame.show()
    frame.close()
    frame.attach(ui.session, ui.tasks, ui.theme, [StatusTab])
    controller = AppController(
        frame, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )

    assert await controller.run() == 0
    assert not ui.session.active
    assert controller.sandbox is None
