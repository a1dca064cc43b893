"""A template's name and text, edited in a dialog of their own: saving a message as a
template, and editing a saved one.

The dialog holds what the operator typed until the save is done: a name the store
refuses (empty, too long, a hidden character, another template's) or a text that is no
template (a `{` left open) is said under its field and nothing is lost. Its fields line
says, as the text is typed, what the template takes from each recipient
(`gwdesk.app.template_editing.fields_of`). The picker makes the change off the GUI
thread and tells the dialog how it went (`refused`, `accept`).
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.template_editing import MAX_NAME, fields_of
from gwdesk.ui.plain_text import PlainLabel, window_title
from gwdesk.ui.widgets.field_errors import error_label, stacked
from gwdesk.ui.widgets.message_editor import Ucs2Highlighter
from gwdesk.ui.widgets.validity import set_role

#: Lines of text the editor shows at least, whatever the screen.
TEXT_LINES: Final = 5


class TemplateEditor(QDialog):
    """Name and text of one template; `submitted(old, name, text)` on Save (`old`: the
    template edited, '' for a new one)."""

    submitted = Signal(str, str, str)

    def __init__(self, parent: QWidget, *, old: str | None, name: str, text: str) -> None:
        super().__init__(parent)
        self.old = old
        self.setWindowTitle(
            "Save as a template" if old is None else window_title(f"Edit the template {old}")
        )
        self.setModal(True)
        self.name_edit = QLineEdit(name)
        self.name_edit.setMaxLength(MAX_NAME)
        self.name_edit.setAccessibleName("Template name")
        self.name_edit.setPlaceholderText("e.g. Appointment reminder")
        self.name_error = error_label("Template name error")
        self.text_edit = QPlainTextEdit()
        self.text_edit.setPlainText(text)
        self.text_edit.setAccessibleName("Template text")
        self.text_edit.setTabChangesFocus(True)
        line = self.text_edit.fontMetrics().lineSpacing()
        self.text_edit.setMinimumHeight(TEXT_LINES * line + 12)
        highlighter = Ucs2Highlighter(self.text_edit.document())
        highlighter.templates = True
        self.text_error = error_label("Template text error")
        self.fields = PlainLabel()
        self.fields.setWordWrap(True)
        self.fields.setAccessibleName("Template fields")
        self.fields.setToolTip(
            "A field in braces is filled from each recipient's column or contact: "
            "{first name}; {clinic|our clinic} gives a value to use when there is none."
        )
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Name", stacked(self.name_edit, self.name_error))
        form.addRow("&Text", stacked(self.text_edit, self.text_error, self.fields))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.buttons)
        self.text_edit.textChanged.connect(self._text_changed)
        self.name_edit.textChanged.connect(lambda _text: self.name_error.hide())
        self._text_changed()
        width = self.fontMetrics().averageCharWidth()
        self.resize(max(self.sizeHint().width(), 80 * width), self.sizeHint().height())
        (self.name_edit if not name else self.text_edit).setFocus()

    def name(self) -> str:
        return self.name_edit.text()

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def save(self) -> None:
        """Hand the name and text on; the dialog stays until the change is made."""
        self.name_error.hide()
        self.text_error.hide()
        self.submitted.emit(self.old or "", self.name(), self.text())

    def refused(self, field: str, message: str) -> None:
        """Say why at the field (`name` or `text`), keeping what was typed."""
        label, edit = (
            (self.name_error, self.name_edit)
            if field == "name"
            else (self.text_error, self.text_edit)
        )
        label.setText(message)
        label.show()
        edit.setFocus()

    def _text_changed(self) -> None:
        said = fields_of(self.text())
        self.fields.setText(said)
        set_role(self.fields, "error" if said.startswith("Not a usable") else "hint")
        self.text_error.hide()
