"""The whole console at 1280x800 with realistic data, saved as PNGs (`GWDESK_SCREENSHOTS`).

One window with every real tab, connected to a sandbox holding a year of seeded
history plus today's sends, a batch and customers' replies; then one picture of
the window per tab, and of the profiles and About dialogs. Every run checks each
picture (its size, something drawn, each tab's own widgets shown and a picture of
its own); `GWDESK_SCREENSHOTS` only decides whether they are also saved.
"""

from __future__ import annotations

import asyncio
import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMessageBox, QWidget

from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.sandbox.seed import seed_account
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.contacts.tab import ContactsTab
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.dialogs.about import AboutDialog
from gwdesk.ui.dialogs.profiles import ProfilesDialog
from gwdesk.ui.fax_mms.tab import FaxMmsTab
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.optouts.tab import OptOutsTab
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.scheduled.tab import ScheduledTab
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.status.tab import StatusTab
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.fax_mms_support import attach, picture, write
from tests.ui.fax_mms_support import send as send_mms
from tests.ui.screenshot_support import WINDOW, drawn, shot
from tests.ui.tab_titles import TAB_TITLES

SEEDED = 1500
TODAY = [
    ("61412345678", "Your order #1042 has shipped and arrives tomorrow."),
    ("61412345679", "Reminder: your appointment is on Friday at 10:30. Reply YES to confirm."),
    ("61423456780", "Your verification code is 493 817."),
    ("64211234567", "Kia ora! Your booking at Harbour Dental is confirmed."),
]
REPLIES = ["YES", "Can we make it 11 instead?", "STOP"]


def lodge(client: httpx.Client, **body: object) -> dict[str, object]:
    response = client.post("/v2/message/send", json=body)
    response.raise_for_status()
    data: dict[str, object] = response.json()["Data"]
    return data


@pytest.fixture
def busy_sandbox(sandbox_factory: SandboxFactory, tmp_path: Path) -> SandboxThread:
    """A year of seeded history, today's sends (one two-way, one batch) and three replies."""
    db = tmp_path / "sandbox.sqlite3"
    seed_account(db, SEEDED, seed=7)
    sandbox = sandbox_factory(
        db=str(db),
        simulate_delivery=True,
        delivery_delay=(0.05, 0.5),
        delivery_failure_rate=0.05,
        seed=42,
    )
    with httpx.Client(base_url=sandbox.rest_url, auth=("demo", "demo"), timeout=10) as client:
        ids = []
        for number, text in TODAY:
            sent = lodge(client, Message=text, Recipients=[number], ExternalSystemId="today")
            message = sent["Message"]
            assert isinstance(message, dict)
            ids.append(str(message["MessageId"]))
        lodge(
            client,
            Message="Harbour Dental: the clinic is closed on Monday for the public holiday.",
            Recipients=[f"614{n:08d}" for n in range(10_000_000, 10_000_095)],
            ExternalSystemId="holiday-notice",
        )
        for message_id, text in zip(ids[1:], REPLIES, strict=True):
            client.post("/sandbox/replies", json={"message_id": message_id, "text": text})
    return sandbox


def key_widgets(window: MainWindow) -> dict[str, list[QWidget]]:
    """Per tab title, the widgets an operator looks for first on that tab."""
    send, batch, status = window.tab(SendTab), window.tab(BatchTab), window.tab(StatusTab)
    replies, logs, fax_mms = window.tab(RepliesTab), window.tab(LogsTab), window.tab(FaxMmsTab)
    optouts, contacts = window.tab(OptOutsTab), window.tab(ContactsTab)
    scheduled = window.tab(ScheduledTab)
    assert isinstance(scheduled, ScheduledTab)
    assert isinstance(optouts, OptOutsTab)
    assert isinstance(contacts, ContactsTab)
    assert isinstance(send, SendTab)
    assert isinstance(batch, BatchTab)
    assert isinstance(status, StatusTab)
    assert isinstance(replies, RepliesTab)
    assert isinstance(logs, LogsTab)
    assert isinstance(fax_mms, FaxMmsTab)
    return {
        "Send": [send.form.recipient, send.form.editor, send.send_button, send.history],
        "Batch": [batch.recipients, batch.compose, batch.results],
        "Scheduled": [scheduled.table, *scheduled.buttons],
        "Status": [status.key_edit, status.table],
        "Replies": [replies.table, replies.conversation],
        "Contacts": [contacts.search, contacts.detail_box],
        "Opt-outs": [optouts.search, optouts.rules],
        "Logs": [logs.table, logs.chart, logs.detail],
        "Fax / MMS": [fax_mms.mms, fax_mms.send_button, fax_mms.history],
    }


