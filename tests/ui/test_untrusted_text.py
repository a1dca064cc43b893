"""Untrusted text stays text, across the whole console (issue 12).

Hostile text arrives the ways it really does: a customer's reply through the
sandbox's webhook to the console's listener, a keyword forward, a webhook call
with a NUL and a sender name of markup, a message another tool lodged (synced
into the Logs tab), a status lookup, an error the gateway echoes, a CSV file and
its name, an attachment's name, the profile's name, a contact's name and fields
(shown beside the customer's number), a saved template's name and text, and the
account's name, type and currency as the gateway's account resources answer them
(the balance in the status bar, a send's cost). Then every view that shows
them is hovered (the tooltip of every cell and widget, and real tooltips) and
selected, and everything on screen is read the way Qt reads it: no string from
outside may take effect as markup, no control code may reach the screen, and the
process must not balloon (an `<img src="/dev/zero">` rendered as rich text reads
/dev/zero until memory runs out).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableView,
    QTextEdit,
    QToolTip,
    QWidget,
)
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.logs.rows import FIELDS
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.contacts.tab import ContactsTab
from gwdesk.ui.controller import default_tabs, sandbox_profile
from gwdesk.ui.dialogs.about import AboutDialog
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.fax_mms.tab import FaxMmsTab
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.replies.notifier import Notice
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.replies.table import FROM, MESSAGE
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.status.tab import StatusTab
from gwdesk.ui.tab_base import BaseTab
from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import control, make_reply
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.fax_mms_support import attach, picture, write
from tests.ui.plain_text_support import Shown, label_shows, shown
from tests.ui.replies_support import OURS, post_reply
from tests.ui.screenshot_support import WINDOW, shot

IMAGE = '<img src="/dev/zero">'
TAIL = f'{IMAGE} <b>bold</b> <a href="https://evil.example">x</a> \x1b]0;pwned\x07 \x1b[2J \u202e!'
SHOWN_TAIL = f'{IMAGE} <b>bold</b> <a href="https://evil.example">x</a> ␛]0;pwned␇ ␛[2J \ufffd!'
T = TypeVar("T", bound=BaseTab)
RAW_CONTROLS = ("\x00", "\x1b", "\x07", "\u202e")
CUSTOMER = "61412345678"
OTHER_CUSTOMER = "61412000002"
KEYWORD = "canarykw"
SENDER_NAME = "canary-from<b>x</b>"

#: Each source's text, and the characters the operator must see wherever it shows.
MESSAGE_TEXT = f"canary-msg {TAIL}"
REPLY_TEXT = f"canary-reply {TAIL}"
KEYWORD_TEXT = f"{KEYWORD} canary-kw {TAIL}"
NUL_TEXT = "canary-nul <b>bold</b> \x00 end"
EXTERNAL_ID = f"canary-id<b>bold</b>{IMAGE}\x00\x1b"
TAGS = f"canary-tag {TAIL} \x00"
MISSING_ID = "<b>canary-key</b>"
PROFILE_NAME = "canary-name <b>bold</b> [*]"
FILE_NAME = "canary-file<b>x<b>.csv"
CELL = f"canary-cell {IMAGE} <b>bold</b> \x1b[2J"
ATTACHMENT = "canary-att<b>x<b>.png"
SENT_TEXT = f"canary-sent {IMAGE} <b>bold</b>"
ERROR_TEXT = f"canary-err {TAIL}"
CONTACT_NAME = f"canary-contact <b>bold</b> {IMAGE}"
CONTACT_FIELD = f"canary-field {IMAGE} <b>bold</b>"
TEMPLATE_NAME = "canary-tname <b>bold</b>"
TEMPLATE_TEXT = f"canary-ttext {IMAGE} <b>bold</b> \x1b[2J {{clinic}}"
EXPECTED = {
    "canary-msg": f"canary-msg {SHOWN_TAIL}",
    "canary-reply": f"canary-reply {SHOWN_TAIL}",
    "canary-kw": f"canary-kw {SHOWN_TAIL}",
    "canary-nul": "canary-nul <b>bold</b> ␀ end",
    "canary-from": SENDER_NAME,
    "canary-id": f"canary-id<b>bold</b>{IMAGE}␀␛",
    "canary-tag": f"canary-tag {SHOWN_TAIL}",
    "canary-key": MISSING_ID,
    "canary-name": PROFILE_NAME,
    "canary-file": FILE_NAME,
    "canary-cell": f"canary-cell {IMAGE} <b>bold</b> ␛[2J",
    "canary-att": ATTACHMENT,
    "canary-sent": SENT_TEXT,
    "canary-err": f"canary-err {SHOWN_TAIL}",
    "canary-contact": CONTACT_NAME,
    "canary-field": CONTACT_FIELD,
    "canary-tname": TEMPLATE_NAME,
    "canary-ttext": f"canary-ttext {IMAGE} <b>bold</b> ␛[2J {{clinic}}",
}
#: Where each text must have been seen (so the checks cannot pass by seeing nothing).
REQUIRED = {
    "canary-msg": [
        "Log records tooltip",
        "Log records cell",
        "Log records (shown tooltip)",
        "Message (label)",
    ],
    "canary-reply": [
        "Replies tooltip",
        "Replies cell",
        "Replies (shown tooltip)",
        "Conversation transcript",
    ],
    "canary-kw": ["Replies tooltip", "Replies cell"],
    "canary-nul": ["Replies tooltip", "Replies cell"],
    "canary-from": ["Replies cell", "Conversation (label)"],
    "canary-id": ["Status results tooltip", "Status results cell"],
    "canary-tag": ["Status results tooltip", "Status results cell"],
    "canary-key": ["Lookup error (label)"],
    "canary-name": [
        "GatewayStatusBar ElidedLabel (label)",
        "GatewayStatusBar ElidedLabel tooltip",
        "window title",
        "Gateway (label)",
    ],
    "canary-file": ["Imported file (label)", "Imported file tooltip"],
    "canary-cell": ["Invalid rows tooltip", "Invalid rows cell", "File preview cell"],
    "canary-att": [
        "AttachmentRow ElidedLabel (label)",
        "AttachmentRow ElidedLabel tooltip",
        "Previewed file (label)",
    ],
    "canary-sent": ["Sent messages tooltip", "Sent messages cell", "Selected send (label)"],
    "canary-err": ["qt_msgbox_informativelabel (label)"],
    "canary-contact": [
        "Replies cell",
        "Conversation (label)",
        "Contacts cell",
        "Contact shown (label)",
    ],
    "canary-field": ["Contacts cell", "Fields of the contact (label)"],
    "canary-tname": ["Saved templates cell"],
    "canary-ttext": ["Saved templates tooltip"],
}
LOG_MESSAGE = next(i for i, f in enumerate(FIELDS) if f.column == "message")
RSS_GROWTH_LIMIT = 50 * 1024 * 1024


def rss() -> int:
    """The process's resident memory, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@dataclass
