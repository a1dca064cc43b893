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

What to check, fill, ask and send, and what to read again afterwards, is the single
send's flow's (`gwdesk.app.single_send`, which `gwdesk send --to` uses too): the tab
hands it the form, shows its question as a dialog and renders its result.

While a send waits (a gateway that does not answer), Cancel stops waiting: the flow
decides what that means (`gwdesk.app.cancelled_send`: the request dropped, the outbox
entry settled once by status, never sent again by itself) and the tab says what it came
to; the form keeps its text whatever it came to.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.optouts import OptedOutError
from gwdesk.app.personal import Cost
from gwdesk.app.questions import SendQuestion
from gwdesk.app.scheduled import scheduled_line
from gwdesk.app.single_send import Checked, OptOut, SingleResult, SingleSend, saved_draft
from gwdesk.app.sms import CHANNEL_LABELS, Channel, SmsForm
from gwdesk.domain.errors import AmbiguousSendError, GatewayError, ValidationError
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.ui.formatting import local_time, optout_sentence, refusal_sentence
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.send.form import ComposeForm
from gwdesk.ui.session import NOT_CONNECTED, Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.contact_completer import ContactCompleter
from gwdesk.ui.widgets.cost import CostWatch, cost_line
from gwdesk.ui.widgets.fitting import scrolling
from gwdesk.ui.widgets.history_view import HistoryView
from gwdesk.ui.widgets.panes import column, on_ctrl_enter, panes, titled
from gwdesk.ui.widgets.phone_preview import PreviewDialog, PreviewItem
from gwdesk.ui.widgets.question import answered, question_box
from gwdesk.ui.widgets.send_controls import busy_bar, cancel_button, result_line, send_button
from gwdesk.ui.widgets.sent_statuses import SentStatuses
from gwdesk.ui.widgets.template_picker import TemplatePicker
from gwdesk.ui.widgets.validity import set_role

DRAFT_KEY: Final = "send"
DRAFT_DELAY_MS: Final = 400
SEND_TASK: Final = "send-tab"
READY_TEXT: Final = "Ctrl+Enter sends from any field."
LOOKUP_DELAY_MS: Final = 300
LOOKUP_TASK: Final = "recipient-optout"
NAMES_TASK: Final = "history-names"
PREVIEW_TASK: Final = "send-preview"
CANCEL_TIP: Final = (
    "Stop waiting for the gateway. gwdesk then asks it whether it took the message, "
    "records what it says, and never sends it again by itself."
)
CANCELLING_TEXT: Final = "Cancelling: asking the gateway whether it took the message…"


def success_text(form: SmsForm, result: SingleResult) -> str:
    if result.scheduled is not None:
        return scheduled_line(result.scheduled)
    sent, to = result.outcome.sent[0], result.to
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


FORM_LINES = 20
"""Lines of the form kept in view before it scrolls: the recipient and the message box."""


