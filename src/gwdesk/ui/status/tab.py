"""Status tab: look a message up by one key at a time, as the gateway demands.

REST answers by MessageId, BatchCode or ExternalSystemId; the legacy Lodge
service answers `GetMessageStatusXML` by MsgID. Both land in the same table (see
`status_rows`), showing the columns that lookup can fill. Whatever the gateway
refuses is said under the lookup field, which keeps what was typed.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
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

from gwdesk.domain.models import ACTIVE
from gwdesk.gateway.errors import GatewayError
from gwdesk.ui.models.rows import RowsModel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.session import Session
from gwdesk.ui.status.rows import (
    COLUMN,
    COLUMNS,
    LODGE,
    LODGE_COLUMNS,
    REST,
    REST_COLUMNS,
    STRETCH,
    WIDTHS,
    StatusRow,
    summarise,
)
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.validity import set_invalid

LEGACY: Final = "legacy_msg_id"
LOOKUPS: Final = (
    ("message_id", "Message ID", "A 20-digit MessageId, e.g. 20151224130000812923"),
    ("batch_code", "Batch code", "The BatchCode a multi-recipient send returned"),
    ("external_system_id", "External ID", "The ExternalSystemId you (or gwdesk) gave the send"),
    (
        LEGACY,
        "Message ID (legacy Lodge)",
        "A MsgID, asked of the Lodge service (GetMessageStatusXML)",
    ),
)
#: Longer values are no key the gateway gave out; refused before any request.
MAX_KEY: Final = 200
REFRESH_MS: Final = 5000
IDLE: Final = "Look up a message by one of its keys."
EMPTY: Final = (
    "Choose what you have (a MessageId, a BatchCode, an ExternalSystemId or a Lodge MsgID), "
    "type it above and press Enter.\nEvery message it names is listed here with its status."
)
NOTHING: Final = "The gateway knows no message by that key."


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
            self.kind.setItemData(self.kind.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.key_edit = QLineEdit()
        self.key_edit.setAccessibleName("Lookup value")
        self.key_edit.setClearButtonEnabled(True)
        self.key_edit.setMaxLength(MAX_KEY)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.key_edit.textEdited.connect(lambda _text: self._clear_error())
        self._update_placeholder()
        self.lookup_button = QPushButton(theme.icon("search"), "Look up")
        self.lookup_button.setProperty("primary", True)
        self.lookup_button.setAccessibleName("Look up")
        self.lookup_button.setToolTip("Ask the gateway for the message's status (Enter)")
        self.lookup_button.clicked.connect(self.look_up)
        self.key_edit.returnPressed.connect(self.look_up)
        self.auto_refresh = QCheckBox("Refresh every 5 s while any message is ACTIVE")
        self.auto_refresh.setAccessibleName("Auto-refresh")
        self.auto_refresh.toggled.connect(self._schedule)
        self.summary = PlainLabel(IDLE)  # names the statuses the gateway gave
        self.summary.setProperty("role", "hint")
        self.error = PlainLabel()
        self.error.setAccessibleName("Lookup error")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()

        self.model: RowsModel[StatusRow] = RowsModel(COLUMNS, self)
        self.table = QTableView()
        self.table.setAccessibleName("Status results")
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(False)
        self.source = REST
        self._arrange(REST)
        self.empty = QLabel(EMPTY, self.table.viewport())
        self.empty.setAccessibleName("No results")
        self.empty.setProperty("role", "hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.table.viewport().installEventFilter(self)

        kind_label = QLabel("Look up &by")
        kind_label.setBuddy(self.kind)
        row = QHBoxLayout()
        row.addWidget(kind_label)
        row.addWidget(self.kind)
        row.addWidget(self.key_edit, 1)
        row.addWidget(self.lookup_button)
        options = QHBoxLayout()
        options.addWidget(self.auto_refresh)
        options.addStretch(1)
        options.addWidget(self.summary)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addLayout(options)
        layout.addWidget(self.table, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.refresh)
        self._last: tuple[str, str] | None = None
        QShortcut(QKeySequence("F5"), self, self.refresh)

    # ---- layout --------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._place_empty()
        return super().eventFilter(watched, event)

    def _place_empty(self) -> None:
        self.empty.setGeometry(self.table.viewport().rect().adjusted(40, 24, -40, -24))

    def _show_rows(self, rows: list[StatusRow], empty: str) -> None:
        """Fill the table; without rows, say why in it instead of leaving it blank."""
        self.model.set_rows(rows)
        self.empty.setText(empty)
        self.empty.setVisible(not rows)
        self._place_empty()

    def _arrange(self, source: str) -> None:
        """Show the columns `source` fills; its main text column takes the spare width."""
        shown = REST_COLUMNS if source == REST else LODGE_COLUMNS
        header = self.table.horizontalHeader()
        for title, index in COLUMN.items():
            header.setSectionHidden(index, title not in shown)
            stretch = title == STRETCH[source]
            mode = QHeaderView.ResizeMode.Stretch if stretch else QHeaderView.ResizeMode.Interactive
            header.setSectionResizeMode(index, mode)
            if not stretch:
                header.resizeSection(index, WIDTHS[title])
        self.source = source

    def _update_placeholder(self) -> None:
        self.key_edit.setPlaceholderText(LOOKUPS[self.kind.currentIndex()][2])
        self.key_edit.setToolTip(LOOKUPS[self.kind.currentIndex()][2])

    def _kind_changed(self) -> None:
        self._update_placeholder()
        self._clear_error()

    # ---- lookups -------------------------------------------------------------------------

    def look_up(self) -> None:
        value = self.key_edit.text().strip()
        if not value:
            self._show_error("Type the value to look up.")
            self.key_edit.setFocus()
            return
        if not value.isprintable():
            self._show_error("The value holds control characters: paste the key alone.")
            self.key_edit.setFocus()
            return
        self._last = (str(self.kind.currentData()), value)
        self.refresh()

    def refresh(self) -> None:
        if self._last is not None:
            self.tasks.run(self._query(*self._last), key="status-lookup", context="status lookup")

    async def _fetch(self, kind: str, value: str) -> list[StatusRow]:
        service, _store = self.session.require()
        if kind == LEGACY:
            answer = await service.lodge.get_message_status_xml(value)
            return [StatusRow.from_lodge(answer, value)]
        messages = await service.status(**{kind: value})
        return [StatusRow.from_message(m) for m in messages]

    async def _query(self, kind: str, value: str) -> None:
        self._clear_error()
        self.summary.setText("Looking up…")
        self.lookup_button.setEnabled(False)
        try:
            rows = await self._fetch(kind, value)
        except GatewayError as exc:
            self._timer.stop()
            self._show_rows([], EMPTY)
            self.summary.setText("")
            self._show_error(exc.message)
            # The whole message is at the field; the status bar only says that it failed.
            self.session.report("status lookup failed", False)
            return
        finally:
            self.lookup_button.setEnabled(True)
        self._arrange(LODGE if kind == LEGACY else REST)
        self._show_rows(rows, NOTHING)
        self.summary.setText(summarise(rows))
        self.session.report("status looked up", True)
        self._schedule()

    def _schedule(self) -> None:
        active = any(r.status.upper() == ACTIVE for r in self.model.rows)
        if self.auto_refresh.isChecked() and active and self._last is not None:
            self._timer.start(REFRESH_MS)
        else:
            self._timer.stop()

    # ---- errors --------------------------------------------------------------------------

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()
        set_invalid(self.key_edit, True)

    def _clear_error(self) -> None:
        self.error.hide()
        set_invalid(self.key_edit, False)

    def on_session_changed(self) -> None:
        self._timer.stop()
        self._last = None
        self._show_rows([], EMPTY)
        self._clear_error()
        self.summary.setText(IDLE)
