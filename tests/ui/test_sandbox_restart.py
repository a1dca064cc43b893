"""The embedded sandbox child killed while the console runs: noticed without polling,
restarted on the same database and port, said in the status bar, and sends go on."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import pytest
from pytestqt.qtbot import QtBot

from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.ui.controller import SANDBOX_WATCH, AppController
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.sandbox_process import SandboxProcess
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.status.tab import StatusTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import fill, send_and_wait


@pytest.fixture
async def console(ui: UiBundle, qtbot: QtBot) -> AsyncIterator[AppController]:
    """The console's controller, as `gwdesk --sandbox` starts it (its sandbox child is
    started by each test, on the test's own loop); stopped afterwards."""
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [StatusTab])
    qtbot.addWidget(window)
    controller = AppController(
        window, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )
    try:
        yield controller
    finally:
        await controller.shutdown()


async def started(controller: AppController) -> SandboxProcess:
    await controller.use_sandbox()
    assert controller.sandbox is not None
    return controller.sandbox


def said(controller: AppController) -> str:
    return controller.window.status.currentMessage()


async def test_a_killed_sandbox_child_is_restarted_and_a_send_succeeds_afterwards(
    ui: UiBundle, qtbot: QtBot, console: AppController
) -> None:
    sandbox = await started(console)
    before, pid = sandbox.addresses, sandbox.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await wait_until(lambda: "restarted" in said(console), 30, "the restart to be said")

    assert said(console) == (
        "The sandbox gateway stopped (exit code -9: killed by SIGKILL) and was restarted."
    )
    assert sandbox.running
    assert sandbox.pid != pid
    assert sandbox.addresses == before  # the same port, bound again: the session stays
    tab = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    fill(tab, "0412 345 678", "After the restart")
    await send_and_wait(tab, 30)
    assert tab.status_label.text().startswith("Sent to +61 412 345 678: MessageId ")


async def test_a_sandbox_child_that_keeps_dying_is_given_up_on_and_said(
    console: AppController,
) -> None:
    console.restarts.limit = 1
    await started(console)
    for round_ in (1, 2):
        sandbox = console.sandbox
        assert sandbox is not None
        assert sandbox.pid is not None
        os.kill(sandbox.pid, signal.SIGKILL)
        if round_ == 1:
            await wait_until(lambda: "restarted" in said(console), 30, "the restart")
    await wait_until(lambda: "not restarted" in said(console), 30, "the giving up")
    assert "again; after 1 restart within 60 s it is not restarted" in said(console)
    assert console.sandbox is None


async def test_a_sandbox_the_console_stops_is_not_restarted(
    ui: UiBundle, console: AppController
) -> None:
    sandbox = await started(console)
    assert ui.tasks.running(SANDBOX_WATCH)
    await asyncio.to_thread(sandbox.stop)  # as the console stops it, its watch still on
    await wait_until(lambda: not ui.tasks.running(SANDBOX_WATCH), 10, "the watch to end")
    assert not sandbox.running
    assert console.sandbox is sandbox
    assert "restarted" not in said(console)