class Audit:
    """Everything read off the screen: what went wrong, and where each text was seen."""

    expected: Mapping[str, str] = field(default_factory=lambda: EXPECTED)
    """Each canary, and the characters the operator must see wherever it shows."""
    required: Mapping[str, list[str]] = field(default_factory=lambda: REQUIRED)
    """Where each canary must have been seen."""
    problems: list[str] = field(default_factory=list)
    seen: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    checked: int = 0

    def check(self, where: str, seen: Shown) -> None:
        self.checked += 1
        text = seen.text
        for char in RAW_CONTROLS:
            if char in text:
                self.problems.append(f"{where}: raw control U+{ord(char):04X} in {text!r}")
        if seen.images:
            self.problems.append(f"{where}: loads images {seen.images} from {text!r}")
        if any("evil.example" in link for link in seen.links):
            self.problems.append(f"{where}: a live link {seen.links}")
        if any("bold" in run for run in seen.bold):
            self.problems.append(f"{where}: <b> took effect on {seen.bold}")
        for canary, expected in self.expected.items():
            if canary in text:
                self.seen[canary].add(where)
                if expected not in text:
                    self.problems.append(f"{where}: shows {text!r}, not {expected!r}")

    def missing(self) -> dict[str, list[str]]:
        absent = {}
        for canary, places in self.required.items():
            lost = [p for p in places if not any(p in where for where in self.seen[canary])]
            if lost:
                absent[canary] = lost
        return absent


