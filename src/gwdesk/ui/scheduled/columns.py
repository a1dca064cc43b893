"""The Scheduled table's columns: when (the operator's time and how soon), to whom, the
text on one line (the whole in its tooltip) and who scheduled it.

Each row is read with the moment it was read at (`Listed.now`), so "in 2 h" is said of
one clock for the whole table and ticks as the tab reads the schedule again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from PySide6.QtGui import QColor

from gwdesk.app.scheduled import ScheduledSend
from gwdesk.app.scheduled_view import ScheduledRow, overdue, until
from gwdesk.ui.formatting import sentence_time
from gwdesk.ui.models.rows import Column

LATE_COLOUR: Final = QColor("#d32f2f")
NOBODY: Final = "–"
"""Scheduled by nobody named (a one-desk profile records no operator)."""


@dataclass(frozen=True, slots=True)
class Listed:
    """A row of the table: a held send as read at `now`."""

    row: ScheduledRow
    now: datetime

    @property
    def send(self) -> ScheduledSend:
        return self.row.send

    @property
    def late(self) -> bool:
        """Its time passed a while ago and it is still held (it waits for the operator)."""
        return overdue(self.send.due, self.now)

    def when(self) -> str:
        """`in 2 h · Tue 2 Dec 09:00` (how soon first: it is what a narrow column keeps),
        in the operator's zone."""
        due = self.send.due
        soon = until(due, self.now)
        again = f" · {self.send.every.kind.value}" if self.send.every is not None else ""
        return f"{soon} · {local_day_time(due, self.now)}{again}" if due is not None else soon

    def when_tip(self) -> str:
        due = self.send.due
        if due is None:
            return "This send's time cannot be read from its record: change it, or cancel the send."
        said = f"Due {sentence_time(due)} ({until(due, self.now)})."
        if self.send.every is not None:
            said += f" It repeats {self.send.every.describe()}: cancel this one to end the series."
        if self.late:
            said += (
                " Nothing was running to send it then: it waits for you to send it now, "
                "move it or cancel it."
            )
        return said

    def text(self) -> str:
        """The text on one line (its line breaks and runs of spaces as one space)."""
        return " ".join(self.send.text.split())

    def recipients_tip(self) -> str:
        numbers = self.send.recipients
        shown = "\n".join(self.row.number_text(n) for n in self.row.shown)
        more = (
            f"\n… and {len(numbers) - len(self.row.shown):,} more"
            if len(numbers) > len(self.row.shown)
            else ""
        )
        return f"{len(numbers):,} recipient{'' if len(numbers) == 1 else 's'}:\n{shown}{more}"


def local_day_time(moment: datetime, now: datetime) -> str:
    """`Tue 2 Dec 09:00` in the operator's zone (the year too when it is not this one)."""
    local = moment.astimezone()
    year = f" {local.year}" if local.year != now.astimezone().year else ""
    return f"{local:%a} {local.day} {local:%b}{year} {local:%H:%M}"


COLUMNS: Final[list[Column[Listed]]] = [
    Column(
        "When",
        Listed.when,
        "How soon it goes, and when on your clock",
        colour=lambda r: LATE_COLOUR if r.late else None,
        tip=Listed.when_tip,
    ),
    Column(
        "Recipients",
        lambda r: r.row.recipients_text(),
        "How many, and the first numbers (with their contacts' names)",
        tip=Listed.recipients_tip,
    ),
    Column("Text", Listed.text, "The message as it will go", tip=lambda r: r.send.text),
    Column("Scheduled by", lambda r: r.send.operator or NOBODY, "Who scheduled it"),
]
WHEN, RECIPIENTS, TEXT, BY = range(len(COLUMNS))
WIDTHS: Final = {WHEN: 250, RECIPIENTS: 270, BY: 120}
"""Preset widths (the Text column takes the rest)."""
