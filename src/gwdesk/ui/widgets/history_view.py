"""What was sent from this console this session, newest first, with the selected send's detail.

Rows are `gwdesk.store.history.HistoryEntry` values (the same ones the local store
keeps), so any tab that sends can show its results the same way.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.numbers import display
from gwdesk.store.history import HistoryEntry
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.rows import ROW_ROLE, Column, RowsModel

FAILED_COLOUR = QColor("#d32f2f")


def result_of(entry: HistoryEntry) -> str:
    """The identifier the gateway gave the send, or what went wrong, in a few words."""
    if not entry.ok:
        return "not sent"
    identifier = entry.message_id or entry.batch_code
    if identifier:
        return identifier
    # Lodge text operations return no id, only the gateway's answer: show that instead.
    answer = entry.detail.splitlines()[0] if entry.detail else ""
    return answer or "lodged (no id returned)"


def status_of(entry: HistoryEntry) -> str:
    return entry.status or ("Failed" if not entry.ok else "Lodged")


def entry_colour(entry: HistoryEntry) -> QColor | None:
    return FAILED_COLOUR if not entry.ok else status_colour(entry.status)


def recipients_of(entry: HistoryEntry) -> str:
    return display(entry.recipients) if entry.recipients.isdigit() else entry.recipients


def short_time(moment: datetime) -> str:
    """Today's times as HH:MM:SS (a session rarely spans days); older ones with the date."""
    local = moment.astimezone()
    if local.date() == datetime.now().astimezone().date():
        return local.strftime("%H:%M:%S")
    return local_time(moment, with_seconds=False)


COLUMNS: list[Column[HistoryEntry]] = [
    Column("Time", lambda e: short_time(e.at), "When it was sent (your time)", lambda e: e.at),
    Column("To", recipients_of),
    Column("Status", status_of, colour=entry_colour),
    Column("Result", result_of, "MessageId, BatchCode, or why it was not sent"),
    Column("Channel", lambda e: e.channel),
    Column("External ID", lambda e: e.external_system_id, "ExternalSystemId of the send"),
]
COLUMN_WIDTHS = (64, 122, 62, 170, 95)


def describe(entry: HistoryEntry) -> str:
    """The detail pane's text for one entry (plain text: it quotes what was typed)."""
    lines = [
        f"{'Sent' if entry.ok else 'Not sent'} · {entry.channel} · {local_time(entry.at)}",
        f"To: {recipients_of(entry)}",
    ]
    if entry.message_id:
        lines.append(f"MessageId: {entry.message_id}")
    if entry.batch_code:
        lines.append(f"BatchCode: {entry.batch_code}")
    if entry.status:
        lines.append(f"Status: {entry.status}")
    if entry.external_system_id:
        lines.append(f"ExternalSystemId: {entry.external_system_id}")
    if entry.detail:
        lines.append(entry.detail)
    text = entry.text if len(entry.text) <= 2000 else entry.text[:2000] + "…"
    lines.extend(["", text])
    return "\n".join(lines)


class HistoryView(QWidget):
    """Table of sends + detail of the selected one; an empty state says what will appear."""

    def __init__(self, parent: QWidget | None = None, *, empty_text: str = "") -> None:
        super().__init__(parent)
        self.model: RowsModel[HistoryEntry] = RowsModel(COLUMNS, self)
        self.table = QTableView()
        self.table.setAccessibleName("Sent messages")
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate(COLUMN_WIDTHS):
            self.table.setColumnWidth(column, width)
        self.empty = QLabel(
            empty_text or "Nothing sent yet this session.\nResults of your sends appear here."
        )
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setProperty("role", "hint")
        self.empty.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        self.detail = QLabel()
        self.detail.setAccessibleName("Selected send")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # Scrollable, so a long entry is never cut off when the results area is short.
        self.detail_area = QScrollArea()
        self.detail_area.setWidget(self.detail)
        self.detail_area.setWidgetResizable(True)
        self.detail_area.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_area.setMinimumHeight(110)
        self.detail_area.setMaximumHeight(220)
        self.detail_area.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.detail_area)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        copy = QShortcut(QKeySequence.StandardKey.Copy, self.table)
        copy.activated.connect(self.copy_selected)

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        self.model.set_rows(entries)
        self._update_state()

    def add(self, entry: HistoryEntry) -> None:
        """A new result goes on top and is selected, so its detail shows at once."""
        self.model.prepend(entry)
        self._update_state()
        self.table.selectRow(0)
        self.table.scrollToTop()

    def entries(self) -> list[HistoryEntry]:
        return list(self.model.rows)

    def selected(self) -> HistoryEntry | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        entry = rows[0].data(ROW_ROLE)
        return entry if isinstance(entry, HistoryEntry) else None

    def copy_selected(self) -> None:
        entry = self.selected()
        if entry is not None:
            QApplication.clipboard().setText(result_of(entry))

    def _update_state(self) -> None:
        has_rows = self.model.rowCount() > 0
        self.stack.setCurrentIndex(1 if has_rows else 0)
        if not has_rows:
            self.detail_area.hide()

    def _selected(self, _new: QItemSelection, _old: QItemSelection) -> None:
        entry = self.selected()
        self.detail_area.setVisible(entry is not None)
        if entry is not None:
            self.detail.setText(describe(entry))