def name_of(widget: QWidget) -> str:
    own = widget.accessibleName() or widget.objectName()
    if own:
        return own
    parent = widget.parentWidget()
    return f"{type(parent).__name__} {type(widget).__name__}" if parent else type(widget).__name__


def audit_window(window: MainWindow, audit: Audit) -> None:
    """Read every label, tooltip, cell, transcript and title the way Qt shows them."""
    audit_widgets(window, audit)
    title = window.windowHandle().title()
    audit.check("window title", Shown(title, False))
    audit.check("status bar message", Shown(window.status.currentMessage(), False))


def audit_widgets(root: QWidget, audit: Audit) -> None:
    for widget in [root, *root.findChildren(QWidget)]:
        if widget.toolTip():
            audit.check(f"{name_of(widget)} tooltip", shown(widget.toolTip()))
        if isinstance(widget, QLabel):
            audit.check(f"{name_of(widget)} (label)", label_shows(widget))
        if isinstance(widget, QTextEdit) and widget.isReadOnly():
            audit.check(f"{name_of(widget)}", shown(widget.toHtml(), rich=True))
        if isinstance(widget, QAbstractItemView) and not isinstance(widget, QHeaderView):
            audit_view(widget, audit)


def audit_view(view: QAbstractItemView, audit: Audit) -> None:
    """Hover every cell: the tooltip Qt would show, and the text the delegate draws."""
    model = view.model()
    if model is None:
        return
    name = name_of(view)
    top = QModelIndex()
    columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(top)
    for column in range(columns):
        tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        if tip:
            audit.check(f"{name} header tooltip", shown(str(tip)))
        for row in range(min(model.rowCount(top), 200)):
            index = model.index(row, column)
            tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
            if tip:
                audit.check(f"{name} tooltip r{row}c{column}", shown(str(tip)))
            text = model.data(index, Qt.ItemDataRole.DisplayRole)
            if isinstance(text, str) and text:
                audit.check(f"{name} cell r{row}c{column}", Shown(text, False))


async def hover(table: QTableView, row: int, column: int, audit: Audit, where: str) -> QPixmap:
    """A real hover: the view asks for the tooltip and Qt's tooltip label shows it."""
    table.scrollTo(table.model().index(row, column))
    place = table.visualRect(table.model().index(row, column)).center()
    return await hover_at(table.viewport(), place, audit, where)


async def hover_at(widget: QWidget, place: QPoint, audit: Audit, where: str) -> QPixmap:
    """A real hover at `place` of `widget`: Qt's tooltip label shows its tooltip."""
    event = QHelpEvent(QEvent.Type.ToolTip, place, widget.mapToGlobal(place))
    QApplication.sendEvent(widget, event)
    await wait_until(QToolTip.isVisible, message=f"the tooltip of {where}")
    labels = [w for w in QApplication.topLevelWidgets() if w.objectName() == "qtooltip_label"]
    assert labels, "Qt's tooltip label"
    tip = labels[0]
    assert isinstance(tip, QLabel)
    picture = tip.grab()  # painted, as on screen
    audit.check(f"{where} (shown tooltip)", label_shows(tip))
    QToolTip.hideText()
    return picture


def tab_of(window: MainWindow, kind: type[T]) -> T:
    tab = window.tab(kind)
    assert isinstance(tab, kind)
    return tab


def hostile_profile(sandbox: SandboxThread) -> Profile:
    base = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    return Profile.model_validate({**base.model_dump(), "name": PROFILE_NAME})


