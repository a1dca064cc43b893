"""The Logs tab's filter bar: text, status, type, recipient and a date range.

Typing is debounced (`DEBOUNCE_MS`) so a query runs once the operator pauses, not
per key; choices from lists and dates apply at once. Dates are whole days in the
operator's local zone, like the times in the table.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Final

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.logs.query import LogFilter
from gwdesk.logs.rows import time_us
from gwdesk.ui.plain_text import visible
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.field_errors import text_field

DEBOUNCE_MS: Final = 300
ANY: Final = ""


def local_midnight_us(day: date) -> int:
    """The start of `day` in the operator's zone, as UTC microseconds."""
    value = time_us(datetime.combine(day, time()).astimezone(), UTC)
    assert value is not None  # an aware datetime always converts
    return value


def to_date(value: QDate) -> date:
    return date(value.year(), value.month(), value.day())


class LogFilterBar(QWidget):
    changed = Signal(object)
    """The `LogFilter` now in force."""

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = text_field(
            "Search message text",
            placeholder="Search message text (Ctrl+F)",
            tip="Words match the start of words in the message or subject, in any order; "
            "accents are ignored. Emoji and Chinese or Japanese text match anywhere.",
            clear=True,
        )
        self.text.addAction(theme.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.status = self._combo("Status", "Any status")
        self.type = self._combo("Type", "Any type")
        self.recipient = text_field(
            "Recipient number",
            placeholder="Recipient number",
            tip="The number's start, as you would dial it (0412 555, +61 412 555), or any piece "
            "of it (345 678)",
            clear=True,
        )
        # Room for the whole hint, the frame and the clear button: the hint is never cut.
        hint = self.recipient.fontMetrics().horizontalAdvance(self.recipient.placeholderText())
        self.recipient.setMinimumWidth(hint + 48)
        self.recipient.setMaximumWidth(hint + 96)
        today = QDate.currentDate()
        self.use_from = QCheckBox("From")
        self.use_from.setAccessibleName("Filter from date")
        self.date_from = self._date(today.addDays(-30), "First day lodged")
        self.use_to = QCheckBox("to")
        self.use_to.setAccessibleName("Filter to date")
        self.date_to = self._date(today, "Last day lodged")
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Show every record again")
        self.clear_button.setAccessibleName("Clear filters")

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text, 3)
        layout.addWidget(self.status, 1)
        layout.addWidget(self.type, 1)
        layout.addWidget(self.recipient, 1)
        layout.addSpacing(6)
        layout.addWidget(self.use_from)
        layout.addWidget(self.date_from)
        layout.addWidget(self.use_to)
        layout.addWidget(self.date_to)
        layout.addWidget(self.clear_button)

        self._debounce = single_shot(self, DEBOUNCE_MS, self._emit)
        self.text.textChanged.connect(self._debounce.start)
        self.recipient.textChanged.connect(self._debounce.start)
        for combo in (self.status, self.type):
            combo.currentIndexChanged.connect(self._emit)
        for box in (self.use_from, self.use_to):
            box.toggled.connect(self._dates_toggled)
        for edit in (self.date_from, self.date_to):
            edit.dateChanged.connect(self._emit)
        self.clear_button.clicked.connect(self.clear)
        self._current = LogFilter()
        self.region = DEFAULT_REGION
        """Where a national number typed in the filters is read (the profile's region)."""
        self._enable_dates()

    def _combo(self, name: str, anything: str) -> QComboBox:
        combo = QComboBox()
        combo.setAccessibleName(name)
        combo.setToolTip(f"Show only records of one {name.lower()}")
        combo.addItem(anything, ANY)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        combo.setMinimumContentsLength(10)
        return combo

    def _date(self, value: QDate, name: str) -> QDateEdit:
        edit = QDateEdit(value)
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("yyyy-MM-dd")
        edit.setAccessibleName(name)
        return edit

    def _enable_dates(self) -> None:
        self.date_from.setEnabled(self.use_from.isChecked())
        self.date_to.setEnabled(self.use_to.isChecked())

    def _dates_toggled(self) -> None:
        self._enable_dates()
        self._emit()

    def set_choices(self, combo: QComboBox, values: list[tuple[str, int]]) -> None:
        """Offer the values held (with their counts), keeping the current choice."""
        current = combo.currentData()
        combo.blockSignals(True)
        try:
            while combo.count() > 1:
                combo.removeItem(1)
            for value, n in values:
                combo.addItem(f"{visible(value or '') or '(none)'}  ({n:,})", value)
            index = combo.findData(current)
            if index < 0 and current:
                combo.addItem(f"{visible(str(current))}  (0)", current)
                index = combo.count() - 1
            combo.setCurrentIndex(max(0, index))
        finally:
            combo.blockSignals(False)

    def value(self) -> LogFilter:
        status = self.status.currentData() or None
        kind = self.type.currentData() or None
        lodged_from = lodged_to = None
        if self.use_from.isChecked():
            lodged_from = local_midnight_us(to_date(self.date_from.date()))
        if self.use_to.isChecked():
            lodged_to = local_midnight_us(to_date(self.date_to.date()) + timedelta(days=1))
        return LogFilter(
            text=self.text.text().strip(),
            status=status,
            type=kind,
            recipient=self.recipient.text().strip(),
            lodged_from=lodged_from,
            lodged_to=lodged_to,
            region=self.region,
        )

    def _emit(self) -> None:
        self._debounce.stop()
        current = self.value()
        if current != self._current:
            self._current = current
            self.changed.emit(current)

    def flush(self) -> None:
        """Apply what was typed now, without waiting for the pause."""
        self._emit()

    def clear(self) -> None:
        for widget in (self.text, self.recipient, self.status, self.type, self.use_from):
            widget.blockSignals(True)
        self.use_to.blockSignals(True)
        try:
            self.text.clear()
            self.recipient.clear()
            self.status.setCurrentIndex(0)
            self.type.setCurrentIndex(0)
            self.use_from.setChecked(False)
            self.use_to.setChecked(False)
        finally:
            for widget in (self.text, self.recipient, self.status, self.type, self.use_from):
                widget.blockSignals(False)
            self.use_to.blockSignals(False)
        self._dates_toggled()
        self._emit()
