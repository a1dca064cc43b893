"""One scale's layout pass: every tab and the main dialogs at three screen sizes.

Run by `test_layout.py` in a subprocess per scale factor (`QT_SCALE_FACTOR` is read
once, when the QApplication is made), never collected on its own (its name is not
`test_*`). A screen of W x H pixels at scale s gives the console W/s x H/s logical
pixels: the window is fitted to that, filled with hostile and long data, and every
tab and dialog is walked for faults (`layout_support.faults`). Pictures are saved
under `GWDESK_SCREENSHOTS/layout/` as `<size>@<scale>-<tab>.png`.
"""

from __future__ import annotations

import asyncio
import csv
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from gwdesk.app.reply_state import ListenerSettings
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.profile import Profile
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.dialogs.profiles import ProfilesDialog
from gwdesk.ui.fax_mms.tab import FaxMmsTab
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.optouts.tab import OptOutsTab
from gwdesk.ui.outbox.dialog import OutboxDialog
from gwdesk.ui.replies.listener_settings import ListenerSettingsDialog
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.scheduled.edits import RecipientsDialog, TextDialog, TimeDialog
from gwdesk.ui.scheduled.questions import cancel_box, missed_box
from gwdesk.ui.scheduled.tab import ScheduledTab
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.status.tab import StatusTab
from gwdesk.ui.widgets.question import question_box
from gwdesk.ui.widgets.template_picker import TemplatesDialog
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.fax_mms_support import attach, picture, write
from tests.ui.layout_support import Finding, faults, fits

SCREENS = [QSize(1024, 700), QSize(1366, 768), QSize(1920, 1080)]
"""Screens in device pixels, as operators have them (`screens_config` lays them side by
side for the offscreen platform)."""
SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
LONG_NAME = "Zoë <b>Nguyễn</b>-Wolfeschlegelsteinhausenbergerdorff \u202eesrever\u202c & Sons"
CONTACT_NAME = "Zoë <b>Nguyễn</b>-Wolfeschlegelsteinhausenbergerdorff & Sons"
"""The store refuses bidi controls in a contact's name; the rest of the hostility stays."""
LONG_TEXT = (
    "<script>alert(1)</script> Harbour Dental: your check-up is due; reply YES to book or "
    "call 02 9999 0000. \x1b[31mred\x1b[0m "
    + "Averyveryverylongwordwithoutanyspacesthatcannotwrap" * 2
    + " and then ordinary words to fill the lines. " * 4
)
LONG_REPLY = (
    "Can we make it 11 instead? <i>I</i> work until 10:30 & the bus is late on Fridays; "
    "also my daughter Zoë needs a check-up too, is 3pm OK?? " * 3
)


def screens_config() -> dict[str, object]:
    """The offscreen platform's screens (`offscreen:configfile=`): `SCREENS`, side by side."""
    screens, left = [], 0
    for size in SCREENS:
        screens.append(
            {
                "name": f"{size.width()}x{size.height()}",
                "x": left,
                "y": 0,
                "width": size.width(),
                "height": size.height(),
                "logicalDpi": 96,
                "logicalBaseDpi": 96,
                "dpr": 1,
            }
        )
        left += size.width()
    return {"windowFrameMargins": False, "screens": screens}


def label_of(index: int) -> str:
    """Screen `index` as the operator's settings name it: "1366x768@1.5"."""
    size = SCREENS[index]
    return f"{size.width()}x{size.height()}@{SCALE:g}"


def put_on(window: QWidget, screen: QScreen) -> None:
    """`window` filling `screen`'s free area, as an operator maximises it there."""
    handle = window.windowHandle()
    if handle is not None:
        handle.setScreen(screen)
    window.setGeometry(screen.availableGeometry())


def lodge(client: httpx.Client, **body: object) -> str:
    response = client.post("/v2/message/send", json=body)
    response.raise_for_status()
    return str(response.json()["Data"]["Message"]["MessageId"])


@pytest.fixture
def hostile_sandbox(sandbox_factory) -> Iterator[SandboxThread]:  # type: ignore[no-untyped-def]
    """A sandbox with today's sends (long texts) and two long, marked-up replies."""
    sandbox = sandbox_factory()
    with httpx.Client(base_url=sandbox.rest_url, auth=("demo", "demo"), timeout=10) as client:
        for index, number in enumerate(("61412345678", "61412345679", "61423456780")):
            message_id = lodge(
                client, Message=LONG_TEXT, Recipients=[number], ExternalSystemId="today"
            )
            if index < 2:
                client.post("/sandbox/replies", json={"message_id": message_id, "text": LONG_REPLY})
    return sandbox


