"""Status tab: look a message up by one key at a time, as the gateway demands."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.models import ACTIVE, Message
from gwdesk.gateway.errors import GatewayError
from gwdesk.ui.formatting import status_colour
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme

LOOKUPS = (
    ("message_id", "Message ID", "A 20-digit MessageId, e.g. 20151224130000812923"),
    ("batch_code", "Batch code", "The BatchCode a multi-recipient send returned"),
    ("external_system_id", "External ID", "The ExternalSystemId you (or gwdesk) gave the send"),
)
REFRESH_MS = 5000

COLUMNS: list[Column[Message]] = [
    Column("Phone number", lambda m: m.phone_number),
    Column("Message ID", lambda m: m.message_id),
    Column("Status", lambda m: m.status, colour=lambda m: status_colour(m.status)),
    Column("External ID", lambda m: m.external_system_id),
    Column("Tags", lambda m: m.tags),
]


def summarise(messages: list[Message]) -> str:
    if not messages:
        return "No messages found."
    counts = Counter(m.status for m in messages)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    noun = "message" if len(messages) == 1 else "messages"
    return f"{len(messages)} {noun}: {parts}"


class StatusTab(BaseTab):
    title = "Status"
    icon_name = "status"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.kind = QComboBox()
        self.kind.setAccessibleName("Look up by")
        for key, label, tip in LOOKUPS:
            self.kind.addItem(label, key)
            self.kind.setItemData(self.kind.count() - 1, tip, role=3)  # ToolTipRole
        self.key_edit = QLineEdit()
        self.key_edit.setAccessibleName("Lookup value")
        self.key_edit.setClearButtonEnabled(True)
        self.kind.currentIndexChanged.connect(self._update_placeholder)
        self._update_placeholder()
        self.lookup_button = QPushButton(theme.icon("search"), "Look up")
        self.lookup_button.setProperty("primary", True)
        self.lookup_button.setToolTip("Query the gateway's status endpoint (Enter)")
        self.lookup_button.clicked.connect(self.look_up)
        self.key_edit.returnPressed.connect(self.look_up)
        self.auto_refresh = QCheckBox("Refresh every 5 s while any message is ACTIVE")
        self.auto_refresh.setAccessibleName("Auto-refresh")
        self.auto_refresh.toggled.connect(self._schedule)
        self.summary = QLabel("Look up a message by one of its keys.")
        self.summary.setProperty("role", "hint")
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()

        self.model: RowsModel[Message] = RowsModel(COLUMNS, self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((150, 200, 110, 260)):
            self.table.setColumnWidth(column, width)

        row = QHBoxLayout()
        row.addWidget(QLabel("Look up by"))
        row.addWidget(self.kind)
        row.addWidget(self.key_edit, 1)
        row.addWidget(self.lookup_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        options = QHBoxLayout()
        options.addWidget(self.auto_refresh)
        options.addStretch(1)
        options.addWidget(self.summary)
        layout.addLayout(options)
        layout.addWidget(self.error)
        layout.addWidget(self.table, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.refresh)
        self._last: tuple[str, str] | None = None
        QShortcut(QKeySequence("F5"), self, self.refresh)

    def _update_placeholder(self) -> None:
        index = self.kind.currentIndex()
        self.key_edit.setPlaceholderText(LOOKUPS[index][2])

    def look_up(self) -> None:
        value = self.key_edit.text().strip()
        if not value:
            self._show_error("Type the value to look up.")
            self.key_edit.setFocus()
            return
        self._last = (str(self.kind.currentData()), value)
        self.refresh()

    def refresh(self) -> None:
        if self._last is not None:
            self.tasks.run(self._query(*self._last), key="status-lookup", context="status lookup")

    async def _query(self, kind: str, value: str) -> None:
        self.error.hide()
        self.summary.setText("Looking up…")
        self.lookup_button.setEnabled(False)
        try:
            service, _store = self.session.require()
            messages = await service.status(**{kind: value})
        except GatewayError as exc:
            self.model.set_rows([])
            self.summary.setText("")
            self._show_error(exc.message)
            self.session.report(f"status: {exc.message}", False)
            return
        finally:
            self.lookup_button.setEnabled(True)
        self.model.set_rows(messages)
        self.summary.setText(summarise(messages))
        self.session.report("status looked up", True)
        self._schedule()

    def _schedule(self) -> None:
        active = any(m.status == ACTIVE for m in self.model.rows)
        if self.auto_refresh.isChecked() and active and self._last is not None:
            self._timer.start(REFRESH_MS)
        else:
            self._timer.stop()

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    def on_session_changed(self) -> None:
        self._timer.stop()
        self._last = None
        self.model.set_rows([])
        self.error.hide()
        self.summary.setText("Look up a message by one of its keys.")
