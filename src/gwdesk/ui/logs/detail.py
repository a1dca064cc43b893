"""The detail pane of the Logs tab: every field of one record, selectable and copyable."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from gwdesk.logs.rows import FIELDS, Field, from_us
from gwdesk.ui.formatting import status_colour
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.theme import Theme

EMPTY_TEXT = "Select a record to see all of its fields."
#: Long free text wraps; times, numbers and ids stay on one line.
WRAPPED = frozenset(
    {"message", "subject", "replypath", "extra", "tracking_id", "batch_tracking_id"}
)


def value_text(field: Field, record: Mapping[str, Any]) -> str:
    """A stored value in full, as the operator should read and copy it."""
    value = record.get(field.column)
    if field.kind in ("time", "receipt") and isinstance(value, int):
        return from_us(value).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    if field.kind == "receipt" and value is None:
        raw = record.get("receipt_raw")
        return "" if raw is None else str(raw)
    if field.kind == "json" and isinstance(value, str):
        try:
            return json.dumps(json.loads(value), ensure_ascii=False, indent=1)
        except ValueError:
            return value
    return "" if value is None else str(value)


def as_text(record: Mapping[str, Any]) -> str:
    lines = [f"{f.title}: {value_text(f, record)}" for f in FIELDS]
    return "\n".join(lines)


class LogDetailPane(QGroupBox):
    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__("Record", parent)
        self.record: dict[str, Any] | None = None
        self.values: dict[str, PlainLabel] = {}
        form_host = QWidget()
        form = QFormLayout(form_host)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setVerticalSpacing(3)
        for field in FIELDS:
            value = PlainLabel()  # the gateway's and customers' text: never rich text
            value.setWordWrap(field.column in WRAPPED)
            value.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse
                | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
            value.setAccessibleName(field.title)
            value.setMinimumWidth(120)
            label = QLabel(f"{field.title}:")
            label.setProperty("role", "hint")
            if field.tip:
                label.setToolTip(field.tip)
            form.addRow(label, value)
            self.values[field.column] = value
        scroll = QScrollArea()
        scroll.setWidget(form_host)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.copy_button = QPushButton(theme.icon("copy"), "Copy all")
        self.copy_button.setToolTip("Copy every field of this record as text")
        self.copy_button.clicked.connect(self.copy_all)
        self.copy_id_button = QPushButton("Copy ID")
        self.copy_id_button.setToolTip("Copy the MessageId (for the Status tab)")
        self.copy_id_button.clicked.connect(self.copy_id)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.copy_id_button)
        buttons.addStretch(1)
        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(scroll, 1)
        details_layout.addLayout(buttons)

        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setProperty("role", "hint")
        self._stack = QStackedLayout()
        self._stack.addWidget(self.empty)
        self._stack.addWidget(details)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 4, 6, 6)
        outer.addLayout(self._stack)
        self.show_record(None)

    @property
    def message_id(self) -> str | None:
        return None if self.record is None else str(self.record.get("message_id"))

    def show_record(self, record: dict[str, Any] | None) -> None:
        self.record = record
        self._stack.setCurrentIndex(0 if record is None else 1)
        if record is None:
            return
        for field in FIELDS:
            label = self.values[field.column]
            label.setText(value_text(field, record))
            value = record.get(field.column)
            if field.kind in ("time", "receipt") and isinstance(value, int):
                label.setToolTip(from_us(value).astimezone().isoformat())  # exact, with offset
            if field.column == "status":
                colour = status_colour(record.get("status"))
                label.setStyleSheet(
                    f"color: {colour.name()}; font-weight: 600;" if colour is not None else ""
                )

    def copy_all(self) -> None:
        if self.record is not None:
            QGuiApplication.clipboard().setText(as_text(self.record))

    def copy_id(self) -> None:
        if self.message_id is not None:
            QGuiApplication.clipboard().setText(self.message_id)