def lodge_two_way(sandbox: SandboxThread, reply_path: str) -> str:
    """What another tool lodged: a two-way message whose every field is hostile."""
    body = {
        "Message": MESSAGE_TEXT,
        "Recipients": [CUSTOMER],
        "ReplyType": "HTTP",
        "ReplyPath": reply_path,
        "ExternalSystemId": EXTERNAL_ID,
        "Tags": TAGS,
    }
    with httpx.Client(base_url=sandbox.rest_url, auth=("demo", "demo"), timeout=10) as client:
        response = client.post("/v2/message/send", json=body)
    assert response.status_code == 200, response.text
    message_id: str = response.json()["Data"]["Message"]["MessageId"]
    return message_id


async def replies_arrive(ui: UiBundle, sandbox: SandboxThread, tab: RepliesTab) -> str:
    """A reply and a keyword forward through the sandbox, and a raw webhook call with a NUL."""
    template = ui.session.replies.template
    assert template is not None
    with control(sandbox) as client:
        made = client.post("/sandbox/keywords", json={"keyword": KEYWORD, "url": template.base_url})
        assert made.status_code in (200, 201), made.text
    message_id = lodge_two_way(sandbox, template.render())
    make_reply(sandbox, message_id=message_id, text=REPLY_TEXT)
    make_reply(sandbox, **{"from": OTHER_CUSTOMER, "to": OURS, "text": KEYWORD_TEXT})
    answer = await post_reply(template, text=NUL_TEXT, sender=SENDER_NAME)
    assert answer.status_code == 200, answer.text
    await wait_until(lambda: tab.model is not None and tab.model.total == 3, 20, "3 replies")
    return message_id


async def logs_synced(tab: LogsTab) -> None:
    await wait_until(lambda: not tab.sync.running, 20, "the first sync")
    tab.sync.sync_now()

    def synced() -> bool:
        model = tab.model
        if model is None or model.pending or model.rowCount() == 0:
            return False
        return any(
            "canary-msg" in str(model.index(row, LOG_MESSAGE).data())
            for row in range(model.rowCount())
        )

    await wait_until(synced, 20, "the lodged message synced")


async def status_looked_up(tab: StatusTab, message_id: str) -> None:
    tab.kind.setCurrentIndex(tab.kind.findData("message_id"))
    tab.key_edit.setText(message_id)
    tab.look_up()
    await wait_until(lambda: tab.model.rowCount() == 1, 10, "the status lookup")


async def status_refused(tab: StatusTab) -> None:
    """The gateway's error echoes the key it was asked for."""
    tab.kind.setCurrentIndex(tab.kind.findData("message_id"))
    tab.key_edit.setText(MISSING_ID)
    tab.look_up()
    await wait_until(lambda: tab.error.isVisibleTo(tab), 10, "the lookup error")


async def csv_imported(tab: BatchTab, folder: Path) -> None:
    source = folder / FILE_NAME
    source.write_text(f"Name,Mobile\nAnn,0412 345 678\nBob,{CELL}\n", encoding="utf-8")
    tab.recipients.import_path(source)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    assert len(tab.recipients.result.invalid) == 1


async def contact_and_template_kept(ui: UiBundle, tab: ContactsTab) -> None:
    """The customer is a contact of a hostile name; a template of a hostile name and text."""
    store = ui.session.store
    assert store is not None
    card = ContactCard(CONTACT_NAME, (CUSTOMER,), (("Clinic", CONTACT_FIELD),), ("Patients",))
    await asyncio.to_thread(store.contacts.add, card)
    await asyncio.to_thread(store.templates.add, TEMPLATE_NAME, TEMPLATE_TEXT)
    ui.session.contacts_changed.emit()
    await wait_until(lambda: tab.model.rowCount() == 1, 10, "the contact listed")
    tab.table.selectRow(0)


