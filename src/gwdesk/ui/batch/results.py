"""The Batch tab's progress and per-request results.

Two true progress figures: requests lodged (each request's answer, or the status
query that settled it) and messages created (the status endpoint, per BatchCode,
while the gateway loads each batch in the background). Each request of 100 has a
row: its number, recipients, ExternalSystemId, BatchCode or MessageId, outcome,
whether a status query settled it, and messages created so far.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gwdesk.ui.batch.run import BatchRun, Chunk, ChunkState
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.theme import Theme

STATE_COLOURS: Final = {
    ChunkState.LODGED: QColor("#2e7d32"),
    ChunkState.FAILED: QColor("#d32f2f"),
    ChunkState.UNCERTAIN: QColor("#e65100"),
    ChunkState.NOT_SENT: QColor("#78909c"),
    ChunkState.SENDING: QColor("#1e88e5"),
}


def _created(chunk: Chunk) -> str:
    if chunk.state is not ChunkState.LODGED:
        return ""
    return f"{chunk.created:,} / {len(chunk.recipients):,}"


COLUMNS: list[Column[Chunk]] = [
    Column("#", lambda c: c.index, "Request number within the batch"),
    Column("Recipients", lambda c: len(c.recipients), "Recipients in this request (at most 100)"),
    Column(
        "ExternalSystemId",
        lambda c: c.external_id,
        "The reference gwdesk gave this request; look it up on the Status tab",
    ),
    Column(
        "BatchCode / MessageId",
        lambda c: c.reference,
        "What the gateway returned: a BatchCode, or a MessageId for a single recipient",
    ),
    Column(
        "Outcome",
        lambda c: c.outcome(),
        "Lodged, failed (with the gateway's reason), uncertain, or not sent",
        colour=lambda c: STATE_COLOURS.get(c.state),
    ),
    Column(
        "By status",
        lambda c: "yes" if c.resolved else "",
        "Yes: the answer was lost and a status query by ExternalSystemId showed it lodged",
    ),
    Column("Created", _created, "Messages the gateway has created so far (status endpoint)"),
]
WIDTHS: Final = (34, 86, 210, 168, 100, 72, 84)
OUTCOME_COLUMN: Final = 4


class ChunksModel(RowsModel[Chunk]):
    """Rows are the run's own `Chunk` objects: a change repaints one row, not the table."""

    def chunk_changed(self, chunk: Chunk) -> None:
        row = chunk.index - 1
        if 0 <= row < len(self.rows) and self.rows[row] is chunk:
            self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))


class ResultsPanel(QGroupBox):
    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__("Sending", parent)
        self.run: BatchRun | None = None
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
        self.follow_button = QPushButton(theme.icon("cancel"), "Stop following")
        self.follow_button.setAccessibleName("Stop following batch progress")
        self.follow_button.setToolTip("Stop asking the status endpoint; sending is not affected")
        self.follow_label = QLabel()
        self.follow_label.setProperty("role", "hint")

        self.model = ChunksModel(COLUMNS, self)
        self.table = QTableView()
        self.table.setAccessibleName("Requests of the batch")
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        # Generated ExternalSystemIds differ at their ends (batch stamp, request number).
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        metrics = header.fontMetrics()
        for column, width in enumerate(WIDTHS):
            # The header is bold (stylesheet): leave room so no title is clipped.
            title = COLUMNS[column].title
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

    def show_run(self, run: BatchRun | None) -> None:
        self.run = run
        self.model.set_rows(run.chunks if run else [])
        self.pages.setCurrentIndex(1 if run else 0)
        self.progress.setVisible(run is not None)  # no "0 of 1" bars before a batch exists
        self.refresh()

    def chunk_changed(self, chunk: Chunk) -> None:
        self.model.chunk_changed(chunk)

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
        lodged = run.count(ChunkState.LODGED)
        self.lodged_bar.setRange(0, max(1, len(run.chunks)))
        self.lodged_bar.setValue(lodged)
        lodged_recipients = run.recipients_in(ChunkState.LODGED)
        self.created_bar.setRange(0, max(1, lodged_recipients))
        self.created_bar.setValue(min(run.created, lodged_recipients))
        self.lodged_label.setText(lodged_text(run))


def lodged_text(run: BatchRun) -> str:
    parts = [f"{run.recipients_in(ChunkState.LODGED):,} of {run.recipients:,} recipients lodged"]
    for state, noun in (
        (ChunkState.SENDING, "sending"),
        (ChunkState.FAILED, "failed"),
        (ChunkState.UNCERTAIN, "uncertain"),
        (ChunkState.NOT_SENT, "not sent"),
    ):
        count = run.count(state)
        if count:
            requests = "request" if count == 1 else "requests"
            parts.append(f"{count:,} {requests} {noun}")
    return " · ".join(parts)


def first_failed(model: ChunksModel) -> QModelIndex:
    for row, chunk in enumerate(model.rows):
        if chunk.state in (ChunkState.FAILED, ChunkState.UNCERTAIN):
            return model.index(row, 0)
    return QModelIndex()
