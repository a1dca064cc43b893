"""What was sent from this console this session, newest first, with the selected send's detail.

Rows are `HistoryEntry` values (the same ones the local store keeps, as
`gwdesk.app.single_send` names them), so any tab that sends can show its results the same way. A recipient that is
one of the profile's contacts shows its name beside the number (`set_names`: the tab
reads the names of every number listed in one batched read, never one per row).
"""

from __future__ import annotations

import re
from datetime import datetime

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.single_send import HistoryEntry
from gwdesk.domain.numbers import display
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.listing import row_table, selected_row

FAILED_COLOUR = QColor("#d32f2f")
QUOTED = re.compile(r"'([^']+)'")


def result_of(entry: HistoryEntry) -> str:
    """The identifier the gateway gave the send, or what went wrong, in a few words."""
    if not entry.ok:
        return "not sent"
    identifier = entry.message_id or entry.batch_code
    if identifier:
        return identifier
    # Lodge text operations return no id, only the gateway's answer: show that instead
    # (the quoted sentence alone, when the detail quotes it; the detail has the rest).
    answer = entry.detail.splitlines()[0] if entry.detail else ""
    quoted = QUOTED.search(answer)
    return (quoted.group(1) if quoted else answer) or "lodged (no id returned)"


def status_of(entry: HistoryEntry) -> str:
    return entry.status or ("Failed" if not entry.ok else "Lodged")


def entry_colour(entry: HistoryEntry) -> QColor | None:
    return FAILED_COLOUR if not entry.ok else status_colour(entry.status)


def recipients_of(entry: HistoryEntry, names: dict[str, str] | None = None) -> str:
    """The number (and the contact's name beside it), or the list's summary."""
    if not entry.recipients.isdigit():
        return entry.recipients
    name = (names or {}).get(entry.recipients)
    return f"{display(entry.recipients)} · {name}" if name else display(entry.recipients)


def short_time(moment: datetime) -> str:
    """Today's times as HH:MM:SS (a session rarely spans days); older ones with the date."""
    local = moment.astimezone()
    if local.date() == datetime.now().astimezone().date():
        return local.strftime("%H:%M:%S")
    return local_time(moment, with_seconds=False)


MESSAGE_CLIP = 300


def message_of(entry: HistoryEntry) -> str:
    """The text on one line, clipped: the cell elides it and the tooltip shows this much."""
    text = " ".join(entry.text.split())
    return text if len(text) <= MESSAGE_CLIP else text[:MESSAGE_CLIP] + "…"


COLUMNS: list[Column[HistoryEntry]] = [
    Column("Time", lambda e: short_time(e.at), "When it was sent (your time)", lambda e: e.at),
    Column("To", recipients_of),
    Column("Status", status_of, colour=entry_colour),
    Column("Result", result_of, "MessageId, BatchCode, or why it was not sent"),
    Column("Channel", lambda e: e.channel),
    Column("External ID", lambda e: e.external_system_id, "ExternalSystemId of the send"),
    Column("Message", message_of, "The text that was sent"),
]
TO_COLUMN = 1
CHANNEL_COLUMN = 4
EXTERNAL_COLUMN = 5
MESSAGE_COLUMN = 6
#: The widest usual value of each fixed column: its width follows the font.
COLUMN_SAMPLES = (
    "00:00:00",
    "+61 412 345 678",
    "DELIVERED",
    "20151224130000812923",
    "SMS (Lodge)",
)
EXTERNAL_WIDTH = 230
#: Narrower than this, the stretching column (External ID or text) says too little: the
#: Channel column makes way first.
MIN_FLEXIBLE_WIDTH = 150
#: Below this much room for the text, the Message column is left out (the detail shows it).
MIN_MESSAGE_WIDTH = 200


