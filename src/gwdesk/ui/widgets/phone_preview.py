"""Each recipient's own message as a phone would show it, before anything is sent.

`PhonePreview` draws a phone: the sender at the top (as the recipient's phone names
it), the message in a bubble, and under it what the message is made of (parts,
encoding, characters). `PreviewPanel` steps through every recipient of a send
(previous, next, and straight to the next one that cannot be sent to, whose reason
the phone shows instead of a bubble), and offers "Send a test to me". The Batch tab
shows a personal send's every recipient; the Send tab, its one templated message.

Messages, names and numbers are data: shown as plain text, never markup. The time
under the sender is when the message arrives: now, or the send's scheduled time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.numbers import DEFAULT_REGION, NumberError, display, normalise
from gwdesk.domain.segments import count_segments
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.fitting import fit_on_screen

PHONE_WIDTH: Final = 300
PHONE_HEIGHT: Final = 540
BUBBLE_WIDTH: Final = 212
THREAD_WIDTH: Final = 246
"""What the thread's labels wrap at (the screen less its margins)."""
#: A word longer than this is given break opportunities (a bubble never widens).
LONG_WORD: Final = 22
#: The phone is drawn in a phone's colours, whatever the console's scheme.
PHONE_STYLE: Final = """
QFrame#Phone { background: #1c1c1e; border-radius: 34px; }
QFrame#Screen { background: #ffffff; border-radius: 24px; }
QFrame#Notch { background: #1c1c1e; border-radius: 7px; }
QLabel#Avatar {
    background: #8e8e93; color: #ffffff; border-radius: 19px;
    font-size: 15pt; font-weight: 600;
}
QLabel#Sender { color: #000000; font-weight: 600; }
QLabel#Kind, QLabel#Parts { color: #8e8e93; font-size: 8pt; }
QLabel#Bubble { background: #e9e9eb; color: #000000; border-radius: 16px; }
QLabel#Refusal {
    background: #fdecea; color: #b71c1c; border: 1px solid #f5c2c0; border-radius: 10px;
    font-weight: 600;
}
QScrollArea#Thread, QWidget#ThreadBody { background: #ffffff; border: none; }
"""


def phone_time(moment: datetime, now: datetime) -> str:
    """When a message arrives as a phone lists it, in the operator's zone: `Today 09:41`,
    `Tomorrow 09:00`, `Monday 09:00` within the week, else `3 Mar 09:00` (and the year
    when it is another)."""
    local, today = moment.astimezone(), now.astimezone()
    days = (local.date() - today.date()).days
    clock = f"{local:%H:%M}"
    if days == 0:
        return f"Today {clock}"
    if days == 1:
        return f"Tomorrow {clock}"
    if 1 < days < 7:
        return f"{local:%A} {clock}"
    if local.year == today.year:
        return f"{local.day} {local:%b} {clock}"
    return f"{local.day} {local:%b %Y} {clock}"


@dataclass(frozen=True, slots=True)
class PreviewItem:
    """One recipient as the preview shows it: its message, or why it cannot be sent."""

    row: int
    """The row of the file (or place in a group) it came from."""
    number: str
    """International digits, or the entry as written when it is not a usable number."""
    who: str = ""
    text: str | None = None
    """The message as it will be sent; None: the recipient cannot be sent to."""
    parts: int = 0
    encoding: str = ""
    reason: str = ""

    @property
    def invalid(self) -> bool:
        return self.text is None


def breakable(text: str) -> str:
    """`text` with a zero-width space in every long word, so a bubble wraps it (a label
    breaks lines at spaces only)."""
    words = text.split(" ")
    if all(len(w) <= LONG_WORD for w in words):
        return text
    return " ".join(
        "\u200b".join(w[i : i + LONG_WORD] for i in range(0, len(w), LONG_WORD)) for w in words
    )


def parts_text(text: str) -> str:
    """`2 parts · UCS-2 · 134 characters (67 a part)`."""
    info = count_segments(text)
    noun = "part" if info.parts == 1 else "parts"
    chars = "character" if info.characters == 1 else "characters"
    return (
        f"{info.parts} {noun} · {info.encoding} · {info.characters:,} {chars} "
        f"({info.per_part} a part)"
    )


def sender_text(sender: str, region: str = DEFAULT_REGION) -> str:
    """How a phone names the sender: a name as it is, a number in its usual form."""
    cleaned = sender.strip()
    if not cleaned:
        return "Your account's number"
    if any(c.isalpha() for c in cleaned):
        return cleaned
    try:
        return display(normalise(cleaned, region))
    except NumberError:
        return cleaned


