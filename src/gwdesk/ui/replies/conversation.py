"""One customer's conversation: what was sent to their number and what they replied, in order.

Sent messages come from this console's send history and from the log cache (sends
made elsewhere: batches, other tools), replies from the reply store; they are read
on a worker thread and shown as a transcript, newest at the bottom. A send shows the
status the log cache holds of it, read again whenever the session's log sync commits
(DELIVERED, not the ACTIVE it was sent as). The reply box
sends an SMS back to that number through the single send's flow, as the Send tab
does (same checks, credits question, exactly-once send and history); a send that
fails keeps its text in the box, with the reason under it. A number that opted out
says so above the transcript (how and when), and the box refuses to text it as the
Send tab does, unless the reply is marked purely factual (no marketing). A number
that belongs to a contact is titled with the contact's name. The box takes saved
templates (the picker beside Send), their placeholders filled from the contact's
fields; one with no value is refused with the reason, the text kept.

In a team profile, each message sent from a console names its operator, and the pane
follows the team's server: a send from another desk (a "history" change) is read in,
and while this operator types a reply the others are told ("Sam is typing a reply…",
a typing note renewed every few seconds while typing, released on send, on clearing
the text, on switching conversation and on close); the notes of the others are shown
above the reply box, read again when they change and when one lapses. Two-way replies
go to the team's receiver, whose ReplyPath the reply hub knows.

Above the transcript, the conversation as work (`work.py`): its state, whose it is,
and the actions on it; opening a conversation marks it read for this operator.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.conversations import ConversationsFlow
from gwdesk.app.handoff import Reading
from gwdesk.app.optouts import OptedOutError, OptOut, OptOutGuard, list_number
from gwdesk.app.profile_data import SharedData
from gwdesk.app.questions import SendQuestion
from gwdesk.app.reply_inbox import ConversationEntry, conversation, number_variants
from gwdesk.app.single_send import Checked, HistoryEntry, SingleResult, SingleSend
from gwdesk.app.sms import Channel, SmsForm
from gwdesk.app.team import Claim, conversation_subject
from gwdesk.domain.errors import AmbiguousSendError, GatewayError, StoreError
from gwdesk.domain.numbers import display
from gwdesk.ui.formatting import optout_sentence, refusal_sentence
from gwdesk.ui.log_sync import session_sync
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.replies.transcript import transcript_html, typing_text
from gwdesk.ui.replies.work import ConversationWork
from gwdesk.ui.reply_state import ReplyDelivery
from gwdesk.ui.session import NOT_CONNECTED, Session
from gwdesk.ui.tab_base import drop_connections
from gwdesk.ui.tasks import StoreReads, TaskRunner, alive, off_thread
from gwdesk.ui.team_hub import TableWatch
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.compliance import FACTUAL_TIP
from gwdesk.ui.widgets.message_editor import ONE_FILLING, MessageEditor
from gwdesk.ui.widgets.panes import on_ctrl_enter
from gwdesk.ui.widgets.question import answered, question_box
from gwdesk.ui.widgets.template_picker import TemplatePicker
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.replies")
RELOAD_MS: Final = 150
EMPTY_TEXT: Final = "Choose a reply to see the conversation with its number."
REPLY_DETAIL: Final = "Sent from the conversation in the Replies tab."
RENEW_TYPING: Final = 5.0
"""Seconds between renewals of this operator's typing note while they type (it lasts 15)."""
ROUTE_HERE: Final = "Route their replies to this console"
ROUTE_TEAM: Final = "Route their replies to the team's receiver"


