"""A send from the Send tab to a gateway that does not answer: said in the status bar within
5 s, cancelled from the tab, settled once by the outbox (counted in the sandbox), the form
kept whatever the cancel came to."""

from __future__ import annotations

import asyncio

from pytestqt.qtbot import QtBot

from gwdesk.app.cancelled_send import TOO_LATE
from gwdesk.app.send_values import CANCELLED_NOT_SENT, OPERATOR_CANCELLED
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.send.tab import CANCELLING_TEXT, SendTab
from gwdesk.ui.status_bar import GatewayStatusBar
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests, set_faults
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import fill, message_count, send_tab

HOSTILE = "Hung? <b>bold</b> \u202eevil\u202c \x1b[31mred " + "long " * 60


def on_the_wire(sandbox: SandboxThread) -> bool:
    return endpoint_requests(sandbox, "send") == 1


async def cancelled(tab: SendTab) -> None:
    """Cancel the send under way and wait until the tab has said what it came to."""
    assert not tab.cancel_button.isHidden()
    tab.cancel_button.click()
    assert tab.status_label.text() == CANCELLING_TEXT
    await wait_until(lambda: not tab.sending(), 30, "the cancel to be settled")
    assert tab.cancel_button.isHidden()
    assert tab.send_button.isEnabled()


async def test_a_send_to_a_gateway_that_does_not_answer_is_cancelled_and_never_sent_again(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:latency=120")
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", HOSTILE)
    tab.send()
    await wait_until(lambda: on_the_wire(sandbox), 10, "the request to reach the gateway")
    await cancelled(tab)

    assert tab.status_label.text() == f"{CANCELLED_NOT_SENT} Your message is kept."
    assert (tab.form.recipient.text(), tab.form.editor.text()) == ("0412 345 678", HOSTILE)
    [row] = tab.history.entries()
    assert not row.ok
    assert message_count(sandbox) == 0
    sending = ui.session.require_sending()
    assert await sending.recovery.open_batches() == []  # nothing left to do
    outbox = sending.runner.outbox
    [batch] = await asyncio.to_thread(outbox.batches, open_only=False)
    [entry] = await asyncio.to_thread(outbox.entries, batch.id)
    assert entry.external_system_id == row.external_system_id
    assert (entry.state.value, entry.error_kind) == ("failed", OPERATOR_CANCELLED)

    # The gateway answers again: the outbox's resume and reconcile send nothing.
    await asyncio.to_thread(set_faults, sandbox, "")
    await sending.recovery.resume()
    await sending.recovery.reconcile()
    assert await asyncio.to_thread(endpoint_requests, sandbox, "send") == 0
    assert message_count(sandbox) == 0


async def test_a_cancel_that_comes_too_late_says_so_and_gives_the_message_id(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:slow=1@120")
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "Taken, answer held back")
    tab.send()
    await wait_until(lambda: message_count(sandbox) == 1, 10, "the gateway to lodge it")
    await cancelled(tab)

    [[message_id]] = sandbox.query("SELECT message_id FROM messages")
    text = tab.status_label.text()
    assert text.startswith(TOO_LATE)
    assert message_id in text
    [row] = tab.history.entries()
    assert (row.ok, row.message_id) == (True, message_id)
    assert tab.form.editor.text() == "Taken, answer held back"
    assert message_count(sandbox) == 1


async def test_the_status_bar_says_the_gateway_is_not_answering_within_5_s(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:latency=120")
    tab = await send_tab(ui, qtbot, sandbox)
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    fill(tab, "0412 345 678", "Anyone there?")
    tab.send()
    started = asyncio.get_running_loop().time()
    await wait_until(
        lambda: "is not answering" in bar.connection_label.text(),
        5,
        f"the bar to say so {ui.session.service.health!r} {bar.connection_label.text()}",
    )
    assert asyncio.get_running_loop().time() - started < 5
    assert bar.connection_label.text().startswith("Gateway 127.0.0.1 is not answering (no ")
    assert bar.connection_label.property("role") == "error"
    ui.session.activity.emit("balance refreshed", True)  # an older call's news says less
    assert "is not answering" in bar.connection_label.text()

    await cancelled(tab)  # its status query answers: the gateway answers again
    await wait_until(lambda: "is not answering" not in bar.connection_label.text())
    assert bar.connection_label.property("role") != "error"
