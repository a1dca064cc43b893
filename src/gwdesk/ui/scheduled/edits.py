"""The three changes of a held send: its text, its time, its recipients.

Each reuses the widget the console composes that value with (the message editor and
its live count, the send-time picker and its zones, numbers one a line as the Batch
tab takes them pasted) and hands what was typed to the core (`ScheduledSends`), which
checks it as a new send would be checked.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gwdesk.app.scheduled import ScheduledSend, ScheduledSends
from gwdesk.app.scheduled_view import RECIPIENTS, checked_numbers
from gwdesk.domain.numbers import display
from gwdesk.ui.scheduled.edit_dialog import EditDialog, mark
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.widgets.message_editor import MessageEditor
from gwdesk.ui.widgets.send_at import SendAtPicker, next_slot

MESSAGE_FIELDS = ("Message", "PhoneMessage")
TEXT_EXPLAIN = (
    "The new text goes to every recipient of this send at its time. It is checked as a "
    "new message is (length, parts, the opt-out instruction of a marketing message)."
)
TIME_EXPLAIN = (
    "Pick the time on your clock; the line under it shows the same moment in the "
    "gateway's zone. A send can be moved up to a year ahead."
)
RECIPIENTS_EXPLAIN = (
    "One number a line (or separated by commas or semicolons). Numbers that opted out "
    "are left out, and looked up again when the send goes."
)


class TextDialog(EditDialog):
    """Edit text…: the message editor, its count of parts as it is typed."""

    def __init__(
        self,
        scheduled: ScheduledSends,
        held: ScheduledSend,
        tasks: TaskRunner,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Edit the scheduled text", TEXT_EXPLAIN, tasks, parent)
        self.scheduled, self.held = scheduled, held
        self.editor = MessageEditor()
        self.editor.edit.setPlaceholderText("Type the message. Ctrl+Enter saves.")
        self.editor.set_text(held.text)
        self.editor.submit_requested.connect(self.accept)
        self.add_field("Message", self.editor, MESSAGE_FIELDS, self.editor.set_invalid)
        self.editor.setFocus()

    def sizeHint(self) -> QSize:
        return QSize(560, 420)

    async def change(self) -> ScheduledSend:
        return await self.scheduled.rewrite_text(self.held.batch_id, self.editor.text())


class TimeDialog(EditDialog):
    """Change time…: the send-time picker, the gateway's zone beside it."""

    def __init__(
        self,
        scheduled: ScheduledSends,
        held: ScheduledSend,
        tasks: TaskRunner,
        zone: tuple[tzinfo | None, str] = (None, ""),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Change the scheduled time", TIME_EXPLAIN, tasks, parent)
        self.scheduled, self.held = scheduled, held
        self.picker = SendAtPicker()
        self.picker.enabled_box.hide()  # always scheduled: it is the time of a held send
        self.picker.set_gateway_zone(*zone)
        self.picker.set_value(held.due or next_slot(datetime.now(UTC)))
        self.add_field("Send at", self.picker, ("SendAt",), self.picker.set_invalid)
        self.picker.edit.setFocus()

    async def change(self) -> ScheduledSend:
        return await self.scheduled.retime(self.held.batch_id, self.picker.moment())


class RecipientsDialog(EditDialog):
    """Change recipients…: the numbers one a line, checked as the Batch tab checks a paste."""

    def __init__(
        self,
        scheduled: ScheduledSends,
        held: ScheduledSend,
        tasks: TaskRunner,
        region: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Change the recipients", RECIPIENTS_EXPLAIN, tasks, parent)
        self.scheduled, self.held, self.region = scheduled, held, region
        self.numbers = QPlainTextEdit()
        self.numbers.setAccessibleName("Recipients")
        self.numbers.setTabChangesFocus(True)
        self.numbers.setPlaceholderText("0412 345 678\n+61 412 345 679")
        self.numbers.setPlainText("\n".join(display(n) for n in held.recipients))
        self.add_field("Recipients", self.numbers, (RECIPIENTS,), mark(self.numbers))
        self.numbers.setFocus()

    def sizeHint(self) -> QSize:
        return QSize(480, 420)

    async def change(self) -> ScheduledSend:
        text, region = self.numbers.toPlainText(), self.region
        numbers = await off_thread(lambda: checked_numbers(text, region))
        return await self.scheduled.rewrite_recipients(self.held.batch_id, numbers)