class PhonePreview(QFrame):
    """A phone showing one message from one sender."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Phone")
        self.setStyleSheet(PHONE_STYLE)
        self.setFixedSize(PHONE_WIDTH, PHONE_HEIGHT)
        self.setAccessibleName("Phone preview")
        self.message: str | None = None
        """The message shown, exactly as it will be sent (None: a refusal is shown)."""
        screen = QFrame()
        screen.setObjectName("Screen")
        notch = QFrame()
        notch.setObjectName("Notch")
        notch.setFixedSize(96, 14)
        self.avatar = QLabel("?")
        self.avatar.setObjectName("Avatar")
        self.avatar.setFixedSize(38, 38)
        self.avatar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.sender_label = PlainLabel("")
        self.sender_label.setObjectName("Sender")
        self.sender_label.setAccessibleName("Sender on the phone")
        self.sender_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.kind = QLabel("")
        self.kind.setObjectName("Kind")
        self.kind.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bubble = PlainLabel("")
        self.bubble.setObjectName("Bubble")
        self.bubble.setAccessibleName("Message bubble")
        self.bubble.setWordWrap(True)
        self.bubble.setContentsMargins(11, 8, 11, 8)
        self.bubble.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.parts = QLabel("")
        self.parts.setObjectName("Parts")
        self.parts.setAccessibleName("Parts of the message")
        self.parts.setWordWrap(True)
        self.refusal = PlainLabel("")
        self.refusal.setObjectName("Refusal")
        self.refusal.setAccessibleName("Why it cannot be sent")
        self.refusal.setWordWrap(True)
        self.refusal.setContentsMargins(10, 8, 10, 8)
        self.refusal.hide()

        body = QWidget()
        body.setObjectName("ThreadBody")
        thread = QVBoxLayout(body)
        thread.setContentsMargins(10, 8, 10, 8)
        thread.setSpacing(4)
        bubble_row = QHBoxLayout()
        bubble_row.setContentsMargins(0, 0, 0, 0)
        bubble_row.addWidget(self.bubble)
        bubble_row.addStretch(1)
        thread.addLayout(bubble_row)
        thread.addWidget(self.parts)
        thread.addWidget(self.refusal)
        thread.addStretch(1)
        self.thread_area = QScrollArea()
        self.thread_area.setObjectName("Thread")
        self.thread_area.setWidget(body)
        self.thread_area.setWidgetResizable(True)
        self.thread_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.thread_area.setFrameShape(QFrame.Shape.NoFrame)

        head = QVBoxLayout()
        head.setSpacing(2)
        head.addWidget(notch, 0, Qt.AlignmentFlag.AlignHCenter)
        head.addSpacing(8)
        head.addWidget(self.avatar, 0, Qt.AlignmentFlag.AlignHCenter)
        head.addWidget(self.sender_label)
        head.addWidget(self.kind)
        rule = QFrame()
        rule.setFrameShape(QFrame.Shape.HLine)
        rule.setStyleSheet("color: #d1d1d6;")
        inner = QVBoxLayout(screen)
        inner.setContentsMargins(6, 8, 6, 14)
        inner.addLayout(head)
        inner.addWidget(rule)
        inner.addWidget(self.thread_area, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(11, 11, 11, 11)
        outer.addWidget(screen)

    def set_sender(self, sender: str, region: str = DEFAULT_REGION) -> None:
        shown = sender_text(sender, region)
        self.sender_label.setText(shown)
        initial = next((c for c in shown if c.isalnum()), "?")
        self.avatar.setText("#" if initial.isdigit() else initial.upper())

    def set_time(self, scheduled: datetime | None, now: datetime | None = None) -> None:
        """The arrival time shown: `scheduled`, or `now` for a message sent at once."""
        now = now or datetime.now().astimezone()
        self.kind.setText(f"Text Message · {phone_time(scheduled or now, now)}")
        self.kind.setToolTip(
            f"Scheduled for {scheduled.astimezone():%A %-d %B %Y %H:%M %Z}".rstrip()
            if scheduled is not None
            else "Sent at once"
        )

    def show_message(self, text: str) -> None:
        self.message = text
        self.bubble.setText(breakable(text))
        self.parts.setText(parts_text(text))
        widest = max(
            (self.bubble.fontMetrics().horizontalAdvance(line) for line in text.splitlines()),
            default=0,
        )
        margins = self.bubble.contentsMargins()
        _fit(self.bubble, min(BUBBLE_WIDTH, widest + margins.left() + margins.right() + 2))
        _fit(self.parts, THREAD_WIDTH)
        self.bubble.show()
        self.parts.show()
        self.refusal.hide()

    def show_refusal(self, reason: str) -> None:
        self.message = None
        self.refusal.setText(f"Not sent to this recipient: {reason}")
        _fit(self.refusal, THREAD_WIDTH)
        self.refusal.show()
        self.bubble.hide()
        self.parts.hide()


def _fit(label: QLabel, width: int) -> None:
    """A wrapped label sized to its text at `width` (a layout alone leaves it a line
    short: it asks a wrapped label's height before it knows the width)."""
    label.setFixedWidth(width)
    label.setFixedHeight(label.heightForWidth(width))


class PreviewPanel(QWidget):
    """The phone, and the way through every recipient."""

    test_requested = Signal()

    def __init__(self, theme: Theme, parent: QWidget | None = None, *, test: bool = True) -> None:
        super().__init__(parent)
        self.items: list[PreviewItem] = []
        self.index = -1
        self.position = QLabel("")
        self.position.setAccessibleName("Recipient shown")
        self.position.setProperty("role", "hint")
        self.recipient = PlainLabel("")
        self.recipient.setAccessibleName("Recipient")
        self.recipient.setStyleSheet("font-weight: 600;")
        self.recipient.setWordWrap(True)
        self.phone = PhonePreview()
        self.previous_button = QPushButton("◀ Previous")
        self.previous_button.setAccessibleName("Previous recipient")
        self.next_button = QPushButton("Next ▶")
        self.next_button.setAccessibleName("Next recipient")
        self.invalid_button = QPushButton("Next that cannot be sent")
        self.invalid_button.setAccessibleName("Next invalid recipient")
        self.invalid_button.setToolTip("Jump to the next recipient whose message cannot be made")
        self.test_button = QPushButton(theme.icon("send"), "Send a test to me")
        self.test_button.setAccessibleName("Send a test to me")
        self.test_button.setToolTip(
            "Send the first recipient's message to your own number (Opt-outs tab ▸ Rules)"
        )
        self.test_button.setVisible(test)
        self.invalid_note = QLabel("")
        self.invalid_note.setProperty("role", "hint")
        self.invalid_note.setWordWrap(True)

        steps = QHBoxLayout()
        steps.addWidget(self.previous_button)
        steps.addWidget(self.next_button)
        steps.addStretch(1)
        steps.addWidget(self.invalid_button)
        phone_row = QHBoxLayout()
        phone_row.addStretch(1)
        phone_row.addWidget(self.phone)
        phone_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.position)
        layout.addWidget(self.recipient)
        layout.addLayout(phone_row, 1)
        layout.addWidget(self.invalid_note)
        layout.addLayout(steps)
        layout.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignRight)
        self.previous_button.clicked.connect(self.previous)
        self.next_button.clicked.connect(self.next)
        self.invalid_button.clicked.connect(self.next_invalid)
        self.test_button.clicked.connect(self.test_requested.emit)
        for keys, step in (("Left", self.previous), ("Right", self.next)):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(step)

    def set_items(
        self,
        items: Sequence[PreviewItem],
        sender: str,
        region: str = DEFAULT_REGION,
        scheduled: datetime | None = None,
    ) -> None:
        """The recipients in order (the first is shown); `sender` as typed, a national
        number read in `region`; `scheduled`, the send's time (None: at once)."""
        self.items = list(items)
        self.phone.set_sender(sender, region)
        self.phone.set_time(scheduled)
        invalid = sum(1 for i in self.items if i.invalid)
        self.invalid_note.setText(
            f"{invalid:,} of {len(self.items):,} cannot be sent to: they are listed with why."
            if invalid
            else ""
        )
        self.invalid_note.setVisible(bool(invalid))
        self.invalid_button.setEnabled(bool(invalid))
        self.show_at(0)

    def current(self) -> PreviewItem | None:
        return self.items[self.index] if 0 <= self.index < len(self.items) else None

    def show_at(self, index: int) -> None:
        count = len(self.items)
        if not count:
            self.index = -1
            self.position.setText("No recipient to preview.")
            self.recipient.setText("")
            self.phone.show_refusal("there is no recipient yet")
            self._buttons()
            return
        self.index = max(0, min(index, count - 1))
        item = self.items[self.index]
        self.position.setText(f"Recipient {self.index + 1:,} of {count:,} · row {item.row:,}")
        number = display(item.number) if item.number.isdigit() else item.number
        self.recipient.setText(f"{item.who} · {number}" if item.who else number)
        if item.text is None:
            self.phone.show_refusal(item.reason)
        else:
            self.phone.show_message(item.text)
        self._buttons()

    def _buttons(self) -> None:
        self.previous_button.setEnabled(self.index > 0)
        self.next_button.setEnabled(0 <= self.index < len(self.items) - 1)

    def previous(self) -> None:
        if self.index > 0:
            self.show_at(self.index - 1)

    def next(self) -> None:
        if self.index < len(self.items) - 1:
            self.show_at(self.index + 1)

    def next_invalid(self) -> None:
        """The next recipient that cannot be sent to (from the top again after the last)."""
        count = len(self.items)
        for step in range(1, count + 1):
            at = (self.index + step) % count
            if self.items[at].invalid:
                self.show_at(at)
                return


class PreviewDialog(QDialog):
    """The panel in a window of its own, beside the tab it previews."""

    def __init__(self, theme: Theme, parent: QWidget | None = None, *, test: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preview")
        self.panel = PreviewPanel(theme, self, test=test)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.panel, 1)
        layout.addWidget(close)
        fit_on_screen(self, QSize(460, 760))
