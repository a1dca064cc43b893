"""Helpers of the Scheduled tab's tests: the tab on a connected sandbox profile, sends
scheduled through the session's core (as the Send and Batch tabs schedule them), a
held send whose time passed while the console was closed, and the sandbox's record."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from gwdesk.app.profile_data import locate, open_profile, sending_for
from gwdesk.app.scheduled import ScheduledSend, ScheduledSends
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.models import Secret
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import sandbox_profile
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.scheduled.tab import ScheduledTab
from tests.ui.conftest import UiBundle, wait_until

NUMBERS = ("61412000101", "61412000102", "61412000103")


def core(ui: UiBundle) -> ScheduledSends:
    scheduled = ui.session.scheduled
    assert scheduled is not None, "connect the session first"
    return scheduled


async def schedule(
    ui: UiBundle, text: str, at: timedelta = timedelta(hours=1), numbers: tuple[str, ...] = NUMBERS
) -> ScheduledSend:
    """A send for `at` from now, held by the session's core."""
    message = SmsMessage(Channel.REST_SMS, text)
    return await core(ui).schedule(message, numbers, datetime.now(UTC) + at)


async def scheduled_tab(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> ScheduledTab:
    """The tab, shown, on the sandbox's demo profile."""
    await ui.connect(sandbox)
    tab = ScheduledTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.resize(1100, 600)
    tab.show()
    return tab


async def listing(tab: ScheduledTab, count: int, within: float = 10.0) -> None:
    """Wait until the tab lists `count` sends."""
    await wait_until(lambda: len(tab.model.rows) == count, within, f"{count} scheduled listed")


async def fresh_read(tab: ScheduledTab) -> None:
    """Wait for the tab to read the schedule once more than it has."""
    before = tab.read_count
    tab.refresh()
    await wait_until(lambda: tab.read_count > before, 10, "the schedule read again")


def lodged(sandbox: SandboxThread, text: str) -> list[str]:
    """The numbers the sandbox was asked to text `text`, in order."""
    rows = sandbox.query("SELECT to_number FROM messages WHERE message = ? ORDER BY id", (text,))
    return [str(row[0]) for row in rows]


async def asked(tab: ScheduledTab) -> QMessageBox:
    await wait_until(lambda: tab.question is not None and tab.question.isVisible(), 10, "asked")
    assert tab.question is not None
    return tab.question


def button(box: QMessageBox, role: QMessageBox.ButtonRole) -> QPushButton:
    [found] = [b for b in box.buttons() if box.buttonRole(b) is role]
    assert isinstance(found, QPushButton)
    return found


def answer_yes(box: QMessageBox) -> None:
    button(box, QMessageBox.ButtonRole.AcceptRole).click()


def answer_no(box: QMessageBox) -> None:
    button(box, QMessageBox.ButtonRole.RejectRole).click()


async def held_while_closed(
    ui: UiBundle, sandbox: SandboxThread, text: str, late: timedelta
) -> ScheduledSend:
    """A send scheduled earlier whose time is `late` ago: recorded in the sandbox
    profile's store by a core whose clock was an hour before that (as a console closed
    since left it)."""
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    data = locate(profile, sandbox=True, paths=ui.paths)  # where the console will look
    store = open_profile(data)
    now = datetime.now(UTC)
    try:
        async with GatewayService(profile, Secret("demo")) as service:
            sending = sending_for(service, store, data)
            back: Callable[[], datetime] = lambda: now - late - timedelta(hours=1)  # noqa: E731
            sending.now = back
            message = SmsMessage(Channel.REST_SMS, text)
            return await ScheduledSends(sending).schedule(message, NUMBERS, now - late)
    finally:
        store.close()
