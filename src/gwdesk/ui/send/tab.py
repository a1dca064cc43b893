"""Send tab: one message to one recipient by REST SMS, Lodge SMS or WAP push.

The compose form (`send_form`) is on the left, this session's results on the right.
What the operator types is never lost: the draft is handed to the store's writer
thread 400 ms after the last edit (and when the tab hides or the profile's store
closes), restored when the tab is built, and a refused or failed send leaves every
field as it was, with the refusal beside the field it names. Drafts and history
rows are never written on the GUI thread: another process may hold the file's lock.
A number typed into To is looked up in the account's opt-out list (off the GUI
thread, once typing pauses), so an opted-out recipient is seen before Send; the
field completes names and numbers from the address book, and a number that belongs
to a contact shows its name (the history too).

The text may be a template (the picker fills it from a saved one): its placeholders
are filled from the fields of the contact holding the number, and a placeholder
with no value is refused at the message with the reason, never sent with a hole.
"Preview…" shows the message as the recipient's phone will. Before anything goes,
the cost: its parts and, where the gateway reports credits, whether the balance
covers them; a send that exceeds it asks first.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.merge import fill_for_number
from gwdesk.app.optouts import OptedOutError, OptOutGuard
from gwdesk.app.personal import Cost
from gwdesk.app.sending import Outcome, Ready, Sending, shown_recipient
from gwdesk.app.sms import CHANNEL_LABELS, Channel, SmsForm
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.domain.segments import count_segments
from gwdesk.domain.templates import Template, TemplateError
from gwdesk.gateway.errors import AmbiguousSendError, GatewayError, ValidationError
from gwdesk.store.contacts import ContactStore
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import OptOut
from gwdesk.ui.formatting import local_time, optout_sentence, refusal_sentence
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.send.form import ComposeForm
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.contact_completer import ContactCompleter
from gwdesk.ui.widgets.cost import CostWatch, cost_line, short_of
from gwdesk.ui.widgets.history_view import HistoryView
from gwdesk.ui.widgets.phone_preview import PreviewDialog, PreviewItem
from gwdesk.ui.widgets.question import answered, question_box
from gwdesk.ui.widgets.send_controls import busy_bar, result_line, send_button
from gwdesk.ui.widgets.template_picker import TemplatePicker
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.send")
DRAFT_KEY: Final = "send"
DRAFT_DELAY_MS: Final = 400
SEND_TASK: Final = "send-tab"
READY_TEXT: Final = "Ctrl+Enter sends from any field."
LOOKUP_DELAY_MS: Final = 300
LOOKUP_TASK: Final = "recipient-optout"
NAMES_TASK: Final = "history-names"
PREVIEW_TASK: Final = "send-preview"


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
        self.cost_label = PlainLabel("")
        self.cost_label.setAccessibleName("Cost")
        self.cost_label.setWordWrap(True)
        self.cost_label.hide()
        self.history = HistoryView()
        self.picker = TemplatePicker(tasks, theme, self.form.editor.text)
        self.template_note = PlainLabel("")
        self.template_note.setAccessibleName("Templates result")
        self.template_note.setWordWrap(True)
        self.form.message_tools.addWidget(self.template_note, 1)
        self.form.message_tools.addWidget(self.picker)
        self.completer = ContactCompleter(self.form.recipient.edit, tasks)
        self.cost = CostWatch(tasks, self)
        self.confirm_box: QMessageBox | None = None
        self.preview: PreviewDialog | None = None
        self.preview_button = QPushButton("Preview…")
        self.preview_button.setAccessibleName("Preview the message")
        self.preview_button.setToolTip(
            "The message as the recipient's phone will show it, placeholders filled"
        )

        actions = QHBoxLayout()
        actions.addWidget(self.keep_text)
        actions.addStretch(1)
        actions.addWidget(self.busy)
        actions.addWidget(self.preview_button)
        actions.addWidget(self.send_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 6, 0)
        left_layout.addWidget(self.form, 1)
        left_layout.addWidget(self.status_label)
        left_layout.addWidget(self.cost_label)
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
        self.form.editor.changed.connect(self._want_cost)
        self.picker.chosen.connect(self._template_chosen)
        self.picker.said.connect(self._template_said)
        self.cost.costed.connect(self._show_cost)
        self.preview_button.clicked.connect(self.open_preview)
        self.connect_tracked(session.contacts_changed, self._contacts_changed)
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
        self.picker.set_store(store.templates if store is not None else None)
        self.completer.set_contacts(store.contacts if store is not None else None)
        self.cost.forget()
        self.history.forget_names()
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
        self.read_names()
        self._want_cost()

    def _rules_changed(self) -> None:
        """The profile's marketing rules were edited: count the new instruction (the
        operator's Marketing choice stays)."""
        sending = self.session.sending
        if sending is not None:
            self.form.set_compliance(sending.compliance, default=False)

    # ---- contacts and templates ----------------------------------------------------------

    def _contacts_changed(self) -> None:
        self.history.forget_names()
        self.read_names()
        self.look_up_recipient()

    def read_names(self) -> None:
        """The names of the history's recipients that are contacts (one batched read)."""
        store, numbers = self.session.store, self.history.numbers()
        if store is None or not numbers:
            return
        self.tasks.run(
            self._read_names(store.contacts, sorted(numbers)),
            key=NAMES_TASK,
            owner=self,
            context="reading contacts' names",
        )

    async def _read_names(self, contacts: ContactStore, numbers: list[str]) -> None:
        try:
            found = await off_thread(lambda: contacts.names(numbers))
        except StoreError as exc:
            log.warning("contacts' names could not be read: %s", exc)
            return
        if alive(self) and self.session.store is not None:
            self.history.set_names({n: found.get(n, "") for n in numbers})

    def _template_chosen(self, text: str) -> None:
        self.form.editor.set_text(text)
        self.form.editor.setFocus()

    def _template_said(self, text: str, role: str) -> None:
        self.template_note.setText(text)
        set_role(self.template_note, role)
        self.template_note.setVisible(bool(text))

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
        store = self.session.store
        try:
            found = (await guard.lookup([number])).get(number)
            names = await off_thread(lambda: store.contacts.names([number])) if store else {}
        except StoreError as exc:
            log.warning("the opt-out list or the contacts could not be read: %s", exc)
            return
        if self.form.recipient.number() != number:
            return  # typed on meanwhile: a newer lookup follows
        self.form.recipient.set_contact_name(number, names.get(number, ""))
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
            form, personal = self._templated(form)
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
            self._send(sending, store, form, ready, personal),
            key=SEND_TASK,
            owner=self,
            context="sending",
        )

    def _templated(self, form: SmsForm) -> tuple[SmsForm, Template | None]:
        """The form with `{{` written as one brace, and the template when the text has
        placeholders (filled once the recipient's contact is read); `ValidationError`
        at the message when the text cannot be read as a template."""
        if form.channel is Channel.WAP_PUSH:
            return form, None
        parsed = self.form.editor.template()
        if isinstance(parsed, TemplateError):
            raise ValidationError(f"Not a usable template: {parsed}", field="Message", status=None)
        if parsed is None:
            return form, None
        if parsed.personal:
            return form, parsed
        return replace(form, text=parsed.render({})), None

    async def _fill(
        self,
        sending: Sending,
        store: LocalStore | None,
        form: SmsForm,
        ready: Ready,
        template: Template,
    ) -> tuple[SmsForm, Ready]:
        """The template filled from the fields of the contact holding the number."""
        contacts = store.contacts if store is not None else None
        text = await off_thread(lambda: fill_for_number(template, ready.recipient, contacts))
        filled = replace(form, text=text)
        return filled, sending.check_message(filled)

    async def _send(
        self,
        sending: Sending,
        store: LocalStore | None,
        form: SmsForm,
        ready: Ready,
        personal: Template | None,
    ) -> None:
        try:
            if personal is not None:
                form, ready = await self._fill(sending, store, form, ready, personal)
            parts = count_segments(ready.message.text).parts if ready.message.text else 0
            if parts:
                cost = await self.cost.for_send(sending, parts)
                if cost.covered is False and not await self._ask(short_of(cost)):
                    self._set_sending(False)
                    self._show_status("Not sent: your message is kept.", "hint")
                    return
            outcome = await sending.send_message(ready)
        except ValidationError as exc:  # refused (opted out, a placeholder unfilled): kept
            self._set_sending(False)
            self._refused(exc)
            return
        except GatewayError as exc:
            self._set_sending(False)
            self._show_status(exc.message, "error")
            return
        except StoreError as exc:
            self._set_sending(False)
            self._show_status(f"The contacts could not be read: {exc}", "error")
            return
        except asyncio.CancelledError:
            raise  # the tab or the console is going away: nothing left to update
        except Exception:
            self._set_sending(False)
            self._show_status("The send failed unexpectedly; your message is kept.", "error")
            raise
        self._set_sending(False)
        self.cost.forget()  # the balance changed
        if store is self.session.store:
            for row in outcome.history:
                self.history.add(row)
            self.read_names()
        error = outcome.error
        if error is None and outcome.ok:
            self._succeeded(store, form, outcome)
        else:
            self._failed(error or GatewayError("The message was not sent."))

    async def _ask(self, text: str) -> bool:
        box, send = question_box(self, "Send the message?", text, "Send anyway")
        self.confirm_box = box
        try:
            return await answered(box, send)
        finally:
            if alive(self):
                self.confirm_box = None

    # ---- cost and preview --------------------------------------------------------------

    def _want_cost(self) -> None:
        info = self.form.editor.info()
        wap = self.form.channel() is Channel.WAP_PUSH
        self.cost.want(
            self.session.sending, 0 if wap or not self.form.editor.text() else info.parts
        )

    def _show_cost(self, cost: Cost | None) -> None:
        text, role = cost_line(cost)
        self.cost_label.setText(text)
        set_role(self.cost_label, role)
        self.cost_label.setVisible(bool(text))

    def open_preview(self) -> None:
        """The message as the recipient's phone will show it (placeholders filled)."""
        self.form.clear_errors()
        form = self.form.values()
        try:
            form, personal = self._templated(form)
            sending = self.session.require_sending()
            ready = sending.check_message(form)
        except ValidationError as exc:
            self._refused(exc)
            return
        except GatewayError as exc:
            self._show_status(exc.message, "error")
            return
        self.tasks.run(
            self._preview(sending, self.session.store, form, ready, personal),
            key=PREVIEW_TASK,
            owner=self,
            context="previewing",
        )

    async def _preview(
        self,
        sending: Sending,
        store: LocalStore | None,
        form: SmsForm,
        ready: Ready,
        personal: Template | None,
    ) -> None:
        number = ready.recipient
        name = self.form.recipient.contact_name()
        try:
            if personal is not None:
                form, ready = await self._fill(sending, store, form, ready, personal)
            item = PreviewItem(1, number, name, ready.message.text)
        except ValidationError as exc:
            item = PreviewItem(1, number, name, None, reason=exc.message)
        except StoreError as exc:
            item = PreviewItem(
                1, number, name, None, reason=f"the contacts could not be read: {exc}"
            )
        if not alive(self):
            return
        if self.preview is None:
            self.preview = PreviewDialog(self.theme, self, test=False)
        header = (
            self.form.replies.sender_edit.text() if form.reply and form.reply[0] == "HEADER" else ""
        )
        self.preview.panel.set_items([item], header or form.sender, self.form.region)
        self.preview.show()
        self.preview.raise_()

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
