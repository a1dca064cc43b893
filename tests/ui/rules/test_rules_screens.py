"""The Keyword rules window as the operator sees it, on a 1024x700 and a 1366x768 screen
at the scale factor this process runs at (`QT_SCALE_FACTOR`, read once per process: run
it again at 1.5 to see a 1366x768 laptop at 150%; under `xvfb-run` with
`QT_QPA_PLATFORM=xcb` to see it drawn by an X server).

Four rules are listed, one with hostile text; the add form shows a refusal; what the
rules did shows a failed forward with a long hostile error; a forward's secret is shown
once. Each window is sized as it opens on that screen (its wish, at most the screen),
checked for clipped text, overlapping widgets and boxes too small to use
(`layout_support.faults`), and saved under `GWDESK_SCREENSHOTS/rules/` when that is set.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from gwdesk.app.rule_editing import RulesFlow
from gwdesk.domain.reply_rules import Draft
from gwdesk.store.local import LocalStore
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.layout_support import faults
from tests.ui.rules.support import RULES, add_rules, opened, record_runs
from tests.ui.screenshot_support import shot

SCREENS = (QSize(1024, 700), QSize(1366, 768))
SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
RULES_WISH = QSize(980, 600)
FORM_WISH = QSize(640, 640)
SECRET_WISH = QSize(620, 220)
FORWARD = Draft("To the CRM", "first word", "CALL", forward="https://crm.example.com/sms-hook")


def folder() -> Path | None:
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(shots) / "rules" if shots else None


def label(size: QSize) -> str:
    platform = os.environ.get("QT_QPA_PLATFORM", "offscreen").split(":")[0]
    return f"{platform}-{size.width()}x{size.height()}@{SCALE:g}"


async def look(widget: QWidget, wish: QSize, room: QSize, name: str) -> None:
    """`widget` at the size it opens at on a screen of `room` logical pixels: pictured
    (saved when asked), of that size, and free of layout faults."""
    size = wish.boundedTo(room)
    widget.resize(size)
    await wait_until(lambda: widget.size() == size, 5, f"{name} resized")
    await shot(widget, folder(), f"{name}.png", size, after=0.3)
    found = faults(widget)
    assert not found, "\n".join(str(f) for f in found)


async def test_the_rules_window_and_its_forms_fit_each_screen(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, store: LocalStore
) -> None:
    await add_rules(flow, *RULES, FORWARD)
    await record_runs(store)
    dialog = await opened(ui, qtbot, flow, 4)
    dialog.table.selectRow(2)
    dialog.test_text.setText("hours?")
    dialog.test_button.click()
    await wait_until(lambda: "would set off" in dialog.tested.text(), 10, "the test")

    for screen in SCREENS:
        room = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        dialog.pages.setCurrentIndex(0)
        await look(dialog, RULES_WISH, room, f"{label(screen)}-rules")

        dialog.add_button.click()
        await wait_until(lambda: dialog.add_form is not None and dialog.add_form.isVisible())
        form = dialog.add_form
        assert form is not None
        form.name.setText("Stopper")
        form.value.setText("STOP")
        form.reply.setPlainText("Sorry to see you go.")
        form.add_button.click()
        await wait_until(lambda form=form: form.shown_refusal() is not None, 10, "a refusal")
        await look(form, FORM_WISH, room, f"{label(screen)}-add-refused")
        form.reject()

        dialog.pages.setCurrentWidget(dialog.done_list)
        forwards = dialog.done_list.forwards_table
        await wait_until(lambda f=forwards: f.rowCount() == 2, 10, "the forwards")
        await look(dialog, RULES_WISH, room, f"{label(screen)}-done")

    dialog.pages.setCurrentIndex(0)
    dialog.add_button.click()
    await wait_until(lambda: dialog.add_form is not None and dialog.add_form.isVisible())
    form = dialog.add_form
    assert form is not None
    form.name.setText("Second CRM")
    form.match.setCurrentIndex(form.match.findData("whole"))
    form.value.setText("BOOKING")
    form.forward.setText("https://crm.example.com/other")
    form.add_button.click()
    await wait_until(lambda: dialog.secret_note is not None, 10, "the secret")
    note = dialog.secret_note
    assert note is not None
    for screen in SCREENS:
        room = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        await look(note, SECRET_WISH, room, f"{label(screen)}-secret")
