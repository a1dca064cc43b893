"""What the console asks before a scheduled send goes early or is given up.

Sending one now and cancelling one cannot be undone, so each is asked first, with the
send named (when, to how many, its text), and the safe answer the default: a send the
operator did not confirm never goes. The question about sends missed while gwdesk was
closed offers Send now or Review, Review being the default (and Escape).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from gwdesk.app.scheduled import ScheduledSend
from gwdesk.app.scheduled_view import MISSED_CHOICES
from gwdesk.ui.formatting import sentence_time
from gwdesk.ui.plain_text import plain_box
from gwdesk.ui.widgets.question import question_box

QUOTED = 300
"""Characters of the text a question quotes (the rest as "…")."""


def described(held: ScheduledSend) -> str:
    """The send as a question names it: its time, how many, and its text."""
    count = len(held.recipients)
    when = f"due {sentence_time(held.due)}" if held.due else "its time unreadable"
    text = held.text if len(held.text) <= QUOTED else held.text[:QUOTED] + "…"
    return f"Scheduled send, {when}, to {count:,} recipient{'' if count == 1 else 's'}:\n\n{text}"


def send_now_box(parent: QWidget, held: ScheduledSend) -> tuple[QMessageBox, QPushButton]:
    count = len(held.recipients)
    box, yes = question_box(
        parent,
        "Send it now?",
        f"Send this scheduled send now, instead of at its time?\n\n{described(held)}",
        f"Send now to {count:,}",
    )
    return box, yes


def cancel_box(parent: QWidget, held: ScheduledSend) -> tuple[QMessageBox, QPushButton]:
    box, yes = question_box(
        parent,
        "Cancel the send?",
        f"Cancel this scheduled send? None of it will be sent.\n\n{described(held)}",
        "Cancel the send",
    )
    keep = box.button(QMessageBox.StandardButton.Cancel)
    keep.setText("Keep it")
    return box, yes


def missed_box(parent: QWidget, question: str) -> tuple[QMessageBox, QPushButton, QPushButton]:
    """(box, Send now, Review): Review is the default and what Escape answers."""
    box = QMessageBox(QMessageBox.Icon.Question, "Scheduled sends missed", question, parent=parent)
    send = box.addButton("Send them now", QMessageBox.ButtonRole.AcceptRole)
    review = box.addButton("Review them", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(review)
    box.setEscapeButton(review)
    box.setInformativeText(MISSED_CHOICES)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    plain_box(box)
    return box, send, review
