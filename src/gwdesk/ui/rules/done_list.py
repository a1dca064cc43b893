"""What the keyword rules did: the latest runs, and the forwards with their failures.

A run is one reply a rule acted on (which rule, and what came of it); a forward is a
reply posted to an endpoint, waiting, delivered or failed after its last try, with the
endpoint's last error. A failure must not go unseen: the line above the tables counts
the failed and waiting forwards, and the failed ones are listed first. Read off the GUI
thread (`RulesFlow.runs_done`, `forwards`), again whenever asked (Refresh, the team's
tables changing, the page shown).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.rule_editing import FAILED, WAITING, Forward, RuleRun
from gwdesk.domain.errors import StoreError
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.rules.cells import (
    FORWARD_COLUMNS,
    RUN_COLUMNS,
    fill,
    forward_cells,
    run_cells,
    table,
)
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.widgets.validity import set_role

READ_KEY: Final = "rules-done-read"
SHOWN: Final = 100
"""Runs and forwards listed at most (the latest)."""
Done = tuple[list[RuleRun], list[Forward]]


def summary(runs: list[RuleRun], forwards: list[Forward]) -> str:
    """The line above the tables: how many runs, and the forwards not delivered."""
    failed = sum(1 for forward in forwards if forward.state == FAILED)
    waiting = sum(1 for forward in forwards if forward.state == WAITING)
    parts = [f"{len(runs)} repl{'y' if len(runs) == 1 else 'ies'} acted on"]
    if failed:
        parts.append(f"{failed} forward{'' if failed == 1 else 's'} FAILED (listed first)")
    if waiting:
        parts.append(f"{waiting} forward{'' if waiting == 1 else 's'} waiting to be retried")
    if not forwards:
        parts.append("no forwards")
    elif not failed and not waiting:
        parts.append("every forward delivered")
    return "; ".join(parts) + "."


def failures_first(forwards: list[Forward]) -> list[Forward]:
    """Failed forwards first, then waiting, then delivered; the latest first in each."""
    rank = {FAILED: 0, WAITING: 1}
    return sorted(forwards, key=lambda forward: (rank.get(forward.state, 2), -forward.id))


class DoneByRules(QWidget):
    """The runs and forwards of one profile, read by `read` (blocking; called off thread)."""

    def __init__(self, read: Callable[[], Done], tasks: TaskRunner) -> None:
        super().__init__()
        self._read = read
        self.tasks = tasks
        self.runs: list[RuleRun] = []
        self.forwards: list[Forward] = []
        self.summary = PlainLabel("Reading what the rules did…")
        self.summary.setAccessibleName("What the rules did")
        self.summary.setWordWrap(True)
        self.refresh_button = QPushButton("Re&fresh")
        self.refresh_button.setAccessibleName("Read the runs and forwards again")
        self.refresh_button.clicked.connect(self.reload)
        self.runs_table = table(RUN_COLUMNS, "Replies acted on", 4, (6, 12, 16, 19, 0))
        self.forwards_table = table(FORWARD_COLUMNS, "Forwards", 4, (6, 16, 8, 3, 0, 24))
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.refresh_button, 0, Qt.AlignmentFlag.AlignTop)
        runs = _titled("Replies acted on (latest first):", self.runs_table)
        forwards = _titled("Forwards (failed first):", self.forwards_table)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(runs)
        split.addWidget(forwards)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    def reload(self) -> None:
        self.tasks.run(self.reading(), key=READ_KEY, owner=self, context="reading the rules' runs")

    async def reading(self) -> None:
        """One read; asked again meanwhile, this one is superseded (never skipped: what
        changed since it started is read by the next)."""
        try:
            runs, forwards = await off_thread(self._read)
        except StoreError as exc:
            self.summary.setText(f"What the rules did could not be read: {exc}")
            return
        self.show_done(runs, forwards)

    def show_done(self, runs: list[RuleRun], forwards: list[Forward]) -> None:
        self.runs, self.forwards = runs, failures_first(forwards)
        self.summary.setText(summary(self.runs, self.forwards))
        set_role(self.summary, "error" if any(f.state == FAILED for f in forwards) else "")
        fill(self.runs_table, [run_cells(run) for run in self.runs])
        fill(self.forwards_table, [forward_cells(forward) for forward in self.forwards])


def _titled(title: str, shown: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(QLabel(title))
    layout.addWidget(shown, 1)
    return box
