"""The console and the outbox: tabs record every send, and start-up settles and resumes.

A crash is staged by writing the profile's outbox the way a killed console leaves
it (one request lodged, one in flight that reached the gateway, one never sent);
activating the session must settle the in-flight one by a status query, say so in
the status bar, and offer the batch in the Outbox window, whose Resume sends only
what was not lodged.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from gwdesk.app.profile_data import locate, open_profile, sending_for
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.models import Secret
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.controller import sandbox_profile
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.outbox.dialog import RESUME_KEY, OutboxDialog
from gwdesk.ui.outbox.monitor import OutboxMonitor
from gwdesk.ui.sandbox_process import SandboxAddresses
from tests.ui.batch_support import confirm_send
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import fill, send_and_wait, send_tab

NUMBERS = [f"614{i:08d}" for i in range(250)]


def per_recipient(sandbox: SandboxThread) -> list[tuple[str, int]]:
    return sorted(sandbox.query("SELECT to_number, COUNT(*) FROM messages GROUP BY to_number"))


async def crashed_batch(ui: UiBundle, sandbox: SandboxThread) -> int:
    """The sandbox profile's outbox as a kill mid-batch leaves it; the batch's id."""
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    data = locate(profile, sandbox=True, paths=ui.paths)  # where the console will look
    store = open_profile(data)
    try:
        async with GatewayService(profile, Secret("demo")) as service:
            sending = sending_for(service, store, data)
            message = SmsMessage(Channel.REST_SMS, "Before the crash")
            batch, entries = await sending.record_list(message, NUMBERS)
            first, second, _third = entries
            assert (await sending.runner.run(batch, [first])).ok
            store.outbox.begin(second.id)  # marked, sent, and then the console died
            body = message.rest_body(second.recipients, second.external_system_id or "")
            await service.rest.send_once(body)
    finally:
        store.close()
    return batch.id


def save_shot(widget: QWidget, name: str) -> None:
    """Into GWDESK_SCREENSHOTS when set, to look at the window."""
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(shots) / name))


async def monitored(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> OutboxMonitor:
    window = QMainWindow()
    qtbot.addWidget(window)
    monitor = OutboxMonitor(window, ui.session, ui.tasks)
    await ui.connect(sandbox)
    await wait_until(lambda: isinstance(monitor.dialog, OutboxDialog), 15, "the outbox window")
    return monitor


async def test_the_batch_tab_records_every_request_before_it_leaves(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.editor.set_text("Recorded first")
    tab.recipients.paste.setPlainText("\n".join(NUMBERS))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    await confirm_send(tab)
    await wait_until(lambda: tab.run is not None and not tab.sending, 20, "batch sent")
    assert ui.session.store is not None
    outbox = ui.session.store.outbox
    [batch] = outbox.batches(open_only=False)
    assert batch.closed
    assert batch.gateway == "sandbox:demo"
    entries = outbox.entries(batch.id)
    assert [e.state for e in entries] == [EntryState.LODGED] * 3
    assert [e.attempts for e in entries] == [1, 1, 1]
    assert tab.run is not None
    assert tab.run.entries == entries  # the tab shows the outbox's own rows, as they stand
    sent_ids = {
        r[0]
        for r in sandbox.query("SELECT json_extract(template, '$.external_system_id') FROM batches")
    }
    assert sent_ids == {e.external_system_id for e in entries}
    if ui.tasks.running("batch-follow", owner=tab):
        tab.results.follow_button.click()
    await wait_until(
        lambda: not ui.tasks.running("batch-follow", owner=tab), 20, "following stopped"
    )


async def test_a_send_tab_message_is_in_the_outbox_with_its_message_id(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "One message")
    await send_and_wait(tab)
    assert ui.session.store is not None
    [batch] = ui.session.store.outbox.batches(open_only=False)
    [entry] = ui.session.store.outbox.entries(batch.id)
    [(message_id,)] = sandbox.query("SELECT message_id FROM messages")
    assert (entry.state, entry.message_id) == (EntryState.LODGED, message_id)
    assert entry.body["text"] == "One message"


async def test_activation_settles_an_interrupted_batch_and_the_window_resumes_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    batch_id = await crashed_batch(ui, sandbox)
    monitor = await monitored(ui, qtbot, sandbox)
    dialog = monitor.dialog
    assert isinstance(dialog, OutboxDialog)

    message = monitor.window.statusBar().currentMessage()
    assert "1 interrupted request checked: 1 lodged" in message
    assert "1 unfinished batch (50 recipient(s) not lodged yet)" in message
    assert dialog.isVisible()
    [line] = [dialog.settled.item(i).text() for i in range(dialog.settled.count())]
    assert line.startswith("Request 2 of a list send (100 recipients): lodged.")
    assert f"ExternalSystemId: {dialog_id(ui, batch_id, 2)}" in dialog.settled.item(0).toolTip()
    assert dialog.table.item(0, 0).text() == "List of 250 recipients"
    assert dialog.table.rowCount() == 1
    assert dialog.table.item(0, 5).text() == "50"  # still to send
    save_shot(dialog, "outbox_dialog.png")

    dialog.resume_button.click()
    await wait_until(lambda: not ui.tasks.running(RESUME_KEY, owner=dialog), 20, "resume finished")
    assert "50 recipient(s) lodged, 0 not" in dialog.state.text()
    assert dialog.table.rowCount() == 0
    await wait_until(lambda: len(per_recipient(sandbox)) == 250, 20, "messages created")
    assert per_recipient(sandbox) == [(n, 1) for n in NUMBERS]


def dialog_id(ui: UiBundle, batch_id: int, seq: int) -> str:
    assert ui.session.store is not None
    entries = ui.session.store.outbox.entries(batch_id)
    return next(e.external_system_id or "" for e in entries if e.seq == seq)


async def test_discarding_an_interrupted_batch_sends_nothing_more(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await crashed_batch(ui, sandbox)
    monitor = await monitored(ui, qtbot, sandbox)
    dialog = monitor.dialog
    assert isinstance(dialog, OutboxDialog)
    sends = sandbox.query("SELECT COUNT(*) FROM batches")[0][0]

    dialog.discard_button.click()
    box = dialog.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Discard).click()
    await wait_until(lambda: dialog.table.rowCount() == 0, 10, "batch discarded")
    await wait_until(lambda: not ui.tasks.running(RESUME_KEY, owner=dialog), 10)
    assert "nothing was sent" in dialog.state.text()
    assert sandbox.query("SELECT COUNT(*) FROM batches")[0][0] == sends
    assert ui.session.store is not None
    [batch] = ui.session.store.outbox.batches(open_only=False)
    assert batch.count(EntryState.FAILED) == 1


async def test_an_unfinished_send_already_shown_does_not_reopen_the_window_at_the_next_start(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await crashed_batch(ui, sandbox)
    monitor = await monitored(ui, qtbot, sandbox)
    dialog = monitor.dialog
    assert isinstance(dialog, OutboxDialog)
    dialog.close()
    checks: list[bool] = []
    monitor.checked.connect(lambda: checks.append(True))

    await ui.connect(sandbox)  # the next start: the same send is still unfinished
    await wait_until(lambda: bool(checks), 15, "the next check")

    assert not dialog.isVisible()
    assert monitor.dialog is dialog
    assert "1 unfinished batch" in monitor.window.statusBar().currentMessage()


async def test_a_new_unfinished_send_opens_the_window_again(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await crashed_batch(ui, sandbox)
    monitor = await monitored(ui, qtbot, sandbox)
    dialog = monitor.dialog
    assert isinstance(dialog, OutboxDialog)
    dialog.close()

    await crashed_batch(ui, sandbox)
    await ui.connect(sandbox)
    await wait_until(lambda: dialog.isVisible() or monitor.dialog is not dialog, 15)
    shown = monitor.dialog
    assert isinstance(shown, OutboxDialog)
    assert shown.table.rowCount() == 2


async def test_file_outbox_opens_the_window_for_a_send_already_shown(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await crashed_batch(ui, sandbox)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [])
    qtbot.addWidget(window)
    monitor = OutboxMonitor(window, ui.session, ui.tasks, opened_by=window.outbox_requested)
    await ui.connect(sandbox)
    await wait_until(lambda: isinstance(monitor.dialog, OutboxDialog), 15, "the outbox window")
    first = monitor.dialog
    assert isinstance(first, OutboxDialog)
    first.close()

    assert window.outbox_action.isEnabled()
    window.outbox_action.trigger()

    shown = monitor.dialog
    assert isinstance(shown, OutboxDialog)
    assert shown.isVisible()
    assert shown.table.item(0, 0).text() == "List of 250 recipients"
