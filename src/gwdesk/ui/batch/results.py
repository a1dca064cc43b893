"""The Batch tab's progress and per-request results: the outbox's own rows, as they stand.

Two true progress figures: requests lodged (each request's answer, or the status
query that settled it) and messages created (the status endpoint, per BatchCode,
while the gateway loads each batch in the background). Each request of 100 is an
outbox entry, shown as the runner hands it over (`on_change`): its number,
recipients, ExternalSystemId, BatchCode or MessageId, its state (waiting or not
sent, sending, lodged, failed, uncertain) with the reason, whether a status query
settled it, messages created so far, and, once the list's report is made
(`report.py`), what their statuses say ("By status": 97 delivered, 2 failed, 1
awaiting). There is no state of the tab's own: the run is the flow's
(`gwdesk.app.list_send.ListRun`), the report the core's (`gwdesk.app.send_report`),
and following it is said here (`following_started`, `following_ended`) in the flow's
words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.list_send import FOLLOWING, EntryState, FollowEnd, ListRun, OutboxEntry
from gwdesk.app.recovery import settled_by_status
from gwdesk.app.send_history import progress_text
from gwdesk.app.send_report import SendReport, tally_text
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.plain_text import tooltip
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.history_view import MiddleElide
from gwdesk.ui.widgets.listing import row_table

STATE_COLOURS: Final = {
    EntryState.LODGED: QColor("#2e7d32"),
    EntryState.FAILED: QColor("#d32f2f"),
    EntryState.UNKNOWN: QColor("#e65100"),
    EntryState.IN_FLIGHT: QColor("#1e88e5"),
}
NOT_SENT_COLOUR: Final = QColor("#78909c")
NOT_SENT: Final = "not sent: "


def outcome_text(entry: OutboxEntry) -> str:
    """A request's state as the outbox holds it, in the operator's words."""
    state, reason = entry.state, entry.reason
    if state is EntryState.LODGED:
        again = " on a later send" if entry.attempts > 1 else ""
        how = " (settled by status)" if settled_by_status(entry) else ""
        return f"lodged{again}{how}"
    if state is EntryState.IN_FLIGHT:
        return "sending"
    if state is EntryState.PENDING:
        return NOT_SENT + reason.removeprefix(NOT_SENT) if reason else "waiting"
    word = "failed" if state is EntryState.FAILED else "uncertain"
    return f"{word}: {reason}" if reason else word


def colour(entry: OutboxEntry) -> QColor | None:
    if entry.state is EntryState.PENDING:
        return NOT_SENT_COLOUR if entry.reason else None
    return STATE_COLOURS.get(entry.state)


def reference(entry: OutboxEntry) -> str:
    """BatchCode, or the MessageId of a one-recipient request, or what status found."""
    if entry.state is not EntryState.LODGED:
        return ""
    if entry.batch_code:
        return entry.batch_code
    if not entry.message_id:
        return ""
    return entry.message_id if entry.found <= 1 else f"{entry.message_id} (+{entry.found - 1})"


def entry_columns(
    created: Callable[[OutboxEntry], str], by_status: Callable[[OutboxEntry], str]
) -> list[Column[OutboxEntry]]:
    return [
        Column("#", lambda e: e.seq, "Request number within the batch"),
        Column(
            "Recipients", lambda e: e.recipient_count, "Recipients in this request (at most 100)"
        ),
        Column(
            "ExternalSystemId",
            lambda e: e.external_system_id,
            "The reference gwdesk gave this request; look it up on the Status tab",
        ),
        Column(
            "BatchCode / MessageId",
            reference,
            "What the gateway returned: a BatchCode, or a MessageId for a single recipient",
        ),
        Column(
            "Outcome",
            outcome_text,
            "Lodged, failed (with the gateway's reason), uncertain, or not sent",
            colour=colour,
        ),
        Column(
            "By status",
            by_status,
            "What the status endpoint says of the request's messages (the report under the "
            "requests; Refresh asks again): delivered, failed, awaiting a final status",
        ),
        Column("Created", created, "Messages the gateway has created so far (status endpoint)"),
    ]


WIDTHS: Final = (34, 86, 210, 168, 100, 150, 84)
ID_COLUMN: Final = 2
REFERENCE_COLUMN: Final = 3
OUTCOME_COLUMN: Final = 4
BY_STATUS_COLUMN: Final = 5


class EntriesModel(RowsModel[OutboxEntry]):
    """Rows are the run's own list of entries: a new row for an entry repaints that row."""

    def show(self, run: ListRun | None) -> None:
        self.beginResetModel()
        self.rows = run.entries if run is not None else []  # shared: `ListRun.put` updates it
        self.endResetModel()

    def row_changed(self, row: int) -> None:
        if 0 <= row < len(self.rows):
            self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))


