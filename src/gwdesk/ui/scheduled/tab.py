"""Scheduled tab: the sends gwdesk holds for later, soonest first, changed until they go.

What is listed, changed and sent is the core's (`gwdesk.app.scheduled.ScheduledSends`,
the session's `scheduled`; its rows and words `gwdesk.app.scheduled_view`): here the
operator sees when each goes (on their clock, and how soon), to whom, its text and who
scheduled it, and acts on the selected one: edit its text, change its time or its
recipients (each in a small dialog that shows the core's refusal at its field), send it
now or cancel it (each asked first: nothing goes or is given up unconfirmed).

The list is read again whenever this desk changes the schedule (`Session.schedule_changed`:
an action here, a send scheduled from another tab, one sent at its time), when another
desk of a team changes the outbox, and every `REFRESH_MS` while the tab shows (sends going
out, and "in 2 h" ticking). A line says who sends them when due: in a one-desk profile
only a running console (or `gwdesk scheduled run`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.scheduled import ScheduledSend, ScheduledSends
from gwdesk.app.scheduled_view import scheduled_rows, until, went_text
from gwdesk.domain.errors import GatewayError, StoreError
from gwdesk.ui.models.rows import RowsModel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.scheduled.columns import COLUMNS, TEXT, WIDTHS, Listed
from gwdesk.ui.scheduled.edit_dialog import EditDialog
from gwdesk.ui.scheduled.edits import RecipientsDialog, TextDialog, TimeDialog
from gwdesk.ui.scheduled.questions import cancel_box, send_now_box
from gwdesk.ui.session import NOT_CONNECTED, Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.team_hub import TableWatch
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import repeating
from gwdesk.ui.widgets.column_fit import ColumnFit
from gwdesk.ui.widgets.listing import hint_label, row_table, selected_row
from gwdesk.ui.widgets.question import answered
from gwdesk.ui.widgets.validity import set_role

REFRESH_MS: Final = 30_000
READ_KEY: Final = "scheduled-read"
ACTION_KEY: Final = "scheduled-action"
OUTBOX_TABLES: Final = frozenset({"outbox_batches", "outbox_entries"})
EMPTY: Final = (
    "Nothing is scheduled.\n\n"
    "A send for later waits here until its time. To schedule one, choose Schedule under "
    "Send at on the Send or Batch tab, pick the time and send.\n"
    "Until it goes you can change its text, time or recipients here, send it now or "
    "cancel it."
)
Acting = Coroutine[Any, Any, None]
ONE_DESK: Final = (
    "Scheduled sends go only while gwdesk runs: keep this console open (or run "
    "“gwdesk scheduled run”) at the time a send is due. A send whose time passed while "
    "nothing ran is asked about when gwdesk starts again."
)
TEAM: Final = (
    "Each send goes once at its time, from whichever is running then: a console of the "
    "team, or the office's receiver (“gwdesk listen --store …”)."
)


class ScheduledTab(BaseTab):
    title = "Scheduled"
    icon_name = "scheduled"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.model: RowsModel[Listed] = RowsModel(COLUMNS, self)
        self.table = row_table("Scheduled sends", self.model)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.column_fit = ColumnFit(self.table, WIDTHS)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.doubleClicked.connect(lambda _index: self.edit_text())
        self.empty = hint_label(EMPTY, "No scheduled sends", centred=True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.empty)
        self.summary = PlainLabel()
        self.summary.setAccessibleName("Scheduled sends summary")
        self.note = hint_label(ONE_DESK, "Who sends them when due")
        self.result = PlainLabel()
        self.result.setAccessibleName("Scheduled action result")
        self.result.setWordWrap(True)
        self.result.hide()

        self.edit_text_action = self._action("&Edit text…", "Change the message", self.edit_text)
        self.time_action = self._action(
            "Change &time…", "Move it to another time", self.change_time
        )
        self.recipients_action = self._action(
            "Change &recipients…", "Send it to other numbers", self.change_recipients
        )
        self.send_now_action = self._action(
            "Send &now…", "Send it at once instead of at its time (asked first)", self.send_now
        )
        self.cancel_action = self._action(
            "&Cancel send…", "Give it up: none of it is sent (asked first)", self.cancel_send
        )
        self.cancel_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.cancel_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.cancel_action)
        self.actions_ = [
            self.edit_text_action,
            self.time_action,
            self.recipients_action,
            self.send_now_action,
            self.cancel_action,
        ]
        buttons = QHBoxLayout()
        self.buttons: list[QPushButton] = []
        for action in self.actions_:
            if action is self.send_now_action:
                buttons.addStretch(1)
            button = _button_for(action)
            self.buttons.append(button)
            buttons.addWidget(button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.note)
        layout.addWidget(self.stack, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.result)

        self.question: QMessageBox | None = None
        """The question open now (send now, cancel), if any."""
        self.dialog: EditDialog | None = None
        """The edit dialog open now, if any."""
        self.read_count = 0
        """Reads of the schedule that landed (tests wait for the next one)."""
        self.acting = False
        """A send now or a cancel is under way (asked, or done): no other action starts."""
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        self._ticker = repeating(self, REFRESH_MS, self._tick)
        self.connect_tracked(session.schedule_changed, self.refresh)
        self.connect_tracked(session.contacts_changed, self.refresh)
        TableWatch(session.team, OUTBOX_TABLES, self.refresh, self)
        self.on_session_changed()

    def _action(self, text: str, tip: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    # ---- reading ---------------------------------------------------------------------------

    def on_session_changed(self) -> None:
        store = self.session.store
        self.note.setText(TEAM if store is not None and store.team else ONE_DESK)
        self.note.setVisible(store is not None)
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def _tick(self) -> None:
        if self.isVisible():
            self.refresh()

    def refresh(self) -> None:
        """Read the schedule again (a read under way is superseded)."""
        scheduled = self.session.scheduled
        if scheduled is None:
            self.tasks.cancel(READ_KEY, owner=self)
            self._show([], NOT_CONNECTED)
            return
        self.tasks.run(
            self._read(scheduled), key=READ_KEY, owner=self, context="reading the schedule"
        )

    async def _read(self, scheduled: ScheduledSends) -> None:
        store = self.session.store
        try:
            rows = await scheduled_rows(scheduled, store.contacts if store is not None else None)
        except (StoreError, GatewayError) as exc:
            if scheduled is self.session.scheduled:
                self.summary.setText(f"The schedule could not be read: {exc}")
                set_role(self.summary, "error")
            return
        if scheduled is not self.session.scheduled:
            return  # the profile switched meanwhile: its own read follows
        now = scheduled.now()
        self._show([Listed(row, now) for row in rows], "")
        self.read_count += 1

    def _show(self, rows: list[Listed], problem: str) -> None:
        chosen = self.selected()
        self.model.set_rows(rows)
        if chosen is not None:
            for index, row in enumerate(rows):
                if row.send.batch_id == chosen.send.batch_id:
                    self.table.selectRow(index)
                    break
        self.stack.setCurrentWidget(self.table if rows else self.empty)
        self.empty.setText(problem or EMPTY)
        set_role(self.summary, "error" if problem else "")
        self.summary.setText(problem or summary_text(rows))
        self._update_actions()

    # ---- the selected send -----------------------------------------------------------------

    def selected(self) -> Listed | None:
        return selected_row(self.table, Listed)

    def select(self, batch_id: int) -> bool:
        """Select the row of a send (tests, and after an edit); False when it is not listed."""
        for index, row in enumerate(self.model.rows):
            if row.send.batch_id == batch_id:
                self.table.selectRow(index)
                return True
        return False

    def _update_actions(self) -> None:
        chosen = self.selected()
        free = not self.acting and self.dialog is None
        readable = chosen is not None and chosen.send.message is not None and free
        for action in (self.edit_text_action, self.recipients_action, self.send_now_action):
            action.setEnabled(readable)
        self.time_action.setEnabled(chosen is not None and free)
        self.cancel_action.setEnabled(chosen is not None and free)

    def _context_menu(self, at: QPoint) -> None:
        index = self.table.indexAt(at)
        if index.isValid():
            self.table.selectRow(index.row())
        if self.selected() is None:
            return
        menu = QMenu(self)
        menu.addActions(self.actions_[:3])
        menu.addSeparator()
        menu.addActions(self.actions_[3:])
        menu.popup(self.table.viewport().mapToGlobal(at))

    # ---- changes in a dialog ---------------------------------------------------------------

    def edit_text(self) -> None:
        self._edit(lambda s, held: TextDialog(s, held, self.tasks, self), "The text was changed.")

    def change_time(self) -> None:
        profile = self.session.profile
        zone = (profile.zone, profile.timezone) if profile is not None else (None, "")
        self._edit(
            lambda s, held: TimeDialog(s, held, self.tasks, zone, self), "The time was changed."
        )

    def change_recipients(self) -> None:
        sending = self.session.sending
        region = sending.region if sending is not None else ""
        self._edit(
            lambda s, held: RecipientsDialog(s, held, self.tasks, region, self),
            "The recipients were changed.",
        )

    def _edit(self, make: Callable[[ScheduledSends, ScheduledSend], EditDialog], done: str) -> None:
        chosen, scheduled = self.selected(), self.session.scheduled
        if chosen is None or scheduled is None or self.dialog is not None:
            return
        dialog = make(scheduled, chosen.send)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(lambda changed: self._saved(changed, done))
        dialog.finished.connect(lambda _code: self._dialog_closed(dialog))
        self.dialog = dialog
        self._update_actions()
        dialog.open()

    def _saved(self, changed: ScheduledSend, done: str) -> None:
        scheduled = self.session.scheduled
        when = (
            f" It goes {until(changed.due, scheduled.now())}." if scheduled and changed.due else ""
        )
        self._say(done + when, ok=True)
        self.refresh()

    def _dialog_closed(self, dialog: EditDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        self._update_actions()

    # ---- asked first: send now, cancel -----------------------------------------------------

    def send_now(self) -> None:
        self._asked(self._send_now)

    def cancel_send(self) -> None:
        self._asked(self._cancel)

    def _asked(self, act: Callable[[ScheduledSends, ScheduledSend], Acting]) -> None:
        chosen, scheduled = self.selected(), self.session.scheduled
        if chosen is None or scheduled is None or self.acting or self.dialog is not None:
            return
        self.acting = True
        self._update_actions()
        self.tasks.run(
            act(scheduled, chosen.send),
            key=ACTION_KEY,
            owner=self,
            context="acting on a scheduled send",
        )

    async def _send_now(self, scheduled: ScheduledSends, held: ScheduledSend) -> None:
        try:
            if not await self._confirmed(*send_now_box(self, held)):
                return
            self._say("Sending the scheduled send now…", ok=True)
            outcome = await scheduled.send_now(held.batch_id)
        except (StoreError, GatewayError) as exc:
            self._say(f"It was not sent: {exc}", ok=False)
        else:
            self._say(*went_text(outcome))
        finally:
            self._after_action()

    async def _cancel(self, scheduled: ScheduledSends, held: ScheduledSend) -> None:
        store = self.session.store
        try:
            if not await self._confirmed(*cancel_box(self, held)):
                return
            await scheduled.cancel(held.batch_id, store.operator if store is not None else "")
        except (StoreError, GatewayError) as exc:
            self._say(f"It was not cancelled: {exc}", ok=False)
        else:
            self._say("The send was cancelled: none of it will be sent.", ok=True)
        finally:
            self._after_action()

    async def _confirmed(self, box: QMessageBox, yes: QPushButton) -> bool:
        self.question = box
        try:
            return await answered(box, yes)
        finally:
            self.question = None

    def _after_action(self) -> None:
        if not alive(self):
            return  # the tab went while it ran (its tasks are cancelled with it)
        self.acting = False
        self._update_actions()
        self.refresh()

    def _say(self, text: str, ok: bool) -> None:
        self.result.setText(text)
        set_role(self.result, "" if ok else "error")
        self.result.show()


def _button_for(action: QAction) -> QPushButton:
    """A button that does what `action` does, enabled with it (the same mnemonic)."""
    button = QPushButton(action.text())
    button.setToolTip(action.toolTip())
    button.setAccessibleName(action.text().replace("&", "").rstrip("…"))
    button.clicked.connect(action.trigger)
    button.setEnabled(action.isEnabled())
    action.changed.connect(lambda: button.setEnabled(action.isEnabled()))
    return button


def summary_text(rows: list[Listed]) -> str:
    """`2 scheduled sends · the next in 2 h`."""
    if not rows:
        return "No scheduled sends."
    count = len(rows)
    noun = "scheduled send" if count == 1 else "scheduled sends"
    late = sum(row.late for row in rows)
    waiting = f" · {late} missed, waiting for you" if late else ""
    upcoming = [r for r in rows if r.send.due is not None and not r.late]
    soonest = f" · the next {until(upcoming[0].send.due, upcoming[0].now)}" if upcoming else ""
    return f"{count:,} {noun}{soonest}{waiting}"