class MiddleElide(QStyledItemDelegate):
    """Elides in the middle: generated ids differ at both ends (`gwd-2026…-0001`)."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


def describe(entry: HistoryEntry, names: dict[str, str] | None = None) -> str:
    """The detail pane's text for one entry (plain text: it quotes what was typed)."""
    lines = [
        f"{'Sent' if entry.ok else 'Not sent'} · {entry.channel} · {local_time(entry.at)}",
        f"To: {recipients_of(entry, names)}",
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
    """Table of sends + detail of the selected one; an empty state says what will appear.

    `detail_beside` puts the detail right of the table (a wide, short area keeps
    several rows in sight); `external_ids=False` drops the External ID column for
    channels that have none (Lodge), so the text gets the room.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        empty_text: str = "",
        detail_beside: bool = False,
        external_ids: bool = True,
    ) -> None:
        super().__init__(parent)
        self._external_ids = external_ids
        self.names: dict[str, str] = {}
        """Contacts' names by number (international digits)."""
        columns = list(COLUMNS)
        columns[TO_COLUMN] = Column(
            "To", lambda e: recipients_of(e, self.names), "The number, and the contact's name"
        )
        self.model: RowsModel[HistoryEntry] = RowsModel(columns, self)
        self.table = row_table("Sent messages", self.model)
        self.table.setMinimumHeight(8 * self.table.fontMetrics().height())  # header + 3 rows
        self._elide = MiddleElide(self.table)
        self.table.setItemDelegateForColumn(EXTERNAL_COLUMN, self._elide)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        metrics = self.table.fontMetrics()
        self._widths: dict[int, int] = {}
        for column, sample in enumerate(COLUMN_SAMPLES):
            title = COLUMNS[column].title
            width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(title) + 12)
            self._widths[column] = width + 12
            self.table.setColumnWidth(column, width + 12)
        self.table.setColumnWidth(EXTERNAL_COLUMN, EXTERNAL_WIDTH)
        self._fitting = False
        header.sectionResized.connect(self._section_resized)
        self.table.viewport().installEventFilter(self)
        self._fit_columns()
        self.empty = QLabel(
            empty_text or "Nothing sent yet this session.\nResults of your sends appear here."
        )
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setProperty("role", "hint")
        self.empty.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        self.detail = PlainLabel()
        self.detail.setAccessibleName("Selected send")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # Scrollable, so a long entry is never cut off when the results area is short.
        self.detail_area = QScrollArea()
        self.detail_area.setWidget(self.detail)
        self.detail_area.setWidgetResizable(True)
        self.detail_area.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_area.hide()
        layout: QBoxLayout
        if detail_beside:
            self.detail_area.setMinimumWidth(280)
            layout = QHBoxLayout(self)
            layout.addWidget(self.stack, 3)
            layout.addWidget(self.detail_area, 2)
        else:
            self.detail_area.setMinimumHeight(110)
            self.detail_area.setMaximumHeight(220)
            layout = QVBoxLayout(self)
            layout.addWidget(self.stack, 1)
            layout.addWidget(self.detail_area)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        copy = QShortcut(QKeySequence.StandardKey.Copy, self.table)
        copy.activated.connect(self.copy_selected)

    # ---- column fitting ----------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def _section_resized(self, logical: int, _old: int, new: int) -> None:
        if self._fitting or logical not in self._widths or new <= 0:
            return
        self._widths[logical] = new  # the operator widened or narrowed it: keep that
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Fill the width exactly, never scrolling sideways; long values elide.

        With room, the text column stretches beside a fixed External ID; with less,
        the External ID stretches; with little, the Channel column makes way. What a
        cell or a hidden column does not show is in the tooltip and the detail below.
        """
        if self._fitting:
            return
        self._fitting = True
        try:
            self._arrange(self.table.viewport().width())
        finally:
            self._fitting = False

    def _arrange(self, width: int) -> None:
        header = self.table.horizontalHeader()
        external = self._external_ids
        room = width - sum(self._widths[c] for c in range(CHANNEL_COLUMN))
        with_channel = room - self._widths[CHANNEL_COLUMN] >= MIN_FLEXIBLE_WIDTH
        if with_channel:
            room -= self._widths[CHANNEL_COLUMN]
        with_text = not external or room >= EXTERNAL_WIDTH + MIN_MESSAGE_WIDTH
        stretch = QHeaderView.ResizeMode.Stretch
        interactive = QHeaderView.ResizeMode.Interactive
        header.setSectionHidden(CHANNEL_COLUMN, not with_channel)
        if with_channel:
            header.resizeSection(CHANNEL_COLUMN, self._widths[CHANNEL_COLUMN])
        header.setSectionHidden(EXTERNAL_COLUMN, not external)
        header.setSectionResizeMode(EXTERNAL_COLUMN, interactive if with_text else stretch)
        if with_text and external:
            header.resizeSection(EXTERNAL_COLUMN, EXTERNAL_WIDTH)
        header.setSectionHidden(MESSAGE_COLUMN, not with_text)
        header.setSectionResizeMode(MESSAGE_COLUMN, stretch if with_text else interactive)

    def shown_columns(self) -> list[str]:
        header = self.table.horizontalHeader()
        return [c.title for i, c in enumerate(COLUMNS) if not header.isSectionHidden(i)]

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        self.model.set_rows(entries)
        self._update_state()

    def add(self, entry: HistoryEntry) -> None:
        """A new result goes on top and is selected, so its detail shows at once."""
        self.model.prepend(entry)
        self._update_state()
        self.table.selectRow(0)
        self.table.scrollToTop()

    def update_rows(self, changed: dict[int, HistoryEntry]) -> None:
        """Rows whose status changed (by position; `gwdesk.app.live_status.followed`):
        repainted in place, the selected one's detail too."""
        if not changed:
            return
        self.model.replace(changed)
        entry = self.selected()
        if entry is not None:
            self.detail.setText(describe(entry, self.names))

    def entries(self) -> list[HistoryEntry]:
        return list(self.model.rows)

    def numbers(self) -> set[str]:
        """The single recipients listed (international digits) whose names are not known."""
        return {
            e.recipients
            for e in self.model.rows
            if e.recipients.isdigit() and e.recipients not in self.names
        }

    def set_names(self, names: dict[str, str]) -> None:
        """Contacts' names for numbers listed (those not in `names` have none)."""
        self.names.update(names)
        rows = self.model.rowCount()
        if rows:
            self.model.dataChanged.emit(
                self.model.index(0, TO_COLUMN), self.model.index(rows - 1, TO_COLUMN)
            )
        entry = self.selected()
        if entry is not None:
            self.detail.setText(describe(entry, self.names))

    def forget_names(self) -> None:
        """The address book changed: every name is read again."""
        self.names.clear()

    def selected(self) -> HistoryEntry | None:
        return selected_row(self.table, HistoryEntry)

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
            self.detail.setText(describe(entry, self.names))