class SendTab(BaseTab):
    title = "Send"
    icon_name = "send"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self._started = datetime.now(UTC)
        self._store = session.store
        """The store the form's draft belongs to (the session's, until it switches)."""
        self.flow: SingleSend | None = None
        """The profile's single sends (None: no profile is active)."""
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
        self.cancel_button = cancel_button(theme, CANCEL_TIP)
        self._cancel: asyncio.Event | None = None
        """Set to stop waiting for the send under way (None: none is)."""
        self.status_label = result_line(READY_TEXT)
        self.cost_label = PlainLabel("")
        self.cost_label.setAccessibleName("Cost")
        self.cost_label.setWordWrap(True)
        self.cost_label.hide()
        self.history = HistoryView()
        SentStatuses(self.history, session, tasks)  # statuses follow the log sync
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
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.preview_button)
        actions.addWidget(self.send_button)
        # The form scrolls on a small screen, keeping room for the recipient and the
        # message; the result, the cost and Send stay in view under it.
        form_area = scrolling(self.form, sideways=False)
        form_area.setMinimumHeight(FORM_LINES * self.fontMetrics().lineSpacing())
        left = column(
            (form_area, 1),
            self.status_label,
            self.cost_label,
            actions,
            margins=(0, 0, 6, 0),
        )
        # The form is comfortable at ~540 px; the history's columns need the rest.
        splitter = panes(
            Qt.Orientation.Horizontal,
            left,
            titled("Sent this session", self.history),
            stretch=(1, 1),
            sizes=(540, 720),
        )
        QVBoxLayout(self).addWidget(splitter)

        self._draft_timer = single_shot(self, DRAFT_DELAY_MS, self.save_draft)
        self._lookup_timer = single_shot(self, LOOKUP_DELAY_MS, self.look_up_recipient)
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
        self.cancel_button.clicked.connect(self.cancel)
        on_ctrl_enter(self, self.send)
        self.connect_tracked(session.closing, self.save_draft)
        self.connect_tracked(session.closing, self.cost.stop_asking)
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
        previous, store = self._store, self.session.store
        contacts = store.contacts if store is not None else None
        self.flow = SingleSend(sending, contacts) if sending is not None else None
        if profile is not None:
            self.form.send_at.set_gateway_zone(profile.zone, profile.timezone)
        else:
            self.form.send_at.set_gateway_zone(None, "")
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
            self._restore()
        self._limit_channels()
        flow = self.flow
        entries = flow.sent_since(self._started, CHANNEL_LABELS.values()) if flow else []
        self.history.set_entries(entries)
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
        flow, numbers = self.flow, self.history.numbers()
        if flow is None or not numbers:
            return
        self.tasks.run(
            self._read_names(flow, sorted(numbers)),
            key=NAMES_TASK,
            owner=self,
            context="reading contacts' names",
        )

    async def _read_names(self, flow: SingleSend, numbers: list[str]) -> None:
        found = await flow.names(numbers)
        if alive(self) and flow is self.flow:
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
        number, flow = self.form.recipient.number(), self.flow
        if number is None or flow is None:
            self.tasks.cancel(LOOKUP_TASK, owner=self)
            return
        self.tasks.run(
            self._look_up(flow, number),
            key=LOOKUP_TASK,
            owner=self,
            context="checking the opt-out list",
        )

    async def _look_up(self, flow: SingleSend, number: str) -> None:
        found = await flow.recipient(number)
        if found is None or self.form.recipient.number() != number:
            return  # unreadable now, or typed on meanwhile: a newer lookup follows
        self.form.recipient.set_contact_name(number, found.name)
        self.recipient_optout = found.optout
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

    def _restore(self) -> None:
        data = saved_draft(self._store.drafts, DRAFT_KEY) if self._store is not None else {}
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
        """Have the flow check the form and send it; a refusal points at its field."""
        if self.sending():
            return
        checked = self._checked()
        if checked is None:
            return
        flow, store = self.flow, self._store
        assert flow is not None
        self._cancel = cancel = asyncio.Event()
        self._set_sending(True, checked)
        self.tasks.run(
            self._send(flow, store, checked, cancel), key=SEND_TASK, owner=self, context="sending"
        )

    def cancel(self) -> None:
        """Stop waiting for the send under way; the flow settles it and the tab says how."""
        cancel = self._cancel
        if cancel is None or cancel.is_set() or not self.sending():
            return
        cancel.set()
        self.cancel_button.setEnabled(False)
        self._show_status(CANCELLING_TEXT, "hint")

    def _checked(self) -> Checked | None:
        """The form as the flow checked it, or None (the refusal shown at its field)."""
        self.form.clear_errors()
        try:
            if self.flow is None:
                raise GatewayError(NOT_CONNECTED)
            return self.flow.check(self.form.values())
        except ValidationError as exc:  # refused before anything is recorded
            self._refused(exc)
        except GatewayError as exc:
            self._show_status(exc.message, "error")
        return None

    async def _send(
        self, flow: SingleSend, store: object, checked: Checked, cancel: asyncio.Event
    ) -> None:
        try:
            prepared = await flow.prepare(checked, fresh=self.cost.fresh())
            if prepared.question is not None and not await self._ask(prepared.question):
                self._set_sending(False)
                self._show_status("Not sent: your message is kept.", "hint")
                return
            result = await flow.send(prepared, answered=True, cancel=cancel)
        except ValidationError as exc:  # refused (opted out, a placeholder unfilled): kept
            self._set_sending(False)
            self._refused(exc)
            return
        except GatewayError as exc:  # nothing was sent (the store away, no Lodge): kept
            self._set_sending(False)
            kept = f"{exc.message} Your message is kept." if cancel.is_set() else exc.message
            self._show_status(kept, "hint" if cancel.is_set() else "error")
            return
        except asyncio.CancelledError:
            raise  # the tab or the console is going away: nothing left to update
        except Exception:
            self._set_sending(False)
            self._show_status("The send failed unexpectedly; your message is kept.", "error")
            raise
        self._set_sending(False)
        if store is self.session.store:
            self._refresh(result)
        if result.cancelled:
            self._cancelled(prepared.form, result)
        elif result.error is None:
            self._succeeded(store, prepared.form, result)
        else:
            self._failed(result.error)

    def _refresh(self, result: SingleResult) -> None:
        """What the send changed: its rows in the list, their names, the credits."""
        for row in result.refresh.history:
            self.history.add(row)
        if result.refresh.names:
            self.read_names()
        if result.refresh.balance:
            self.cost.forget()
            self._want_cost()

    async def _ask(self, question: SendQuestion) -> bool:
        box, send = question_box(self, question.title, question.text(), question.yes)
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
        checked = self._checked()
        if checked is not None and self.flow is not None:
            self.tasks.run(
                self._preview(self.flow, checked),
                key=PREVIEW_TASK,
                owner=self,
                context="previewing",
            )

    async def _preview(self, flow: SingleSend, checked: Checked) -> None:
        number = checked.recipient
        name = self.form.recipient.contact_name()
        try:
            checked = await flow.filled(checked)
            item = PreviewItem(1, number, name, checked.single.message.text)
        except GatewayError as exc:  # a placeholder with no value, the contacts away
            item = PreviewItem(1, number, name, None, reason=exc.message)
        if not alive(self):
            return
        if self.preview is None:
            self.preview = PreviewDialog(self.theme, self, test=False)
        form = checked.form
        header = (
            self.form.replies.sender_edit.text() if form.reply and form.reply[0] == "HEADER" else ""
        )
        self.preview.panel.set_items(
            [item], header or form.sender, self.form.region, form.send_at or form.hold_until
        )
        self.preview.show()
        self.preview.raise_()

    def _set_sending(self, sending: bool, checked: Checked | None = None) -> None:
        self.form.setEnabled(not sending)
        self.keep_text.setEnabled(not sending)
        self.send_button.setEnabled(not sending)
        self.send_button.setText("Sending…" if sending else "Send")
        self.busy.setVisible(sending)
        self.cancel_button.setVisible(sending)
        self.cancel_button.setEnabled(sending)
        if not sending:
            self._cancel = None
        if sending and checked is not None:
            channel = checked.single.message.channel.label
            self._show_status(f"Sending to {display(checked.recipient)} by {channel}…", "hint")

    def _succeeded(self, store: object, form: SmsForm, result: SingleResult) -> None:
        self._show_status(success_text(form, result), "ok")
        done = "scheduled" if result.scheduled is not None else "sent"
        self.session.report(f"message {done} to {result.to}", True)
        if store is self.session.store:
            self.form.clear_sent(self.keep_text.isChecked())
            self._pending = True
            self.save_draft()
        self.form.recipient.setFocus(Qt.FocusReason.OtherFocusReason)

    def _cancelled(self, form: SmsForm, result: SingleResult) -> None:
        """What a cancel came to; the form keeps its text whatever it was."""
        if result.error is None:  # too late: the gateway had it, the history says sent
            self._show_status(f"{result.cancel_text} {success_text(form, result)}", "warning")
            self.session.report(f"message sent to {result.to} (the cancel came too late)", True)
            return
        unknown = isinstance(result.error, AmbiguousSendError)
        self._show_status(
            f"{result.cancel_text} Your message is kept.", "warning" if unknown else "hint"
        )

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
