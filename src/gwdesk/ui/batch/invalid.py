"""The Batch tab's recipients that cannot be sent to: listed with their row and why, exported as CSV.

An import's unusable rows, or a personal plan's recipients whose text cannot be made
(a value missing, a control character, too many parts). Long reasons wrap (sizing
is per row, so only for lists of up to `WRAP_ROWS_UP_TO`); the export writes no cell
a spreadsheet would run, off the GUI thread. Entries come from a file: plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.questions import plural
from gwdesk.importing.export import write_invalid_rows
from gwdesk.importing.recipients import InvalidRow
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.listing import csv_to_save, row_table

#: Invalid rows are sized to their wrapped reason up to this many (sizing is per row).
WRAP_ROWS_UP_TO: Final = 2000
EXPORT_KEY: Final = "batch-export"
INVALID_COLUMNS: list[Column[InvalidRow]] = [
    Column("Row", lambda r: r.row, "Row of the file (the header is row 1), or line pasted"),
    Column("Entry", lambda r: r.text, "The text as it was written"),
    Column("Reason", lambda r: r.reason, "Why it cannot be sent to"),
]


class InvalidRows(QWidget):
    """The list of recipients that cannot be sent to, and its export."""

    failed = Signal(str)

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.rows: list[InvalidRow] = []
        """The rows listed (and exported)."""
        self.source: Path | None = None
        """The file they came from (the export is named after it)."""
        self.model: RowsModel[InvalidRow] = RowsModel(INVALID_COLUMNS, self)
        self.view = row_table("Invalid rows", self.model, several=True, wrap=True)
        self.view.setStyleSheet("QTableView::item { padding: 3px 4px; }")
        header = self.view.horizontalHeader()
        header.setStretchLastSection(True)
        header.sectionResized.connect(lambda *_a: self._fit_rows())
        self.view.setColumnWidth(0, 48)
        self.view.setColumnWidth(1, 112)
        self.export_button = QPushButton(theme.icon("export"), "Export invalid rows…")
        self.export_button.setAccessibleName("Export invalid rows")
        self.export_button.setToolTip(
            "Save the invalid rows (row, entry, reason) as CSV to fix them at their source"
        )
        self.export_button.clicked.connect(self._export_clicked)
        self.export_button.setEnabled(False)
        self.export_note = PlainLabel()  # names the file written
        self.export_note.setProperty("role", "hint")
        title = QLabel("Invalid rows")
        title.setProperty("role", "hint")
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.export_note)
        head.addWidget(self.export_button)
        hint = QLabel(
            "Entries that cannot be sent to are listed here with their row and the reason, "
            "to fix at their source or export."
        )
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget()
        self.pages.addWidget(hint)
        self.pages.addWidget(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.pages, 1)

    def show_rows(self, rows: list[InvalidRow]) -> None:
        """List `rows` as the recipients that cannot be sent to (and export them)."""
        if rows == self.rows and rows:
            return
        self.rows = rows
        self.model.set_rows(rows)
        self._fit_rows()
        self.export_button.setEnabled(bool(rows))
        self.pages.setCurrentIndex(1 if rows else 0)
        self.export_note.clear()

    def _fit_rows(self) -> None:
        """Long reasons wrap instead of clipping (sizing is per row, so only for short lists)."""
        if 0 < self.model.rowCount() <= WRAP_ROWS_UP_TO:
            self.view.resizeRowsToContents()

    def _export_clicked(self) -> None:
        source = self.source
        base = source.with_name(f"{source.stem}-invalid.csv") if source else None
        path = csv_to_save(self, "Export invalid rows", base or "invalid-rows.csv")
        if path is not None:
            self.export(path)

    def export(self, path: Path) -> None:
        """Write the rows to `path` in the background (safe against CSV injection)."""
        rows = list(self.rows)
        owner = self.parent() or self  # the recipients panel's task, as its checks are
        self.tasks.run(
            self._export(path, rows), key=EXPORT_KEY, owner=owner, context="exporting rows"
        )

    async def _export(self, path: Path, rows: list[InvalidRow]) -> None:
        self.export_note.setText("Saving…")
        try:
            count = await off_thread(lambda: write_invalid_rows(path, rows))
        except OSError as exc:
            if not alive(self):
                return
            self.export_note.clear()
            self.failed.emit(f"{path.name} cannot be written: {exc.strerror or exc}.")
            return
        if alive(self):
            self.export_note.setText(f"Saved {plural(count, 'row')} to {path.name}")