async def fill(window: MainWindow, tmp_path: Path) -> None:
    """Every tab with long and hostile data, as far as an operator gets before sending."""
    store = window.session.store
    assert store is not None
    for index, number in enumerate(("61412345678", "61412345679", "61298765432")):
        card = ContactCard(
            f"{CONTACT_NAME} {index}",
            (number,),
            (("Clinic", CONTACT_NAME),),
            (CONTACT_NAME, "Staff"),
        )
        await asyncio.to_thread(store.contacts.add, card)
    window.session.contacts_changed.emit()
    for number in ("61413003003", "61413007007"):
        await asyncio.to_thread(store.optouts.set, number, True, reason=LONG_REPLY)

    send = window.tab(SendTab)
    assert isinstance(send, SendTab)
    send.form.recipient.set_text("0412 345 601")
    send.form.editor.set_text(LONG_TEXT[:150])
    send.send()
    await wait_until(lambda: not send.sending(), 20, "the send to finish")
    send.form.recipient.set_text("0412 345 603, <b>0412</b>")
    send.form.editor.set_text(LONG_TEXT)

    batch = window.tab(BatchTab)
    assert isinstance(batch, BatchTab)
    source = tmp_path / f"{'customers-' * 8}.csv"
    rows = [("Name", "Mobile", "Suburb")]
    rows += [(f"{LONG_NAME} {i}", f"0413 {i:03d} {i:03d}", "Glebe") for i in range(40)]
    rows[5] = ("Jack <b>Nguyen</b>", "n/a", LONG_NAME)
    with source.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    batch.recipients.import_path(source)
    await wait_until(lambda: batch.recipients.result is not None and not batch.recipients.busy)
    batch.compose.editor.set_text(LONG_TEXT)

    status = window.tab(StatusTab)
    assert isinstance(status, StatusTab)
    status.kind.setCurrentIndex(status.kind.findData("external_system_id"))
    status.key_edit.setText("today")
    status.look_up()
    await wait_until(lambda: status.model.rowCount() >= 3, 10, "the status lookup")

    fax_mms = window.tab(FaxMmsTab)
    assert isinstance(fax_mms, FaxMmsTab)
    mms = fax_mms.mms
    await attach(
        mms.attachments,
        write(tmp_path, f"{'a-very-long-file-name-' * 5}.png", picture()),
        write(tmp_path, "not-a-picture.png", b"<html>not a picture</html>"),
    )
    mms.recipient.set_text("0412 345 604")
    mms.subject.setText(LONG_NAME)
    mms.text.setPlainText(LONG_TEXT)

    await window.session.replies.start(0)
    await window.session.replies.backfill()
    replies = window.tab(RepliesTab)
    assert isinstance(replies, RepliesTab)
    await wait_until(lambda: replies.model is not None and replies.model.total == 2)
    replies.table.selectRow(0)
    await wait_until(lambda: len(replies.conversation.entries) >= 2, 10, "a conversation")

    logs = window.tab(LogsTab)
    assert isinstance(logs, LogsTab)
    await wait_until(lambda: not logs.sync.running, 30, "the first log sync")
    logs.sync_now()  # and again, for the send above
    await wait_until(lambda: logs.cache_total >= 4 and not logs.sync.running, 30, "the log sync")
    logs.select_row(0)

    optouts = window.tab(OptOutsTab)
    assert isinstance(optouts, OptOutsTab)
    optouts.refresh()
    await wait_until(lambda: len(optouts.model.rows) == 2, 10, "the opt-out list")
    optouts.table.selectRow(0)

    scheduled = window.session.scheduled
    assert scheduled is not None
    soon = datetime.now(UTC) + timedelta(hours=2)
    for index, text in enumerate(("Your check-up is due: reply YES to book.", LONG_TEXT)):
        numbers = [f"614130{n:05d}" for n in range(1 + 200 * index)]
        await scheduled.schedule(SmsMessage(Channel.REST_SMS, text), numbers, soon)
    tab = window.tab(ScheduledTab)
    assert isinstance(tab, ScheduledTab)
    await wait_until(lambda: len(tab.model.rows) == 2, 10, "the scheduled sends")
    tab.table.selectRow(1)


