"""The Batch tab's message and options: text with its live counter, From, SendAt, replies, tags.

The ExternalSystemId is not asked for: the service gives each request of 100 its
own (shown per request in the results), which is what lets a lost answer be
settled without sending twice. Errors the gateway names by wire field (`Message`,
`Source`, `SendAt`, `ReplyType`, `ReplyPath`, `Tags`) are shown at that field, and
the sender is read by ACMA's rules as it is typed. "Marketing" counts the profile's
opt-out instruction in the parts; "Purely factual" keeps opted-out numbers in.
"""

from __future__ import annotations

import re
from typing import Any, Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.pacing import Pace
from gwdesk.app.sender_rules import SenderNotes, sender_notes
from gwdesk.app.sms import Channel, Compliance, SmsForm, with_instruction
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.profile import Profile
from gwdesk.domain.templates import Template, TemplateError
from gwdesk.ui.widgets.compliance import MarkingChoice, show_sender_notes
from gwdesk.ui.widgets.drafts import draft_text
from gwdesk.ui.widgets.field_errors import error_label, stacked, text_field
from gwdesk.ui.widgets.message_editor import MessageEditor
from gwdesk.ui.widgets.reply_options import ReplyMode, ReplyOptions
from gwdesk.ui.widgets.send_at import SendAtPicker
from gwdesk.ui.widgets.validity import set_invalid

PACES: Final = (
    ("all at once", None),
    ("300 an hour", 300),
    ("600 an hour", 600),
    ("1,200 an hour", 1200),
    ("3,000 an hour", 3000),
    ("6,000 an hour", 6000),
)
"""The paces a list may be spread at (shown, recipients an hour)."""

DRAFT_VERSION: Final = 1
SENDER_TIP: Final = (
    "Source: what recipients see as the sender, a number or a name of up to 11 letters, "
    "digits, spaces, '.', '_' or '-'. Empty: the account's default number."
)
WHY_HEADER: Final = "The sender name chosen under Replies (HEADER) replaces From."
FIELDS: Final = {
    "message": "text",
    "source": "sender",
    "from": "sender",
    "sendat": "send_at",
    "replytype": "reply",
    "replypath": "reply",
    "tags": "tags",
    "marketing": "marketing",
}


