"""The Scheduled tab and its dialogs as the operator sees them, on a 1024x700 and a
1366x768 screen at the scale factor this process runs at (`QT_SCALE_FACTOR`, read once
per process: run it again at 1.5 to see a 1366x768 laptop at 150%).

Two sends are listed, one with hostile text; each picture is checked for clipped text,
overlapping widgets and boxes too small to use (`layout_support.faults`), and saved
under `GWDESK_SCREENSHOTS/scheduled/` when that is set.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.scheduled.edits import RecipientsDialog, TextDialog, TimeDialog
from gwdesk.ui.scheduled.questions import cancel_box, missed_box
from gwdesk.ui.scheduled.tab import ScheduledTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.layout_support import faults
from tests.ui.scheduled_support import core, listing, schedule
from tests.ui.screenshot_support import shot

SCREENS = (QSize(1024, 700), QSize(1366, 768))
SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
HOSTILE = (
    "<b>Flu clinic</b> Saturday 9–12 ‮ 'call' \x1b[31mnow\x1b[0m <img src=/dev/zero> "
    "bring your Medicare card; reply STOP to opt out\nSecond line"
)
MANY = tuple(f"614120{n:05d}" for n in range(240))


def folder() -> Path | None:
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(shots) / "scheduled" if shots else None


def label(size: QSize) -> str:
    return f"{size.width()}x{size.height()}@{SCALE:g}"


async def look(widget: QWidget, name: str) -> None:
    """`widget` pictured (saved when asked) and checked for layout faults."""
    await shot(widget, folder(), f"{name}.png", after=0.3)
    found = faults(widget)
    assert not found, "\n".join(str(f) for f in found)


async def test_the_scheduled_tab_and_its_dialogs_fit_each_screen(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.show()
    await ui.connect(sandbox)
    store = ui.session.store
    assert store is not None
    store.contacts.add(ContactCard("Zoë Nguyễn-Wolfeschlegel", (MANY[0],), (), ()))
    await schedule(ui, "Reminder: your appointment is tomorrow at 10:30. Reply YES to confirm.")
    await schedule(ui, HOSTILE, at=timedelta(days=2, hours=3), numbers=MANY)
    tab = window.tab(ScheduledTab)
    assert isinstance(tab, ScheduledTab)
    window.tab_widget.setCurrentWidget(tab)
    await listing(tab, 2)
    tab.table.selectRow(1)

    for screen in SCREENS:
        size = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        window.resize(size)
        await wait_until(lambda size=size: window.size() == size, 5, "the window resized")
        await look(window, f"{label(screen)}-tab")
        [_, hostile] = tab.model.rows
        scheduled = core(ui)
        profile = ui.session.profile
        assert profile is not None
        zone = (profile.zone, profile.timezone)
        dialogs = {
            "text": TextDialog(scheduled, hostile.send, ui.tasks, window),
            "time": TimeDialog(scheduled, hostile.send, ui.tasks, zone, window),
            "recipients": RecipientsDialog(scheduled, hostile.send, ui.tasks, "AU", window),
            "cancel": cancel_box(window, hostile.send)[0],
            "missed": missed_box(window, "3 scheduled sends were due while gwdesk was closed "
                                 "(earliest 09:00 today).")[0],
        }  # fmt: skip
        for name, dialog in dialogs.items():
            dialog.show()
            await look(dialog, f"{label(screen)}-{name}")
            dialog.done(0)
            dialog.deleteLater()


async def test_the_empty_scheduled_tab_is_not_an_empty_table(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.show()
    await ui.connect(sandbox)
    tab = window.tab(ScheduledTab)
    assert isinstance(tab, ScheduledTab)
    window.tab_widget.setCurrentWidget(tab)
    screen = SCREENS[0]
    window.resize(QSize(round(screen.width() / SCALE), round(screen.height() / SCALE)))
    await wait_until(lambda: tab.empty.isVisible(), 10, "the empty state")

    await look(window, f"{label(screen)}-empty")
    assert not tab.table.isVisible()