class ResultsPanel(QGroupBox):
    follow_requested = Signal()
    """"Follow progress" or "Stop following" was clicked."""

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__("Sending", parent)
        self.run: ListRun | None = None
        self.report: SendReport | None = None
        """The report of the list shown, once made (the "By status" column reads it)."""
        self.lodged_bar = QProgressBar()
        self.lodged_bar.setAccessibleName("Requests lodged")
        self.lodged_bar.setFormat("%v of %m requests lodged")
        self.lodged_bar.setToolTip("Requests of up to 100 recipients the gateway has accepted")
        self.lodged_label = QLabel()
        self.lodged_label.setAccessibleName("Recipients lodged")
        self.created_bar = QProgressBar()
        self.created_bar.setAccessibleName("Messages created")
        self.created_bar.setFormat("%v of %m messages created")
        self.created_bar.setToolTip(
            "The gateway loads each batch in the background; this follows it through the "
            "status endpoint (BatchCode by BatchCode)"
        )
        self.theme = theme
        self.follow_button = QPushButton()
        self.follow_button.clicked.connect(lambda: self.follow_requested.emit())
        self._show_follow_button(True)
        self.follow_label = QLabel()
        self.follow_label.setProperty("role", "hint")

        self.model = EntriesModel(entry_columns(self._created, self._by_status), self)
        self.table = row_table("Requests of the batch", self.model, several=True)
        # A reason reads from its start; generated ExternalSystemIds (batch stamp, request
        # number) and a MessageId with its "(+24)" differ at their ends.
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self._middle = MiddleElide(self.table)
        for column in (ID_COLUMN, REFERENCE_COLUMN):
            self.table.setItemDelegateForColumn(column, self._middle)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        metrics = header.fontMetrics()
        for column, width in enumerate(WIDTHS):
            # The header is bold (stylesheet): leave room so no title is clipped.
            title = self.model.columns[column].title
            self.table.setColumnWidth(column, max(width, metrics.horizontalAdvance(title) + 28))
        header.setSectionResizeMode(OUTCOME_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel(
            "Nothing sent yet. The batch goes out in requests of up to 100 recipients; each "
            "request's ExternalSystemId, BatchCode and outcome are listed here, and Cancel "
            "stops before the next request."
        )
        self.empty.setWordWrap(True)
        self.empty.setProperty("role", "hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.table)

        self.progress = QWidget()
        bars = QHBoxLayout()
        bars.setContentsMargins(0, 0, 0, 0)
        bars.addWidget(self.lodged_bar, 1)
        bars.addWidget(self.created_bar, 1)
        bars.addWidget(self.follow_button)
        labels = QHBoxLayout()
        labels.setContentsMargins(0, 0, 0, 0)
        labels.addWidget(self.lodged_label, 1)
        labels.addWidget(self.follow_label)
        progress = QVBoxLayout(self.progress)
        progress.setContentsMargins(0, 0, 0, 0)
        progress.addLayout(bars)
        progress.addLayout(labels)
        layout = QVBoxLayout(self)
        layout.addWidget(self.progress)
        layout.addWidget(self.pages, 1)
        self.show_run(None)

    def add_below(self, widget: QWidget) -> None:
        """`widget` under the requests (the list's report), shown with them."""
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.addWidget(widget)

    def show_run(self, run: ListRun | None) -> None:
        self.run = run
        if run is None or (self.report is not None and self.report.batch.id != run.batch.id):
            self.report = None
        self.model.show(run)
        self.pages.setCurrentIndex(1 if run else 0)
        self.progress.setVisible(run is not None)  # no "0 of 1" bars before a batch exists
        self.refresh()

    def _show_follow_button(self, following: bool) -> None:
        """The button stops following while it goes on, and follows again once it ended."""
        button = self.follow_button
        if following:
            button.setIcon(self.theme.icon("cancel"))
            button.setText("Stop following")
            button.setAccessibleName("Stop following batch progress")
            button.setToolTip("Stop asking the status endpoint; sending is not affected")
        else:
            button.setIcon(self.theme.icon("refresh"))
            button.setText("Follow progress")
            button.setAccessibleName("Follow batch progress")
            button.setToolTip(
                "Ask the status endpoint again until every lodged message is created, "
                "requests it gave up on included"
            )

    def following_started(self) -> None:
        """Following the run's progress started: the button stops it."""
        self._show_follow_button(True)
        self.follow_button.show()
        self.follow_label.setText(FOLLOWING)
        self.follow_label.setToolTip("")

    def following_ended(self, end: FollowEnd) -> None:
        """Following ended: what it came to, and the button follows again when it may."""
        self.refresh()
        self._show_follow_button(False)
        self.follow_label.setText(end.text)
        self.follow_label.setToolTip(tooltip(end.why) if end.why else "")
        self.follow_button.setVisible(end.again)

    def entry_changed(self, entry: OutboxEntry) -> None:
        """An entry's new row (already taken by the run): repaint it."""
        if self.run is not None:
            self.model.row_changed(self.run.rows.get(entry.id, -1))

    def show_report(self, report: SendReport) -> None:
        """The list's report was made: the "By status" column says it."""
        if self.run is None or report.batch.id != self.run.batch.id:
            return
        self.report = report
        if self.model.rows:
            last = len(self.model.rows) - 1
            self.model.dataChanged.emit(
                self.model.index(0, BY_STATUS_COLUMN), self.model.index(last, BY_STATUS_COLUMN)
            )

    def _by_status(self, entry: OutboxEntry) -> str:
        report = self.report
        if report is None or entry.state is not EntryState.LODGED:
            return ""
        return tally_text(report.tally(entry))

    def _created(self, entry: OutboxEntry) -> str:
        if entry.state is not EntryState.LODGED or self.run is None:
            return ""
        return f"{self.run.progress.created(entry):,} / {entry.recipient_count:,}"

    def refresh(self) -> None:
        run = self.run
        if run is None:
            self.lodged_bar.setRange(0, 1)
            self.lodged_bar.setValue(0)
            self.created_bar.setRange(0, 1)
            self.created_bar.setValue(0)
            self.lodged_label.setText("")
            self.follow_button.hide()
            return
        self.lodged_bar.setRange(0, max(1, len(run.entries)))
        self.lodged_bar.setValue(run.count(EntryState.LODGED))
        lodged_recipients = run.recipients_in(EntryState.LODGED)
        self.created_bar.setRange(0, max(1, lodged_recipients))
        self.created_bar.setValue(min(run.created, lodged_recipients))
        self.lodged_label.setText(progress_text(run.entries))
