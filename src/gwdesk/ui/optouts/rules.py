"""The Opt-outs tab's Rules: the profile's opt-out keywords and marketing rules, edited.

What the operator types goes to the tab as typed (`save_requested`), which has the
flow check it (`gwdesk.app.optout_editing`: a refusal is shown here at its field,
nothing is saved), saves what passes and has the session apply it, so the next reply is read by the new keywords and the next send gets the
new marketing rules. The operator's own number sits here too, beside the other
rules a send follows and kept in the same place (the profile's store): "Send a test
to me" in the Batch tab texts it; and the repeat window: how far back a list send of
the same text to most of the list is named in the send's question.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from gwdesk.app.optout_editing import Rules, TypedRules
from gwdesk.domain.numbers import display
from gwdesk.domain.optout_words import MAX_KEYWORD_LENGTH, MAX_KEYWORDS
from gwdesk.domain.settings import REPEAT_WINDOW_HOURS
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.field_errors import error_label, stacked, text_field
from gwdesk.ui.widgets.validity import set_invalid, set_role

KEYWORDS_TIP: Final = (
    "Separated by commas. A reply opts out when it starts with one of these words, in any "
    'case, punctuation aside ("Stop!", "stop please"); one that only mentions a keyword '
    "later is flagged in the Replies tab and changes nothing."
)
OPT_IN_TIP: Final = (
    "Separated by commas. A reply starting with one of these opts the number back in: only "
    "the customer can resubscribe without a reason."
)
INSTRUCTION_TIP: Final = (
    "What every marketing message ends with, on its own line, counted in its parts."
)
OWN_NUMBER_TIP: Final = (
    "Your own mobile: the Batch tab's \"Send a test to me\" sends the first recipient's "
    "message here, so you see it on a real phone before the list gets it. Empty: none."
)
MARKETING_TIP: Final = (
    "Whether a new message in the Send and Batch tabs starts ticked as Marketing."
)
REPEAT_TIP: Final = (
    "A list send always asks first. When the same text went to most of the list within "
    'this many hours, the question says so ("sent 2 hours ago to 198 of these 200").'
)
LINE_LIMIT: Final = MAX_KEYWORDS * (MAX_KEYWORD_LENGTH + 2)
HOW_IT_WORKS: Final = (
    "A reply that starts with an opt-out keyword puts its number on this list at once, "
    "whichever way it arrives; every send from this account then leaves the number out "
    "unless the message is marked purely factual. Marketing messages end with the "
    "instruction and must come from a number the customer can reply to."
)


class KeywordsEdit(QPlainTextEdit):
    """Keywords, separated by commas: three lines show, so the default list fits whole."""

    def __init__(self, accessible_name: str, tip: str) -> None:
        super().__init__()
        self.setAccessibleName(accessible_name)
        self.setToolTip(tip)
        self.setTabChangesFocus(True)
        margin = self.document().documentMargin()
        lines = self.fontMetrics().lineSpacing() * 3
        self.setFixedHeight(round(lines + 2 * margin) + 2 * self.frameWidth() + 2)

    def sizeHint(self) -> QSize:
        return QSize(280, self.height())

    def text(self) -> str:
        return self.toPlainText()[:LINE_LIMIT]

    def setText(self, text: str) -> None:
        self.setPlainText(text)


class RulesBox(QGroupBox):
    """The rules, a Save button, and where each refusal is shown."""

    save_requested = Signal(object)
    """The rules as typed (`TypedRules`), to be checked and saved."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Rules", parent)
        self.opt_out_edit = KeywordsEdit("Opt-out keywords", KEYWORDS_TIP)
        self.opt_in_edit = KeywordsEdit("Opt-in keywords", OPT_IN_TIP)
        self.instruction_edit = text_field("Opt-out instruction", limit=100, tip=INSTRUCTION_TIP)
        self.own_edit = text_field(
            "Your number",
            limit=40,
            placeholder="e.g. 0412 345 678: where tests go",
            tip=OWN_NUMBER_TIP,
        )
        self.repeat_edit = QSpinBox()
        self.repeat_edit.setRange(1, 24 * 30)
        self.repeat_edit.setValue(REPEAT_WINDOW_HOURS.default)
        self.repeat_edit.setSuffix(" hours")
        self.repeat_edit.setAccessibleName("Repeat window")
        self.repeat_edit.setToolTip(REPEAT_TIP)
        self.marketing_box = QCheckBox("New messages are marketing")
        self.marketing_box.setAccessibleName("Marketing by default")
        self.marketing_box.setToolTip(MARKETING_TIP)
        self.errors = {
            "opt_out": error_label("Opt-out keywords error"),
            "opt_in": error_label("Opt-in keywords error"),
            "instruction": error_label("Opt-out instruction error"),
            "own_number": error_label("Your number error"),
            "repeat_hours": error_label("Repeat window error"),
        }
        self.edits: dict[str, QWidget] = {
            "opt_out": self.opt_out_edit,
            "opt_in": self.opt_in_edit,
            "instruction": self.instruction_edit,
            "own_number": self.own_edit,
            "repeat_hours": self.repeat_edit,
        }
        self.save_button = QPushButton("Save rules")
        self.save_button.setAccessibleName("Save the rules")
        self.save_button.setToolTip(
            "Keep the rules in this profile: replies from now on are read by these keywords"
        )
        self.note = PlainLabel("")
        self.note.setAccessibleName("Rules result")
        self.note.setWordWrap(True)
        self.note.hide()
        self._shown = self._typed()
        """What the fields held when the rules were last shown (`edited` compares)."""
        self.hint = PlainLabel(HOW_IT_WORKS)
        self.hint.setProperty("role", "hint")
        self.hint.setWordWrap(True)

        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Opt &out on", stacked(self.opt_out_edit, self.errors["opt_out"]))
        form.addRow("Opt back &in on", stacked(self.opt_in_edit, self.errors["opt_in"]))
        form.addRow("Ins&truction", stacked(self.instruction_edit, self.errors["instruction"]))
        form.addRow("", self.marketing_box)
        form.addRow("Your nu&mber", stacked(self.own_edit, self.errors["own_number"]))
        form.addRow("Re&peat window", stacked(self.repeat_edit, self.errors["repeat_hours"]))
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.save_button)
        form.addRow(actions)
        form.addRow(self.note)
        form.addRow(self.hint)

        self.opt_out_edit.textChanged.connect(lambda: self._clear("opt_out"))
        self.opt_in_edit.textChanged.connect(lambda: self._clear("opt_in"))
        self.instruction_edit.textEdited.connect(lambda _t: self._clear("instruction"))
        self.own_edit.textEdited.connect(lambda _t: self._clear("own_number"))
        self.repeat_edit.valueChanged.connect(lambda _v: self._clear("repeat_hours"))
        self.save_button.clicked.connect(self.save)

    def show_rules(self, rules: Rules) -> None:
        """Fill the fields with the profile's rules as kept."""
        self.opt_out_edit.setText(", ".join(rules.opt_out))
        self.opt_in_edit.setText(", ".join(rules.opt_in))
        self.instruction_edit.setText(rules.instruction)
        self.marketing_box.setChecked(rules.marketing_default)
        self.own_edit.setText(display(rules.own_number) if rules.own_number else "")
        self.repeat_edit.setValue(rules.repeat_hours)
        self._shown = self._typed()
        for key in self.edits:
            self._clear(key)

    def _typed(self) -> tuple[str, str, str, bool, str, int]:
        return (
            self.opt_out_edit.text(),
            self.opt_in_edit.text(),
            self.instruction_edit.text(),
            self.marketing_box.isChecked(),
            self.own_edit.text(),
            self.repeat_edit.value(),
        )

    def edited(self) -> bool:
        """Whether the operator changed a field since the rules were last shown."""
        return self._typed() != self._shown

    def save(self) -> None:
        """Ask to save what was typed (`save_requested`); a refusal comes back to its
        field (`show_error`) before this returns."""
        for key in self.edits:
            self._clear(key)
        self.save_requested.emit(
            TypedRules(
                self.opt_out_edit.text(),
                self.opt_in_edit.text(),
                self.marketing_box.isChecked(),
                self.instruction_edit.text(),
                self.own_edit.text(),
                self.repeat_edit.value(),
            )
        )

    def show_error(self, field: str, message: str) -> None:
        label = self.errors[field]
        label.setText(message)
        label.show()
        set_invalid(self.edits[field], True)
        self.edits[field].setFocus()

    def say(self, text: str, role: str) -> None:
        self.note.setText(text)
        set_role(self.note, role)
        self.note.setVisible(bool(text))

    def _clear(self, key: str) -> None:
        self.errors[key].hide()
        set_invalid(self.edits[key], False)
