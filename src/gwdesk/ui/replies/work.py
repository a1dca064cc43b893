"""The conversation as work: its state and whose it is, and the keystrokes that change them.

A strip above the transcript: "Open · assigned to Sam" (or Waiting, Done, Snoozed
until …, and unassigned; shortened with "…" to the pane, whole in its tooltip), with
Done (Ctrl+D), Waiting, Snooze (Ctrl+L: an hour; its menu: tomorrow 09:00 on the
profile's clock, or a time picked), Reopen, Mine (Ctrl+M) and Assign to… (the known
operators listed, or a name typed: `work_dialogs.py`; the core and, in a team, the
server decide whether it names an operator).
Every read and change is the conversations flow's, a blocking store call run off the
GUI thread; a refusal is shown under the buttons as the flow words it. Opening a
conversation marks it read for this operator. Names and states come from the record
(other desks write them) and are shown as plain text.

Reads and changes land in any order on a busy machine: each takes a ticket, and an
answer is shown only if no newer one was. A change that lands drops the reads still
in flight (they may have read the conversation before it) and reads once more.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QMenu, QPushButton, QVBoxLayout, QWidget

from gwdesk.app.conversations import ConversationsFlow, ConversationState, Snooze
from gwdesk.domain.errors import InputRefused, StoreError
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.replies.work_dialogs import AssignDialog, SnoozeDialog
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.replies")
STATE_NAMES: Final = {"open": "Open", "waiting": "Waiting", "done": "Done", "snoozed": "Snoozed"}
NAME_LIMIT: Final = 80


def state_text(kept: ConversationState, zone: tzinfo | None = None, *, short: bool = False) -> str:
    """ "Open", "Waiting", "Done" or "Snoozed until 28 Nov 14:00" on `zone`'s clock (the
    profile's; None: this computer's); `short` ("Snoozed 28 Nov 14:00") for a list's
    column. A state the console does not know is shown as the record has it."""
    name = STATE_NAMES.get(kept.state, kept.state[:40])
    if kept.snoozed_until is not None:
        until = "" if short else " until"
        return f"{name}{until} {kept.snoozed_until.astimezone(zone):%d %b %H:%M}"
    return name


def owner_text(kept: ConversationState, me: str) -> str:
    who = kept.assigned_to
    if not who:
        return "unassigned"
    return "assigned to you" if who == me else f"assigned to {who[:NAME_LIMIT]}"


def work_text(kept: ConversationState, me: str, zone: tzinfo | None = None) -> str:
    # The tags before the owner: a long name is what the strip elides, not the tags.
    tagged = f" · tagged {', '.join(kept.tags)}" if kept.tags else ""
    return f"{state_text(kept, zone)}{tagged} · {owner_text(kept, me)}"


class ConversationWork(QWidget):
    """The state and assignment of the conversation shown, and the actions on it."""

    changed = Signal(object)
    """ConversationState: this desk changed a conversation (the listing reads again)."""
    read = Signal(str)
    """The number whose replies this operator has now read."""

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.flow: ConversationsFlow | None = None
        self.number: str | None = None
        self.kept: ConversationState | None = None
        self._tickets = 0
        """The newest read or change started."""
        self._shown_ticket = 0
        """The read or change whose answer is on screen."""
        self._reading: str | None = None
        """The number whose state is being read (one read at a time)."""
        self._again = False
        """Asked to read while one was in flight: one more follows it."""

        self.state_label = ElidedLabel("")
        self.state_label.setAccessibleName("Conversation state")
        self.done_button = self._button("Done", "Dealt with (Ctrl+D); a new reply re-opens it")
        self.reopen_button = self._button("Reopen", "Open again")
        self.wait_button = self._button("Waiting", "Waiting on the customer's answer")
        self.snooze_button = self._button(
            "Snooze", "Out of the way until a time (Ctrl+L: an hour); a new reply re-opens it"
        )
        self.snooze_menu = QMenu(self.snooze_button)
        self.snooze_menu.setAccessibleName("Snooze until")
        self.hour_action = self.snooze_menu.addAction("For an hour\tCtrl+L")
        self.morning_action = self.snooze_menu.addAction("Until tomorrow 09:00")
        self.until_action = self.snooze_menu.addAction("Until a time…")
        self.snooze_button.setMenu(self.snooze_menu)
        self.take_button = self._button("Mine", "Assign it to yourself (Ctrl+M)")
        self.assign_button = self._button("Assign to…", "Assign it to an operator, or to nobody")
        self.result_label = PlainLabel("")
        self.result_label.setAccessibleName("Conversation change result")
        self.result_label.setWordWrap(True)
        self.result_label.hide()

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(4)
        # Two rows: the state's buttons, then whose it is beside its buttons; one row of
        # six does not fit the pane on a 1024-pixel screen.
        for button in (self.done_button, self.wait_button, self.snooze_button):
            buttons.addWidget(button)
        buttons.addWidget(self.reopen_button)
        buttons.addStretch(1)
        owners = QHBoxLayout()
        owners.setContentsMargins(0, 0, 0, 0)
        owners.setSpacing(4)
        owners.addWidget(self.state_label, 1)
        owners.addWidget(self.take_button)
        owners.addWidget(self.assign_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(owners)
        layout.addLayout(buttons)
        layout.addWidget(self.result_label)

        self.done_button.clicked.connect(self.done)
        self.reopen_button.clicked.connect(self.reopen)
        self.wait_button.clicked.connect(self.wait)
        self.take_button.clicked.connect(self.take)
        self.assign_button.clicked.connect(self.ask_assignee)
        self.hour_action.triggered.connect(lambda: self.snooze_for(Snooze.HOUR))
        self.morning_action.triggered.connect(lambda: self.snooze_for(Snooze.TOMORROW))
        self.until_action.triggered.connect(self.ask_until)
        self.assign_dialog: AssignDialog | None = None
        self.snooze_dialog: SnoozeDialog | None = None
        self._enable()

    def _button(self, text: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(text.rstrip("…"))
        button.setToolTip(tip)
        return button

    def install_shortcuts(self, scope: QWidget) -> None:
        """Ctrl+D (done), Ctrl+L (snooze for an hour) and Ctrl+M (mine) anywhere inside
        `scope` (the Replies tab)."""
        keys_slots: tuple[tuple[str, Callable[[], None]], ...] = (
            ("Ctrl+D", self.done),
            ("Ctrl+L", lambda: self.snooze_for(Snooze.HOUR)),
            ("Ctrl+M", self.take),
        )
        for keys, slot in keys_slots:
            shortcut = QShortcut(QKeySequence(keys), scope)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

    # ---- what is shown -------------------------------------------------------------------

    def set_flow(self, flow: ConversationsFlow | None) -> None:
        """The session's store changed (None: no profile)."""
        self.flow = flow
        self.show_number(None)

    def show_number(self, number: str | None, *, opened: bool = False) -> None:
        """Show `number`'s conversation; `opened`: the operator opened it (read it now)."""
        if number != self.number:
            self.number = number
            self.kept = None
            self._shown_ticket = self._tickets  # answers about the number before: dropped
            self._said("", "hint")
        self.refresh()
        flow = self.flow
        if opened and number is not None and flow is not None:
            self._run(lambda: flow.mark_read(number), lambda _up_to: self.read.emit(number))

    def refresh(self) -> None:
        """Read the state of the conversation shown again (it may have changed elsewhere)."""
        flow, number = self.flow, self.number
        if flow is None or number is None:
            self._show(None)
            return
        if self._reading == number:
            self._again = True  # one more read follows the one in flight
            return
        self._reading, self._again = number, False
        ticket = self._ticket()

        def read(kept: ConversationState) -> None:
            if ticket > self._shown_ticket:
                self._shown_ticket = ticket
                self._show(kept)

        def ended(finished: bool) -> None:
            again = self._again and finished
            self._reading, self._again = None, False
            if again:
                self.refresh()

        self._run(lambda: flow.state(number), read, ended=ended)

    def _ticket(self) -> int:
        self._tickets += 1
        return self._tickets

    def _show(self, kept: ConversationState | None) -> None:
        self.kept = kept
        flow = self.flow
        me, zone = (flow.me, flow.zone) if flow is not None else ("", None)
        text = work_text(kept, me, zone) if kept is not None else ""
        self.state_label.setText(text)
        self.state_label.setToolTip(tooltip(text))
        self._enable()

    def _enable(self) -> None:
        kept = self.kept
        usable = self.flow is not None and self.number is not None
        self.done_button.setEnabled(usable and (kept is None or kept.state != "done"))
        self.reopen_button.setEnabled(usable and kept is not None and kept.state != "open")
        self.wait_button.setEnabled(usable and (kept is None or kept.state != "waiting"))
        self.snooze_button.setEnabled(usable)
        mine = kept is not None and self.flow is not None and kept.assigned_to == self.flow.me
        self.take_button.setEnabled(usable and not mine)
        self.assign_button.setEnabled(usable)

    # ---- changes -------------------------------------------------------------------------

    def done(self) -> None:
        self._change(lambda flow, number: flow.done(number), "done")

    def reopen(self) -> None:
        self._change(lambda flow, number: flow.reopen(number), "reopened")

    def wait(self) -> None:
        self._change(lambda flow, number: flow.wait(number), "waiting")

    def take(self) -> None:
        self._change(lambda flow, number: flow.take(number), "taken")

    def assign(self, name: str) -> None:
        """To `name` as typed (blank: to nobody)."""
        operator = name.strip() or None
        self._change(lambda flow, number: flow.assign(number, operator), "assigned")

    def assign_to(self, operator: str | None) -> None:
        """To `operator` as the record names them (None: to nobody)."""
        self._change(lambda flow, number: flow.assign(number, operator), "assigned")

    def snooze_for(self, choice: Snooze) -> None:
        self._change(lambda flow, number: flow.snooze_for(number, choice), "snoozed")

    def snooze_until(self, until: datetime) -> None:
        self._change(lambda flow, number: flow.snooze(number, until), "snoozed")

    def ask_assignee(self) -> None:
        """The known operators listed (read while the dialog opens), or a name typed."""
        if self.flow is None or self.number is None:
            return
        current = self.kept.assigned_to if self.kept is not None else None
        dialog = AssignDialog(self.flow, self.tasks, current, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(self.assign_to)
        dialog.open()
        self.assign_dialog = dialog

    def ask_until(self) -> None:
        if self.flow is None or self.number is None:
            return
        dialog = SnoozeDialog(self.flow, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(self.snooze_until)
        dialog.open()
        self.snooze_dialog = dialog

    def _change(
        self, change: Callable[[ConversationsFlow, str], ConversationState], what: str
    ) -> None:
        flow, number = self.flow, self.number
        if flow is None or number is None:
            return

        ticket = self._ticket()

        def shown(kept: ConversationState) -> None:
            self._said("", "hint")
            in_flight = self._reading is not None
            if ticket > self._shown_ticket:
                # Reads started before this landed may have read the conversation before
                # it changed: theirs are dropped, and one read follows if any were out.
                self._shown_ticket = self._tickets
                self._show(kept)
            self.changed.emit(kept)
            if in_flight:
                self.refresh()

        self._run(lambda: change(flow, number), shown, what=what)

    def _run(
        self,
        work: Callable[[], object],
        then: Callable[..., None],
        *,
        what: str = "read",
        ended: Callable[[bool], None] | None = None,
    ) -> None:
        """`work()` off the GUI thread, `then(result)` on it if the conversation is still
        the one shown; `ended(finished)` afterwards either way (False: cancelled)."""
        number = self.number

        async def run() -> None:
            try:
                await answered()
            except asyncio.CancelledError:
                if ended is not None and alive(self):
                    ended(False)
                raise
            if ended is not None and alive(self):
                ended(True)

        async def answered() -> None:
            try:
                result = await off_thread(work)
            except InputRefused as exc:
                answer: tuple[str, str] | None = (f"Not {what}: {exc.message}", "error")
            except StoreError as exc:
                log.warning("a conversation's %s failed: %s", what, exc)
                answer = (f"Not {what}: {exc}", "error")
            else:
                answer = None
            if not alive(self) or self.number != number:
                return  # an answer about a conversation no longer shown
            if answer is not None:
                self._said(*answer)
                return
            then(result)

        self.tasks.run(run(), owner=self, context="a conversation's state")

    def _said(self, text: str, role: str) -> None:
        self.result_label.setText(text)
        self.result_label.setVisible(bool(text))
        set_role(self.result_label, role)
