"""The Send tab's compose form: channel, recipient, message, options, and their errors.

It owns the inputs and three jobs around them: reading them (`values()`), saving
and restoring them as a draft, and pointing at one of them when a send is refused
(`show_error(wire_field, message)`: the gateway names fields by their wire names,
REST's `Recipient`/`Message`/`Source` or Lodge's `PhoneNumber`/`PhoneMessage`/`URL`).
Fields the chosen channel does not use are disabled, with a tooltip saying why.
The sender (From, or the HEADER name) is read by ACMA's rules as it is typed, its
errors and warnings shown at the field; "Marketing" counts the profile's opt-out
instruction in the parts, and "Purely factual" lets the message reach a number that
opted out.
"""

from __future__ import annotations

import re
from typing import Any, Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.sender_rules import SenderNotes, sender_notes
from gwdesk.app.sms import (
    CHANNEL_TIPS,
    LODGE_REPLY_TYPES,
    Channel,
    Compliance,
    SmsForm,
)
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.ui.widgets.compliance import MarkingChoice, show_sender_notes
from gwdesk.ui.widgets.drafts import draft_text
from gwdesk.ui.widgets.field_errors import error_label, stacked, text_field
from gwdesk.ui.widgets.message_editor import ONE_FILLING, MessageEditor
from gwdesk.ui.widgets.recipient_edit import RecipientEdit
from gwdesk.ui.widgets.reply_options import REPLY_TYPES, ReplyMode, ReplyOptions
from gwdesk.ui.widgets.send_at import SendAtPicker
from gwdesk.ui.widgets.validity import set_invalid, set_role

DRAFT_VERSION: Final = 1
#: Wire field names (REST and Lodge) to the form's own keys.
FIELD_KEYS: Final = {
    "recipient": "recipient",
    "recipients": "recipient",
    "phonenumber": "recipient",
    "message": "text",
    "phonemessage": "text",
    "source": "sender",
    "from": "sender",
    "sendat": "send_at",
    "replytype": "reply_type",
    "replypath": "reply_path",
    "externalsystemid": "external_id",
    "tags": "tags",
    "applicationname": "wap_app",
    "url": "wap_url",
    "marketing": "marketing",
}
WHY_REST_ONLY: Final = "Only the REST channel has this field: the Lodge operations do not take it."
WHY_NO_SCHEDULE: Final = "Lodge operations cannot be scheduled: they are sent at once."
WHY_WAP: Final = "A WAP push carries no text, sender, reply route or schedule: only a link."
WHY_HEADER: Final = "The sender name chosen under Replies (HEADER) replaces From."
WHY_LODGE_TYPES: Final = (
    f"Lodge's two-way SMS takes only {', '.join(LODGE_REPLY_TYPES)} (or HEADER)."
)
#: The application sheet gives every input `palette(base)`, which hides the disabled
#: look; fields a channel does not use must look unused.
LOCAL_STYLE: Final = (
    "QLineEdit:disabled, QComboBox:disabled, QDateTimeEdit:disabled, "
    "QPlainTextEdit:disabled { background: palette(window); color: palette(placeholder-text); }"
)
SENDER_TIP: Final = (
    "What the recipient sees as the sender: a number, or a name of up to 11 letters, "
    "digits, spaces, '.', '_' or '-'. Empty: the account's default number."
)


def field_key(wire_field: str | None) -> str | None:
    """`Recipients[0]` → `recipient`; None for a field the form does not have."""
    if not wire_field:
        return None
    base = re.sub(r"\[\d+\]$", "", wire_field.strip()).replace("_", "").lower()
    return FIELD_KEYS.get(base)