async def settle() -> None:
    """Posted layouts and repaints run (a few passes of the loop; never `processEvents`
    inside a task, which would step other tasks inside this one)."""
    for _ in range(3):
        await asyncio.sleep(0.02)
    # A text that changed meanwhile (the cost line, read off the GUI thread) posts a new
    # layout: run the posted layouts now, and only those, so the check sees them done.
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


def save(widget: QWidget, folder: Path | None, name: str) -> None:
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    assert widget.grab().save(str(folder / name)), name


def dialogs(window: MainWindow) -> Iterator[tuple[str, QDialog]]:
    """The main dialogs, each shown over `window` with long and hostile text in it."""
    store, vault = ProfileStore(), PasswordVault()
    profile = Profile(
        name=CONTACT_NAME[:60],
        rest_url="https://api.gateway.example.com/" + "long-path/" * 8,
        lodge_url="https://api.gateway.example.com/dotnet/Lodge.asmx",
        username="operator",
        timezone="Australia/Sydney",
        region="AU",
    )
    store.save(profile)
    yield "profiles", ProfilesDialog(store, vault, profile.name, window)
    yield "listener-settings", ListenerSettingsDialog(ListenerSettings(), window)
    send = window.tab(SendTab)
    assert isinstance(send, SendTab)
    send.picker.ask_name()
    assert send.picker.prompt is not None
    yield "template-save", send.picker.prompt
    yield "templates", TemplatesDialog(send.picker, window.tab(SendTab).theme)
    yield "outbox", OutboxDialog(window.session, window.tasks, window)
    box, _yes = question_box(
        window, "Send to 40 recipients?", f"{LONG_TEXT}\n\n{LONG_REPLY}", "Send to 40"
    )
    yield "send-question", box
    scheduled = window.session.scheduled
    assert scheduled is not None
    tab = window.tab(ScheduledTab)
    assert isinstance(tab, ScheduledTab)
    held = tab.model.rows[-1].send
    yield "scheduled-text", TextDialog(scheduled, held, window.tasks, window)
    yield "scheduled-time", TimeDialog(scheduled, held, window.tasks, parent=window)
    yield "scheduled-recipients", RecipientsDialog(scheduled, held, window.tasks, "AU", window)
    yield "scheduled-cancel", cancel_box(window, held)[0]
    yield "scheduled-missed", missed_box(window, "12 scheduled sends were due while gwdesk "
                                         "was closed (earliest 09:00 yesterday).")[0]  # fmt: skip


def screens() -> list[QScreen]:
    """The offscreen screens, left to right (asked each time: Qt may replace them)."""
    return sorted(QGuiApplication.screens(), key=lambda s: s.geometry().x())


async def check_dialog(
    name: str, dialog: QDialog, index: int, folder: Path | None
) -> list[Finding]:
    """`dialog` opened as it opens for the operator on screen `index`, checked and pictured."""
    dialog.show()
    await settle()
    screen = screens()[index]
    room = screen.availableGeometry().size()
    found = [Finding("too big", name, why)] if (why := fits(dialog, room)) else []
    found += [Finding(f.kind, f"{name}: {f.where}", f.detail) for f in faults(dialog)]
    save(dialog, folder, f"{label_of(index)}-dialog-{name}.png")
    return found


async def test_every_tab_and_dialog_fits_each_screen(
    ui: UiBundle, hostile_sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    folder = os.environ.get("GWDESK_SCREENSHOTS")
    pictures = Path(folder) / "layout" if folder else None
    assert len(screens()) == len(SCREENS), "run through test_layout.py, with its screens"
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.show()
    put_on(window, screens()[-1])
    await ui.connect(hostile_sandbox)
    await fill(window, tmp_path)

    found: list[Finding] = []
    for index in range(len(SCREENS)):
        screen = screens()[index]
        label, room = label_of(index), screen.availableGeometry().size()
        put_on(window, screen)
        await settle()
        if why := fits(window, room):
            found.append(Finding("too big", f"window {label}", why))
        for number, tab in enumerate(window.tabs):
            window.tab_widget.setCurrentIndex(number)
            await settle()
            where = f"{label} {tab.title}"
            found += [Finding(f.kind, f"{where}: {f.where}", f.detail) for f in faults(window)]
            name = tab.title.lower().replace(" / ", "_").replace(" ", "_")
            save(window, pictures, f"{label}-{name}.png")
        for name, dialog in dialogs(window):
            found += await check_dialog(name, dialog, index, pictures)
            dialog.done(0)
            dialog.deleteLater()
    await ui.tasks.drain()
    assert not found, "\n".join(str(f) for f in found)
