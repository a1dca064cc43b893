"""The Batch tab's totals: what the send comes to, its cost, its buttons and its last word.

The figures (valid recipients, duplicates, invalid, opted out, parts each, SMS parts in all,
requests) and the lines under them (the personal plan, who turns it into UCS-2 or
adds a part, who the opt-out list leaves out, the cost) are the flow's
(`gwdesk.app.list_send.Totals`), shown as they come; names and values in them come
from a file or the address book, so every line is plain text. The buttons say what
the operator asked for (`send_requested`, ...): the tab decides what follows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.list_send import FIGURES, Line, OptOut, Totals
from gwdesk.app.optouts import write_optouts
from gwdesk.app.send_values import DEFAULT_LANES, MAX_LANES
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.listing import csv_to_save, dated_csv
from gwdesk.ui.widgets.validity import set_role

PARALLEL_CHOICES: Final = tuple(n for n in (1, 2, 3, 4, 6, 8, 12, 16) if n <= MAX_LANES)
EXCLUDED_EXPORT_KEY: Final = "batch-excluded-export"


def show_line(label: QLabel, text: str, role: str) -> None:
    """A line of text in its role, hidden when there is none."""
    label.setText(text)
    set_role(label, role)
    label.setVisible(bool(text))


def _plain(name: str) -> PlainLabel:
    label = PlainLabel()
    label.setAccessibleName(name)
    label.setWordWrap(True)
    label.hide()
    return label


def keep_room(label: QLabel) -> None:
    """`label` keeps its place in the layout while hidden (what follows it stays put)."""
    policy = label.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    label.setSizePolicy(policy)


class TotalsPanel(QGroupBox):
    """The totals, the lines under them, and the send's buttons."""

    send_requested = Signal()
    cancel_requested = Signal()
    remaining_requested = Signal()
    preview_requested = Signal()
    test_requested = Signal()

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__("Totals", parent)
        self.tasks = tasks
        self.excluded: tuple[OptOut, ...] = ()
        """Who the send shown leaves out because they opted out (what the export writes)."""
        self.figures: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(0)
        for column, (key, caption, tip) in enumerate(FIGURES):
            value = QLabel("0")
            value.setObjectName("TotalFigure")
            value.setAccessibleName(caption)
            value.setToolTip(tip)
            value.setStyleSheet("font-size: 15pt; font-weight: 600;")
            label = PlainLabel(caption)  # wraps at a narrow window rather than being cut
            label.setProperty("role", "hint")
            label.setToolTip(tip)
            label.setWordWrap(True)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(value, 0, column)
            grid.addWidget(label, 1, column)
            grid.setColumnStretch(column, 1)
            self.figures[key] = value
        self.concurrency = QComboBox()
        for choice in PARALLEL_CHOICES:
            self.concurrency.addItem(str(choice), choice)
        self.concurrency.setCurrentIndex(PARALLEL_CHOICES.index(DEFAULT_LANES))
        self.concurrency.setAccessibleName("Parallel requests")
        self.concurrency.setToolTip(
            "Requests on the wire at once. Cancel lets these finish and starts no other."
        )
        self.send_button = self._button(
            theme, "send", "Send batch", "Send the message to every valid recipient (Ctrl+Enter)"
        )
        self.send_button.setProperty("primary", True)
        self.send_button.clicked.connect(lambda: self.send_requested.emit())
        self.cancel_button = self._button(
            theme, "cancel", "Cancel", "Stop before the next request; what was lodged stays lodged"
        )
        self.cancel_button.setAccessibleName("Cancel sending")
        self.cancel_button.clicked.connect(lambda: self.cancel_requested.emit())
        self.remaining_button = self._button(
            theme,
            "refresh",
            "Send remaining",
            "Send the requests that were not lodged (cancelled or failed), with the message "
            "as it is now; requests whose outcome was unknown are looked up first",
        )
        self.remaining_button.clicked.connect(lambda: self.remaining_requested.emit())
        self.optout_line = _plain("Opted-out recipients")
        self.export_excluded_button = self._button(
            theme,
            "export",
            "Export the opted out…",
            "Save the recipients left out because they opted out (number, since when, how, "
            "keyword, reason) as CSV",
        )
        self.export_excluded_button.setAccessibleName("Export the opted-out recipients")
        self.export_excluded_button.clicked.connect(self._export_clicked)
        self.export_excluded_button.hide()
        self.plan_label = _plain("Personal messages")
        self.ucs2_label = _plain("Recipients turned into UCS-2")
        self.longer_label = _plain("Recipients with more parts")
        self.cost_label = _plain("Cost")
        self.preview_button = QPushButton("Preview…")
        self.preview_button.setAccessibleName("Preview the messages")
        self.preview_button.setToolTip(
            "Each recipient's own message as a phone shows it, and those that cannot be sent"
        )
        self.preview_button.clicked.connect(lambda: self.preview_requested.emit())
        self.test_button = QPushButton("Send a test to me")
        self.test_button.setAccessibleName("Send a test to me")
        self.test_button.setToolTip(
            "Send the first recipient's message to your own number (Opt-outs tab ▸ Rules)"
        )
        self.test_button.clicked.connect(lambda: self.test_requested.emit())
        self.outcome = PlainLabel()
        self.outcome.setAccessibleName("Batch outcome")
        self.outcome.setWordWrap(True)
        self.error = _plain("Batch error")
        self.error.setProperty("role", "error")
        self._lay_out(grid)

    def _button(self, theme: Theme, icon: str, text: str, tip: str) -> QPushButton:
        button = QPushButton(theme.icon(icon), text)
        button.setAccessibleName(text)
        button.setToolTip(tip)
        return button

    def _lay_out(self, grid: QGridLayout) -> None:
        """Each line of text keeps its room when hidden and the buttons sit at the top right
        of theirs, so no button moves when a line (the cost, the outcome) appears or
        wraps; the lines wrap rather than widen the tab."""
        for line in (self.cost_label, self.outcome, self.optout_line):
            keep_room(line)
        top = Qt.AlignmentFlag.AlignTop
        parallel = QLabel("Pa&rallel")
        parallel.setBuddy(self.concurrency)
        buttons = QHBoxLayout()
        buttons.addWidget(self.outcome, 1)
        buttons.addWidget(self.error, 1)
        buttons.addWidget(parallel)
        buttons.addWidget(self.concurrency)
        buttons.addWidget(self.remaining_button, 0, top)
        buttons.addWidget(self.cancel_button, 0, top)
        buttons.addWidget(self.send_button, 0, top)
        optouts = QHBoxLayout()
        optouts.addWidget(self.optout_line, 1)
        optouts.addWidget(self.export_excluded_button, 0, top)
        before = QHBoxLayout()
        before.addWidget(self.cost_label, 1)
        before.addWidget(self.preview_button, 0, top)
        before.addWidget(self.test_button, 0, top)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        for line in (self.plan_label, self.ucs2_label, self.longer_label):
            layout.addWidget(line)
        layout.addLayout(optouts)
        layout.addLayout(before)
        layout.addLayout(buttons)

    # ---- what is shown -------------------------------------------------------------------

    def show_totals(self, totals: Totals) -> None:
        for key, value in totals.figures.items():
            self.figures[key].setText(value)
        for label, line in (
            (self.plan_label, totals.plan),
            (self.ucs2_label, totals.ucs2),
            (self.longer_label, totals.longer),
            (self.optout_line, totals.optouts),
        ):
            self._show_line(label, line)
        self.export_excluded_button.setVisible(totals.opted_out > 0)
        self.excluded = totals.excluded

    def _show_line(self, label: QLabel, line: Line) -> None:
        show_line(label, line.text, line.tone)
        label.setToolTip(tooltip(line.tip) if line.tip else "")

    def show_cost(self, text: str, role: str) -> None:
        show_line(self.cost_label, text, role)

    def say(self, text: str, role: str) -> None:
        """The outcome line ("" hides it)."""
        show_line(self.outcome, text, role)

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def clear_error(self) -> None:
        self.error.hide()

    def optouts_failed(self, message: str) -> None:
        show_line(self.optout_line, message, "error")

    def set_state(self, *, sending: bool, can_cancel: bool, can_resend: bool) -> None:
        self.send_button.setEnabled(not sending)
        self.cancel_button.setEnabled(sending and can_cancel)
        self.remaining_button.setEnabled(not sending and can_resend)
        self.concurrency.setEnabled(not sending)

    def set_testing(self, testing: bool) -> None:
        self.test_button.setEnabled(not testing)

    def parallel(self) -> int:
        value = self.concurrency.currentData()
        return value if isinstance(value, int) else DEFAULT_LANES

    def set_parallel(self, value: int) -> None:
        self.concurrency.setCurrentIndex(max(0, self.concurrency.findData(value)))

    def _export_clicked(self) -> None:
        path = csv_to_save(self, "Export the opted-out recipients", dated_csv("batch-opted-out"))
        if path is not None:
            self.export_excluded(path)

    def export_excluded(self, path: Path) -> None:
        """Write who the send leaves out for opting out to `path` (off the GUI thread)."""
        excluded = self.excluded
        if excluded:
            self.tasks.run(
                self._export(path, excluded),
                key=EXCLUDED_EXPORT_KEY,
                owner=self,
                context="exporting the opted-out recipients",
            )

    async def _export(self, path: Path, excluded: tuple[OptOut, ...]) -> None:
        try:
            count = await off_thread(lambda: write_optouts(path, excluded))
        except OSError as exc:
            self.show_error(f"{path.name} cannot be written: {exc.strerror or exc}.")
            return
        if alive(self):
            self.optout_line.setText(f"{self.optout_line.text()} Saved {count:,} to {path.name}.")
