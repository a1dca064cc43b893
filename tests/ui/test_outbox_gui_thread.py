"""The GUI thread never waits on the profile file's write lock.

Another connection (here: a plain `sqlite3` one; in life, `gwdesk send` recording a
batch, or a second console) holds the file's write lock for about a second while
the console starts a batch, settles the outbox or opens the profile. A QTimer
ticking every 10 ms on the GUI thread must keep ticking (a generous bound: no
gap of half the hold), and the work must finish once the lock is let go.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from gwdesk.app.profile_data import SANDBOX_STORE
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import EntryState
from gwdesk.ui.outbox.monitor import CHECK_KEY, OutboxMonitor
from tests.ui.batch_support import confirm_send, idle, ready_tab, sent
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.lock_support import while_locked
from tests.ui.test_outbox_ui import crashed_batch

HOLD = 1.0
"""Seconds the other connection keeps the write lock (SQLite's busy timeout is 5)."""


async def test_a_batch_started_while_the_file_is_write_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot)
    assert ui.session.store is not None
    tab.save_draft()  # now: the draft (not an outbox write) is saved on the GUI thread

    async def send() -> None:
        await confirm_send(tab)
        await sent(tab, 30)

    locked = await while_locked(ui.session.store.path, send, HOLD)
    assert locked.waited
    assert tab.run is not None
    assert [e.state for e in tab.run.entries] == [EntryState.LODGED] * 3
    assert locked.longest_stall < HOLD / 2
    await idle(tab, ui)


async def test_settling_the_outbox_while_the_file_is_write_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await crashed_batch(ui, sandbox)
    await ui.connect(sandbox)
    window = QMainWindow()
    qtbot.addWidget(window)
    monitor = OutboxMonitor(window, ui.session, ui.tasks, show_dialog=False)
    assert ui.session.store is not None

    async def check() -> None:
        # Its first write is the claim of the interrupted batch.
        checked = ui.tasks.run(monitor.check(), key=CHECK_KEY, context="checking the outbox")
        await wait_until(checked.done, 20, "the outbox check")

    locked = await while_locked(ui.session.store.path, check, HOLD)
    assert locked.waited
    assert [(s.entry.seq, s.outcome) for s in monitor.report.settled] == [(2, "lodged")]
    assert locked.longest_stall < HOLD / 2


async def test_opening_a_profile_whose_file_is_write_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread
) -> None:
    path = ui.paths.profile_db(SANDBOX_STORE)
    await asyncio.to_thread(lambda: LocalStore(path).close())  # the file exists, up to date
    # Each of the store's connections checks its migrations under the write lock.
    locked = await while_locked(path, lambda: ui.connect(sandbox), HOLD)
    assert locked.waited
    assert ui.session.store is not None
    assert locked.longest_stall < HOLD / 2
