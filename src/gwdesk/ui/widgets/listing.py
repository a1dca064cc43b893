"""What the console's lists are made of, made one way.

Every list of rows (contacts, opt-outs, replies, logs, statuses, a batch's requests,
the send history) is a read-only table whose rows are picked whole, in alternating
colours, without row numbers (`row_table`); the row under the selection is read back
as the object it shows (`selected_row`). A list is searched from a box with a
magnifier and a clear button (`search_box`), and says what it would show when it
has nothing (`hint_label`, centred). Files are chosen to import (`file_to_open`) and
a list exported to a dated CSV (`csv_to_save`) through the same dialogs.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHeaderView,
    QLineEdit,
    QTableView,
    QWidget,
)

from gwdesk.ui.models.rows import ROW_ROLE
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.theme import Theme

R = TypeVar("R")
CSV_FILTER = "CSV files (*.csv)"


def row_table(
    name: str,
    model: QAbstractItemModel | None = None,
    *,
    several: bool = False,
    wrap: bool = False,
    row_height: int | None = None,
) -> QTableView:
    """A read-only table of rows: one row picked at a time (`several`: any number),
    cells on one line (`wrap`: as many as they need), every row `row_height` high when
    a model pages its rows in (the scroll bar then stands for them all)."""
    table = QTableView()
    table.setAccessibleName(name)
    if model is not None:
        table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    if not several:
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setWordWrap(wrap)
    rows = table.verticalHeader()
    rows.hide()
    if row_height is not None:
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(row_height)
    return table


def selected_row(table: QTableView, kind: type[R]) -> R | None:
    """The object the selected row shows (None: no row, or not one of `kind`)."""
    rows = table.selectionModel().selectedRows()
    row = rows[0].data(ROW_ROLE) if rows else None
    return row if isinstance(row, kind) else None


def search_box(theme: Theme, name: str, placeholder: str) -> QLineEdit:
    """A list's search field: a magnifier before the text, a clear button after it."""
    edit = QLineEdit()
    edit.setAccessibleName(name)
    edit.setPlaceholderText(placeholder)
    edit.setClearButtonEnabled(True)
    edit.addAction(theme.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
    return edit


def hint_label(
    text: str = "",
    name: str = "",
    *,
    wrap: bool = True,
    centred: bool = False,
    parent: QWidget | None = None,
) -> PlainLabel:
    """A line in the hint colour (`centred`: what an empty list would show)."""
    label = PlainLabel(text, parent)
    if name:
        label.setAccessibleName(name)
    label.setProperty("role", "hint")
    label.setWordWrap(wrap)
    if centred:
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label


def file_to_open(parent: QWidget, title: str, filters: str, start: str = "") -> Path | None:
    """The file the operator chose to read (None: cancelled); from home by default."""
    name, _filter = QFileDialog.getOpenFileName(parent, title, start or str(Path.home()), filters)
    return Path(name) if name else None


def csv_to_save(parent: QWidget, title: str, suggested: Path | str) -> Path | None:
    """Where the operator chose to write a CSV (None: cancelled)."""
    name, _filter = QFileDialog.getSaveFileName(parent, title, str(suggested), CSV_FILTER)
    return Path(name) if name else None


def dated_csv(what: str) -> Path:
    """A CSV name in the home folder that says what and when: gwdesk-contacts-20260105.csv."""
    return Path.home() / f"gwdesk-{what}-{date.today():%Y%m%d}.csv"
