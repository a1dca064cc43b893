"""Replies tab: customers' replies as they arrive, searchable, with each number's conversation.

The table is the reply store read a window at a time (`RepliesTableModel`); the
hub's drains (one every 100 ms at most, however many replies) are appended in
place, and the view follows them only when the operator is already at the newest
reply. This operator's unread replies (their own read marks, as the Conversations
list reads them) are counted in the tab's title ("Replies (3)") and the tray; the
count beside the search is the console's new ones, seen once this tab is showing in
the active window (seen is not read: opening a conversation reads it). Picking
a reply opens the conversation with its number beside the table, with a box to
answer it. Replies that opted out or back in (or mention a keyword) are badged, and
numbers on the opt-out list are marked, from one set of opted-out numbers read off
the GUI thread when the tab attaches, shows, and replies arrive. Above the table,
the conversations as work (`conversations_list.py`): All / Open / Mine / Unassigned,
with this operator's own unread figures and "Mark all read"; Ctrl+D marks the
conversation shown done, Ctrl+L snoozes it for an hour, Ctrl+M takes it. They are
read again when this desk changes one, when replies arrive, and when the team's
server announces a change; not once the session is closing.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Final

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import (
    QCloseEvent,
    QGuiApplication,
    QKeySequence,
    QPalette,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.reply_inbox import ReplyRow, ReplySearch, StoreError
from gwdesk.app.team import OPTOUT_TABLES
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.replies.conversation import ConversationPane
from gwdesk.ui.replies.conversations_list import ConversationsList
from gwdesk.ui.replies.notifier import ReplyNotifier
from gwdesk.ui.replies.pacing import DeliveryPacer
from gwdesk.ui.replies.shown import ShownRows
from gwdesk.ui.replies.table import (
    FROM,
    IN_REPLY_TO,
    MESSAGE,
    OPT_OUT,
    RECEIVED,
    ROW_ROLE,
    TO,
    Anchor,
    Applied,
    Refreshed,
    RepliesTableModel,
)
from gwdesk.ui.reply_state import BackfillReport, ListenerState, ListenerStatus, ReplyDelivery
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.team_hub import TableWatch
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import after_events, single_shot
from gwdesk.ui.widgets.column_fit import ColumnFit
from gwdesk.ui.widgets.field_errors import text_field
from gwdesk.ui.widgets.listing import row_table
from gwdesk.ui.widgets.panes import panes, titled
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.replies")
SEARCH_DELAY_MS: Final = 250
ROW_HEIGHT: Final = 24
BACKFILL_TASK: Final = "replies-backfill"
SETTINGS_TASK: Final = "replies-listener-settings"
NOT_CONNECTED: Final = "Not connected: choose a profile (File ▸ Profiles…) to see its replies."
NO_REPLIES: Final = (
    "No replies yet.\n\nSend a two-way message with this console as its ReplyPath "
    "(Send tab ▸ Two way ▸ Use this console's listener): customers' answers appear "
    "here the moment they arrive. Replies sent while the console was closed are "
    "fetched when it starts, or with Fetch missed replies."
)
NO_REPLIES_TEAM: Final = (
    "No replies yet.\n\nSend a two-way message with the team's receiver as its ReplyPath "
    "(Send tab ▸ Two way ▸ Use the team's receiver): customers' answers appear here, and "
    "at every desk of the team, the moment the office's receiver stores them."
)
NO_MATCH: Final = "No replies match the search."
WIDTHS: Final = {RECEIVED: 104, FROM: 196, TO: 122, OPT_OUT: 84, IN_REPLY_TO: 124}
OPTED_DELAY_MS: Final = 300
OPTED_TASK: Final = "replies-opted-out"
CONVERSATION_TABLES: Final = frozenset({"conversations", "conversation_reads"})


class RepliesTab(BaseTab):
    title = "Replies"
    icon_name = "replies"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.hub = session.replies
        self.model: RepliesTableModel | None = None
        self.display_title = self.title
        self.unread_by_me: int | None = None
        """This operator's unread replies by their own read marks (None: not read yet)."""
        self._selected: int | None = None

        self.search_edit = text_field(
            "Search replies",
            limit=200,
            placeholder="Text or number, e.g. YES or 0412 345",
            clear=True,
        )
        search_label = QLabel("&Search")
        search_label.setBuddy(self.search_edit)
        self.count_label = QLabel("")
        self.count_label.setAccessibleName("Reply count")
        self.count_label.setProperty("role", "hint")
        self.backfill_button = QPushButton(theme.icon("refresh"), "Fetch missed replies")
        self.backfill_button.setAccessibleName("Fetch missed replies")
        self.backfill_button.setToolTip(
            "Ask the gateway for replies it received while this console was not listening "
            "(merged; nothing is shown twice)"
        )
        self.settings_button = QPushButton(theme.icon("settings"), "Listener…")
        self.settings_button.setAccessibleName("Listener settings")
        self.settings_button.setToolTip("Where the reply listener listens (address and port)")
        top = QHBoxLayout()
        top.addWidget(search_label)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.count_label)
        top.addSpacing(12)
        top.addWidget(self.backfill_button)
        top.addWidget(self.settings_button)

        self.listener_label = PlainLabel("")
        self.listener_label.setAccessibleName("Reply listener problem")
        self.listener_label.setWordWrap(True)
        self.offer_button = QToolButton()
        self.offer_button.setAccessibleName("Listen on the free port")
        self.offer_button.hide()
        self.result_label = PlainLabel("")
        self.result_label.setAccessibleName("Fetch result")
        self.result_label.setProperty("role", "hint")
        self.notices = QWidget()
        notices = QHBoxLayout(self.notices)
        notices.setContentsMargins(0, 0, 0, 0)
        notices.addWidget(self.listener_label, 1)
        notices.addWidget(self.offer_button)
        notices.addWidget(self.result_label)
        self.notices.hide()

        self.table = row_table("Replies", row_height=ROW_HEIGHT)
        self.column_fit = ColumnFit(self.table, WIDTHS)  # Message keeps room at 1024 px
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.empty_label = QLabel(NOT_CONNECTED)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setProperty("role", "hint")
        self.empty_label.setMargin(40)
        self.empty_label.setAutoFillBackground(True)
        self.empty_label.setBackgroundRole(QPalette.ColorRole.Base)
        self.empty_label.setFrameShape(QFrame.Shape.StyledPanel)
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.table)
        self.table_stack.addWidget(self.empty_label)

        self.conversation = ConversationPane(session, tasks, theme)
        self.conversations = ConversationsList(tasks)
        self.left = panes(
            Qt.Orientation.Vertical,
            titled("Conversations", self.conversations),
            self.table_stack,
            stretch=(2, 5),
            sizes=(230, 450),
        )
        splitter = panes(
            Qt.Orientation.Horizontal,
            self.left,
            titled("Conversation", self.conversation),
            stretch=(3, 2),
            sizes=(780, 480),
        )
        self.splitter = splitter

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.notices)
        layout.addWidget(splitter, 1)

        self.pacer = DeliveryPacer(self._show_delivery, self)
        self.notifier = ReplyNotifier(self.hub, self.watching, self)
        self.notifier.open_requested.connect(self.bring_forward)
        self._search_timer = single_shot(self, SEARCH_DELAY_MS, self.apply_search)
        self._opted_timer = single_shot(self, OPTED_DELAY_MS, self.refresh_opted_out)
        self.search_edit.textChanged.connect(lambda _text: self._search_timer.start())
        self.search_edit.returnPressed.connect(self.apply_search)
        self.backfill_button.clicked.connect(self.fetch_missed)
        self.settings_button.clicked.connect(self.edit_listener_settings)
        self.offer_button.clicked.connect(self.use_offered_port)
        self.conversation.sent.connect(lambda _number: self._update_counts())
        work = self.conversation.work
        work.install_shortcuts(self)
        work.changed.connect(lambda _kept: self.conversations.refresh())
        work.read.connect(lambda _number: self.conversations.refresh())
        self.conversations.opened.connect(self.conversation.open)
        self.conversations.unread_changed.connect(self._unread_by_me)
        TableWatch(session.team, CONVERSATION_TABLES, self._record_changed, self)
        self.connect_tracked(session.closing, self._session_closing)
        find = QShortcut(QKeySequence.StandardKey.Find, self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(
            lambda: self.search_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        )
        self.connect_tracked(self.hub.replies_arrived, self.on_delivery)
        self.connect_tracked(self.hub.unread_changed, self.on_unread)
        self.connect_tracked(self.hub.status_changed, self.on_listener_status)
        self.connect_tracked(self.hub.backfill_finished, self.on_backfill)
        self.connect_tracked(session.rules_changed, self._rules_changed)
        TableWatch(session.team, OPTOUT_TABLES, self._opted_timer.start, self)
        self.connect_tracked(session.contacts_changed, self._contacts_changed)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            self.connect_tracked(app.focusWindowChanged, lambda _w: self.mark_seen_if_watching())
        self._attach()
        self.on_listener_status(self.hub.status)

    # ---- the session ---------------------------------------------------------------------------

    def on_session_changed(self) -> None:
        self._attach()

    def _teardown(self) -> None:
        self.pacer.clear()  # the next listing reads them from the store
        if self.model is not None:
            shown = self.table.model()
            self.table.setModel(None)
            if shown is not None:
                self.table.viewport().removeEventFilter(shown)
                shown.deleteLater()
            self.model.close()
            self.model.deleteLater()
            self.model = None
        self._selected = None

    def _attach(self) -> None:
        self._teardown()
        store = self.session.store
        if store is None:
            self.conversation.set_store(None)
        else:
            self.conversation.set_store(store.path, store.shared)
        self.unread_by_me = None
        self.notifier.show_unread(0)
        self.conversations.set_flow(self.conversation.work.flow)
        self._show_result("", "hint")
        self.backfill_button.setEnabled(store is not None)
        self.settings_button.setEnabled(store is not None)
        if store is None:
            self.empty_label.setText(NOT_CONNECTED)
            self.table_stack.setCurrentWidget(self.empty_label)
            self._update_counts()
            self._update_title()
            return
        model = RepliesTableModel(store.path, self, shared=store.shared)
        model.anchor = self.anchor
        model.muted = self.palette().placeholderText()
        profile = self.session.profile
        model.region = profile.region if profile else DEFAULT_REGION
        model.set_keywords(self.hub.keywords)
        model.contacts = store.contacts
        model.refreshed.connect(self._refreshed)
        model.loaded.connect(lambda _total: self._update_counts())
        model.rowsInserted.connect(lambda *_args: self._update_counts())
        model.failed.connect(lambda text: self._show_result(text, "error"))
        self.model = model
        self.table.setModel(ShownRows(model, self.table))  # painted without calling Python
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(MESSAGE, QHeaderView.ResizeMode.Stretch)
        self.column_fit.reset()
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        model.set_search(self._search())
        self._update_counts()
        self.refresh_opted_out()

    # ---- opt-outs --------------------------------------------------------------------------------

    def refresh_opted_out(self) -> None:
        """Read the numbers opted out now (one read, off the GUI thread) to mark them."""
        self._opted_timer.stop()
        store = self.session.store
        if store is None or self.model is None:
            return
        self.tasks.run(
            self._read_opted_out(),
            key=OPTED_TASK,
            owner=self,
            context="reading the opt-out list",
        )

    async def _read_opted_out(self) -> None:
        store = self.session.store
        try:
            numbers = await self.hub.opted_out_numbers()
        except StoreError as exc:
            log.warning("the opt-out list could not be read: %s", exc)
            return
        if self.model is not None and store is self.session.store:
            self.model.set_opted_out(numbers)

    def _contacts_changed(self) -> None:
        """Names beside numbers are read again (the table's and the conversation's)."""
        if self.model is not None:
            self.model.forget_names()
        self.conversation.show_name()

    def _session_closing(self) -> None:
        """No read of a store that is closing: the list's timer and reads stop now."""
        self.conversation.work.set_flow(None)
        self.conversations.set_flow(None)
        self.unread_by_me = None
        self._update_title()

    def _record_changed(self) -> None:
        """Another desk changed a conversation or read marks: shown within a second."""
        self.conversations.refresh_soon()
        self.conversation.work.refresh()

    def _rules_changed(self) -> None:
        if self.model is not None and self.session.store is not None:
            self.model.set_keywords(self.hub.keywords)

    # ---- the table -----------------------------------------------------------------------------

    def at_newest(self) -> bool:
        """Whether the operator is looking at the newest reply (the bottom of the table)."""
        bar = self.table.verticalScrollBar()
        return bar.value() >= bar.maximum() - 1

    def anchor(self) -> Anchor:
        visible = max(self.table.viewport().height() // ROW_HEIGHT + 2, 10)
        top_row = self.table.rowAt(0)
        top = None
        if self.model is not None and top_row >= 0:
            row = self.model.row(top_row)
            top = row.key if row is not None else None
        return Anchor(self.at_newest(), top, visible)

    def on_delivery(self, delivery: ReplyDelivery) -> None:
        """A drain of the hub: shown by the pacer, at most one slice a frame."""
        if self.model is None:
            return
        self.conversation.on_delivery(delivery)
        if delivery.new:
            self.conversations.refresh_soon()  # counts, and done ones re-opened
        if delivery.new or delivery.dropped:
            self._opted_timer.start()  # a STOP among them changed the list
        self.pacer.add(delivery)

    def _show_delivery(self, delivery: ReplyDelivery) -> None:
        model = self.model
        if model is None:
            return
        following = self.at_newest()
        if model.apply(delivery) is Applied.APPENDED and following:
            self.table.scrollToBottom()
        self._update_counts()
        if self.pacer.idle:  # seen once every reply handed over is in the table
            self.mark_seen_if_watching()

    def _refreshed(self, refreshed: Refreshed) -> None:
        model = self.model
        if model is None:
            return
        if refreshed.at_bottom:
            self.table.scrollToBottom()
        else:
            self.table.scrollTo(
                self.table.model().index(refreshed.first_row, 0),
                QAbstractItemView.ScrollHint.PositionAtTop,
            )
        self._reselect()
        self._update_counts()

    def _reselect(self) -> None:
        """Put the selection back on the reply it was on, if it is among the rows held."""
        model = self.model
        if model is None or self._selected is None:
            return
        first = max(self.table.rowAt(0), 0)
        for number in range(first, min(first + self.anchor().visible_rows, model.total)):
            row = model.row(number)
            if row is not None and row.id == self._selected:
                self.table.selectRow(number)
                return

    def selected_reply(self) -> ReplyRow | None:
        index = self.table.currentIndex()
        if self.model is None or not index.isValid():
            return None
        row = self.model.data(index, ROW_ROLE)
        return row if isinstance(row, ReplyRow) else None

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model is None or not current.isValid():
            return
        row = self.model.row(current.row())
        if row is None:
            return
        self._selected = row.id
        self.conversation.open(row.from_number)

    def open_conversation(self, number: str) -> None:
        self.conversation.open(number)

    # ---- search --------------------------------------------------------------------------------

    def _search(self) -> ReplySearch:
        """What was typed, a number read in the profile's region (as every search box)."""
        region = self.model.region if self.model is not None else DEFAULT_REGION
        return ReplySearch(self.search_edit.text(), region)

    def apply_search(self) -> None:
        self._search_timer.stop()
        if self.model is not None:
            search = self._search()
            if search != self.model.search:
                self.model.set_search(search)

    # ---- counts, title, seen -------------------------------------------------------------------

    def _update_counts(self) -> None:
        model = self.model
        if model is None:
            self.count_label.setText("")
            return
        total = model.total
        searching = model.search.active
        noun = "reply" if total == 1 else "replies"
        text = f"{total:,} matching" if searching else f"{total:,} {noun}"
        unread = self.hub.unread
        self.count_label.setText(f"{text} · {unread:,} unread" if unread else text)
        if total == 0 and not model.pending:
            empty = NO_REPLIES_TEAM if self.hub.team_route else NO_REPLIES
            self.empty_label.setText(NO_MATCH if searching else empty)
            self.table_stack.setCurrentWidget(self.empty_label)
        else:
            self.table_stack.setCurrentWidget(self.table)

    def on_unread(self, _unread: int) -> None:
        self._update_title()
        self._update_counts()

    def _unread_by_me(self, _conversations: int, replies: int) -> None:
        """This operator's own unread replies (their read marks), as the list last read
        them: the tab's title and the tray say these."""
        self.unread_by_me = replies
        self._update_title()
        self.notifier.show_unread(replies)

    def _update_title(self) -> None:
        unread = self.unread_by_me or 0
        self.display_title = f"{self.title} ({unread:,})" if unread else self.title
        tabs = self._tab_widget()
        if tabs is not None:
            tabs.setTabText(tabs.indexOf(self), self.display_title)

    def _tab_widget(self) -> QTabWidget | None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QTabWidget):
            parent = parent.parentWidget()
        return parent

    def watching(self) -> bool:
        """The operator can see the newest replies: this tab shows in the active window."""
        return self.isVisible() and self.window().isActiveWindow()

    def mark_seen_if_watching(self) -> None:
        if self.watching():
            self.hub.mark_seen()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        after_events(self, self.mark_seen_if_watching)
        self._opted_timer.start()  # changed by hand in the Opt-outs tab meanwhile, perhaps

    def bring_forward(self) -> None:
        window = self.window()
        window.show()
        window.raise_()
        window.activateWindow()
        tabs = self._tab_widget()
        if tabs is not None:
            tabs.setCurrentWidget(self)

    # ---- the listener --------------------------------------------------------------------------

    def on_listener_status(self, status: ListenerStatus) -> None:
        if status.state is ListenerState.ERROR:
            self.listener_label.setText(status.message)
            set_role(self.listener_label, "error")
        elif status.state is ListenerState.LISTENING and status.warning:
            self.listener_label.setText(status.warning)
            set_role(self.listener_label, "warning")
        else:
            self.listener_label.setText("")
        self.listener_label.setVisible(bool(self.listener_label.text()))
        offer = status.suggestion if status.state is ListenerState.ERROR else None
        self.offer_button.setVisible(offer is not None)
        if offer is not None:
            self.offer_button.setText(f"Use port {offer}")
        self._show_notices()

    def _show_notices(self) -> None:
        self.result_label.setVisible(bool(self.result_label.text()))
        self.notices.setVisible(bool(self.listener_label.text()) or bool(self.result_label.text()))

    def use_offered_port(self) -> None:
        port = self.hub.status.suggestion
        if port is not None:
            self.tasks.run(
                self.hub.start(port), key=SETTINGS_TASK, owner=self, context="starting the listener"
            )

    def edit_listener_settings(self) -> None:
        self.tasks.run(
            self._edit_settings(), key=SETTINGS_TASK, owner=self, context="listener settings"
        )

    async def _edit_settings(self) -> None:
        from gwdesk.ui.replies.listener_settings import ListenerSettingsDialog

        settings = await self.hub.settings()
        dialog = ListenerSettingsDialog(settings, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def finished(code: int) -> None:
            if code == ListenerSettingsDialog.DialogCode.Accepted:
                self.tasks.run(
                    self.hub.configure(dialog.settings()),
                    key=SETTINGS_TASK,
                    owner=self,
                    context="saving the listener settings",
                )

        dialog.finished.connect(finished)
        dialog.open()
        self.settings_dialog = dialog

    # ---- backfill ------------------------------------------------------------------------------

    def fetch_missed(self) -> None:
        if self.tasks.running(BACKFILL_TASK, owner=self) or self.hub.backfilling:
            return
        self.backfill_button.setEnabled(False)
        self._show_result("Fetching missed replies…", "hint")
        task = self.tasks.run(
            self.hub.backfill(), key=BACKFILL_TASK, owner=self, context="fetching missed replies"
        )
        task.add_done_callback(
            lambda _t: self.backfill_button.setEnabled(self.session.store is not None)
        )

    def on_backfill(self, report: BackfillReport) -> None:
        stamp = datetime.now().strftime("%H:%M")
        self._show_result(f"{report.text} (checked {stamp})", "ok" if report.ok else "error")

    def _show_result(self, text: str, role: str) -> None:
        self.result_label.setText(text)
        set_role(self.result_label, role)
        self._show_notices()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._teardown()
        self.conversation.close_reader()
        self.notifier.close()
        super().closeEvent(event)
