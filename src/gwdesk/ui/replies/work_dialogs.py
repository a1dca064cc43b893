"""The conversation strip's two questions: to whom (Assign to…) and until when (Snooze
until a time…).

Assign to… lists the operators the store knows (`ConversationsFlow.operators`: a
team's current operators, read off the GUI thread while the dialog is open), "Nobody"
first; a name may also be typed (on a team's server only a current operator's is
taken, and the server says so). Names come from the record, which other desks write:
each is an item's plain text with control and bidi characters made visible, shortened
with "…" to the list's width and whole in its tooltip.

Snooze until… asks for a time on the profile's clock (its zone named beside it), from
now on; the flow reads it in that zone.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, tzinfo
from typing import Final

from PySide6.QtCore import QDateTime, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.conversations import ConversationsFlow, snooze_until
from gwdesk.app.conversations import Snooze as SnoozeFor
from gwdesk.domain.errors import StoreError
from gwdesk.ui.plain_text import PlainLabel, tooltip, visible
from gwdesk.ui.tasks import TaskRunner, alive, off_thread

log = logging.getLogger("gwdesk.ui.replies")
NOBODY_ITEM: Final = "Nobody (unassigned)"
NAME_ROLE: Final = Qt.ItemDataRole.UserRole
"""An item's operator as the record names them (None: nobody)."""
LISTED_ROWS: Final = 8


class AssignDialog(QDialog):
    """Whom to assign the conversation to: a known operator, a typed name, or nobody."""

    chosen = Signal(object)
    """The operator's name as the record gives it, or None for nobody."""

    def __init__(
        self, flow: ConversationsFlow, tasks: TaskRunner, current: str | None, parent: QWidget
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Assign the conversation")
        self.current = current
        self.list = QListWidget()
        self.list.setAccessibleName("Operators")
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setMinimumHeight(self.list.fontMetrics().lineSpacing() * LISTED_ROWS)
        self.list.setMinimumWidth(self.list.fontMetrics().averageCharWidth() * 36)
        nobody = QListWidgetItem(NOBODY_ITEM)
        nobody.setData(NAME_ROLE, None)
        self.list.addItem(nobody)
        self.status = PlainLabel("Reading the team's operators…")
        self.status.setAccessibleName("Operators read")
        self.status.setProperty("role", "hint")
        self.status.setWordWrap(True)
        self.typed = QLineEdit()
        self.typed.setAccessibleName("Another operator's name")
        self.typed.setPlaceholderText("Or type an operator's name")
        self.typed.setMaxLength(200)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Assign")
        label = QLabel("&Assign to:")
        label.setBuddy(self.list)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.typed)
        layout.addWidget(buttons)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.list.setCurrentRow(0)

        async def read() -> None:
            try:
                names = await off_thread(flow.operators)
            except StoreError as exc:
                log.warning("the operators could not be read: %s", exc)
                if alive(self):
                    self.status.setText(f"The team's operators could not be read: {exc}")
                return
            if alive(self):
                self.show_operators(names)

        tasks.run(read(), key="operators", owner=self, context="reading the operators")

    def show_operators(self, names: list[str]) -> None:
        """The operators read, one item each (plain text; the whole name as tooltip)."""
        for name in names:
            item = QListWidgetItem(visible(name))
            item.setData(NAME_ROLE, name)
            item.setToolTip(tooltip(name))
            self.list.addItem(item)
            if name == self.current:
                self.list.setCurrentItem(item)
        self.status.setText("" if names else "No operator is known yet: type a name.")
        self.status.setVisible(not names)

    def names(self) -> list[str]:
        """The operators listed (the record's names), in their order."""
        return [str(self.list.item(row).data(NAME_ROLE)) for row in range(1, self.list.count())]

    def choice(self) -> str | None:
        typed = self.typed.text().strip()
        if typed:
            return typed
        item = self.list.currentItem()
        name = item.data(NAME_ROLE) if item is not None else None
        return name if isinstance(name, str) else None

    def accept(self) -> None:
        self.chosen.emit(self.choice())
        super().accept()


class SnoozeDialog(QDialog):
    """Until when, on the profile's clock."""

    chosen = Signal(object)
    """The moment picked (an aware datetime)."""

    def __init__(self, flow: ConversationsFlow, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("Snooze the conversation")
        self.flow = flow
        zone = flow.zone
        now = datetime.now(zone)
        morning = snooze_until(SnoozeFor.TOMORROW, now, zone)
        self.edit = QDateTimeEdit()
        self.edit.setAccessibleName("Snooze until")
        self.edit.setCalendarPopup(True)
        self.edit.setDisplayFormat("ddd d MMM yyyy HH:mm")
        self.edit.setMinimumDateTime(_wall(now + timedelta(minutes=1)))
        self.edit.setDateTime(_wall(morning))
        self.zone_label = PlainLabel(f"On the profile's clock: {zone_name(zone)}")
        self.zone_label.setAccessibleName("Clock")
        self.zone_label.setProperty("role", "hint")
        self.zone_label.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Snooze")
        form = QFormLayout()
        form.addRow("&Until:", self.edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.zone_label)
        layout.addWidget(buttons)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

    def until(self) -> datetime:
        """The time picked, read on the profile's clock."""
        picked = self.edit.dateTime()
        date, time = picked.date(), picked.time()
        wall = datetime(date.year(), date.month(), date.day(), time.hour(), time.minute())
        return self.flow.on_my_clock(wall)

    def accept(self) -> None:
        self.chosen.emit(self.until())
        super().accept()


def _wall(moment: datetime) -> QDateTime:
    """`moment`'s wall time (its own zone's) as Qt shows it, without a zone."""
    return QDateTime(moment.year, moment.month, moment.day, moment.hour, moment.minute, 0)


def zone_name(zone: tzinfo) -> str:
    return str(getattr(zone, "key", None) or zone)
