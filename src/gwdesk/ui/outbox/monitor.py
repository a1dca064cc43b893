"""The outbox at each session start: settle interrupted sends, say what was found, offer more.

Whenever a profile is activated (the console starting, or the operator switching),
`OutboxMonitor` settles the entries of that gateway's outbox left in flight or
unknown (a crash, a kill, a lost answer) by status queries on their
ExternalSystemId, before anything could send them again. Then the status bar says
what it found, and when something needs the operator (a request settled just now, or
an unfinished send they were not shown yet: `gwdesk.app.outbox_check`) the small
`OutboxDialog` lists the unfinished sends with Resume and Discard; sends already shown
do not reopen it at every start (the status bar's line says so, and File ▸ Outbox…
opens it: the monitor is handed that action's signal, `opened_by`).
Nothing is resent without the operator asking. Both use the session's `Recovery`
(`session.sending.recovery`), the application core's, as `gwdesk outbox` does.

In a team profile the outbox is the team's: when a batch changes on the server (another
desk sending, resuming or giving one up), the monitor reads the unfinished batches again
and an open Outbox window shows them (never while it is resuming).
"""

from __future__ import annotations

import logging
from typing import Final

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import QMainWindow

from gwdesk.app.outbox_check import check_outbox, shown
from gwdesk.app.recovery import OPEN_STATES, EntryState, OutboxBatch, ReconcileReport
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.team_hub import TableWatch
from gwdesk.ui.timers import single_shot

log = logging.getLogger("gwdesk.ui.outbox")
CHECK_KEY: Final = "outbox-check"
RELOAD_KEY: Final = "outbox-reload"
RELOAD_MS: Final = 300
"""Changes of a burst (a batch lodging thousands of entries) are read once."""
OUTBOX_TABLES: Final = frozenset({"outbox_batches", "outbox_entries"})
MESSAGE_MS: Final = 20000


def describe(report: ReconcileReport, batches: list[OutboxBatch]) -> str:
    """The status bar's line after a check."""
    parts = []
    if report.settled:
        parts.append(f"Outbox: {report.summary()}")
    if batches:
        left = sum(b.recipients_in(*OPEN_STATES, EntryState.FAILED) for b in batches)
        noun = "batch" if len(batches) == 1 else "batches"
        parts.append(
            f"{len(batches)} unfinished {noun} ({left:,} recipient(s) not lodged yet): "
            "File ▸ Outbox… resumes them"
        )
    if report.busy:
        parts.append(f"{len(report.busy)} batch(es) being sent by another gwdesk")
    return "; ".join(parts) if parts else ""


class OutboxMonitor(QObject):
    """Checks the outbox on every session activation (see the module docstring)."""

    checked = Signal()
    """After each check: `report` and `batches` are current."""

    def __init__(
        self,
        window: QMainWindow,
        session: Session,
        tasks: TaskRunner,
        *,
        show_dialog: bool = True,
        opened_by: SignalInstance | None = None,
    ) -> None:
        """`opened_by`: a signal (File ▸ Outbox…) that opens the window whenever asked."""
        super().__init__(window)
        self.window = window
        self.session = session
        self.tasks = tasks
        self.show_dialog = show_dialog
        self.report = ReconcileReport()
        self.batches: list[OutboxBatch] = []
        self.dialog: QObject | None = None
        self._reload_timer = single_shot(self, RELOAD_MS, self.reload)
        session.changed.connect(self._session_changed)
        TableWatch(session.team, OUTBOX_TABLES, self._reload_timer.start, self)
        if opened_by is not None:
            opened_by.connect(self.open_dialog)

    def _session_changed(self) -> None:
        if self.session.active:
            self.tasks.run(self.check(), key=CHECK_KEY, owner=self, context="checking the outbox")

    async def check(self) -> None:
        sending = self.session.require_sending()
        recovery = sending.recovery
        waiting = sum(
            b.count(EntryState.IN_FLIGHT, EntryState.UNKNOWN) for b in await recovery.open_batches()
        )
        if waiting:
            self.window.statusBar().showMessage(
                f"Outbox: asking the gateway about {waiting} interrupted request(s)…", MESSAGE_MS
            )
        store = self.session.store
        assert store is not None
        found = await check_outbox(recovery, store.settings)
        if self.session.sending is not sending:
            return  # the profile switched meanwhile: its own check follows
        self.report, self.batches = found.report, list(found.batches)
        text = describe(self.report, self.batches)
        if text:
            log.info("%s", text)
            self.window.statusBar().showMessage(text, MESSAGE_MS)
        if self.show_dialog and found.needs_operator:
            self.open_dialog()
            await shown(recovery, store.settings, found.batches)
        self.checked.emit()

    def reload(self) -> None:
        """Read the unfinished batches again (the team's outbox changed)."""
        if self.session.sending is not None and not self.tasks.running(CHECK_KEY, owner=self):
            self.tasks.run(self._reload(), key=RELOAD_KEY, owner=self, context="reading the outbox")

    async def _reload(self) -> None:
        sending = self.session.require_sending()
        batches = await sending.recovery.open_batches()
        if sending is not self.session.sending:
            return
        self.batches = batches
        from gwdesk.ui.outbox.dialog import OutboxDialog

        dialog = self.dialog
        if isinstance(dialog, OutboxDialog) and dialog.isVisible() and not dialog.resuming():
            dialog.show_batches(batches)

    def open_dialog(self) -> None:
        """Show (or raise) the Outbox window with the last check's findings."""
        from gwdesk.ui.outbox.dialog import OutboxDialog

        dialog = self.dialog
        if not isinstance(dialog, OutboxDialog) or not dialog.isVisible():
            dialog = OutboxDialog(self.session, self.tasks, self.window)
            self.dialog = dialog
        dialog.show_findings(self.report, self.batches)
        dialog.show()
        dialog.raise_()