async def put_tabs_in_a_working_state(window: MainWindow, tmp_path: Path) -> None:
    """What an operator's morning looks like: sends, a batch, a lookup, an MMS with pictures,
    and an address book whose names show beside the customers' numbers."""
    store = window.session.store
    assert store is not None
    for name, number, clinic, groups in (
        ("Zoë Nguyễn", "61412345678", "Glebe", ("Patients",)),
        ("Sam Taylor", "61412345679", "Newtown", ("Patients", "March recall")),
        ("Alex Chen", "61423456780", "Bondi", ("Patients",)),
        ("Front desk", "61298765432", "Glebe", ("Staff",)),
    ):
        await asyncio.to_thread(
            store.contacts.add, ContactCard(name, (number,), (("Clinic", clinic),), groups)
        )
    window.session.contacts_changed.emit()
    send = window.tab(SendTab)
    assert isinstance(send, SendTab)
    for number, text in (
        ("0412 345 601", "Hi Sam, your prescription is ready to collect."),
        ("0412 345 602", "Hi Alex, your repair is finished; we close at 17:30 today."),
    ):
        send.form.recipient.set_text(number)
        send.form.editor.set_text(text)
        send.send()
        await wait_until(lambda: not send.sending(), 20, "the send to finish")
    send.form.recipient.set_text("0412 345 603")
    send.form.editor.set_text("Hi Jo, your order is packed and ")

    for number, reason in (
        ("61413003003", "Asked at the front desk not to be texted"),
        ("61413007007", "Moved away; asked by email"),
    ):  # two of the list's customers: the batch leaves them out and says so
        await asyncio.to_thread(store.optouts.set, number, True, reason=reason)
    batch = window.tab(BatchTab)
    assert isinstance(batch, BatchTab)
    source = tmp_path / "customers.csv"
    rows = [("Name", "Mobile", "Suburb")]
    rows += [(f"Customer {i}", f"0413 {i:03d} {i % 1000:03d}", "Glebe") for i in range(140)]
    rows[9] = ("Jack Nguyen", "n/a", "Newtown")
    with source.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    batch.recipients.import_path(source)
    await wait_until(lambda: batch.recipients.result is not None and not batch.recipients.busy)
    batch.compose.editor.set_text("Harbour Dental: your check-up is due. Reply YES to book.")
    batch.send()  # it asks first: a row cannot be sent to
    await wait_until(lambda: batch.confirm_box is not None and batch.confirm_box.isVisible())
    assert batch.confirm_box is not None
    accept = QMessageBox.ButtonRole.AcceptRole
    [send] = [b for b in batch.confirm_box.buttons() if batch.confirm_box.buttonRole(b) is accept]
    send.click()
    await wait_until(lambda: batch.run is not None and not batch.sending, 30, "the batch sent")
    assert batch.totals.figures["excluded"].text() == "2"

    status = window.tab(StatusTab)
    assert isinstance(status, StatusTab)
    status.kind.setCurrentIndex(status.kind.findData("external_system_id"))
    status.key_edit.setText("today")
    status.look_up()
    await wait_until(lambda: status.model.rowCount() == len(TODAY), 10, "the status lookup")

    fax_mms = window.tab(FaxMmsTab)
    assert isinstance(fax_mms, FaxMmsTab)
    mms = fax_mms.mms
    await attach(mms.attachments, write(tmp_path, "loyalty-card.png", picture()))
    mms.recipient.set_text("0412 345 604")
    mms.subject.setText("Your new loyalty card")
    mms.text.setPlainText("Show this card at the front desk for 10% off your next visit.")
    await send_mms(fax_mms)
    await attach(
        mms.attachments,
        write(tmp_path, "clinic-map.png", picture(480, 320, 120)),
        write(tmp_path, "opening-hours.png", picture(300, 300, 30)),
    )
    mms.recipient.set_text("0412 345 605")
    mms.subject.setText("Finding us")
    mms.text.setPlainText("The map to the clinic and our opening hours.")

    logs = window.tab(LogsTab)
    assert isinstance(logs, LogsTab)
    await wait_until(
        lambda: logs.cache_total >= SEEDED and not logs.sync.running, 60, "the log sync"
    )

    replies = window.tab(RepliesTab)
    assert isinstance(replies, RepliesTab)
    await window.session.replies.start(0)  # any free port: the status bar shows it
    await window.session.replies.backfill()  # the seeded replies, received before it listened
    await wait_until(lambda: replies.model is not None and replies.model.total == len(REPLIES))
    replies.table.selectRow(1)
    await wait_until(lambda: len(replies.conversation.entries) >= 2, 10, "a conversation")
    logs.select_row(0)  # the detail pane shows every field of the newest record

    optouts = window.tab(OptOutsTab)
    assert isinstance(optouts, OptOutsTab)
    optouts.refresh()
    await wait_until(lambda: len(optouts.model.rows) == 3, 10, "the opt-out list")
    optouts.table.selectRow(0)  # the history pane shows the selected number's changes
    await wait_until(lambda: optouts.history_model.rows, 10, "a number's history")

    held = window.session.scheduled
    assert held is not None
    for later, text, numbers in (
        (timedelta(hours=3), "Flu clinic on Saturday 9–12: reply YES to book a spot.", 140),
        (timedelta(days=6), "Harbour Dental closes at 15:00 on Christmas Eve.", 1),
    ):
        message = SmsMessage(Channel.REST_SMS, text)
        recipients = ["61412345678"] + [f"614130{i:05d}" for i in range(1, numbers)]
        await held.schedule(message, recipients, datetime.now(UTC) + later)
    scheduled = window.tab(ScheduledTab)
    assert isinstance(scheduled, ScheduledTab)
    await wait_until(lambda: len(scheduled.model.rows) == 2, 10, "the scheduled sends")
    scheduled.table.selectRow(0)