def audit_templates(send: SendTab, audit: Audit) -> None:
    """The templates' own window, as the operator manages them."""
    send.picker.manage()
    dialog = send.picker.dialog
    assert dialog is not None
    dialog.grab()
    audit_widgets(dialog, audit)
    dialog.close()


async def sent_from_the_send_tab(tab: SendTab) -> None:
    tab.form.recipient.set_text("0412 345 678")
    tab.form.editor.set_text(SENT_TEXT)
    tab.send()
    await wait_until(lambda: not tab.sending(), 20, "the send")
    await wait_until(lambda: tab.history.model.rowCount() == 1, 10, "the history row")
    tab.history.table.selectRow(0)


async def test_text_from_outside_is_shown_as_its_characters_everywhere(
    ui: UiBundle,
    sandbox: SandboxThread,
    qtbot,
    tmp_path: Path,
    screenshots_dir: Path | None,
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.resize(WINDOW)
    window.show()
    await ui.session.activate(hostile_profile(sandbox), Secret("demo"))
    replies = tab_of(window, RepliesTab)
    logs = tab_of(window, LogsTab)
    status = tab_of(window, StatusTab)
    batch = tab_of(window, BatchTab)
    send = tab_of(window, SendTab)
    fax_mms = tab_of(window, FaxMmsTab)
    contacts = tab_of(window, ContactsTab)
    notices: list[Notice] = []
    replies.notifier.notified.connect(notices.append)
    await ui.session.replies.start(0)
    await asyncio.sleep(0.2)
    before = rss()
    audit = Audit()

    await contact_and_template_kept(ui, contacts)
    message_id = await replies_arrive(ui, sandbox, replies)
    await logs_synced(logs)
    await status_refused(status)
    audit_window(window, audit)  # the error shows until the next lookup
    await status_looked_up(status, message_id)
    await csv_imported(batch, tmp_path)
    await sent_from_the_send_tab(send)
    await attach(fax_mms.mms.attachments, write(tmp_path, ATTACHMENT, picture()))

    for index in range(len(window.tabs)):  # each tab painted, as the operator sees it
        window.tab_widget.setCurrentIndex(index)
        await asyncio.sleep(0.1)
        window.grab()
    window.tab_widget.setCurrentWidget(replies)

    def named() -> bool:
        model = replies.model
        assert model is not None
        return any("canary-contact" in str(model.index(r, FROM).data()) for r in range(3))

    await wait_until(named, 10, "the contact's name beside the number")
    send.picker.refresh()
    await wait_until(lambda: len(send.picker.templates) == 1, 10, "the template listed")
    audit_templates(send, audit)
    tips = []
    for row in range(replies.model.rowCount()):  # every conversation selected
        replies.table.selectRow(row)
        await wait_until(lambda: bool(replies.conversation.entries), 10, "a conversation")
        if replies.conversation.number == CUSTOMER:  # a contact: titled with its name
            await wait_until(
                lambda: "canary-contact" in replies.conversation.title.text(), 10, "the name"
            )
        tips.append(await hover(replies.table, row, MESSAGE, audit, "Replies"))
        audit_window(window, audit)
    window.tab_widget.setCurrentWidget(logs)
    for row in range(logs.model.rowCount()):  # every record in the detail pane
        logs.select_row(row)
        await hover(logs.table, row, LOG_MESSAGE, audit, "Log records")
        audit_window(window, audit)
    audit_dialogs(window, audit)
    await save_shots(window, replies, logs, screenshots_dir)
    if screenshots_dir is not None:
        assert tips[0].save(str(screenshots_dir / "replies-tooltip-hostile.png"))
    await asyncio.sleep(0.2)
    grown = rss() - before

    print(f"checked {audit.checked} strings; resident memory grew by {grown / 2**20:.1f} MB")
    assert audit.problems == []
    assert audit.missing() == {}
    assert any("canary-" in notice.body for notice in notices), notices
    for notice in notices:
        line = notice.title + notice.body
        assert not set("<>&") & set(line), notice
        assert not any(char in line for char in RAW_CONTROLS), notice
    assert grown < RSS_GROWTH_LIMIT, f"resident memory grew by {grown / 2**20:.0f} MB"
    await ui.tasks.drain()


def audit_dialogs(window: MainWindow, audit: Audit) -> None:
    """The About dialog (the gateway's details) and the box an unexpected error opens."""
    about = AboutDialog(window.session, window)
    about.show()
    audit_widgets(about, audit)
    about.close()
    reporter = ErrorReporter(show_dialogs=True)
    reporter.dialog_parent = lambda: window
    reporter.report(RuntimeError(ERROR_TEXT), "testing")
    box = window.findChild(QMessageBox)
    assert box is not None
    box.grab()
    audit_widgets(box, audit)
    box.close()


async def save_shots(
    window: MainWindow, replies: RepliesTab, logs: LogsTab, folder: Path | None
) -> None:
    """The Replies tab with a conversation, the Logs tab with a record: checked, and saved
    into `folder` (`GWDESK_SCREENSHOTS`) when there is one."""
    window.tab_widget.setCurrentWidget(replies)
    replies.table.selectRow(0)
    await wait_until(lambda: bool(replies.conversation.entries), 10, "a conversation")
    await shot(window, folder, "replies-hostile.png", WINDOW)
    window.tab_widget.setCurrentWidget(logs)
    await shot(window, folder, "logs-hostile.png", WINDOW)


# ---- the account's words, as the gateway's account resources answer them ------------------

ACCOUNT_NAME = f"canary-an {IMAGE}"
ACCOUNT_TYPE = "canary-at <b>bold</b> \u202e!"
CURRENCY = "canary-cu \x1b[2J <b>bold</b>"
#: What the operator sees of each (`domain.funds.shown`: hidden characters by code point).
ACCOUNT_EXPECTED = {
    "canary-an": ACCOUNT_NAME,
    "canary-at": "canary-at <b>bold</b> ⟨U+202E⟩!",
    "canary-cu": "canary-cu ⟨U+001B⟩[2J <b>bold</b>",
}
BALANCE_SEEN = ["Balance (label)", "Balance tooltip", "Balance (shown tooltip)"]


@pytest.mark.parametrize(
    ("faults", "words", "required"),
    [
        pytest.param(
            "",
            {"type": "postpaid", "name": ACCOUNT_NAME, "type_name": ACCOUNT_TYPE},
            {
                "canary-an": ["Balance tooltip", "Balance (shown tooltip)"],
                "canary-at": [*BALANCE_SEEN, "Cost (label)"],
            },
            id="account-info",
        ),
        pytest.param(
            "account_info:404=1", {"currency": CURRENCY}, {"canary-cu": BALANCE_SEEN}, id="balance"
        ),
    ],
)
async def test_the_accounts_name_type_and_currency_are_shown_as_their_characters(
    ui: UiBundle,
    sandbox_factory: SandboxFactory,
    qtbot: QtBot,
    faults: str,
    words: dict[str, str],
    required: dict[str, list[str]],
) -> None:
    sandbox = sandbox_factory(faults=faults)
    with control(sandbox) as client:
        answer = client.put("/sandbox/account", json=words)
    assert answer.status_code == 200, answer.text
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.resize(WINDOW)
    window.show()
    await ui.connect(sandbox)
    balance = window.status.balance_label
    await wait_until(lambda: "canary-" in balance.text(), 10, "the balance")
    send = tab_of(window, SendTab)
    window.tab_widget.setCurrentWidget(send)
    send.form.editor.set_text("Your appointment is at 10:00 tomorrow.")
    await wait_until(lambda: bool(send.cost_label.text()), 10, "the cost")
    window.grab()
    audit = Audit(ACCOUNT_EXPECTED, required)

    audit_window(window, audit)
    assert audit.problems == []  # checked before a real hover, which would load an image
    await hover_at(balance, balance.rect().center(), audit, "Balance")

    assert audit.problems == []
    assert audit.missing() == {}
    await ui.tasks.drain()
