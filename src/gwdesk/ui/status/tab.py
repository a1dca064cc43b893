"""Status tab: look a message up by one key at a time, as the gateway demands.

REST answers by MessageId, BatchCode or ExternalSystemId; the legacy Lodge
service answers `GetMessageStatusXML` by MsgID. `gwdesk.app.status.look_up` asks
and checks what was typed; this tab renders its `StatusRow`s in one table,
showing the columns that lookup can fill (REST has ExternalSystemId and tags,
Lodge the lodged and sent times). Whatever the gateway refuses is said under the
lookup field, which keeps what was typed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.status import LODGE, MAX_KEY, REST, Key, StatusRow, check_key, look_up, summarise
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.models import ACTIVE
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.field_errors import text_field
from gwdesk.ui.widgets.listing import hint_label, row_table
from gwdesk.ui.widgets.validity import set_invalid

LEGACY: Final = Key.LODGE_MSG_ID.value
LOOKUPS: Final = (
    (Key.MESSAGE_ID, "Message ID", "A 20-digit MessageId, e.g. 20151224130000812923"),
    (Key.BATCH_CODE, "Batch code", "The BatchCode a multi-recipient send returned"),
    (Key.EXTERNAL_SYSTEM_ID, "External ID", "The ExternalSystemId you (or gwdesk) gave the send"),
    (
        Key.LODGE_MSG_ID,
        "Message ID (legacy Lodge)",
        "A MsgID, asked of the Lodge service (GetMessageStatusXML)",
    ),
)
REFRESH_MS: Final = 5000
LOOKUP_KEY: Final = "status-lookup"
IDLE: Final = "Look up a message by one of its keys."
EMPTY: Final = (
    "Choose what you have (a MessageId, a BatchCode, an ExternalSystemId or a Lodge MsgID), "
    "type it above and press Enter.\nEvery message it names is listed here with its status."
)
NOTHING: Final = "The gateway knows no message by that key."


def shown_time(value: datetime | str | None) -> str:
    """A time in the operator's zone; a time the client could not read stays as sent."""
    if value is None:
        return ""
    return local_time(value) if isinstance(value, datetime) else value


def _time_key(value: datetime | str | None) -> str:
    return value.isoformat() if isinstance(value, datetime) else (value or "")


COLUMNS: Final[list[Column[StatusRow]]] = [
    Column("Phone number", lambda r: r.phone_number),
    Column("Message ID", lambda r: r.message_id, "MessageId (REST) or MsgID (Lodge)"),
    Column("Status", lambda r: r.status, colour=lambda r: status_colour(r.status)),
    Column(
        "Lodged",
        lambda r: shown_time(r.date_lodged),
        "DateLodged, in your time zone",
        lambda r: _time_key(r.date_lodged),
    ),
    Column(
        "Sent",
        lambda r: shown_time(r.date_sent),
        "DateSent, in your time zone (empty until the gateway sends it)",
        lambda r: _time_key(r.date_sent),
    ),
    Column("External ID", lambda r: r.external_system_id, "ExternalSystemId of the send"),
    Column("Tags", lambda r: r.tags, "Tags the send carried"),
]
COLUMN: Final = {column.title: index for index, column in enumerate(COLUMNS)}
#: Columns each source fills, and the one that takes the spare width.
REST_COLUMNS: Final = ("Phone number", "Message ID", "Status", "External ID", "Tags")
LODGE_COLUMNS: Final = ("Phone number", "Message ID", "Status", "Lodged", "Sent")
STRETCH: Final = {REST: "External ID", LODGE: "Sent"}
WIDTHS: Final = {
    "Phone number": 150,
    "Message ID": 200,
    "Status": 110,
    "Lodged": 170,
    "Sent": 170,
    "External ID": 300,
    "Tags": 240,
}


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
            self.kind.addItem(label, key.value)
            self.kind.setItemData(self.kind.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.key_edit = text_field("Lookup value", limit=MAX_KEY, clear=True)
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
        self.table = row_table("Status results", self.model, several=True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.source = REST
        self._arrange(REST)
        self.empty = hint_label(EMPTY, "No results", centred=True, parent=self.table.viewport())
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

        self._timer = single_shot(self, 0, self.refresh)
        self._last: tuple[Key, str] | None = None
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
        try:
            self._last = check_key(str(self.kind.currentData()), self.key_edit.text())
        except GatewayError as exc:  # refused before any request
            self._show_error(exc.message)
            self.key_edit.setFocus()
            return
        self.refresh()

    def refresh(self) -> None:
        if self._last is not None:
            self.tasks.run(
                self._query(*self._last), key=LOOKUP_KEY, owner=self, context="status lookup"
            )

    async def _query(self, key: Key, value: str) -> None:
        self._clear_error()
        self.summary.setText("Looking up…")
        self.lookup_button.setEnabled(False)
        try:
            service, _store = self.session.require()
            rows = await look_up(service, key, value)
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
        self._arrange(key.source)
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