class ConversationPane(QWidget):
    """The transcript for one number and a box to reply to it."""

    sent = Signal(str)
    """A reply went to this number (the number)."""

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = tasks
        self.number: str | None = None
        self.name = ""
        """The name of the contact holding the number ("" for none)."""
        self.optout: OptOut | None = None
        """The number's opt-out, once looked up (None: it may be texted)."""
        self.entries: list[ConversationEntry] = []
        self._reads: StoreReads | None = None
        self._path: Path | str | None = None
        self._shared: SharedData | None = None
        # True from send() until the pane has shown the outcome (the task's done
        # callback), so nobody sees "not sending" with the button still disabled.
        self._in_flight = False

        self.title = PlainLabel(EMPTY_TEXT)
        self.title.setProperty("role", "hint")
        self.title.setAccessibleName("Conversation")
        self.title.setWordWrap(True)
        self.work = ConversationWork(tasks)
        self.optout_label = PlainLabel("")
        self.optout_label.setAccessibleName("Opt-out of this number")
        self.optout_label.setWordWrap(True)
        self.optout_label.setProperty("role", "error")
        self.optout_label.hide()
        self.transcript = QTextBrowser()
        self.transcript.setAccessibleName("Conversation transcript")
        self.transcript.setOpenLinks(False)
        self.editor = MessageEditor(accessible_name="Reply", templates=True, filling=ONE_FILLING)
        self.editor.edit.setPlaceholderText("Type a reply to this number. Ctrl+Enter sends.")
        self.editor.edit.setMinimumHeight(56)
        self.editor.edit.setMaximumHeight(96)
        self.typing_label = PlainLabel("")  # operators' names come from the other desks
        self.typing_label.setAccessibleName("Others typing")
        self.typing_label.setWordWrap(True)
        self.typing_label.setProperty("role", "warning")
        self.typing_label.hide()
        self.route_box = QCheckBox(ROUTE_HERE)
        self.route_box.setAccessibleName("Route their replies")
        self.route_box.setChecked(True)
        self.factual_box = QCheckBox("Purely factual (no marketing)")
        self.factual_box.setAccessibleName("Purely factual (no marketing)")
        self.factual_box.setToolTip(FACTUAL_TIP)
        self.picker = TemplatePicker(tasks, theme, self.editor.text)
        self.picker.chosen.connect(self.editor.set_text)
        self.picker.said.connect(lambda text, role: self._show_result(text, role))
        self.send_button = QPushButton(theme.icon("send"), "Send reply")
        self.send_button.setAccessibleName("Send reply")
        self.send_button.setProperty("primary", True)
        self.send_button.setToolTip("Send this text to the number by SMS (Ctrl+Enter)")
        self.result_label = PlainLabel("")
        self.result_label.setAccessibleName("Reply result")
        self.result_label.setWordWrap(True)
        self.result_label.setProperty("role", "hint")

        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.route_box)
        actions.addStretch(1)
        actions.addWidget(self.picker)
        actions.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.work)
        layout.addWidget(self.optout_label)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.typing_label)
        layout.addWidget(self.editor)
        layout.addWidget(self.result_label)
        layout.addWidget(self.factual_box)  # a line of its own: the pane stays narrow
        layout.addLayout(actions)

        self._reload_timer = single_shot(self, RELOAD_MS, self.reload)
        self.send_button.clicked.connect(self.send)
        self.factual_box.toggled.connect(lambda _on: self._show_optout())
        self.editor.submit_requested.connect(self.send)
        on_ctrl_enter(self, self.send)
        session.replies.route_changed.connect(self._listener_changed)
        self._typing_subject: str | None = None
        """The conversation this operator's typing note is about (None: no note)."""
        self._typed_at = 0.0
        self._notes = asyncio.Lock()
        """Typing notes are written in the order they were asked for."""
        self._lapse_timer = single_shot(self, 0, self.refresh_typists)
        self.editor.edit.textChanged.connect(self._text_edited)
        TableWatch(session.team, {"claims"}, self.refresh_typists, self)
        TableWatch(session.team, {"history"}, self._reload_soon, self)
        session.closing.connect(self.stop_typing)
        # The statuses of the sends shown follow the log: read again when the sync commits.
        sync = session_sync(session, tasks)
        followed = [(sync.committed, sync.committed.connect(self._reload_soon))]
        self.destroyed.connect(lambda: drop_connections(followed))
        self._listener_changed()
        self._enable()

    # ---- what is shown ----------------------------------------------------------------------

    def set_store(self, path: Path | str | None, shared: SharedData | None = None) -> None:
        """The session's store changed: read from the new one (and forget the number);
        `shared`: where its shared data is (None: the same file)."""
        self.close_reader()
        self.stop_typing()
        self._path = path
        self._shared = shared
        store, profile = self.session.store, self.session.profile
        self.picker.set_store(store.templates if store is not None else None)
        self.work.set_flow(
            ConversationsFlow(store.conversations, profile.region, profile.zone)
            if store is not None and profile is not None
            else None
        )
        self.number = None
        self._show_typists([])
        self.name = ""
        self.entries = []
        self._set_optout(None)
        self.transcript.clear()
        self.transcript.setPlaceholderText("")
        self._set_title(EMPTY_TEXT, heading=False)
        self._show_result("", "hint")
        self._enable()

    def open(self, number: str) -> None:
        """Show the conversation with `number` (a reply's From)."""
        if number != self.number:
            self.stop_typing()
            self._show_typists([])
            self.number = number
            self.name = ""
            self.entries = []
            self._set_optout(None)
            self.factual_box.setChecked(False)  # the mark is for one message to one number
            self.transcript.clear()
            self._show_result("", "hint")
        self._show_title()
        self.transcript.setPlaceholderText("No messages with this number yet.")
        self._enable()
        self.work.show_number(number, opened=True)
        self.reload()
        self.refresh_typists()
        self.show_name()

    def _show_title(self) -> None:
        if self.number is None:
            return
        shown = display(self.number)
        who = f"{self.name} · {shown}" if self.name else shown
        self._set_title(f"Conversation with {who}", heading=True)

    def show_name(self) -> None:
        """Read the name of the contact holding the number (off the GUI thread)."""
        number, store, sending = self.number, self.session.store, self.session.sending
        if number is None or store is None or sending is None:
            return
        listed = list_number(number, sending.region)
        contacts = store.contacts

        async def read() -> None:
            try:
                names = await off_thread(lambda: contacts.names([listed]))
            except StoreError as exc:
                log.warning("the contact's name could not be read: %s", exc)
                return
            if alive(self) and self.number == number:
                self.name = names.get(listed, "")
                self._show_title()

        self.tasks.run(read(), key="name", owner=self, context="reading a contact's name")

    def _set_title(self, text: str, *, heading: bool) -> None:
        self.title.setText(text)
        # Its own sheet: the group box around the pane makes every label in it bold.
        self.title.setStyleSheet(f"font-weight: {600 if heading else 400};")
        set_role(self.title, "" if heading else "hint")

    def on_delivery(self, delivery: ReplyDelivery) -> None:
        """New replies: re-read if any came from the number shown (at most every 150 ms)."""
        if self.number is None:
            return
        variants = number_variants(self.number)
        if any(r.from_number in variants for r in (*delivery.new, *delivery.updated)):
            self._reload_timer.start()

    def _reload_soon(self) -> None:
        if self.number is not None:
            self._reload_timer.start()

    def reload(self) -> None:
        number, path = self.number, self._path
        if number is None or path is None:
            return
        self.look_up_optout()
        if self.work.kept is not None:  # read once opened: here, again (a reply re-opens it)
            self.work.refresh()
        if self._reads is None:
            self._reads = StoreReads(path, "conversation", self, shared=self._shared)

        def read(reading: Reading) -> list[ConversationEntry]:
            return conversation(reading, number)

        def done(result: Any, error: BaseException | None) -> None:
            if isinstance(error, StoreError):
                self._show_result(f"The conversation could not be read: {error}.", "error")
                return
            if error is not None:
                raise error
            self._show(result)

        self._reads.submit(read, done, key="conversation")  # a newer reload drops this one

    def _show(self, entries: list[ConversationEntry]) -> None:
        self.entries = entries
        bar = self.transcript.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        self.transcript.setHtml(transcript_html(entries, self.palette()))
        if at_bottom or not entries:
            self.transcript.moveCursor(QTextCursor.MoveOperation.End)
            bar.setValue(bar.maximum())

    def close_reader(self) -> None:
        if self._reads is not None:
            self._reads.close()
            self._reads.deleteLater()
            self._reads = None

    # ---- the number's opt-out ------------------------------------------------------------

    def look_up_optout(self) -> None:
        """Ask the account's opt-out list about the number shown (off the GUI thread)."""
        number, sending = self.number, self.session.sending
        guard = sending.guard if sending is not None else None
        if number is None or guard is None or sending is None:
            return
        listed = list_number(number, sending.region)
        self.tasks.run(
            self._look_up(guard, number, listed),
            key="optout",
            owner=self,
            context="checking the opt-out list",
        )

    async def _look_up(self, guard: OptOutGuard, number: str, listed: str) -> None:
        try:
            found = (await guard.lookup([listed])).get(listed)
        except StoreError as exc:
            log.warning("the opt-out list could not be read: %s", exc)
            return
        if self.number == number:
            self._set_optout(found)

    def _set_optout(self, optout: OptOut | None) -> None:
        self.optout = optout
        self._show_optout()

    def _show_optout(self) -> None:
        optout = self.optout
        if optout is None:
            self.optout_label.hide()
            self.optout_label.clear()
            return
        if self.factual_box.isChecked():
            then = "Marked purely factual: the reply goes, and the mark is recorded."
        else:
            then = "A reply is refused unless it is marked purely factual (no marketing)."
        self.optout_label.setText(f"{optout_sentence(optout)} {then}")
        set_role(self.optout_label, "warning" if self.factual_box.isChecked() else "error")
        self.optout_label.show()

    # ---- replying ----------------------------------------------------------------------------

    def sending(self) -> bool:
        return self._in_flight

    def _listener_changed(self, *_args: object) -> None:
        hub = self.session.replies
        if hub.team_route:
            # Kept usable without a published ReplyPath: a send then says what to start.
            self.route_box.setText(ROUTE_TEAM)
            self.route_box.setEnabled(True)
            self.route_box.setToolTip(
                "Sent two-way, with the office's receiver as the ReplyPath, so the answer "
                "reaches every console of the team."
                if hub.template is not None
                else hub.route_problem
            )
            return
        listening = hub.listening
        self.route_box.setText(ROUTE_HERE)
        self.route_box.setEnabled(listening)
        self.route_box.setToolTip(
            "Sent two-way, with this console's listener as the ReplyPath, so the answer "
            "comes back here."
            if listening
            else "The reply listener is not running: start it (status bar) to route replies here."
        )

    # ---- typing notes ------------------------------------------------------------------------

    def _text_edited(self) -> None:
        """Tell the team this operator is answering (renewed while they type), or no longer."""
        team, number = self.session.team, self.number
        if not team.active or number is None or self.sending():
            return
        if not self.editor.text().strip():
            self.stop_typing()
            return
        subject = conversation_subject(number)
        now = time.monotonic()
        if self._typing_subject == subject and now - self._typed_at < RENEW_TYPING:
            return
        self._typing_subject, self._typed_at = subject, now
        self.tasks.run(self._note(team.typing, subject), owner=self, context="a typing note")

    def stop_typing(self) -> None:
        """Release this operator's typing note, if there is one."""
        subject, self._typing_subject = self._typing_subject, None
        if subject is not None:
            team = self.session.team
            self.tasks.run(self._note(team.done_typing, subject), context="a typing note")

    async def _note(self, write: Any, subject: str) -> None:
        async with self._notes:
            await write(subject)

    def refresh_typists(self) -> None:
        """Read who else is answering the number shown (off the GUI thread)."""
        number, team = self.number, self.session.team
        if number is None or not team.active:
            self._show_typists([])
            return
        self.tasks.run(
            self._read_typists(number), key="typists", owner=self, context="typing notes"
        )

    async def _read_typists(self, number: str) -> None:
        claims = await self.session.team.typists(conversation_subject(number))
        if self.number == number:
            self._show_typists(claims)

    def _show_typists(self, claims: list[Claim]) -> None:
        text = typing_text([claim.operator for claim in claims])
        self.typing_label.setText(text)
        self.typing_label.setToolTip(
            "Another operator is answering this customer: agree who replies, so they are "
            "not answered twice."
            if text
            else ""
        )
        self.typing_label.setVisible(bool(text))
        self._lapse_timer.stop()
        if claims:  # read again when the first note lapses, unless it is renewed first
            left_ms = min(c.until_us for c in claims) // 1000 - int(time.time() * 1000)
            self._lapse_timer.start(max(left_ms, 0) + 200)

    def _enable(self) -> None:
        usable = self.number is not None and not self.sending()
        self.editor.setEnabled(usable)
        self.send_button.setEnabled(usable)

    def send(self) -> None:
        """Send the box's text to the number; refused or failed, the text stays."""
        number = self.number
        if number is None or self.sending():
            return
        hub = self.session.replies
        template = hub.template
        routed = self.route_box.isChecked() and self.route_box.isEnabled()
        if routed and template is None and hub.team_route:
            self._show_result(f"Not sent: {hub.route_problem} Your text is kept.", "error")
            return
        route = ("HTTP", template.render()) if template is not None and routed else None
        form = SmsForm(
            channel=Channel.REST_SMS,
            recipient=number,
            text=self.editor.text(),
            reply=route,
            factual=self.factual_box.isChecked(),
        )
        store, sending = self.session.store, self.session.sending
        flow = SingleSend(sending, store.contacts if store else None) if sending else None
        try:
            if flow is None:
                raise GatewayError(NOT_CONNECTED)
            checked = flow.check(form)
        except GatewayError as exc:
            self._show_result(f"Not sent: {exc.message} Your text is kept.", "error")
            return
        self._show_result(f"Sending to {display(checked.recipient)}…", "hint")
        self.send_button.setText("Sending…")
        self.stop_typing()
        task = self.tasks.run(
            self._send(flow, checked, number), key="send", owner=self, context="replying"
        )
        self._in_flight = True
        task.add_done_callback(lambda _t: self._sent_or_not())
        self._enable()

    def _sent_or_not(self) -> None:
        self._in_flight = False
        self.send_button.setText("Send reply")
        self._enable()

    async def _send(self, flow: SingleSend, checked: Checked, number: str) -> None:
        """Through the single send's flow: filled from the contact, asked about when the
        credits fall short, sent, and the transcript read again once it is written."""
        try:
            prepared = await flow.prepare(checked)
            if prepared.question is not None and not await self._ask(prepared.question):
                self._show_result("Not sent: your text is kept.", "hint")
                return
            result = await flow.send(prepared, answered=True, note=REPLY_DETAIL)
        except GatewayError as exc:  # refused (opted out, a placeholder unfilled), or away
            self._failed(exc, number)
            return
        self._reload_when_written(flow, result)
        if result.error is not None:
            self._failed(result.error)
            return
        if flow.sending is self.session.sending and self.number == checked.recipient:
            self.editor.clear()
            self.factual_box.setChecked(False)
        self._show_result(f"Sent to {result.to}.", "ok")
        self.session.report(f"reply sent to {result.to}", True)
        self.sent.emit(checked.recipient)

    async def _ask(self, question: SendQuestion) -> bool:
        box, send = question_box(self, question.title, question.text(), question.yes)
        return await answered(box, send)

    def _failed(self, exc: GatewayError, to: str | None = None) -> None:
        """`to`: the conversation the reply was typed in."""
        if isinstance(exc, OptedOutError):
            if self.number == to:
                self._set_optout(exc.optout)
            self._show_result(f"{refusal_sentence(exc)} Your text is kept.", "error")
            self.session.report(f"reply refused: {display(exc.optout.number)} opted out", False)
            return
        prefix = "Outcome unknown" if isinstance(exc, AmbiguousSendError) else "Not sent"
        self._show_result(f"{prefix}: {exc.message} Your text is kept.", "error")
        self.session.report(f"reply failed: {exc.message}", False)

    def _reload_when_written(self, flow: SingleSend, result: SingleResult) -> None:
        """The transcript is read again once the history row is in the file (the store's
        writer thread writes it; a failure is reported in the status bar)."""
        if flow.sending is not self.session.sending:
            return
        for written in result.outcome.written:
            asyncio.wrap_future(written).add_done_callback(self._history_written)

    def _history_written(self, written: asyncio.Future[HistoryEntry]) -> None:
        if not written.cancelled():
            written.exception()  # retrieved: the writer has logged and reported it
        if alive(self):
            self.reload()

    def _show_result(self, text: str, role: str) -> None:
        self.result_label.setText(text)
        self.result_label.setVisible(bool(text))
        set_role(self.result_label, role)
