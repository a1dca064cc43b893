"""The Outbox window: what the start-up check settled, and the batches left to finish.

Opened by `OutboxMonitor` when a profile's outbox holds interrupted work. It lists
each interrupted request that was settled (lodged, not lodged, still unknown) and
each unfinished batch with its counts; Resume settles again and sends what is left
of the selected batches (through the session's `Recovery.resume`, never twice),
Discard gives a batch up without sending anything.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.outbox_check import send_name, settled_words
from gwdesk.app.recovery import (
    OPEN_STATES,
    EntryState,
    OutboxBatch,
    OutboxEntry,
    Reconciled,
    ReconcileReport,
)
from gwdesk.ui.plain_text import PlainLabel, plain_box, tooltip, visible
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.widgets.fitting import fit_on_screen
from gwdesk.ui.widgets.validity import set_role

RESUME_KEY: Final = "outbox-resume"
SHOWN_SETTLED: Final = 200
COLUMNS: Final = (
    "Send",
    "Started",
    "Message",
    "Recipients",
    "Lodged",
    "To send",
    "Unknown",
    "Failed",
)


def settled_item(item: Reconciled) -> QListWidgetItem:
    """A settled request in words, its ExternalSystemId in the tooltip (to look it up)."""
    line = QListWidgetItem(visible(settled_words(item)))
    line.setToolTip(tooltip(f"ExternalSystemId: {item.entry.external_system_id or 'none'}"))
    return line


def started(batch: OutboxBatch) -> str:
    moment = datetime.fromtimestamp(batch.created_us / 1_000_000, UTC).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


class OutboxDialog(QDialog):
    def __init__(self, session: Session, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = tasks
        self.setWindowTitle("Outbox: interrupted sends")
        self.setModal(False)
        fit_on_screen(self, QSize(860, 460))
        self.batches: list[OutboxBatch] = []
        self.confirm_box: QMessageBox | None = None

        self.summary = PlainLabel()
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("What the outbox check found")
        self.settled = QListWidget()
        self.settled.setAccessibleName("Interrupted requests settled")
        self.settled.setMaximumHeight(110)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setAccessibleName("Unfinished batches")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Resume progress")
        self.progress.hide()
        self.state = PlainLabel()
        self.state.setWordWrap(True)
        self.state.setAccessibleName("Resume result")

        self.resume_button = QPushButton("&Resume")
        self.resume_button.setAccessibleName("Resume the selected batches")
        self.resume_button.setToolTip(
            "Settle the batch's interrupted requests by status queries, then send what was "
            "not lodged (nothing is sent twice)"
        )
        self.resume_button.setProperty("primary", True)
        self.resume_button.clicked.connect(self.resume)
        self.discard_button = QPushButton("&Discard…")
        self.discard_button.setAccessibleName("Discard the selected batches")
        self.discard_button.setToolTip("Give the batch up: nothing more is sent")
        self.discard_button.clicked.connect(self.discard)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        row = QHBoxLayout()
        row.addWidget(self.state, 1)
        row.addWidget(self.progress)
        row.addWidget(self.discard_button)
        row.addWidget(self.resume_button)
        row.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.settled)
        layout.addWidget(QLabel("Unfinished batches of this gateway:"))
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self._update_buttons()

    # ---- showing -----------------------------------------------------------------------

    def show_findings(self, report: ReconcileReport, batches: list[OutboxBatch]) -> None:
        self.summary.setText(
            f"gwdesk checked the outbox when it connected: {report.summary()}. "
            "Requests are settled by status queries on their ExternalSystemId before "
            "anything is sent again."
        )
        self.settled.clear()
        for item in report.settled[:SHOWN_SETTLED]:
            self.settled.addItem(settled_item(item))
        self.settled.setVisible(bool(report.settled))
        self.show_batches(batches)

    def show_batches(self, batches: list[OutboxBatch]) -> None:
        self.batches = batches
        self.table.setRowCount(len(batches))
        for row, batch in enumerate(batches):
            values = (
                send_name(batch),
                started(batch),
                batch.label,
                f"{batch.recipients:,}",
                f"{batch.recipients_in(EntryState.LODGED):,}",
                f"{batch.recipients_in(EntryState.PENDING):,}",
                f"{batch.recipients_in(EntryState.IN_FLIGHT, EntryState.UNKNOWN):,}",
                f"{batch.recipients_in(EntryState.FAILED):,}",
            )
            for column, value in enumerate(values):
                item = QTableWidgetItem(visible(value))  # a batch's label is its message
                if column > 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, item)
        if batches and not self.table.selectedItems():
            self.table.selectRow(0)
        if not batches:
            self.state.setText("Nothing is left to send.")
            set_role(self.state, "ok")
        self._update_buttons()

    def selected(self) -> list[OutboxBatch]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.batches[r] for r in rows if r < len(self.batches)]

    def _update_buttons(self) -> None:
        busy = self.tasks.running(RESUME_KEY, owner=self)
        chosen = bool(self.selected())
        self.resume_button.setEnabled(chosen and not busy)
        self.discard_button.setEnabled(chosen and not busy)

    # ---- resuming and discarding -------------------------------------------------------

    def resuming(self) -> bool:
        return self.tasks.running(RESUME_KEY, owner=self)

    def resume(self) -> None:
        batches = self.selected()
        if not batches or self.tasks.running(RESUME_KEY, owner=self):
            return
        self.tasks.run(
            self._resume(batches), key=RESUME_KEY, owner=self, context="resuming the outbox"
        )
        self._update_buttons()

    async def _resume(self, batches: list[OutboxBatch]) -> None:
        recovery = self.session.require_sending().recovery
        total = sum(b.count(*OPEN_STATES, EntryState.FAILED) for b in batches)
        done = 0
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(0)
        self.progress.show()
        self.state.setText("Settling interrupted requests, then sending what is left…")
        set_role(self.state, "hint")

        def sent(entry: OutboxEntry) -> None:
            nonlocal done
            if entry.state is EntryState.IN_FLIGHT:
                return  # on its way: counted when its outcome is known
            done += 1
            if alive(self):
                self.progress.setValue(min(done, total))
                self.state.setText(f"Sent {done:,} of about {total:,} request(s)…")

        def settled(item: Reconciled) -> None:
            if alive(self) and item.outcome != "not lodged":
                self.settled.addItem(settled_item(item))
                self.settled.show()

        try:
            report = await recovery.resume(
                {b.id for b in batches}, on_change=sent, on_settled=settled
            )
            left = await recovery.open_batches()
        finally:
            if alive(self):
                self.progress.hide()
                self._update_buttons()
        failed = report.failed_recipients
        found = f"{report.reconcile.summary()}; " if report.reconcile.settled else ""
        text = f"Resumed: {found}{report.lodged_recipients:,} recipient(s) lodged, {failed:,} not."
        if report.busy:
            text += " A batch is being sent by another gwdesk and was left alone."
        ok = not failed and not report.busy
        self.session.report(f"outbox: {text}", ok)
        if alive(self):
            self.show_batches(left)
            self.state.setText(text)
            set_role(self.state, "ok" if ok else "error")

    def discard(self) -> None:
        """Ask first (a window-modal box, so the event loop keeps running), then give up."""
        batches = self.selected()
        if not batches:
            return
        left = sum(b.recipients_in(*OPEN_STATES, EntryState.FAILED) for b in batches)
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Discard the batch?",
            f"Give up {left:,} recipient(s) not lodged yet? Nothing more is sent to them. "
            "Requests whose outcome is unknown may still have been lodged: check the Logs "
            "tab for their ExternalSystemId.",
            QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def finished(_code: int) -> None:
            self.confirm_box = None
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Discard:
                self.tasks.run(
                    self._discard(batches),
                    key=RESUME_KEY,
                    owner=self,
                    context="discarding outbox batches",
                )
                self._update_buttons()

        box.finished.connect(finished)
        self.confirm_box = box
        plain_box(box).open()

    async def _discard(self, batches: list[OutboxBatch]) -> None:
        recovery = self.session.require_sending().recovery
        for batch in batches:
            await recovery.discard(batch.id)
        left = await recovery.open_batches()
        if alive(self):
            self.show_batches(left)
            self.state.setText(f"Discarded {len(batches)} batch(es); nothing was sent.")
            set_role(self.state, "hint")