class ComposeForm(QWidget):
    changed = Signal()
    channel_changed = Signal()
    submit_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._restoring = False
        self.region = DEFAULT_REGION
        self.setStyleSheet(LOCAL_STYLE)

        # ---- channel
        self.channel_group = QButtonGroup(self)
        channel_row = QHBoxLayout()
        channel_row.setContentsMargins(0, 0, 0, 0)
        caption = QLabel("Channel")
        caption.setProperty("role", "hint")
        channel_row.addWidget(caption)
        self.channel_buttons: dict[Channel, QRadioButton] = {}
        for channel in Channel:
            button = QRadioButton(channel.label)
            button.setAccessibleName(f"Channel: {channel.label}")
            button.setToolTip(CHANNEL_TIPS[channel])
            button.setProperty("channel", channel.value)
            self.channel_group.addButton(button)
            self.channel_buttons[channel] = button
            channel_row.addWidget(button)
        channel_row.addStretch(1)
        self.channel_buttons[Channel.REST_SMS].setChecked(True)

        # ---- recipient
        self.recipient = RecipientEdit()
        self.sender_edit = text_field(
            "From",
            limit=64,
            placeholder="Optional: a number or a name of up to 11 characters",
            tip=SENDER_TIP,
        )
        self.sender_error = error_label("From error")
        recipient_box = QGroupBox("Recipient")
        recipient_form = QFormLayout(recipient_box)
        recipient_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        recipient_form.addRow("&To", self.recipient)
        recipient_form.addRow("&From", stacked(self.sender_edit, self.sender_error))

        # ---- message
        self.editor = MessageEditor(templates=True, filling=ONE_FILLING)
        self.text_error = error_label("Message error")
        self.wap_app = text_field(
            "Application name", limit=200, placeholder="Shown with the link, e.g. ACME Rewards"
        )
        self.wap_url = text_field(
            "WAP push URL",
            limit=4000,
            placeholder="https://example.com/app",
            tip="The http(s) link the phone offers to open.",
        )
        self.wap_app_error = error_label("Application name error")
        self.wap_url_error = error_label("URL error")
        wap_note = QLabel(
            "A WAP push sends a link instead of text: the phone shows the application "
            "name and offers to open the URL."
        )
        wap_note.setProperty("role", "hint")
        wap_note.setWordWrap(True)
        wap_page = QWidget()
        wap_form = QFormLayout(wap_page)
        wap_form.setContentsMargins(0, 0, 0, 0)
        wap_form.addRow(wap_note)
        wap_form.addRow("A&pplication", stacked(self.wap_app, self.wap_app_error))
        wap_form.addRow("&URL", stacked(self.wap_url, self.wap_url_error))
        self.message_pages = QStackedWidget()
        self.message_pages.addWidget(stacked(self.editor, self.text_error))
        self.message_pages.addWidget(wap_page)
        self.marking = MarkingChoice()
        self.marking_error = error_label("Marketing error")
        message_box = QGroupBox("Message")
        message_layout = QVBoxLayout(message_box)
        # The template picker (the tab adds it: it has the store) sits above the text.
        self.message_tools = QHBoxLayout()
        self.message_tools.setContentsMargins(0, 0, 0, 0)
        message_layout.addLayout(self.message_tools)
        message_layout.addWidget(self.message_pages, 1)
        message_layout.addWidget(stacked(self.marking, self.marking_error))

        # ---- options
        self.send_at = SendAtPicker()
        self.send_at_error = error_label("Send at error")
        self.replies = ReplyOptions()
        self.reply_error = error_label("Replies error")
        self.external_id = text_field(
            "ExternalSystemId",
            limit=500,
            placeholder="Optional: your reference",
            tip="ExternalSystemId: your own reference, to look the message up later on the "
            "Status tab. Left empty, gwdesk generates one (gwd-…) so a lost answer can be "
            "settled without sending twice.",
        )
        self.tags = text_field(
            "Tags",
            limit=1000,
            placeholder="Optional: comma,separated",
            tip="Tags: comma-separated labels the gateway stores with the message.",
        )
        self.reference_error = error_label("Reference error")
        reference = QWidget()
        reference_row = QHBoxLayout(reference)
        reference_row.setContentsMargins(0, 0, 0, 0)
        reference_row.addWidget(self.external_id, 3)
        tags_label = QLabel("Ta&gs")
        tags_label.setBuddy(self.tags)
        reference_row.addWidget(tags_label)
        reference_row.addWidget(self.tags, 2)
        options_box = QGroupBox("Options")
        options = QFormLayout(options_box)
        options.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        options.addRow("Send &at", stacked(self.send_at, self.send_at_error))
        options.addRow("&Replies", stacked(self.replies, self.reply_error))
        options.addRow("R&eference", stacked(reference, self.reference_error))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(channel_row)
        layout.addWidget(recipient_box)
        layout.addWidget(message_box, 1)
        layout.addWidget(options_box)

        self._errors: dict[str, tuple[QWidget, QLabel | None]] = {
            "recipient": (self.recipient.edit, None),
            "text": (self.editor.edit, self.text_error),
            "sender": (self.sender_edit, self.sender_error),
            "send_at": (self.send_at.edit, self.send_at_error),
            "reply_type": (self.replies.type_combo, self.reply_error),
            "reply_path": (self.replies.path_edit, self.reply_error),
            "external_id": (self.external_id, self.reference_error),
            "tags": (self.tags, self.reference_error),
            "wap_app": (self.wap_app, self.wap_app_error),
            "wap_url": (self.wap_url, self.wap_url_error),
            "marketing": (self.marking.marketing, self.marking_error),
        }
        self._connect()
        self.apply_channel()

    def _connect(self) -> None:
        edits: list[tuple[Any, tuple[str, ...]]] = [
            (self.recipient.changed, ("recipient",)),
            (self.editor.changed, ("text",)),
            (self.sender_edit.textChanged, ("sender",)),
            (self.send_at.changed, ("send_at",)),
            (self.replies.changed, ("reply_type", "reply_path")),
            (self.external_id.textChanged, ("external_id",)),
            (self.tags.textChanged, ("tags",)),
            (self.wap_app.textChanged, ("wap_app",)),
            (self.wap_url.textChanged, ("wap_url",)),
            (self.marking.changed, ("marketing", "sender", "reply_path")),
        ]
        for signal, keys in edits:
            signal.connect(lambda *_a, k=keys: self._edited(k))
        self.channel_group.buttonToggled.connect(self._channel_toggled)
        self.replies.group.buttonToggled.connect(lambda *_a: self.apply_channel())
        self.editor.submit_requested.connect(self.submit_requested.emit)

    # ---- compliance --------------------------------------------------------------------

    def set_compliance(self, compliance: Compliance, *, default: bool = True) -> None:
        """The profile's marketing rules; `default`: tick Marketing as the profile says
        (a new message), else keep the operator's choice (the rules were edited)."""
        self.marking.set_compliance(compliance, default=default)
        self._count_instruction()

    def _count_instruction(self) -> None:
        self.editor.set_appended(self.marking.instruction())

    def sender_notes(self) -> tuple[SenderNotes, SenderNotes]:
        """ACMA's rules on (From, the HEADER sender name), as the form stands."""
        channel, mode = self.channel(), self.replies.mode()
        marketing = self.marking.marketing.isChecked()
        source = SenderNotes()
        if channel is Channel.REST_SMS and mode is not ReplyMode.HEADER:
            two_way = mode is ReplyMode.TWO_WAY
            source = sender_notes(
                self.sender_edit.text(), self.region, marketing=marketing, two_way=two_way
            )
        header = SenderNotes()
        if channel is not Channel.WAP_PUSH and mode is ReplyMode.HEADER:
            header = sender_notes(self.replies.sender_edit.text(), self.region, marketing=marketing)
        return source, header

    def _check_sender(self) -> None:
        """Show the sender rules at the field (a refusal shown later replaces them)."""
        source, header = self.sender_notes()
        show_sender_notes(self.sender_error, source)
        set_invalid(self.sender_edit, bool(source.errors))
        if header.text:
            show_sender_notes(self.reply_error, header)
        set_invalid(self.replies.sender_edit, bool(header.errors))

    # ---- values ------------------------------------------------------------------------

    def channel(self) -> Channel:
        button = self.channel_group.checkedButton()
        return Channel(str(button.property("channel"))) if button else Channel.REST_SMS

    def set_channel(self, channel: Channel) -> None:
        self.channel_buttons[channel].setChecked(True)

    def set_region(self, region: str) -> None:
        self.region = region
        self.recipient.set_region(region)
        self._check_sender()

    def values(self) -> SmsForm:
        return SmsForm(
            channel=self.channel(),
            recipient=self.recipient.text(),
            text=self.editor.text(),
            sender=self.sender_edit.text(),
            send_at=self.send_at.gateway_time(),
            hold_until=self.send_at.hold_time(),
            repeat=self.send_at.repeat(),
            reply=self.replies.reply(),
            external_id=self.external_id.text(),
            tags=self.tags.text(),
            wap_app=self.wap_app.text(),
            wap_url=self.wap_url.text(),
            marketing=self.marking.marketing.isChecked(),
            factual=self.marking.factual.isChecked(),
        )

    def has_content(self) -> bool:
        """Whether the operator typed something a reload would lose."""
        return any(
            w.strip()
            for w in (
                self.recipient.text(),
                self.editor.text(),
                self.wap_url.text(),
                self.wap_app.text(),
                self.external_id.text(),
            )
        )

    # ---- drafts ------------------------------------------------------------------------

    def draft(self) -> dict[str, Any]:
        return {
            "version": DRAFT_VERSION,
            "channel": self.channel().value,
            "recipient": self.recipient.text(),
            "text": self.editor.text(),
            "sender": self.sender_edit.text(),
            "external_id": self.external_id.text(),
            "tags": self.tags.text(),
            "wap_app": self.wap_app.text(),
            "wap_url": self.wap_url.text(),
            **self.send_at.draft(),
            **self.replies.draft(),
            **self.marking.draft(),
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Fill the form from a saved draft; unknown or broken values fall back to defaults."""
        self._restoring = True
        try:
            channel = data.get("channel")
            known = {c.value: c for c in Channel}
            self.set_channel(
                known.get(channel, Channel.REST_SMS)
                if isinstance(channel, str)
                else Channel.REST_SMS
            )
            self.recipient.set_text(draft_text(data, "recipient", 200))
            self.editor.set_text(draft_text(data, "text", 200_000))
            self.sender_edit.setText(draft_text(data, "sender", 64))
            self.send_at.restore(data)
            self.replies.restore(data)
            self.external_id.setText(draft_text(data, "external_id", 500))
            self.tags.setText(draft_text(data, "tags", 1000))
            self.wap_app.setText(draft_text(data, "wap_app", 200))
            self.wap_url.setText(draft_text(data, "wap_url", 4000))
            self.marking.restore(data)
        finally:
            self._restoring = False
        self.clear_errors()
        self.apply_channel()

    def clear_sent(self, keep_text: bool) -> None:
        """After a successful send: ready for the next message.

        The per-message fields go (recipient, reference, schedule, and the text unless the
        operator keeps it); the operator's settings stay (channel, From, replies, tags).
        """
        self._restoring = True
        try:
            self.recipient.set_text("")
            self.external_id.clear()
            self.send_at.set_value(None)
            self.marking.factual.setChecked(False)  # the mark was for that message
            if not keep_text:
                self.editor.clear()
                self.wap_app.clear()
                self.wap_url.clear()
        finally:
            self._restoring = False
        self.clear_errors()
        self.changed.emit()

    # ---- errors ------------------------------------------------------------------------

    def show_error(self, wire_field: str | None, message: str) -> bool:
        """Point at the field a refusal names; False when the form has no such field."""
        key = field_key(wire_field)
        if key is None:
            return False
        widget, label = self._errors[key]
        if key == "reply_path":
            widget = self.replies.path_widget()
        if key == "recipient":
            self.recipient.feedback.setText(message)
            set_role(self.recipient.feedback, "error")
        elif label is not None:
            label.setText(message)
            label.show()
        set_invalid(widget, True)
        if not widget.isEnabled():
            return False
        widget.setFocus(Qt.FocusReason.OtherFocusReason)
        return True

    def error_text(self, key: str) -> str:
        """The message shown beside a field (tests and accessibility read it)."""
        if key == "recipient":
            return self.recipient.feedback.text()
        label = self._errors[key][1]
        return label.text() if label is not None and not label.isHidden() else ""

    def clear_errors(self, keys: tuple[str, ...] | None = None) -> None:
        for key in keys or tuple(self._errors):
            widget, label = self._errors[key]
            for target in (
                (self.replies.path_edit, self.replies.sender_edit)
                if key == "reply_path"
                else (widget,)
            ):
                set_invalid(target, False)
            if label is not None:
                label.hide()
                label.clear()
            if key == "recipient":
                self.recipient.update_feedback()
            if key == "text":
                self.editor.refresh()
        if {"sender", "reply_path", "reply_type"} & set(keys or self._errors):
            self._check_sender()

    def _edited(self, keys: tuple[str, ...]) -> None:
        if "marketing" in keys:
            self._count_instruction()
        if self._restoring:
            return
        self.clear_errors(keys)
        self.changed.emit()

    # ---- channel -----------------------------------------------------------------------

    def set_lodge_available(self, available: bool, why: str) -> None:
        """Offer the Lodge channels only when the profile can reach Lodge."""
        for channel, button in self.channel_buttons.items():
            if channel is not Channel.REST_SMS:
                button.setEnabled(available)
                button.setToolTip(CHANNEL_TIPS[channel] if available else why)
        if not available and self.channel() is not Channel.REST_SMS:
            self.set_channel(Channel.REST_SMS)

    def _channel_toggled(self, _button: object, checked: bool) -> None:
        if not checked:
            return
        self.apply_channel()
        self.clear_errors()
        self.channel_changed.emit()
        if not self._restoring:
            self.changed.emit()

    def apply_channel(self) -> None:
        channel = self.channel()
        rest = channel is Channel.REST_SMS
        wap = channel is Channel.WAP_PUSH
        self.message_pages.setCurrentIndex(1 if wap else 0)
        header = self.replies.mode() is ReplyMode.HEADER
        if wap:
            sender_why = WHY_WAP
        elif not rest:
            sender_why = f"{WHY_REST_ONLY} Use the sender name (HEADER) under Replies."
        else:
            sender_why = WHY_HEADER if header else ""
        _enable(self.sender_edit, not sender_why, sender_why, SENDER_TIP)
        _enable(self.send_at, rest, WHY_WAP if wap else WHY_NO_SCHEDULE)
        _enable(self.replies, not wap, WHY_WAP)
        _enable(self.external_id, rest, WHY_WAP if wap else WHY_REST_ONLY)
        _enable(self.tags, rest, WHY_WAP if wap else WHY_REST_ONLY)
        if rest:
            self.replies.limit_types(REPLY_TYPES, "")
        else:
            self.replies.limit_types(LODGE_REPLY_TYPES, WHY_LODGE_TYPES)
        self._check_sender()


def _enable(widget: QWidget, enabled: bool, why: str, tip: str | None = None) -> None:
    """Enable a field, or disable it with a tooltip that says why it does not apply."""
    if widget.property("base_tip") is None:
        widget.setProperty("base_tip", tip if tip is not None else widget.toolTip())
    widget.setEnabled(enabled)
    widget.setToolTip(str(widget.property("base_tip")) if enabled else why)
