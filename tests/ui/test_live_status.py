"""What is shown stays true (issue 21): statuses follow the log sync, credits follow sends,
and the Logs tab follows this console's sends, with nobody pressing F5.

Real parts throughout: the sandbox over loopback HTTP (its simulated delivery turns
ACTIVE into DELIVERED a fraction of a second after a send), the profile's SQLite file,
the session's own log sync started as the console's controller starts it.
"""

from __future__ import annotations

import httpx
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.log_sync import LogSyncController, session_sync
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.status_bar import GatewayStatusBar
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import CUSTOMER, replies_tab
from tests.ui.send_support import fill, send_and_wait, send_tab

DELIVERING = {"simulate_delivery": True, "delivery_delay": (0.2, 0.3)}
"""Every message delivered within a third of a second (none fails)."""


def delivering(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(**DELIVERING, delivery_failure_rate=0.0)


def started_sync(ui: UiBundle) -> LogSyncController:
    """The session's log sync, started as the controller starts it for a profile."""
    sync = session_sync(ui.session, ui.tasks)
    sync.start()
    return sync


def sandbox_credits(sandbox: SandboxThread) -> int:
    response = httpx.get(f"{sandbox.rest_url}/sandbox/account")
    response.raise_for_status()
    return int(response.json()["credits"])


def created(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


async def test_a_log_sync_change_shows_delivered_in_sent_this_session(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, delivering(sandbox_factory))
    started_sync(ui)
    fill(tab, "0412 345 678", "Your table is ready.")
    await send_and_wait(tab)
    [entry] = tab.history.entries()
    assert entry.status == "ACTIVE"  # as the gateway answered the send
    tab.history.table.selectRow(0)
    await wait_until(
        lambda: tab.history.entries()[0].status == "DELIVERED", 30, "the delivery shown"
    )
    assert tab.history.model.data(tab.history.model.index(0, 2)) == "DELIVERED"
    assert "Status: DELIVERED" in tab.history.detail.text()


async def test_a_log_sync_change_shows_delivered_in_the_conversation(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, delivering(sandbox_factory), listen=False)
    started_sync(ui)
    pane = tab.conversation
    pane.open(CUSTOMER)
    pane.editor.set_text("We open at nine.")
    pane.send()
    await wait_until(lambda: any(not e.incoming for e in pane.entries), 20, "the reply sent")
    await wait_until(
        lambda: [e.status for e in pane.entries if not e.incoming] == ["DELIVERED"],
        30,
        "the delivery shown in the conversation",
    )
    assert "DELIVERED" in pane.transcript.toPlainText()


async def test_after_a_batch_the_status_bar_credits_equal_the_sandboxs(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    before = sandbox_credits(sandbox)
    await wait_until(lambda: f"Credits {before:,}" in bar.balance_label.text())
    started_sync(ui)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.editor.set_text("Hello from the batch tab")
    tab.recipients.paste.setPlainText("\n".join(f"0412 000 {i:03d}" for i in range(250)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    tab.send()

    def done_or_asked() -> bool:
        box = tab.confirm_box
        return (box is not None and box.isVisible()) or (tab.run is not None and not tab.sending)

    await wait_until(done_or_asked, 20, "the batch sent, or its question")
    box = tab.confirm_box
    if box is not None and box.isVisible():  # the send's question (if it asks one): yes
        accept = QMessageBox.ButtonRole.AcceptRole
        next(b for b in box.buttons() if box.buttonRole(b) == accept).click()
        await wait_until(lambda: tab.run is not None and not tab.sending, 20, "the batch sent")
    await wait_until(lambda: created(sandbox) == 250, 20, "the gateway created the batch")
    after = sandbox_credits(sandbox)
    assert after < before
    await wait_until(
        lambda: f"Credits {after:,}" in bar.balance_label.text(), 20, "the credits read again"
    )
    if ui.tasks.running("batch-follow", owner=tab):
        tab.results.follow_button.click()


async def test_a_send_of_this_console_shows_in_the_logs_tab_without_f5(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    send = await send_tab(ui, qtbot, sandbox)
    logs = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(logs)
    first = logs.sync.last
    await wait_until(lambda: logs.sync.last is not first and not logs.sync.running)
    assert logs.model is not None
    assert logs.model.rowCount() == 0
    fill(send, "0412 345 678", "Shown in the logs")
    await send_and_wait(send)
    await wait_until(
        lambda: logs.model is not None and logs.model.rowCount() == 1, 20, "the send in Logs"
    )


async def test_many_sends_bring_one_sync_not_one_each(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    sync = started_sync(ui)
    sync.pace.soon = 5.0  # room for three sends on a loaded machine
    await wait_until(lambda: sync.last is not None and not sync.running, 20, "the first sync")
    runs: list[bool] = []
    sync.running_changed.connect(lambda running: running and runs.append(running))
    for n in range(3):
        fill(tab, f"0412 345 67{n}", f"Message {n}")
        await send_and_wait(tab)
    await wait_until(lambda: bool(runs) and not sync.running, 20, "the sync after the sends")
    assert sync.last is not None
    assert sync.last.new == 3
    assert len(runs) == 1
