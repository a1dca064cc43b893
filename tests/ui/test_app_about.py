"""Help → About: version, licence, links, runtime versions and the connected gateway."""

from __future__ import annotations

import platform

from PySide6.QtCore import qVersion
from PySide6.QtGui import QGuiApplication

from gwdesk import __version__
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.dialogs.about import AboutDialog
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.status.tab import StatusTab
from tests.ui.conftest import UiBundle


def about_from_menu(ui: UiBundle, qtbot) -> tuple[MainWindow, AboutDialog]:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [StatusTab])
    qtbot.addWidget(window)
    assert window.about_action in window.help_menu.actions()
    window.about_action.trigger()
    dialog = window.findChild(AboutDialog)
    assert isinstance(dialog, AboutDialog)
    return window, dialog


async def test_help_about_names_the_version_licence_and_runtimes(ui: UiBundle, qtbot) -> None:
    _window, dialog = about_from_menu(ui, qtbot)
    assert dialog.isVisible()
    assert dialog.values["Version"].text() == __version__
    assert dialog.values["Licence"].text() == "MIT"
    assert dialog.values["Python"].text().startswith(platform.python_version())
    assert f"Qt {qVersion()}" in dialog.values["Qt / PySide6"].text()
    assert dialog.values["Gateway"].text() == "Not connected"
    assert "href='https://" in dialog.links.text()
    assert dialog.links.openExternalLinks()
    dialog.accept()


async def test_help_about_says_which_gateway_is_connected(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    _window, dialog = about_from_menu(ui, qtbot)
    assert dialog.values["Gateway"].text() == (f"Sandbox (local, simulated) at {sandbox.rest_url}")
    await ui.tasks.drain()  # the status bar's balance request


async def test_copy_details_puts_a_bug_report_header_on_the_clipboard(ui: UiBundle, qtbot) -> None:
    _window, dialog = about_from_menu(ui, qtbot)
    dialog.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert text.startswith(f"gwdesk {__version__}\n")
    assert "Licence: MIT" in text
    assert "Gateway: Not connected" in text
