"""Send tab: one message to one recipient by REST SMS, Lodge SMS or WAP push.

The compose form (`send_form`) is on the left, this session's results on the right.
What the operator types is never lost: the draft is handed to the store's writer
thread 400 ms after the last edit (and when the tab hides or the profile's store
closes), restored when the tab is built, and a refused or failed send leaves every
field as it was, with the refusal beside the field it names. Drafts and history
rows are never written on the GUI thread: another process may hold the file's lock.
A number typed into To is looked up in the account's opt-out list (off the GUI
thread, once typing pauses), so an opted-out recipient is seen before Send.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any, Final

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.optouts import OptedOutError, OptOutGuard
from gwdesk.app.sending import Outcome, Ready, Sending, shown_recipient
from gwdesk.app.sms import CHANNEL_LABELS, SmsForm
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.gateway.errors import AmbiguousSendError, GatewayError, ValidationError
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import OptOut
from gwdesk.ui.formatting import local_time, optout_sentence, refusal_sentence
from gwdesk.ui.send.form import ComposeForm
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.history_view import HistoryView
from gwdesk.ui.widgets.send_controls import busy_bar, result_line, send_button
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.send")
DRAFT_KEY: Final = "send"
DRAFT_DELAY_MS: Final = 400
SEND_TASK: Final = "send-tab"
READY_TEXT: Final = "Ctrl+Enter sends from any field."
LOOKUP_DELAY_MS: Final = 300
LOOKUP_TASK: Final = "recipient-optout"


def success_text(form: SmsForm, outcome: Outcome) -> str:
    sent = outcome.sent[0]
    to = shown_recipient(sent)
    first, entry = sent.message, sent.entry
    if first is not None or entry.message_id:
        what = f"MessageId {first.message_id if first else entry.message_id}"
        status = first.status if first else None
        if status:
            what += f", {status}"
    elif entry.batch_code:
        what = f"BatchCode {entry.batch_code}"
    else:
        what = "lodged (Lodge returns no MessageId for this operation)"
    if form.send_at is not None:
        return f"Scheduled for {to} at {local_time(form.send_at, False)} (your time): {what}."
    return f"Sent to {to}: {what}."


class SendTab(BaseTab):
    title = "Send"
    icon_name = "send"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self._started = datetime.now(UTC)
        self._store: LocalStore | None = None
        """The store the form's draft belongs to (the session's, until it switches)."""
        self._pending = False
        """Per tab, so that two Send tabs (tests, a future detached window) never cancel
        each other's send through the shared task runner."""

        self.form = ComposeForm()
        self.form.replies.attach_listener(session.replies)
        self.keep_text = QCheckBox("Keep the text after sending")
        self.keep_text.setAccessibleName("Keep the text after sending")
        self.keep_text.setToolTip(
            "On: after a successful send the message stays, ready for the next recipient."
        )
        self.send_button = send_button(theme, "Send", "Send the message (Ctrl+Enter)")
        self.busy = busy_bar()
        self.status_label = result_line(READY_TEXT)
        self.history = HistoryView()

        actions = QHBoxLayout()
        actions.addWidget(self.keep_text)
        actions.addStretch(1)
        actions.addWidget(self.busy)
        actions.addWidget(self.send_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 6, 0)
        left_layout.addWidget(self.form, 1)
        left_layout.addWidget(self.status_label)
        left_layout.addLayout(actions)
        history_box = QGroupBox("Sent this session")
        QVBoxLayout(history_box).addWidget(self.history)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(history_box)
        # The form is comfortable at ~540 px; the history's columns need the rest.
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([540, 720])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self.save_draft)
        self._lookup_timer = QTimer(self)
        self._lookup_timer.setSingleShot(True)
        self._lookup_timer.setInterval(LOOKUP_DELAY_MS)
        self._lookup_timer.timeout.connect(self.look_up_recipient)
        self.recipient_optout: OptOut | None = None
        """The typed recipient's opt-out, once looked up (None: not on the list)."""
        self.form.recipient.changed.connect(self._recipient_typed)
        self.form.marking.changed.connect(self._show_recipient_optout)
        self.connect_tracked(session.rules_changed, self._rules_changed)
        self.connect_tracked(session.replies.replies_arrived, lambda _d: self._lookup_timer.start())
        self.form.changed.connect(self._edited)
        self.keep_text.toggled.connect(lambda _on: self._edited())
        self.form.submit_requested.connect(self.send)
        self.send_button.clicked.connect(self.send)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(self.send)
        self.connect_tracked(session.closing, self.save_draft)
        self._attach_session()

    # ---- sessions and drafts -----------------------------------------------------------

    def on_session_changed(self) -> None:
        self.save_draft()
        self._attach_session()

    def _attach_session(self) -> None:
        """Take the new profile's region, zone, marketing rules, draft and history."""
        profile = self.session.profile
        self.form.set_region(profile.region if profile else DEFAULT_REGION)
        sending = self.session.sending
        if sending is not None:
            self.form.set_compliance(sending.compliance)
        if profile is not None:
            self.form.send_at.set_gateway_zone(profile.zone, profile.timezone)
        else:
            self.form.send_at.set_gateway_zone(None, "")
        previous, store = self._store, self.session.store
        self._store = store
        if store is None:
            self._limit_channels()
            self.history.set_entries([])
            return
        if previous is None and self._pending and self.form.has_content():
            # Typed before the gateway was connected: newer than any stored draft.
            self.save_draft()
        else:
            self._restore(store)
        self._limit_channels()
        labels = set(CHANNEL_LABELS.values())
        try:
            entries = store.history.since(self._started)
        except StoreError as exc:
            log.warning("send history could not be read: %s", exc)
            entries = []
        self.history.set_entries([e for e in entries if e.channel in labels])
        self.look_up_recipient()

    def _rules_changed(self) -> None:
        """The profile's marketing rules were edited: count the new instruction (the
        operator's Marketing choice stays)."""
        sending = self.session.sending
        if sending is not None:
            self.form.set_compliance(sending.compliance, default=False)

    # ---- the recipient's opt-out -------------------------------------------------------

    def _recipient_typed(self) -> None:
        self.recipient_optout = None
        self._lookup_timer.start()

    def look_up_recipient(self) -> None:
        """Ask the opt-out list about the number in To (off the GUI thread)."""
        self._lookup_timer.stop()
        number = self.form.recipient.number()
        sending = self.session.sending
        guard = sending.guard if sending is not None else None
        if number is None or guard is None:
            self.tasks.cancel(LOOKUP_TASK, owner=self)
            return
        self.tasks.run(
            self._look_up(guard, number),
            key=LOOKUP_TASK,
            owner=self,
            context="checking the opt-out list",
        )

    async def _look_up(self, guard: OptOutGuard, number: str) -> None:
        try:
            found = (await guard.lookup([number])).get(number)
        except StoreError as exc:
            log.warning("the opt-out list could not be read: %s", exc)
            return
        if self.form.recipient.number() != number:
            return  # typed on meanwhile: a newer lookup follows
        self.recipient_optout = found
        self._show_recipient_optout()

    def _show_recipient_optout(self) -> None:
        found = self.recipient_optout
        if found is None or self.form.recipient.number() != found.number:
            self.form.recipient.set_notice("")
            return
        if self.form.marking.factual.isChecked():
            self.form.recipient.set_notice(
                f"{optout_sentence(found)} Marked purely factual: it will be sent, and the "
                "mark recorded in the history.",
                "warning",
            )
        else:
            self.form.recipient.set_notice(
                f"{optout_sentence(found)} Only a message marked purely factual (no "
                "marketing) may be sent to it.",
                "error",
            )

    def _limit_channels(self) -> None:
        profile = self.session.profile
        self.form.set_lodge_available(
            profile is None or bool(profile.lodge_url),
            "This profile has no Lodge URL: add it under File ▸ Profiles to use Lodge.",
        )

    def _restore(self, store: LocalStore) -> None:
        try:
            data = store.drafts.load(DRAFT_KEY)
        except StoreError as exc:
            log.warning("send draft could not be read: %s", exc)
            data = {}
        self.form.restore(data)
        self.keep_text.setChecked(data.get("keep_text") is True)
        self._pending = False

    def _edited(self) -> None:
        self._pending = True
        self._draft_timer.start()

    def draft(self) -> dict[str, Any]:
        return {**self.form.draft(), "keep_text": self.keep_text.isChecked()}

    def save_draft(self) -> None:
        """Hand the draft to the store it belongs to (even one the session just closed);
        the store's writer thread saves it, and reports a failure in the status bar."""
        self._draft_timer.stop()
        store = self._store
        if not self._pending or store is None:
            return
        store.drafts.queue(DRAFT_KEY, self.draft())
        self._pending = False

    def hideEvent(self, event: QHideEvent) -> None:
        self.save_draft()
        super().hideEvent(event)

    # ---- sending -----------------------------------------------------------------------

    def sending(self) -> bool:
        return self.tasks.running(SEND_TASK, owner=self)

    def send(self) -> None:
        """Send the form through the profile's sending; a refusal points at its field."""
        if self.sending():
            return
        self.form.clear_errors()
        form = self.form.values()
        try:
            sending = self.session.require_sending()
            ready = sending.check_message(form)
        except ValidationError as exc:  # refused before anything is recorded
            self._refused(exc)
            return
        except GatewayError as exc:
            self._show_status(exc.message, "error")
            return
        store = self.session.store
        self._set_sending(True, ready)
        self.tasks.run(
            self._send(sending, store, form, ready), key=SEND_TASK, owner=self, context="sending"
        )

    async def _send(
        self, sending: Sending, store: LocalStore | None, form: SmsForm, ready: Ready
    ) -> None:
        try:
            outcome = await sending.send_message(ready)
        except ValidationError as exc:  # the opt-out list refused it: nothing was recorded
            self._set_sending(False)
            self._refused(exc)
            return
        except GatewayError as exc:
            self._set_sending(False)
            self._show_status(exc.message, "error")
            return
        except asyncio.CancelledError:
            raise  # the tab or the console is going away: nothing left to update
        except Exception:
            self._set_sending(False)
            self._show_status("The send failed unexpectedly; your message is kept.", "error")
            raise
        self._set_sending(False)
        if store is self.session.store:
            for row in outcome.history:
                self.history.add(row)
        error = outcome.error
        if error is None and outcome.ok:
            self._succeeded(store, form, outcome)
        else:
            self._failed(error or GatewayError("The message was not sent."))

    def _set_sending(self, sending: bool, ready: Ready | None = None) -> None:
        self.form.setEnabled(not sending)
        self.keep_text.setEnabled(not sending)
        self.send_button.setEnabled(not sending)
        self.send_button.setText("Sending…" if sending else "Send")
        self.busy.setVisible(sending)
        if sending and ready is not None:
            channel = ready.message.channel.label
            self._show_status(f"Sending to {display(ready.recipient)} by {channel}…", "hint")

    def _succeeded(self, store: LocalStore | None, form: SmsForm, outcome: Outcome) -> None:
        self._show_status(success_text(form, outcome), "ok")
        to = shown_recipient(outcome.sent[0])
        self.session.report(f"message sent to {to}", True)
        if store is self.session.store:
            self.form.clear_sent(self.keep_text.isChecked())
            self._pending = True
            self.save_draft()
        self.form.recipient.setFocus(Qt.FocusReason.OtherFocusReason)

    def _failed(self, exc: GatewayError) -> None:
        self.session.report(f"send failed: {exc.message}", False)
        if isinstance(exc, ValidationError):
            self._refused(exc)
            return
        prefix = "Outcome unknown" if isinstance(exc, AmbiguousSendError) else "Not sent"
        self._show_status(f"{prefix}: {exc.message}", "error")

    def _refused(self, exc: ValidationError) -> None:
        """Show a refusal beside its field (focused, marked), and in the result line."""
        if isinstance(exc, OptedOutError):
            self.recipient_optout = exc.optout
            message = refusal_sentence(exc)
            self.form.show_error(exc.field, message)
            self._show_status(message, "error")
            return
        self.form.show_error(exc.field, exc.message)
        self._show_status(f"Not sent: {exc.message}", "error")

    def _show_status(self, text: str, role: str) -> None:
        self.status_label.setText(text)
        set_role(self.status_label, role)
