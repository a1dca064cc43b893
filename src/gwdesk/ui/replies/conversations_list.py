"""The Replies tab's compact list of conversations: All / Open / Mine / Unassigned.

Beside the reply flood, not in it: the reply table stays the store's window (no
per-row store reads), and this list is the conversations flow's listing (at most
`LISTED` numbers), read off the GUI thread when the filter changes, when this desk
changes a conversation, and, at most once a second, when replies arrive or the team's
server announces a change of conversations or read marks. It carries this operator's
own unread figures (not the console's "new since seen") and "Mark all read". Numbers,
states and operators' names are put in as item text: plain, never markup.
"""

from __future__ import annotations

import logging
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.conversations import ConversationsFlow, Listing, Showing
from gwdesk.domain.errors import StoreError
from gwdesk.domain.numbers import display
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.replies.work import NAME_LIMIT, state_text
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.replies")
REFRESH_MS: Final = 1000
"""Replies arriving or changes announced read the listing again at most this often."""
SHOWINGS: Final = (
    ("All", Showing.ALL),
    ("Open", Showing.OPEN),
    ("Mine", Showing.MINE),
    ("Unassigned", Showing.UNASSIGNED),
)
NUMBER, STATE, WHO, UNREAD = range(4)
NUMBER_ROLE: Final = Qt.ItemDataRole.UserRole
NOBODY: Final = "–"


def assignee_text(assigned_to: str | None, me: str) -> str:
    """The list's short "Assigned to": "you", the operator's name, or a dash for nobody."""
    if not assigned_to:
        return NOBODY
    return "you" if assigned_to == me else assigned_to[:NAME_LIMIT]


class ConversationsList(QWidget):
    """The flow's listing under a filter, with this operator's unread count."""

    opened = Signal(str)
    """The operator picked a conversation (its number)."""
    unread_changed = Signal(int, int)
    """This operator's unread conversations and replies, as last read."""

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.flow: ConversationsFlow | None = None
        self.listing: Listing | None = None

        self.filter_box = QComboBox()
        self.filter_box.setAccessibleName("Show conversations")
        for text, showing in SHOWINGS:
            self.filter_box.addItem(text, showing.value)
        show_label = QLabel("Sho&w")
        show_label.setBuddy(self.filter_box)
        self.unread_label = PlainLabel("")
        self.unread_label.setAccessibleName("Your unread replies")
        self.unread_label.setProperty("role", "hint")
        self.mark_all_button = QPushButton("Mark all read")
        self.mark_all_button.setAccessibleName("Mark all read")
        self.mark_all_button.setToolTip("Every reply stored now is read, for you (not the others)")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(show_label)
        top.addWidget(self.filter_box)
        top.addWidget(self.unread_label, 1)
        top.addWidget(self.mark_all_button)

        self.tree = QTreeWidget()
        self.tree.setAccessibleName("Conversations")
        self.tree.setHeaderLabels(["Number", "State", "Assigned to", "Unread"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(WHO, QHeaderView.ResizeMode.Stretch)
        for column, width in ((NUMBER, 124), (STATE, 96), (UNREAD, 66)):
            header.resizeSection(column, width)
        self.status_label = PlainLabel("")
        self.status_label.setAccessibleName("Conversations problem")
        self.status_label.setWordWrap(True)
        self.status_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.status_label)

        self._timer = single_shot(self, REFRESH_MS, self.refresh)
        self.filter_box.currentIndexChanged.connect(lambda _i: self.refresh())
        self.tree.currentItemChanged.connect(self._picked)
        self.mark_all_button.clicked.connect(self.mark_all_read)
        self._enable()

    @property
    def showing(self) -> Showing:
        return SHOWINGS[max(self.filter_box.currentIndex(), 0)][1]

    def show_only(self, showing: Showing) -> None:
        shown = [each for _text, each in SHOWINGS]
        self.filter_box.setCurrentIndex(shown.index(showing))

    def set_flow(self, flow: ConversationsFlow | None) -> None:
        """The session's store changed (None: no profile)."""
        self.flow = flow
        self.listing = None
        self.tree.clear()
        self.unread_label.setText("")
        self._enable()
        self.refresh()

    def _enable(self) -> None:
        self.filter_box.setEnabled(self.flow is not None)
        self.mark_all_button.setEnabled(self.flow is not None)

    def refresh_soon(self) -> None:
        """Read again within a second (however many times asked meanwhile)."""
        if self.flow is not None and not self._timer.isActive():
            self._timer.start()

    def refresh(self) -> None:
        """Read the listing now (off the GUI thread; a newer read supersedes this one)."""
        self._timer.stop()
        flow, showing = self.flow, self.showing
        if flow is None:
            return

        async def read() -> None:
            try:
                listing = await off_thread(lambda: flow.listing(showing))
            except StoreError as exc:
                log.warning("the conversations could not be read: %s", exc)
                if alive(self) and flow is self.flow:
                    self._said(f"The conversations could not be read: {exc}", "error")
                return
            if alive(self) and flow is self.flow and showing is self.showing:
                self._said("", "hint")
                self._show(listing)

        self.tasks.run(read(), key="listing", owner=self, context="reading the conversations")

    def _show(self, listing: Listing) -> None:
        self.listing = listing
        me = self.flow.me if self.flow is not None else ""
        current = self.current_number()
        self.tree.blockSignals(True)
        try:
            self.tree.clear()
            items = []
            for row in listing.conversations:
                kept = row.kept
                item = QTreeWidgetItem(
                    [
                        display(kept.number),
                        state_text(kept),
                        assignee_text(kept.assigned_to, me),
                        f"{row.unread:,}" if row.unread else "",
                    ]
                )
                item.setData(NUMBER, NUMBER_ROLE, kept.number)
                item.setToolTip(STATE, state_text(kept))  # "Snoozed until …" may be elided
                item.setTextAlignment(UNREAD, Qt.AlignmentFlag.AlignRight)
                if row.unread:
                    font = item.font(NUMBER)
                    font.setBold(True)
                    item.setFont(NUMBER, font)
                items.append(item)
            self.tree.addTopLevelItems(items)
            for item in items:
                if item.data(NUMBER, NUMBER_ROLE) == current:
                    self.tree.setCurrentItem(item)
                    break
        finally:
            self.tree.blockSignals(False)
        replies, talks = listing.unread_replies, listing.unread_conversations
        self.unread_label.setText(
            f"{replies:,} unread by you in {talks:,}" if replies else "All read by you"
        )
        self.unread_changed.emit(talks, replies)

    def current_number(self) -> str | None:
        item = self.tree.currentItem()
        number = item.data(NUMBER, NUMBER_ROLE) if item is not None else None
        return number if isinstance(number, str) else None

    def _picked(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        number = current.data(NUMBER, NUMBER_ROLE) if current is not None else None
        if isinstance(number, str):
            self.opened.emit(number)

    def mark_all_read(self) -> None:
        flow = self.flow
        if flow is None:
            return

        async def mark() -> None:
            try:
                await off_thread(flow.mark_all_read)
            except StoreError as exc:
                if alive(self):
                    self._said(f"Not marked read: {exc}", "error")
                return
            if alive(self):
                self.refresh()

        self.tasks.run(mark(), key="mark-all", owner=self, context="marking all read")

    def _said(self, text: str, role: str) -> None:
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))
        set_role(self.status_label, role)
