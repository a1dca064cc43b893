"""What the Spam Act asks of a message, as the compose forms offer it.

`MarkingChoice` is the pair of boxes the Send and Batch tabs share: "Marketing" (the
message ends with the profile's opt-out instruction and needs a sender that can be
replied to) and "Purely factual" (no marketing: it may go to a number that opted
out, and the mark is recorded). A message is one or the other or neither, never
both, so ticking one unticks the other. `show_sender_notes` puts ACMA's sender rules
(`gwdesk.app.sender_rules`) under a sender field as it is typed.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget

from gwdesk.app.sender_rules import SenderNotes
from gwdesk.app.sms import Compliance
from gwdesk.ui.widgets.drafts import Draft
from gwdesk.ui.widgets.validity import set_role

MARKETING_TIP: Final = (
    "A commercial message (an offer, a promotion). It ends with the profile's opt-out "
    "instruction (counted in its parts), and it must come from a sender the customer can "
    "reply STOP to: a number, or the account's own. The default is the profile's "
    "(Opt-outs tab ▸ Rules)."
)
FACTUAL_TIP: Final = (
    "Purely factual, no marketing at all (an appointment reminder, a delivery notice): the "
    "Spam Act exempts it, so it may go to a number that opted out. The mark is recorded "
    "in the send history; untick it for anything that promotes."
)


class MarkingChoice(QWidget):
    """Marketing / purely factual: at most one of the two, by the profile's rules."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.compliance = Compliance()
        """The profile's marketing rules (`set_compliance`)."""
        self.marketing = QCheckBox("&Marketing")
        self.marketing.setAccessibleName("Marketing")
        self.marketing.setToolTip(MARKETING_TIP)
        self.factual = QCheckBox("Purely factual (&no marketing)")
        self.factual.setAccessibleName("Purely factual (no marketing)")
        self.factual.setToolTip(FACTUAL_TIP)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.marketing)
        layout.addSpacing(12)
        layout.addWidget(self.factual)
        layout.addStretch(1)
        self.marketing.toggled.connect(lambda on: self._toggled(self.factual, on))
        self.factual.toggled.connect(lambda on: self._toggled(self.marketing, on))

    def _toggled(self, other: QCheckBox, on: bool) -> None:
        if on and other.isChecked():
            other.setChecked(False)  # emits changed for its own change too
        self.changed.emit()

    def marked(self) -> tuple[bool, bool]:
        """(marketing, factual)."""
        return (self.marketing.isChecked(), self.factual.isChecked())

    def set_marked(self, marketing: bool, factual: bool = False) -> None:
        self.factual.setChecked(False)
        self.marketing.setChecked(marketing)
        self.factual.setChecked(factual and not marketing)

    def set_compliance(self, compliance: Compliance, *, default: bool = True) -> None:
        """The profile's marketing rules; `default`: tick Marketing as the profile says
        (a new message), else keep the operator's choice (the rules were edited)."""
        self.compliance = compliance
        if default:
            self.set_marked(compliance.marketing_default)

    def instruction(self) -> str:
        """What the message ends with as marked: the profile's opt-out instruction for
        a marketing message, else nothing."""
        return self.compliance.instruction if self.marketing.isChecked() else ""

    def draft(self) -> dict[str, bool]:
        return {"marketing": self.marketing.isChecked()}

    def restore(self, data: Draft) -> None:
        """Marketing as the draft kept it (else the profile's default). Purely factual
        is never restored: it lets a message reach opted-out numbers, so it is ticked
        for the message at hand, not carried over."""
        marketing = data.get("marketing")
        self.set_marked(
            marketing if isinstance(marketing, bool) else self.compliance.marketing_default
        )


def show_sender_notes(label: QLabel, notes: SenderNotes) -> None:
    """The rules a sender breaks (errors) or may fall foul of (warnings), under its field;
    hidden when there is nothing to say."""
    label.setText(notes.text)
    set_role(label, "error" if notes.errors else "warning")
    label.setVisible(bool(notes.text))
