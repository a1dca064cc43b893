"""The form that adds a keyword rule: what it matches and what it does.

The form only gathers a `Draft`; the rules' own checks (`domain.reply_rules`, through
`RulesFlow.add`, run off the GUI thread) decide. A refusal names its field, so it is
shown under that field and the form stays as typed, to be fixed; a refusal of the
rule as a whole ("does at least one thing") is shown above the actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.rule_editing import Added
from gwdesk.domain.errors import InputRefused, StoreError
from gwdesk.domain.reply_rules import (
    MAX_NAME,
    MAX_PER_DAY,
    MAX_URL,
    MAX_VALUE,
    STATES,
    Draft,
    Match,
)
from gwdesk.profiles import KeyringUnavailable
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.widgets.field_errors import error_label, stacked, text_field
from gwdesk.ui.widgets.fitting import fit_on_screen, scrolling

ADD_KEY: Final = "rule-add"
MATCH_WORDS: Final = {
    Match.WHOLE: "the whole reply is",
    Match.FIRST_WORD: "the reply's first word(s) are",
    Match.PATTERN: "the reply fits the pattern (* any text, ? one character)",
}
GENERAL: Final = "general"
"""Where a refusal that names no field of the form is shown (the store failing, say)."""


class AddRuleDialog(QDialog):
    """A new rule's form; `added` holds what the flow kept once the dialog is accepted."""

    def __init__(
        self, add: Callable[[Draft], Added], tasks: TaskRunner, parent: QWidget | None = None
    ) -> None:
        """`add`: keeps a checked rule (blocking: it is called off the GUI thread)."""
        super().__init__(parent)
        self._add = add
        self.tasks = tasks
        self.added: Added | None = None
        self.busy = False
        """The rule is being kept: the form stays until it is (a forward's secret, made
        meanwhile, would otherwise never be shown)."""
        self.setWindowTitle("Add a keyword rule")
        self.setModal(True)

        self.name = text_field("Rule name", limit=MAX_NAME, placeholder="Opening hours")
        self.match = QComboBox()
        self.match.setAccessibleName("Match by")
        for kind, words in MATCH_WORDS.items():
            self.match.addItem(words, kind.value)
        self.value = text_field("Keyword or pattern", limit=MAX_VALUE, placeholder="HOURS")
        self.reply = QPlainTextEdit()
        self.reply.setAccessibleName("Automatic reply")
        self.reply.setPlaceholderText("We are open 9 to 5, Monday to Friday.")
        self.reply.setTabChangesFocus(True)
        lines = self.reply.fontMetrics().lineSpacing()
        self.reply.setMinimumHeight(4 * lines)
        self.reply.setMaximumHeight(6 * lines)
        self.per_day = QSpinBox()
        self.per_day.setAccessibleName("Automatic replies a day to one customer")
        self.per_day.setRange(1, MAX_PER_DAY)
        self.assign = text_field("Assign to", limit=200, placeholder="an operator's login")
        self.state = QComboBox()
        self.state.setAccessibleName("Set the conversation")
        self.state.addItem("(leave as it is)", "")
        for state in STATES:
            self.state.addItem(state, state)
        self.tag = text_field("Tag", limit=40)
        self.forward = text_field(
            "Forward to", limit=MAX_URL, placeholder="https://crm.example.com/sms-hook"
        )
        self.errors: dict[str, PlainLabel] = {
            field: error_label(f"{field} refused")
            for field in ("name", "match", "value", "reply", "per_day", "assign", "state", "tag",
                          "forward", "actions", GENERAL)
        }  # fmt: skip

        when = QGroupBox("When a reply comes")
        when_form = QFormLayout(when)
        self._row(when_form, "&Name:", self.name, "name")
        self._row(when_form, "&Match:", self.match, "match")
        self._row(when_form, "&Keyword:", self.value, "value")
        does = QGroupBox("It does (leave empty what it should not do)")
        does_form = QFormLayout(does)
        does_form.addRow(self.errors["actions"])
        self._row(does_form, "&Reply:", self.reply, "reply")
        self._row(does_form, "At most, per &day:", self.per_day, "per_day")
        self._row(does_form, "&Assign to:", self.assign, "assign")
        self._row(does_form, "&Set state:", self.state, "state")
        self._row(does_form, "&Tag:", self.tag, "tag")
        self._row(does_form, "&Forward to:", self.forward, "forward")
        note = PlainLabel(
            "A forward is sent as JSON, signed with a secret shown once after adding. "
            "Opt-out and opt-in replies (STOP, START) are never handled by a rule."
        )
        note.setWordWrap(True)
        note.setProperty("role", "hint")
        content = QWidget()
        inner = QVBoxLayout(content)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(when)
        inner.addWidget(does)
        inner.addWidget(note)
        inner.addStretch(1)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton(
            "Add ru&le", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.add_button.setProperty("primary", True)
        self.add_button.setDefault(True)
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scrolling(content, sideways=False), 1)
        layout.addWidget(self.errors[GENERAL])
        layout.addWidget(self.buttons)
        fit_on_screen(self, QSize(640, 640))

    def reject(self) -> None:
        if not self.busy:
            super().reject()

    def _row(self, form: QFormLayout, text: str, field: QWidget, key: str) -> None:
        label = QLabel(text)
        label.setBuddy(field)
        form.addRow(label, stacked(field, self.errors[key]))

    def draft(self) -> Draft:
        """The rule as typed."""
        return Draft(
            name=self.name.text(),
            match=str(self.match.currentData()),
            value=self.value.text(),
            reply=self.reply.toPlainText(),
            per_day=self.per_day.value(),
            assign=self.assign.text(),
            state=str(self.state.currentData()),
            tag=self.tag.text(),
            forward=self.forward.text(),
        )

    def submit(self) -> None:
        """Check and keep the rule (off the GUI thread); refused, say why at the field."""
        self.tasks.run(self.adding(self.draft()), key=ADD_KEY, owner=self, context="adding a rule")

    async def adding(self, draft: Draft) -> None:
        self.show_refusal(None)
        self.add_button.setEnabled(False)
        self.busy = True
        try:
            added = await off_thread(lambda: self._add(draft))
        except InputRefused as refused:
            self.show_refusal(refused)
            return
        except (StoreError, KeyringUnavailable) as exc:
            self.show_refusal(InputRefused(GENERAL, f"The rule was not kept: {exc}"))
            return
        finally:
            self.busy = False
            self.add_button.setEnabled(True)
        self.added = added
        self.accept()

    def show_refusal(self, refused: InputRefused | None) -> None:
        """Show `refused` under its field (or above the buttons), every other error hidden."""
        for label in self.errors.values():
            label.hide()
        if refused is None:
            return
        label = self.errors.get(refused.field, self.errors[GENERAL])
        label.setText(refused.message)
        label.show()
        field = {
            "name": self.name, "match": self.match, "value": self.value, "reply": self.reply,
            "per_day": self.per_day, "assign": self.assign, "state": self.state,
            "tag": self.tag, "forward": self.forward,
        }.get(refused.field)  # fmt: skip
        if field is not None:
            field.setFocus()

    def shown_refusal(self) -> tuple[str, str] | None:
        """(field, message) of the refusal on show, if any (tests, screen readers)."""
        for field, label in self.errors.items():
            if not label.isHidden():
                return field, label.text()
        return None
