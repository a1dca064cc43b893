"""Logs tab: the account's log records from the local cache, kept in sync in the background.

The table reads the cache a window at a time (`LogTableModel`), the session's sync
runs on its own (`ui.log_sync`: this tab starts it, shows it, and re-reads its view
whenever it commits, so a send of this console shows here without F5), and everything that touches many rows (counts, the
chart, the value lists, exports) runs on worker threads. The selection belongs to
a record, not a row: the tab remembers the selected messageId and puts the
selection (and the scroll position) back on it whenever the view is re-read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.errors import StoreError
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.settings import LOGS_HEADER
from gwdesk.logs.cache import LogCache
from gwdesk.logs.query import DayCounts, LogFilter, LogQuery, Reading, count, distinct, per_day
from gwdesk.ui.log_sync import session_sync
from gwdesk.ui.logs.chart import LogChart
from gwdesk.ui.logs.columns import LogColumns
from gwdesk.ui.logs.detail import LogDetailPane
from gwdesk.ui.logs.export import LogExport
from gwdesk.ui.logs.filters import LogFilterBar
from gwdesk.ui.logs.table import Anchor, LogTableModel, Refreshed
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import StoreReads, TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.listing import csv_to_save, dated_csv, row_table
from gwdesk.ui.widgets.panes import panes
from gwdesk.ui.widgets.sort_header import SortHeader

log = logging.getLogger("gwdesk.ui.logs")
#: Re-read the view at most this often while a sync writes (ms).
REFRESH_MS: Final = 1500
#: Recount the chart and the value lists at most this often while a sync writes (ms).
STATS_MS: Final = 10_000
STATS_AFTER_FILTER_MS: Final = 300
ROW_HEIGHT: Final = 22

NOT_CONNECTED = "Not connected: choose a profile (File ▸ Profiles…) to see its logs."
NO_CACHE = "This profile keeps no log cache (its store is in memory)."
SYNCING = "No records yet — syncing…"
NO_RECORDS = "No records yet — press Sync now (F5) to fetch the account's logs."
NO_MATCH = "No records match the filter — Clear shows them all."


@dataclass(frozen=True, slots=True)
class Stats:
    counts: DayCounts
    statuses: list[tuple[str, int]]
    types: list[tuple[str, int]]
    total: int


class LogsTab(BaseTab):
    title = "Logs"
    icon_name = "logs"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.model: LogTableModel | None = None
        self.selected: str | None = None
        self.cache_total = 0
        self.logs: LogCache | None = None
        """The profile's log cache (None: no profile, or one kept in memory)."""
        self._stats_reads: StoreReads | None = None
        self._stats_busy = False
        self._stats_again = False
        self.export: LogExport | None = None

        self.filters = LogFilterBar(theme)
        self.filters.changed.connect(self._filter_changed)
        self.summary = QLabel("")
        self.summary.setAccessibleName("Records shown")
        self.sync_label = PlainLabel()  # quotes the gateway's errors
        self.sync_label.setProperty("role", "hint")
        self.sync_label.setAccessibleName("Sync progress")
        self.sync_button = QPushButton(theme.icon("refresh"), "Sync now")
        self.sync_button.setToolTip("Fetch new records and status changes from the gateway (F5)")
        self.stop_button = QPushButton(theme.icon("cancel"), "Stop")
        self.stop_button.setToolTip("Stop the sync under way (what it got so far is kept)")
        self.stop_button.hide()
        self.columns_button = QPushButton(theme.icon("columns"), "Columns")
        self.columns_button.setToolTip(
            "Choose the columns shown (also a right-click on the header)"
        )
        self.export_button = QPushButton(theme.icon("export"), "Export CSV…")
        self.export_button.setToolTip(
            "Save the records of this view, in this order, as CSV (Ctrl+E)"
        )
        self.export_bar = QProgressBar()
        self.export_bar.setAccessibleName("Export progress")
        self.export_bar.setMaximumWidth(220)
        self.export_bar.hide()
        self.export_cancel = QPushButton(theme.icon("cancel"), "Cancel export")
        self.export_cancel.hide()
        self.error = PlainLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()

        self.table = row_table("Log records", row_height=ROW_HEIGHT)
        self.table.setCornerButtonEnabled(False)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        header = SortHeader(self.table)
        self.table.setHorizontalHeader(header)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionsMovable(True)
        header.setStretchLastSection(True)
        header.setHighlightSections(False)
        self.empty = QLabel(self.table.viewport())
        self.empty.setProperty("role", "hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.table.viewport().installEventFilter(self)
        self.columns: LogColumns | None = None

        self.detail = LogDetailPane(theme)
        self.detail.setMinimumWidth(300)
        self.chart = LogChart()

        self._build_layout()
        self._connect_buttons()
        self.sync = session_sync(session, tasks)
        """The session's sync: it runs whatever tab is open; this tab shows it."""
        self.connect_tracked(self.sync.progress, self.sync_label.setText)
        self.connect_tracked(self.sync.running_changed, self._sync_running)
        self.connect_tracked(self.sync.committed, self._cache_changed)
        self.connect_tracked(self.sync.finished, self._sync_finished)
        self._refresh_timer = single_shot(self, REFRESH_MS, self.refresh)
        self._stats_timer = single_shot(self, STATS_AFTER_FILTER_MS, self._load_stats)
        self.on_session_changed()

    # ---- building ------------------------------------------------------------------------------

    def _build_layout(self) -> None:
        actions = QHBoxLayout()
        actions.addWidget(self.summary)
        actions.addSpacing(12)
        actions.addWidget(self.sync_label, 1)
        actions.addWidget(self.export_bar)
        actions.addWidget(self.export_cancel)
        actions.addWidget(self.sync_button)
        actions.addWidget(self.stop_button)
        actions.addWidget(self.columns_button)
        actions.addWidget(self.export_button)
        upper = panes(
            Qt.Orientation.Horizontal, self.table, self.detail, stretch=(1,), sizes=(900, 340)
        )
        self.splitter = panes(
            Qt.Orientation.Vertical, upper, self.chart, stretch=(1,), sizes=(420, 200)
        )
        layout = QVBoxLayout(self)
        layout.addWidget(self.filters)
        layout.addLayout(actions)
        layout.addWidget(self.error)
        layout.addWidget(self.splitter, 1)

    def _connect_buttons(self) -> None:
        self.sync_button.clicked.connect(self.sync_now)
        self.stop_button.clicked.connect(lambda: self.sync.cancel())
        self.columns_button.clicked.connect(self._columns_menu)
        self.export_button.clicked.connect(self._ask_export)
        self.export_cancel.clicked.connect(self.cancel_export)
        QShortcut(QKeySequence("F5"), self, self.sync_now)
        QShortcut(QKeySequence.StandardKey.Find, self, self.filters.text.setFocus)
        QShortcut(QKeySequence("Ctrl+E"), self, self._ask_export)
        copy = QShortcut(QKeySequence.StandardKey.Copy, self.table, self.detail.copy_all)
        copy.setContext(Qt.ShortcutContext.WidgetShortcut)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.empty.setGeometry(self.table.viewport().rect().adjusted(24, 24, -24, -24))
        return super().eventFilter(watched, event)

    # ---- session -------------------------------------------------------------------------------

    def _teardown(self) -> None:
        self._refresh_timer.stop()
        self._stats_timer.stop()
        if self.export is not None:
            self.export.cancel()
        if self.columns is not None:
            self.columns.detach()  # each change was saved already; the old store may be closed
            self.columns = None
        if self.model is not None:
            self.table.setModel(None)
            self.model.close()
            self.model.deleteLater()
            self.model = None
        if self._stats_reads is not None:
            self._stats_reads.close()
            self._stats_reads.deleteLater()
            self._stats_reads = None
        self.logs = None
        self._stats_busy = self._stats_again = False
        self.selected = None
        self.detail.show_record(None)
        self.chart.set_counts(DayCounts([], {}))

    def on_session_changed(self) -> None:
        self._teardown()
        profile = self.session.profile
        self.filters.region = profile.region if profile is not None else DEFAULT_REGION
        store = self.session.store
        logs = LogCache(store) if store is not None else None
        enabled = logs is not None and logs.usable
        for widget in (self.sync_button, self.export_button, self.columns_button, self.filters):
            widget.setEnabled(enabled)
        if store is None or logs is None or not logs.usable:
            self.summary.setText("")
            self.sync_label.setText("")
            self._show_empty(NOT_CONNECTED if store is None else NO_CACHE)
            return
        self.logs = logs
        path = logs.path
        self.model = LogTableModel(path, self)
        self.model.loaded.connect(self._loaded)
        self.model.refreshed.connect(self._refreshed)
        self.model.failed.connect(self._show_error)
        self.table.setModel(self.model)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        settings = store.settings

        def load_header() -> str:
            try:
                return settings.get(LOGS_HEADER)
            except StoreError as exc:  # a convenience: the table works without it
                log.warning("the Logs table's columns could not be read: %s", exc)
                return LOGS_HEADER.default

        def save_header(state: str) -> None:
            try:
                settings.set(LOGS_HEADER, state)
            except (StoreError, ValueError) as exc:  # a convenience, as above
                log.warning("the Logs table's columns could not be saved: %s", exc)

        self.columns = LogColumns(self.table.horizontalHeader(), load_header, save_header)
        self.columns.restore()
        header = self.table.horizontalHeader()
        header.setSortIndicatorShown(True)
        self.table.setSortingEnabled(True)  # applies the header's sort: the first query
        header.sortIndicatorChanged.connect(lambda *_: self.summary.setText("Sorting…"))
        self._stats_reads = StoreReads(path, "stats", self)
        self.export = LogExport(path, self.tasks, self)
        self.export.progress.connect(self._export_progress)
        self.export.finished.connect(self._export_finished)
        self._show_empty(None)
        self._stats_timer.start(0)
        self.sync.start()
        self._sync_running(self.sync.active)  # it may have been running before this tab

    # ---- the view ------------------------------------------------------------------------------

    @property
    def query(self) -> LogQuery:
        return self.model.query if self.model is not None else LogQuery()

    def _filter_changed(self, flt: LogFilter) -> None:
        if self.model is not None:
            self.summary.setText("Filtering…")
            self.model.set_query(replace(self.model.query, filter=flt))
            self._stats_timer.start(STATS_AFTER_FILTER_MS)

    def _loaded(self, total: int) -> None:
        self.table.scrollToTop()
        self._update_summary()
        row = self.model.row_of(self.selected) if self.model and self.selected else None
        self._select(row)
        if row is None:
            self._forget_selected()  # the filter hides it: the pane shows what the list shows

    def _update_summary(self) -> None:
        if self.model is None:
            return
        shown = self.model.rowCount()
        noun = "record" if shown == 1 else "records"
        if self.query.filter.is_empty or not self.cache_total:
            self.summary.setText(f"{shown:,} {noun}")
        else:
            self.summary.setText(f"{shown:,} of {self.cache_total:,} records")
        if shown:
            self._show_empty(None)
        elif not self.query.filter.is_empty:
            self._show_empty(NO_MATCH)
        else:
            self._show_empty(SYNCING if self.sync.running else NO_RECORDS)

    def _show_empty(self, text: str | None) -> None:
        self.empty.setText(text or "")
        self.empty.setVisible(bool(text))
        self.empty.setGeometry(self.table.viewport().rect().adjusted(24, 24, -24, -24))

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    def first_visible_row(self) -> int:
        return max(0, self.table.rowAt(0))

    def visible_rows(self) -> int:
        return max(1, self.table.viewport().height() // ROW_HEIGHT + 1)

    def anchor(self) -> Anchor:
        """The records in sight, by messageId, for a refresh to keep in place."""
        first = self.first_visible_row()
        visible = self.visible_rows()
        offset = -1
        current = self.table.currentIndex()
        if self.selected is not None and current.isValid():
            offset = current.row() - first
        model = self.model
        top = model.message_id_at(first) if model is not None else None
        return Anchor(self.selected, offset, top, first, visible)

    def refresh(self) -> None:
        """Re-read the view (the cache changed) without losing the operator's place."""
        if self.model is not None:
            self.model.refresh(self.anchor())

    def _refreshed(self, outcome: Refreshed) -> None:
        self.table.verticalScrollBar().setValue(outcome.first_row)  # per item: a row number
        self._select(outcome.selected_row)
        if outcome.selected_row is None:
            self._forget_selected()
        self._update_summary()
        self._reload_detail()

    def _forget_selected(self) -> None:
        """No record is selected any more: the detail pane empties rather than keep
        showing one the view no longer holds."""
        self.selected = None
        self.detail.show_record(None)

    def _select(self, row: int | None) -> None:
        model = self.model
        selection = self.table.selectionModel()
        if model is None or selection is None:
            return
        if row is None or row >= model.rowCount():
            selection.blockSignals(True)
            selection.clearSelection()
            selection.setCurrentIndex(QModelIndex(), selection.SelectionFlag.NoUpdate)
            selection.blockSignals(False)
            return
        index = model.index(row, self.table.horizontalHeader().logicalIndex(0))
        selection.blockSignals(True)
        selection.setCurrentIndex(
            index, selection.SelectionFlag.ClearAndSelect | selection.SelectionFlag.Rows
        )
        selection.blockSignals(False)
        self.table.viewport().update()

    def select_row(self, row: int) -> None:
        """Select a row as a click would (tests, keyboard navigation)."""
        if self.model is not None:
            self.table.selectRow(row)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model is None or not current.isValid():
            return
        message_id = self.model.message_id_at(current.row())
        if message_id is not None:
            self.selected = message_id
            self._reload_detail()

    def _reload_detail(self) -> None:
        if self.logs is None or self.selected is None:
            self.detail.show_record(None)
            return
        try:
            self.detail.show_record(self.logs.record(self.selected))
        except StoreError as exc:
            self._show_error(f"The record could not be read: {exc}.")

    # ---- sync ----------------------------------------------------------------------------------

    def sync_now(self) -> None:
        if self.logs is not None:
            self.sync.sync_now()

    def _sync_running(self, running: bool) -> None:
        self.sync_button.setEnabled(not running and self.model is not None)
        self.stop_button.setVisible(running)
        if self.model is not None:
            self._update_summary()

    def _cache_changed(self) -> None:
        if self.model is not None:
            self.model.forget_counts()
            if not self._refresh_timer.isActive():
                self._refresh_timer.start()
            if not self._stats_timer.isActive():
                self._stats_timer.start(STATS_MS if self.sync.running else 0)

    def _sync_finished(self, ok: bool, text: str) -> None:
        if ok:
            self.error.hide()
        elif "cancelled" not in text:
            self._show_error(text)
        self._refresh_timer.start(0)
        self._stats_timer.start(0)

    # ---- chart, value lists, totals ------------------------------------------------------------

    def _load_stats(self) -> None:
        reads = self._stats_reads
        if reads is None:
            return
        if self._stats_busy:
            self._stats_again = True
            return
        self._stats_busy = True
        flt = self.query.filter

        def read(reading: Reading) -> Stats:
            return Stats(
                per_day(reading, flt, None),
                distinct(reading, "status"),
                distinct(reading, "type"),
                count(reading, LogFilter()),
            )

        def done(stats: Any, error: BaseException | None) -> None:
            self._stats_busy = False
            if self._stats_again:
                self._stats_again = False
                self._stats_timer.start(0)
            if error is not None:
                if isinstance(error, StoreError):
                    self._show_error(f"The log cache could not be read: {error}.")
                return
            assert isinstance(stats, Stats)
            self.cache_total = stats.total
            self.filters.set_choices(self.filters.status, stats.statuses)
            self.filters.set_choices(self.filters.type, stats.types)
            self.chart.set_counts(stats.counts, "")
            self._update_summary()

        reads.submit(read, done)

    # ---- columns and export ----------------------------------------------------------------------

    def _columns_menu(self) -> None:
        if self.columns is not None:
            button = self.columns_button
            self.columns.popup(self, button.mapToGlobal(button.rect().bottomLeft()))

    def _ask_export(self) -> None:
        if self.model is None or self.export is None or self.export.running:
            return
        target = csv_to_save(self, "Export the records of this view", dated_csv("logs"))
        if target is not None:
            self.export_to(target)

    def export_to(self, target: Path) -> None:
        """Write the view's rows (filtered, sorted, shown columns) to `target`."""
        if self.model is None or self.export is None or self.columns is None:
            return
        total = self.model.rowCount()
        self.export_bar.setRange(0, max(1, total))
        self.export_bar.setValue(0)
        self.export_bar.show()
        self.export_cancel.show()
        self.export_button.setEnabled(False)
        self.export.start(self.query, target, self.columns.visible_columns(), total)

    def cancel_export(self) -> None:
        if self.export is not None:
            self.export.cancel()

    def _export_progress(self, written: int, total: int) -> None:
        self.export_bar.setValue(min(written, total))
        self.export_bar.setFormat(f"{written:,} of {total:,}")

    def _export_finished(self, ok: bool, text: str) -> None:
        self.export_bar.hide()
        self.export_cancel.hide()
        self.export_button.setEnabled(self.model is not None)
        self.sync_label.setText(text)
        self.session.report(text, ok)
        if not ok and "cancelled" not in text:
            self._show_error(text)

    def closeEvent(self, event: Any) -> None:
        self._teardown()
        super().closeEvent(event)
