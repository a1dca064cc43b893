"""Asking an operator for a number and a reason: opting a number out, or back in, by hand.

The dialog asks; whether what was typed will do is the flow's to say
(`gwdesk.app.optout_editing.check_change`): a refusal is shown at its field and the
dialog stays open with everything typed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.optout_editing import MAX_REASON, ChangeRefused, CheckedChange
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.field_errors import text_field
from gwdesk.ui.widgets.validity import set_role

OPT_OUT_TEXT = (
    "The number will be left out of every send from this account (a batch leaves it out "
    "and says so). Say why, e.g. 'asked by phone on 3 March'."
)
OPT_IN_TEXT = (
    "Only the customer's own START resubscribes without a reason. Say why they may be "
    "texted again, e.g. 'signed the consent form on 3 March'."
)


Check = Callable[[str, str], CheckedChange]
"""(number, reason) as typed → the change, or `ChangeRefused`."""


class ChangeDialog(QDialog):
    """A number and a reason; `change` (and `number`, international) once accepted."""

    def __init__(
        self, opt_out: bool, check: Check, number: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.opt_out = opt_out
        self._check = check
        self.change: CheckedChange | None = None
        self.number = ""
        self.setWindowTitle("Opt a number out" if opt_out else "Opt a number back in")
        self.setMinimumWidth(460)
        self.explain = PlainLabel(OPT_OUT_TEXT if opt_out else OPT_IN_TEXT)
        self.explain.setWordWrap(True)
        self.explain.setProperty("role", "hint")
        self.number_edit = QLineEdit(number)
        self.number_edit.setAccessibleName("Number")
        self.number_edit.setPlaceholderText("0412 345 678 or +61 412 345 678")
        self.reason_edit = text_field(
            "Reason", limit=MAX_REASON, placeholder="Why (kept in the number's history)"
        )
        self.error = PlainLabel("")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        set_role(self.error, "error")
        form = QFormLayout()
        form.addRow("Number", self.number_edit)
        form.addRow("Reason", self.reason_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Opt out" if opt_out else "Opt back in")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        (self.reason_edit if number else self.number_edit).setFocus()

    @property
    def reason(self) -> str:
        return " ".join(self.reason_edit.text().split())

    def accept(self) -> None:
        """Accept only what the flow's checks pass; otherwise say what, at its field."""
        try:
            self.change = self._check(self.number_edit.text(), self.reason_edit.text())
        except ChangeRefused as exc:
            field = self.number_edit if exc.field == "number" else self.reason_edit
            self._refuse(exc.message, field)
            return
        self.number = self.change.number
        super().accept()

    def _refuse(self, text: str, field: QLineEdit) -> None:
        self.error.setText(text)
        self.error.setVisible(True)
        field.setFocus()
