"""The Batch tab with a list's report, as the operator sees it on a 1024x700 and a
1366x768 screen at the scale factor this process runs at (`QT_SCALE_FACTOR`, read once
per process: run it again at 1.5 to see a 1366x768 laptop at 150%).

A list of 250 was sent, three numbers' deliveries failed and its report was made; each
picture is checked for clipped text, overlapping widgets and boxes too small to use
(`layout_support.faults`), and saved under `GWDESK_SCREENSHOTS/batch-report/` when that
is set.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from tests.conftest import SandboxFactory
from tests.contract.report_support import DELIVERING, fail_deliveries
from tests.ui.batch_support import confirm_send, idle, numbers, sent
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.layout_support import faults
from tests.ui.screenshot_support import shot
from tests.ui.test_batch_report import reported

SCREENS = (QSize(1024, 700), QSize(1366, 768))
SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
FAILING = ("61412000003", "61412000107", "61412000201")


def scroller(widget: QWidget) -> QScrollArea:
    """The scroll area a tab's page sits in (it scrolls when the window is too small)."""
    parent = widget.parentWidget()
    while not isinstance(parent, QScrollArea):
        assert parent is not None, "the tab is in no scroll area"
        parent = parent.parentWidget()
    return parent


def folder() -> Path | None:
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(shots) / "batch-report" if shots else None


async def test_the_batch_tab_with_a_report_fits_each_screen(
    ui: UiBundle, qtbot: QtBot, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    fail_deliveries(sandbox, FAILING)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.show()
    await ui.connect(sandbox)
    tab = window.tab(BatchTab)
    assert isinstance(tab, BatchTab)
    window.tab_widget.setCurrentWidget(tab)
    tab.compose.editor.set_text("Flu clinic Saturday 9–12: reply YES to book a time")
    tab.recipients.paste.setPlainText("\n".join(numbers(250)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    await confirm_send(tab)
    await sent(tab)
    await reported(tab, ui)
    assert tab.report.figures["failed"].text() == "3 failed"
    await wait_until(lambda: not ui.tasks.running("batch-follow", owner=tab), 20, "followed")

    for screen in SCREENS:
        size = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        window.resize(size)
        await wait_until(lambda size=size: window.size() == size, 5, "the window resized")
        page = scroller(tab)
        page.ensureWidgetVisible(tab.report, 0, 0)  # the operator scrolls to it if need be
        await wait_until(lambda: tab.report.visibleRegion().boundingRect().size()
                         == tab.report.size(), 5, "the report in view")  # fmt: skip
        name = f"{screen.width()}x{screen.height()}@{SCALE:g}-report.png"
        await shot(window, folder(), name, after=0.3)
        found = faults(tab.report)
        assert not found, "\n".join(str(f) for f in found)
    await idle(tab, ui)
