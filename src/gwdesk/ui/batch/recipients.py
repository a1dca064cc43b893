"""The Batch tab's recipients: pasted or imported, checked off the GUI thread, problems listed.

Two sources, one at a time (a tab each): a paste box (one number per line, or
separated by commas or semicolons) and a CSV/text file. Reading a file, guessing
its column and checking 100,000 numbers runs as a `BlockingJob`, with a
progress bar and Cancel; a cancelled or failed import keeps the previous list.
Contact groups chosen under them are sent to as well (or alone, with nothing pasted
or imported): their members' first numbers join the list, each number once.
The result is a `RecipientList`: usable numbers once each, duplicates counted,
and every unusable row with its row number, text and reason, exportable as CSV (a
personal message's plan lists its own: the recipients whose text cannot be made).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.list_send import Contact, ListSend
from gwdesk.app.list_send.sources import file_details, file_title, summary_text
from gwdesk.app.merge import with_group_numbers
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.importing.decoding import ImportCancelled, ImportFailed
from gwdesk.importing.recipients import (
    InvalidRow,
    RecipientList,
    check_pasted,
    check_table,
    load_table,
)
from gwdesk.importing.table import ALL_COLUMNS, Table
from gwdesk.ui.batch.groups import GroupPicker
from gwdesk.ui.batch.invalid import InvalidRows
from gwdesk.ui.plain_text import PlainLabel, tooltip, visible
from gwdesk.ui.tasks import BlockingJob, TaskRunner, alive
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.listing import file_to_open
from gwdesk.ui.widgets.validity import set_role

T = TypeVar("T")
PASTE_DELAY_MS: Final = 400
PREVIEW_ROWS: Final = 8
FILE_FILTER: Final = "CSV and text files (*.csv *.txt *.tsv *.tab);;All files (*)"
JOB_KEY: Final = "batch-recipients"
PASTE, FILE = 0, 1


class RecipientsPanel(QGroupBox):
    checked = Signal()
    """The current list changed (`result`), or a check started or ended (`busy`)."""
    edited = Signal()
    """The pasted numbers were edited (a draft keeps them)."""

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__("Recipients", parent)
        self.tasks = tasks
        self.region = DEFAULT_REGION
        self.result: RecipientList | None = None
        self.busy = False
        self.job: BlockingJob[Any] | None = None
        self.last_job_thread: int | None = None
        self.file_path: Path | None = None
        self.table: Table | None = None
        self._results: dict[int, RecipientList | None] = {PASTE: None, FILE: None}
        self.setAcceptDrops(True)

        self.sources = QTabWidget()
        self.sources.setDocumentMode(True)
        self.sources.addTab(self._paste_page(), "Paste numbers")
        self.sources.addTab(self._file_page(theme), "Import a file")
        self.sources.setTabToolTip(PASTE, "Type or paste numbers")
        self.sources.setTabToolTip(FILE, "A CSV or text file, e.g. exported from a CRM")
        self.sources.currentChanged.connect(self._source_changed)

        self.progress = QProgressBar()
        self.progress.setAccessibleName("Import progress")
        self.progress_label = PlainLabel()
        self.progress_label.setProperty("role", "hint")
        self.cancel_button = QPushButton(theme.icon("cancel"), "Cancel")
        self.cancel_button.setAccessibleName("Cancel the import")
        self.cancel_button.setToolTip("Stop reading; the list you had stays")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress_row = QWidget()
        row = QHBoxLayout(self.progress_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress_label)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        self.progress_row.hide()

        self.summary = QLabel("Paste numbers or import a file.")
        self.summary.setAccessibleName("Recipients summary")
        self.summary.setProperty("role", "hint")
        self.summary.setWordWrap(True)
        self.error = PlainLabel()
        self.error.setAccessibleName("Recipients error")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()

        self.invalid = InvalidRows(tasks, theme, self)  # the panel: its export is the panel's task
        self.invalid.failed.connect(self.show_error)

        self.group_picker = GroupPicker(tasks, theme)
        self.group_picker.changed.connect(self._publish)
        self.group_picker.failed.connect(self.show_error)

        layout = QVBoxLayout(self)
        layout.addWidget(self.sources, 3)
        layout.addWidget(self.group_picker)
        layout.addWidget(self.progress_row)
        layout.addWidget(self.summary)
        layout.addWidget(self.error)
        layout.addWidget(self.invalid, 2)

        self._paste_timer = single_shot(self, PASTE_DELAY_MS, self.check_paste)

    # ---- pages ---------------------------------------------------------------------------

    def _paste_page(self) -> QWidget:
        self.paste = QPlainTextEdit()
        self.paste.setAccessibleName("Pasted recipients")
        self.paste.setPlaceholderText(
            "One number per line, or separated by commas or semicolons:\n\n"
            "0412 345 678\n+61 412 345 679, 61412345680\n(02) 9876 5432"
        )
        self.paste.setToolTip("National numbers are read in the profile's region")
        self.paste.setTabChangesFocus(True)
        self.paste.textChanged.connect(self._pasted)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.paste)
        return page

    def _file_page(self, theme: Theme) -> QWidget:
        self.import_button = QPushButton(theme.icon("import"), "Import CSV…")
        self.import_button.setAccessibleName("Import a recipients file")
        self.import_button.setToolTip(
            "Read a CSV or text file (any encoding, comma, semicolon, tab or pipe separated); "
            "you can also drop a file here"
        )
        self.import_button.clicked.connect(self._import_clicked)
        self.file_label = PlainLabel("No file yet.")  # file names are not markup
        self.file_label.setAccessibleName("Imported file")
        self.file_label.setProperty("role", "hint")
        self.file_label.setWordWrap(True)
        self.file_details = QLabel()
        self.file_details.setAccessibleName("How the file was read")
        self.file_details.setProperty("role", "hint")
        self.file_details.setWordWrap(True)
        self.file_details.hide()
        self.column_combo = QComboBox()
        self.column_combo.setAccessibleName("Number column")
        self.column_combo.setToolTip("The column that holds the phone numbers")
        self.column_combo.setMinimumContentsLength(12)
        self.column_combo.activated.connect(lambda _i: self.recheck_file())
        self.header_box = QCheckBox("Header row")
        self.header_box.setAccessibleName("First row is a header")
        self.header_box.setToolTip("The first row is a header (column names), not a recipient")
        self.header_box.toggled.connect(self._header_toggled)
        self.preview_model = QStandardItemModel(self)
        self.preview = QTableView()
        self.preview.setAccessibleName("File preview")
        self.preview.setModel(self.preview_model)
        self.preview.verticalHeader().hide()
        self.preview.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.preview.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.preview.setWordWrap(False)
        self.file_empty = QLabel(
            "Import a CSV or text file exported from a spreadsheet or CRM. The encoding, "
            "separator, header row and the column of numbers are found for you; you can "
            "choose another column. Leading zeros and + signs are kept."
        )
        self.file_empty.setWordWrap(True)
        self.file_empty.setProperty("role", "hint")
        self.file_empty.setAlignment(Qt.AlignmentFlag.AlignTop)

        top = QHBoxLayout()
        top.addWidget(self.import_button)
        top.addWidget(self.file_label, 1)
        picker = QHBoxLayout()
        column_label = QLabel("Number &column")
        column_label.setBuddy(self.column_combo)
        picker.addWidget(column_label)
        picker.addWidget(self.column_combo, 1)
        picker.addWidget(self.header_box)
        self.picker_row = QWidget()
        self.picker_row.setLayout(picker)
        picker.setContentsMargins(0, 0, 0, 0)
        self.picker_row.hide()
        self.preview.hide()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.file_details)
        layout.addWidget(self.picker_row)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.file_empty, 1)
        return page

    # ---- state ---------------------------------------------------------------------------

    def set_region(self, region: str) -> None:
        """National numbers are read in the profile's region: a new region means a recheck."""
        if region == self.region:
            return
        self.region = region
        self._results = {PASTE: None, FILE: None}
        self.check_current()

    def source(self) -> int:
        return self.sources.currentIndex()

    def pending(self) -> bool:
        """Whether `result` is about to change: a check runs, or an edit awaits one."""
        return (
            self.busy
            or self.group_picker.loading
            or (self.source() == PASTE and self._paste_timer.isActive())
        )

    def base(self) -> RecipientList | None:
        """The pasted or imported list shown (without the groups)."""
        return self._results[self.source()]

    def settled(self) -> RecipientList | None:
        """The list when no check is about to change it (a check typed just now is
        started); else None, and the operator is told to wait."""
        if self.pending():
            if not self.busy and self.source() != FILE:
                self.check_paste()  # the operator typed and sent at once: check now
            self.show_error("The recipients are still being checked; send when they are ready.")
            return None
        return self.result

    def sendable(self) -> RecipientList | None:
        """`settled`, when it has a number to send to (else None, and why is shown)."""
        result = self.settled()
        if result is not None and result.numbers:
            return result
        if not self.pending():
            self.show_error(
                "There is no usable recipient yet: paste numbers, import a file or choose a group."
            )
        return None

    def set_enabled_for_send(self, enabled: bool) -> None:
        self.sources.setEnabled(enabled)

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def clear_error(self) -> None:
        self.error.hide()

    def _set_result(self, source: int, result: RecipientList | None) -> None:
        self._results[source] = result
        if source == self.source():
            self._publish()

    def _publish(self) -> None:
        """The shown source's list with the chosen groups' members: the recipients."""
        source = self.source()
        result = with_group_numbers(self._results[source], self.group_members.values())
        self.result = result
        self.show_invalid(list(result.invalid) if result else [])
        if result is None:
            self.summary.setText(
                "Paste numbers, import a file or choose a contact group."
                if source == PASTE
                else "Import a file, or choose a contact group."
            )
            set_role(self.summary, "hint")
        else:
            self.summary.setText(summary_text(result, self.group_members))
            set_role(self.summary, "ok" if result.numbers else "hint")
        self.checked.emit()

    def show_invalid(self, rows: list[InvalidRow]) -> None:
        """List `rows` as the recipients that cannot be sent to (and export them)."""
        self.invalid.show_rows(rows)

    def export_invalid(self, path: Path) -> None:
        """Write the rows listed under Invalid to `path` (off the GUI thread)."""
        self.invalid.export(path)

    # ---- contact groups ------------------------------------------------------------------

    @property
    def groups(self) -> list[tuple[str, int]]:
        """The address book's groups and their sizes."""
        return self.group_picker.groups

    @property
    def group_members(self) -> dict[str, tuple[Contact, ...]]:
        """The chosen groups' members, by group."""
        return self.group_picker.members

    def set_flow(self, flow: ListSend | None) -> None:
        """The profile's list flow (its address book's groups are offered); the choice
        of groups is dropped."""
        self.group_picker.set_flow(flow)

    def reload_groups(self) -> None:
        """Read the groups again (the address book changed), and the chosen ones' members."""
        self.group_picker.reload()

    def choose_groups(self, names: list[str]) -> None:
        """Send to these groups too (their members are read off the GUI thread)."""
        self.group_picker.choose(names)

    def _source_changed(self, index: int) -> None:
        self.clear_error()
        if self._results[index] is None:
            self.check_current()
        self._publish()

    def check_current(self) -> None:
        if self.source() == PASTE:
            self.check_paste()
        elif self.table is not None:
            self.recheck_file()

    # ---- jobs ----------------------------------------------------------------------------

    def _run(
        self, what: str, work: Callable[[BlockingJob[T]], T], done: Callable[[T], None]
    ) -> None:
        job: BlockingJob[T] = BlockingJob(self._progress)
        self.job = job  # busy from now on, not from when the task first runs
        self._set_busy(True, what)
        self.tasks.run(
            self._job(job, work, done), key=JOB_KEY, owner=self, context="reading recipients"
        )

    async def _job(
        self, job: BlockingJob[T], work: Callable[[BlockingJob[T]], T], done: Callable[[T], None]
    ) -> None:
        try:
            value = await job.run(work)
        except ImportCancelled:
            self.show_error("Cancelled: the list you had before is kept.")
            return
        except ImportFailed as exc:
            self.show_error(exc.message)
            return
        finally:
            if alive(self):  # not when the tab closed while the work ran
                self.last_job_thread = job.thread_id
                if self.job is job:
                    self.job = None
                    self._set_busy(False, "")
        self.clear_error()
        done(value)

    def _set_busy(self, busy: bool, what: str) -> None:
        self.busy = busy
        self.progress_row.setVisible(busy)
        self.progress.setRange(0, 0)  # busy until the first report
        self.progress_label.setText(what)
        self.import_button.setEnabled(not busy)
        self.checked.emit()

    def _progress(self, phase: str, done: int, total: int) -> None:
        if not alive(self) or self.job is None:
            return
        self.progress_label.setText(phase)
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(done, total))

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    # ---- paste ---------------------------------------------------------------------------

    def _pasted(self) -> None:
        self._results[PASTE] = None
        self._paste_timer.start()
        self.edited.emit()

    def check_paste(self) -> None:
        self._paste_timer.stop()
        text = self.paste.toPlainText()
        if not text.strip():
            self.tasks.cancel(JOB_KEY, owner=self)
            if self.job is not None:
                self.job.cancel()
                self.job = None
                self._set_busy(False, "")
            self._set_result(PASTE, None)
            return
        region = self.region

        def work(job: BlockingJob[RecipientList]) -> RecipientList:
            return check_pasted(text, region, job.progress("Checking numbers"), job.cancelled)

        self._run("Checking numbers", work, lambda result: self._set_result(PASTE, result))

    # ---- files ---------------------------------------------------------------------------

    def _import_clicked(self) -> None:
        start = str(self.file_path.parent) if self.file_path else ""
        path = file_to_open(self, "Import recipients", FILE_FILTER, start)
        if path is not None:
            self.import_path(path)

    def import_path(self, path: Path) -> None:
        """Read `path` in the background; the column guess and the check follow."""
        self.sources.setCurrentIndex(FILE)
        region = self.region

        def work(job: BlockingJob[tuple[Table, RecipientList]]) -> tuple[Table, RecipientList]:
            table = load_table(path, region, job.progress(f"Reading {path.name}"), job.cancelled)
            checked = check_table(
                table, table.column, region, job.progress("Checking numbers"), job.cancelled
            )
            return table, checked

        def done(value: tuple[Table, RecipientList]) -> None:
            self.file_path = path
            self.invalid.source = path
            self._show_table(value[0])
            self._set_result(FILE, value[1])

        self._run(f"Reading {path.name}", work, done)

    def recheck_file(self) -> None:
        """Check the chosen column again (another column, header on or off)."""
        table = self.table
        if table is None:
            return
        column = self.column_combo.currentData()
        column = table.column if not isinstance(column, int) else column
        table = replace(table, column=column)
        region = self.region

        def work(job: BlockingJob[RecipientList]) -> RecipientList:
            progress = job.progress("Checking numbers")
            return check_table(table, column, region, progress, job.cancelled)

        def done(result: RecipientList) -> None:
            self.table = table
            self._fill_preview(table)
            self._set_result(FILE, result)

        self._run("Checking numbers", work, done)

    def _header_toggled(self, on: bool) -> None:
        if self.table is None or self.table.has_header == on:
            return
        self.table = replace(self.table, has_header=on)
        self._fill_columns(self.table)
        self.recheck_file()

    def _show_table(self, table: Table) -> None:
        self.table = table
        assert self.file_path is not None
        self.file_label.setText(file_title(self.file_path, table))
        self.file_label.setToolTip(tooltip(str(self.file_path)))
        self.file_details.setText(file_details(table))
        self.file_details.show()
        self.file_empty.hide()
        self.preview.show()
        self.picker_row.setVisible(True)
        self.header_box.blockSignals(True)
        self.header_box.setChecked(table.has_header)
        self.header_box.blockSignals(False)
        self._fill_columns(table)
        self._fill_preview(table)

    def _fill_columns(self, table: Table) -> None:
        self.column_combo.clear()
        for index, name in enumerate(table.column_names()):
            self.column_combo.addItem(visible(name), index)
        if table.width > 1:
            self.column_combo.addItem("Every cell (numbers written across)", ALL_COLUMNS)
        chosen = self.column_combo.findData(table.column)
        self.column_combo.setCurrentIndex(max(0, chosen))
        self.column_combo.setEnabled(table.width > 1)

    def _fill_preview(self, table: Table) -> None:
        model = self.preview_model
        model.clear()
        names = [visible(title) or f"Column {i + 1}" for i, title in enumerate(table.titles())]
        model.setHorizontalHeaderLabels(names)
        bold = QFont(self.font())
        bold.setBold(True)
        mark = QBrush(QColor(30, 136, 229, 40))
        for row in table.preview(PREVIEW_ROWS):
            items = []
            for index in range(len(names)):
                item = QStandardItem(visible(row[index]) if index < len(row) else "")
                if table.column in (index, ALL_COLUMNS):
                    item.setFont(bold)
                    item.setBackground(mark)
                items.append(item)
            model.appendRow(items)
        self.preview.setToolTip(
            f"The first {PREVIEW_ROWS} rows; the highlighted column is the one sent to"
        )

    # ---- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()
            self.import_path(Path(urls[0].toLocalFile()))

    def state(self) -> dict[str, Any]:
        """What a draft keeps of the recipients: the pasted text (files are read again)."""
        return {"pasted": self.paste.toPlainText()[:200_000]}

    def restore(self, data: dict[str, Any]) -> None:
        """The pasted text a draft kept, unless something is pasted already."""
        pasted = data.get("pasted")
        if isinstance(pasted, str) and pasted and not self.paste.toPlainText():
            self.paste.setPlainText(pasted[:200_000])