async def test_screenshot_window(
    ui: UiBundle,
    busy_sandbox: SandboxThread,
    qtbot,
    tmp_path: Path,
    screenshots_dir: Path | None,
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.resize(WINDOW)
    window.show()
    await ui.connect(busy_sandbox)
    assert [tab.title for tab in window.tabs] == TAB_TITLES
    await wait_until(lambda: "Credits" in window.status.balance_label.text(), 10, "the balance")
    await put_tabs_in_a_working_state(window, tmp_path)
    assert window.banner.isVisible()
    assert window.status.sandbox_badge.isVisible()

    shown = key_widgets(window)
    assert list(shown) == TAB_TITLES
    window.tab_widget.setCurrentIndex(0)
    await shot(window, screenshots_dir, "window.png", WINDOW)
    pages: dict[str, QImage] = {}
    for index, tab in enumerate(window.tabs):
        window.tab_widget.setCurrentIndex(index)
        name = tab.title.lower().replace(" / ", "_").replace(" ", "_")
        await shot(window, screenshots_dir, f"window-{name}.png", WINDOW)
        for title, widgets in shown.items():
            for widget in widgets:
                assert widget.isVisible() is (title == tab.title), (tab.title, title, widget)
        pages[tab.title] = drawn(tab)
    assert len({bytes(image.constBits()) for image in pages.values()}) == len(TAB_TITLES)
    await ui.tasks.drain()


async def test_screenshot_profiles_dialog(
    ui: UiBundle, sandbox: SandboxThread, qtbot, screenshots_dir: Path | None
) -> None:
    store, vault = ProfileStore(), PasswordVault()
    for name, url, zone in (
        ("Production", "https://api.gateway.example.com", "Australia/Sydney"),
        ("Staging", "https://staging.gateway.example.com", "Australia/Sydney"),
        ("Auckland office", "https://nz.gateway.example.com", "Pacific/Auckland"),
    ):
        profile = Profile(
            name=name,
            rest_url=url,
            lodge_url=f"{url}/dotnet/Lodge.asmx",
            username="operator",
            timezone=zone,
            region="NZ" if "Auckland" in name else "AU",
        )
        store.save(profile)
        vault.set(profile, Secret("demo"))
    store.set_default("Production")
    dialog = ProfilesDialog(store, vault, "Auckland office")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.form.rest_edit.setText("http://nz.gateway.example.com")
    dialog.save()  # refused: the error shows at the field
    assert dialog.form.error_text("rest_url")
    await shot(dialog, screenshots_dir, "profiles-dialog.png")


async def test_screenshot_about_dialog(
    ui: UiBundle, sandbox: SandboxThread, qtbot, screenshots_dir: Path | None
) -> None:
    await ui.connect(sandbox)
    dialog = AboutDialog(ui.session)
    qtbot.addWidget(dialog)
    dialog.show()
    await shot(dialog, screenshots_dir, "about-dialog.png")