class BatchCompose(QGroupBox):
    changed = Signal()
    submit_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Message", parent)
        self.region = DEFAULT_REGION
        self.editor = MessageEditor(accessible_name="Batch message", templates=True)
        self.editor.edit.setPlaceholderText(
            "The text every recipient gets; {first name} or any column's header gives each "
            "their own. Ctrl+Enter sends the batch."
        )
        # Batch texts are short: five lines show, longer ones scroll; the results get the room.
        self.editor.edit.setMinimumHeight(70)
        self.editor.edit.setMaximumHeight(110)
        self.text_error = error_label("Message error")
        self.sender_edit = text_field(
            "From", limit=64, placeholder="Optional: number or name", tip=SENDER_TIP
        )
        self.tags = text_field(
            "Tags",
            limit=1000,
            placeholder="Optional: comma,separated",
            tip="Tags: comma-separated labels the gateway stores with each message",
        )
        self.sender_error = error_label("From error")
        self.tags_error = error_label("Tags error")
        self.send_at = SendAtPicker()  # the zone line under the time: beside it, it wraps
        self.send_at_error = error_label("Send at error")
        self.pace_box = QComboBox()
        self.pace_box.setAccessibleName("Spread the list")
        for shown, per_hour in PACES:
            self.pace_box.addItem(shown, per_hour)
        self.pace_box.setToolTip(
            "Send the list a little at a time, so the replies it brings can be answered; the "
            "parts wait in the Scheduled tab, paused outside the sending hours."
        )
        self.replies = ReplyOptions()
        self.reply_error = error_label("Replies error")
        self.marking = MarkingChoice()
        self.marking_error = error_label("Marketing error")

        # The text on top, the options below at full width: From and Tags get room for
        # real values and the SendAt zone line fits on one line.
        line = QWidget()
        line_row = QHBoxLayout(line)
        line_row.setContentsMargins(0, 0, 0, 0)
        line_row.addWidget(stacked(self.sender_edit, self.sender_error), 1)
        tags_label = QLabel("Ta&gs")
        tags_label.setBuddy(self.tags)
        line_row.addSpacing(8)
        line_row.addWidget(tags_label, 0, Qt.AlignmentFlag.AlignTop)
        line_row.addWidget(stacked(self.tags, self.tags_error), 1)
        tags_label.setMinimumHeight(self.tags.sizeHint().height())
        options = QFormLayout()
        options.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        options.setContentsMargins(0, 0, 0, 0)
        options.setVerticalSpacing(6)
        sender_label = QLabel("F&rom")
        sender_label.setBuddy(self.sender_edit)
        send_at_label = QLabel("Send &at")
        send_at_label.setBuddy(self.send_at.enabled_box)
        replies_label = QLabel("Re&plies")
        replies_label.setBuddy(self.replies.one_way)
        options.addRow(sender_label, line)
        options.addRow(send_at_label, stacked(self.send_at, self.send_at_error))
        pace_label = QLabel("Sprea&d")
        pace_label.setBuddy(self.pace_box)
        pace_row = QHBoxLayout()
        pace_row.setContentsMargins(0, 0, 0, 0)
        pace_row.addWidget(self.pace_box)
        pace_row.addStretch(1)
        options.addRow(pace_label, pace_row)
        options.addRow(replies_label, stacked(self.replies, self.reply_error))
        # The template picker (added by the tab, which has the store) sits above the text.
        self.tools = QHBoxLayout()
        self.tools.setContentsMargins(0, 0, 0, 0)
        self.tools.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(self.tools)
        layout.addWidget(stacked(self.editor, self.text_error), 1)
        layout.addWidget(stacked(self.marking, self.marking_error))
        layout.addLayout(options)

        self._errors: dict[str, tuple[QWidget, QLabel]] = {
            "text": (self.editor.edit, self.text_error),
            "sender": (self.sender_edit, self.sender_error),
            "tags": (self.tags, self.tags_error),
            "send_at": (self.send_at.edit, self.send_at_error),
            "reply": (self.replies.path_edit, self.reply_error),
            "marketing": (self.marking.marketing, self.marking_error),
        }
        for signal, key in (
            (self.editor.changed, "text"),
            (self.sender_edit.textChanged, "sender"),
            (self.tags.textChanged, "tags"),
            (self.send_at.changed, "send_at"),
            (self.replies.changed, "reply"),
            (self.marking.changed, "marketing"),
        ):
            signal.connect(lambda *_a, k=key: self._edited(k))
        self.replies.group.buttonToggled.connect(lambda *_a: self._header_sender())
        self.editor.submit_requested.connect(self.submit_requested.emit)

    # ---- values ----------------------------------------------------------------------------

    def form(self) -> SmsForm:
        """The message and options as typed (checked by `gwdesk.app.sms.check_message`);
        a batch has no single recipient: each request carries its own."""
        return SmsForm(
            channel=Channel.REST_SMS,
            text=self.editor.text(),
            sender=self.sender_edit.text(),
            send_at=self.send_at.gateway_time(),
            hold_until=self.send_at.hold_time(),
            repeat=self.send_at.repeat(),
            reply=self.replies.reply(),
            tags=self.tags.text(),
            marketing=self.marking.marketing.isChecked(),
            factual=self.marking.factual.isChecked(),
        )

    def personal_template(self) -> Template | None:
        """The message as a template with placeholders (None: the same text for all)."""
        template = self.editor.template()
        return template if isinstance(template, Template) and template.personal else None

    def same_text(self) -> str:
        """A message that is the same for all, as sent (`{{` written as one brace)."""
        template = self.editor.template()
        return template.render({}) if isinstance(template, Template) else self.editor.text()

    def add_tools(self, note: QWidget, picker: QWidget) -> None:
        """A line for what the templates did (it takes the room) and their picker,
        above the text."""
        self.tools.insertWidget(0, note, 1)
        self.tools.addWidget(picker)

    def template_problem(self) -> TemplateError | None:
        """Why the text cannot be read as a template (None: it can, or has no brace)."""
        template = self.editor.template()
        return template if isinstance(template, TemplateError) else None

    def set_text(self, text: str) -> None:
        self.editor.set_text(text)

    def text(self) -> str:
        """The text as typed."""
        return self.editor.text()

    def has_text(self) -> bool:
        return bool(self.editor.text())

    def parts_each(self) -> int:
        """The parts the text needs as typed (a marketing instruction counted)."""
        return self.editor.info().parts

    def marked(self) -> tuple[bool, bool]:
        """(Marketing, Purely factual) as ticked."""
        return self.marking.marked()

    def previewed_text(self) -> str:
        """The same-for-all message as a phone shows it (a marketing one ends with the
        profile's instruction)."""
        text = self.same_text()
        if self.marked()[0] and text.strip():
            return with_instruction(text, self.marking.compliance.instruction)
        return text

    def set_profile(self, profile: Profile | None, compliance: Compliance | None) -> None:
        """The profile's gateway zone (beside Send at), region (for From) and marketing
        rules (Marketing ticked as it says)."""
        zone = (profile.zone, profile.timezone) if profile is not None else (None, "")
        self.send_at.set_gateway_zone(*zone)
        self.set_region(profile.region if profile is not None else DEFAULT_REGION)
        if compliance is not None:
            self.set_compliance(compliance)

    def sender_shown(self) -> str:
        """What a recipient's phone names as the sender: From, or the HEADER name."""
        reply = self.replies.reply()
        if reply is not None and reply[0] == "HEADER":
            return reply[1]
        return self.sender_edit.text()

    @property
    def compliance(self) -> Compliance:
        """The profile's marketing rules."""
        return self.marking.compliance

    def set_compliance(self, compliance: Compliance, *, default: bool = True) -> None:
        """The profile's marketing rules; `default`: tick Marketing as the profile says."""
        self.marking.set_compliance(compliance, default=default)
        self._count_instruction()

    def set_region(self, region: str) -> None:
        self.region = region
        self._check_sender()

    def _count_instruction(self) -> None:
        self.editor.set_appended(self.marking.instruction())

    def sender_notes(self) -> SenderNotes:
        """ACMA's rules on the sender: From, or the HEADER name under Replies."""
        mode, marketing = self.replies.mode(), self.marking.marketing.isChecked()
        if mode is ReplyMode.HEADER:
            return sender_notes(self.replies.sender_edit.text(), self.region, marketing=marketing)
        two_way = mode is ReplyMode.TWO_WAY
        return sender_notes(
            self.sender_edit.text(), self.region, marketing=marketing, two_way=two_way
        )

    def _check_sender(self) -> None:
        """Show the sender rules at the field (a refusal shown later replaces them)."""
        notes = self.sender_notes()
        header = self.replies.mode() is ReplyMode.HEADER
        label, edit = (
            (self.reply_error, self.replies.sender_edit)
            if header
            else (self.sender_error, self.sender_edit)
        )
        show_sender_notes(label, notes)
        set_invalid(edit, bool(notes.errors))
        if header:
            self.sender_error.hide()
            set_invalid(self.sender_edit, False)

    def _header_sender(self) -> None:
        header = self.replies.mode() is ReplyMode.HEADER
        self.sender_edit.setEnabled(not header)
        self.sender_edit.setToolTip(WHY_HEADER if header else SENDER_TIP)

    # ---- errors ----------------------------------------------------------------------------

    def show_error(self, wire_field: str | None, message: str) -> bool:
        """Point at the field the gateway named; False when it is not one of these."""
        base = re.sub(r"\[\d+\]$", "", (wire_field or "").strip()).replace("_", "").lower()
        key = FIELDS.get(base)
        if key is None:
            return False
        widget, label = self._errors[key]
        if key == "reply":
            widget = self.replies.path_widget() if base == "replypath" else self.replies.type_combo
        label.setText(message)
        label.show()
        set_invalid(widget, True)
        widget.setFocus(Qt.FocusReason.OtherFocusReason)
        return True

    def error_text(self, key: str) -> str:
        label = self._errors[key][1]
        return "" if label.isHidden() else label.text()

    def clear_errors(self) -> None:
        for key in self._errors:
            self._clear(key)
        self._check_sender()

    def _clear(self, key: str) -> None:
        widget, label = self._errors[key]
        label.hide()
        set_invalid(widget, False)
        if key == "reply":
            set_invalid(self.replies.sender_edit, False)
            set_invalid(self.replies.type_combo, False)
        if key == "text":
            self.editor.set_invalid(self.editor.info().too_long)

    def _edited(self, key: str) -> None:
        self._clear(key)
        if key == "marketing":
            self._count_instruction()  # before the totals are asked for the parts
        if key in ("sender", "reply", "marketing"):
            self._check_sender()
        self.changed.emit()

    def pace(self) -> Pace | None:
        """How fast the list goes (None: all at once)."""
        per_hour = self.pace_box.currentData()
        return Pace(per_hour) if isinstance(per_hour, int) else None

    # ---- drafts ----------------------------------------------------------------------------

    def draft(self) -> dict[str, Any]:
        return {
            "version": DRAFT_VERSION,
            "text": self.editor.text(),
            "sender": self.sender_edit.text(),
            "tags": self.tags.text(),
            **self.send_at.draft(),
            "pace": self.pace_box.currentData(),
            **self.replies.draft(),
            **self.marking.draft(),
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Fill the form from a saved draft; anything broken falls back to the default."""
        self.editor.set_text(draft_text(data, "text", 20_000))
        self.sender_edit.setText(draft_text(data, "sender", 64))
        self.tags.setText(draft_text(data, "tags", 1000))
        self.send_at.restore(data)
        pace = data.get("pace")
        self.pace_box.setCurrentIndex(max(self.pace_box.findData(pace), 0) if pace else 0)
        self.replies.restore(data)
        self.marking.restore(data)
        self.clear_errors()
