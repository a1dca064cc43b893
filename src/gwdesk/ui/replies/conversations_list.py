"""The Replies tab's compact list of conversations: All / Open / Mine / Unassigned.

Beside the reply flood, not in it: the reply table stays the store's window (no
per-row store reads), and this list is the conversations flow's listing (at most
`LISTED` numbers), read off the GUI thread when the filter changes, when this desk
changes a conversation, and, at most once a second, when replies arrive or the team's
server announces a change of conversations or read marks. It carries this operator's
own unread figures (not the console's "new since seen") and "Mark all read". Numbers,
states and operators' names are put in as item text: plain, never markup.

One read runs at a time, and one more follows when asked meanwhile. Each read takes a
generation (every ask before it started): an answer older than the one shown is
dropped (a read of the store before, a filter changed meanwhile), and `listed` says
which read is on screen, so whoever waits for a listing waits for that.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.conversations import ConversationsFlow, Listing, Showing
from gwdesk.domain.errors import StoreError
from gwdesk.domain.numbers import display
from gwdesk.ui.plain_text import PlainLabel, tooltip, visible
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
LISTING_TASK: Final = "listing"
MIN_ROWS: Final = 4
MIN_STATE: Final = 60
WIDEST_NUMBER: Final = "+61 412 000 000"
WIDEST_STATE: Final = "Snoozed 30 Sep 00:00"


def assignee_text(assigned_to: str | None, me: str) -> str:
    """The list's short "Assigned to": "you", the operator's name, or a dash for nobody."""
    if not assigned_to:
        return NOBODY
    return "you" if assigned_to == me else visible(assigned_to[:NAME_LIMIT])


class ConversationsTree(QTreeWidget):
    """The list's rows; the State column as wide as a snooze's time while there is room."""

    state_width = 0

    def fit_state(self) -> None:
        header = self.header()
        rest = self.viewport().width() - header.sectionSize(NUMBER) - header.sectionSize(UNREAD)
        header.resizeSection(STATE, max(min(self.state_width, rest // 2), MIN_STATE))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_state()


class ConversationsList(QWidget):
    """The flow's listing under a filter, with this operator's unread count."""

    opened = Signal(str)
    """The operator picked a conversation (its number)."""
    unread_changed = Signal(int, int)
    """This operator's unread conversations and replies, as last read."""
    listed = Signal(int)
    """The listing of this read (its generation, `asked` when it started) is shown."""

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.flow: ConversationsFlow | None = None
        self.listing: Listing | None = None
        self.asked = 0
        """The generation of the newest read started."""
        self.shown = 0
        """The generation of the read on screen (older answers are dropped)."""
        self._started = 0
        """The generation of the newest read started (it covers every ask before it)."""

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

        self.tree = ConversationsTree()
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
        # The number (bold while unread) and a snooze's time whole, measured in the
        # tree's own font (any scale); on a narrow pane the state gives up to half of
        # what is left to "Assigned to" (both whole in their tooltips).
        bold = QFont(self.tree.font())
        bold.setBold(True)
        pad = 3 * self.tree.fontMetrics().averageCharWidth()
        header.resizeSection(NUMBER, QFontMetrics(bold).horizontalAdvance(WIDEST_NUMBER) + pad)
        header.resizeSection(UNREAD, header.fontMetrics().horizontalAdvance("Unread") + pad)
        self.tree.state_width = self.tree.fontMetrics().horizontalAdvance(WIDEST_STATE) + pad
        self.tree.fit_state()
        # Room for a few rows even with a horizontal scroll bar (a narrow pane).
        scroll_bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        rows = MIN_ROWS * (self.tree.fontMetrics().height() + 4)
        self.tree.setMinimumHeight(header.sizeHint().height() + rows + scroll_bar + 4)
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
        # The selection, not the current item: a view that takes the focus makes its first
        # row current without selecting it, and that must not open a conversation.
        self.tree.itemSelectionChanged.connect(self._picked)
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
        self._timer.stop()
        self.tasks.cancel(LISTING_TASK, owner=self)  # a read of the store before
        self.shown = self._started = self.asked
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

    def refresh(self) -> int:
        """Read the listing now, off the GUI thread; the generation whose answer will show
        it (0: nothing to read). One read at a time: asked while one runs, one more
        follows it (a burst of change notices costs two reads, not a thread each)."""
        self._timer.stop()
        flow = self.flow
        if flow is None:
            return 0
        self.asked += 1
        if not self.tasks.running(LISTING_TASK, owner=self):
            self.tasks.run(
                self._read_while_asked(flow),
                key=LISTING_TASK,
                owner=self,
                context="reading the conversations",
            )
        return self.asked

    async def _read_while_asked(self, flow: ConversationsFlow) -> None:
        while alive(self) and flow is self.flow and self.asked > self._started:
            generation, showing = self.asked, self.showing
            self._started = generation
            try:
                listing = await off_thread(partial(flow.listing, showing))
            except StoreError as exc:
                log.warning("the conversations could not be read: %s", exc)
                if self._current(generation, flow):
                    self._said(f"The conversations could not be read: {exc}", "error")
                return  # read again when asked again (a change, a reply, the filter)
            if self._current(generation, flow) and showing is self.showing:
                self.shown = generation
                self._said("", "hint")
                self._show(listing)
                self.listed.emit(generation)

    def _current(self, generation: int, flow: ConversationsFlow) -> bool:
        """Whether a read's answer may be shown: still this list's store, and no newer
        read's answer already on screen."""
        return alive(self) and flow is self.flow and generation > self.shown

    def _show(self, listing: Listing) -> None:
        self.listing = listing
        flow = self.flow
        me, zone = (flow.me, flow.zone) if flow is not None else ("", None)
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
                        state_text(kept, zone, short=True),
                        assignee_text(kept.assigned_to, me),
                        f"{row.unread:,}" if row.unread else "",
                    ]
                )
                item.setData(NUMBER, NUMBER_ROLE, kept.number)
                item.setToolTip(WHO, tooltip(kept.assigned_to))
                item.setToolTip(STATE, state_text(kept, zone))  # "Snoozed until …" may be elided
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
        """The number of the conversation picked in the list (None: none is)."""
        chosen = self.tree.selectedItems()
        number = chosen[0].data(NUMBER, NUMBER_ROLE) if chosen else None
        return number if isinstance(number, str) else None

    def _picked(self) -> None:
        chosen = self.tree.selectedItems()
        number = chosen[0].data(NUMBER, NUMBER_ROLE) if chosen else None
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
