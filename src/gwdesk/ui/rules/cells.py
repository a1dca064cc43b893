"""A rule, a run and a forward as table cells: one line of plain text each.

Everything here is text from outside (rule names and values, outcomes, endpoints'
errors), so each cell goes through `visible` (control codes and bidi controls shown,
not obeyed) and its line breaks become a visible mark: a cell is one line, cut by the
view with an ellipsis, its whole text in the tooltip.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from gwdesk.app.rule_editing import Forward, RuleRun
from gwdesk.domain.reply_rules import Rule
from gwdesk.domain.wire_time import from_epoch_us
from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.widgets.column_fit import ColumnFit

LINE_BREAK: Final = " \u23ce "
"""A line break inside a cell (⏎): the row stays one line high."""
CELL_LIMIT: Final = 300
"""Characters a cell holds at most (the tooltip has the rest)."""

RULE_COLUMNS: Final = ("#", "Name", "When", "Does", "On")
RUN_COLUMNS: Final = ("Reply", "From", "Rule", "At", "Outcome")
FORWARD_COLUMNS: Final = ("Reply", "Rule", "State", "Attempts", "Last error", "To")


def one_line(text: str) -> str:
    """`text` as one line of visible characters, at most `CELL_LIMIT` of them."""
    shown = visible(text).replace("\n", LINE_BREAK)
    return shown if len(shown) <= CELL_LIMIT else shown[: CELL_LIMIT - 1] + "…"


def when(rule: Rule) -> str:
    return f"{rule.match.value}: {rule.value}"


def does(rule: Rule) -> str:
    return "; ".join(action.describe() for action in rule.actions)


def rule_cells(position: int, rule: Rule) -> tuple[str, ...]:
    return (str(position), rule.name, when(rule), does(rule), "on" if rule.on else "off")


def moment(at_us: int) -> str:
    """A stored time in this machine's zone, to the second."""
    if at_us <= 0:
        return ""
    return from_epoch_us(at_us).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def run_cells(run: RuleRun) -> tuple[str, ...]:
    return (str(run.reply_id), run.number, run.rule, moment(run.at_us), run.outcome)


def forward_cells(forward: Forward) -> tuple[str, ...]:
    return (
        str(forward.reply_id),
        forward.rule,
        forward.state,
        str(forward.attempts),
        forward.last_error,
        forward.url,
    )


def fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    """`rows` into `table` as read-only one-line cells, each with its whole text as tooltip."""
    table.setRowCount(len(rows))
    for row, cells in enumerate(rows):
        for column, text in enumerate(cells):
            item = QTableWidgetItem(one_line(text))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            item.setToolTip(tooltip(text))
            table.setItem(row, column, item)


def table(
    columns: tuple[str, ...], name: str, stretch: int, chars: tuple[int, ...]
) -> QTableWidget:
    """A read-only table of whole rows with `columns`; column `stretch` takes the room left,
        each other one is preset `chars` digits wide (at least its title), and gives way on a
    narrow window (`ColumnFit`)."""
    from PySide6.QtWidgets import QAbstractItemView, QHeaderView

    shown = QTableWidget(0, len(columns))
    shown.setAccessibleName(name)
    shown.setHorizontalHeaderLabels(list(columns))
    shown.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    shown.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    shown.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    shown.setWordWrap(False)
    shown.setTextElideMode(Qt.TextElideMode.ElideRight)
    shown.verticalHeader().hide()
    header = shown.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(False)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    digit = shown.fontMetrics().horizontalAdvance("0")
    titles = header.fontMetrics()
    widths = {
        column: max((width + 2) * digit, titles.horizontalAdvance(columns[column]) + 4 * digit)
        for column, width in enumerate(chars)
        if column != stretch
    }
    ColumnFit(shown, widths)  # presets give way on a narrow window: `stretch` stays readable
    return shown
