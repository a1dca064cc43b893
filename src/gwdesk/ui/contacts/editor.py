"""Adding or editing one contact: name, numbers, fields, groups, notes; its opt-out state shown.

What the operator types becomes a `ContactCard` only when the flow's checks pass it
(`gwdesk.app.contact_editing.card_from`: each number read in the profile's region,
every value with a field name, the domain's rules); a refusal is shown under the form
and nothing is saved. The store has the last word (a number another contact holds):
the tab shows its refusal here too, and the dialog stays open with everything typed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.contact_editing import CardRefused, Contact, ContactCard, TypedContact
from gwdesk.domain.contacts import MAX_FIELDS, MAX_NAME
from gwdesk.domain.numbers import display
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.validity import set_role

NUMBERS_TIP = (
    "One number per line; national numbers are read in the profile's region. The first "
    "is the one a group send uses."
)
GROUPS_TIP = "Separated by commas, e.g. Patients, Glebe clinic. A group is made when first used."
Check = Callable[[TypedContact], ContactCard]
"""What was typed → the card, or `CardRefused`."""


class ContactDialog(QDialog):
    """The form; `save_requested(card)` once it passes the checks (the tab saves it)."""

    save_requested = Signal(object)

    def __init__(
        self,
        check: Check,
        contact: Contact | None = None,
        optout_lines: list[str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._check = check
        self.contact = contact
        self.setWindowTitle("Edit the contact" if contact else "Add a contact")
        self.setMinimumWidth(520)
        self.name_edit = QLineEdit(contact.name if contact else "")
        self.name_edit.setAccessibleName("Contact name")
        self.name_edit.setMaxLength(MAX_NAME)
        self.numbers_edit = QPlainTextEdit(
            "\n".join(display(n) for n in contact.numbers) if contact else ""
        )
        self.numbers_edit.setAccessibleName("Contact numbers")
        self.numbers_edit.setToolTip(NUMBERS_TIP)
        self.numbers_edit.setPlaceholderText("0412 345 678\n+61 2 9876 5432")
        self.numbers_edit.setTabChangesFocus(True)
        self.numbers_edit.setFixedHeight(66)
        self.fields = QTableWidget(0, 2)
        self.fields.setAccessibleName("Contact fields")
        self.fields.setHorizontalHeaderLabels(["Field", "Value"])
        self.fields.verticalHeader().hide()
        self.fields.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.fields.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.fields.setToolTip(
            "Merge fields: a template's {clinic} takes this contact's value of the field clinic"
        )
        self.fields.setMinimumHeight(120)
        for name, value in contact.fields if contact else ():
            self.add_field(name, value)
        add = QPushButton("Add field")
        add.clicked.connect(lambda: self.add_field("", "", edit=True))
        remove = QPushButton("Remove field")
        remove.clicked.connect(self._remove_field)
        field_buttons = QHBoxLayout()
        field_buttons.addWidget(add)
        field_buttons.addWidget(remove)
        field_buttons.addStretch(1)
        fields_box = QWidget()
        fields_layout = QVBoxLayout(fields_box)
        fields_layout.setContentsMargins(0, 0, 0, 0)
        fields_layout.addWidget(self.fields)
        fields_layout.addLayout(field_buttons)
        self.groups_edit = QLineEdit(", ".join(contact.groups) if contact else "")
        self.groups_edit.setAccessibleName("Contact groups")
        self.groups_edit.setToolTip(GROUPS_TIP)
        self.groups_edit.setPlaceholderText("e.g. Patients, Glebe clinic")
        self.notes_edit = QPlainTextEdit(contact.notes if contact else "")
        self.notes_edit.setAccessibleName("Contact notes")
        self.notes_edit.setTabChangesFocus(True)
        self.notes_edit.setFixedHeight(66)
        self.optouts = PlainLabel("\n".join(optout_lines or []) or "Not opted out.")
        self.optouts.setAccessibleName("Opt-out state")
        self.optouts.setWordWrap(True)
        set_role(self.optouts, "error" if optout_lines else "hint")
        self.error = PlainLabel("")
        self.error.setAccessibleName("Contact error")
        self.error.setWordWrap(True)
        self.error.hide()
        set_role(self.error, "error")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Name", self.name_edit)
        form.addRow("N&umbers", self.numbers_edit)
        form.addRow("&Fields", fields_box)
        form.addRow("&Groups", self.groups_edit)
        form.addRow("N&otes", self.notes_edit)
        form.addRow("Opt-out", self.optouts)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.name_edit.setFocus()

    def add_field(self, name: str, value: str, *, edit: bool = False) -> None:
        if self.fields.rowCount() >= MAX_FIELDS:
            self.show_error(f"A contact keeps at most {MAX_FIELDS} fields.")
            return
        row = self.fields.rowCount()
        self.fields.insertRow(row)
        self.fields.setItem(row, 0, QTableWidgetItem(name))
        self.fields.setItem(row, 1, QTableWidgetItem(value))
        if edit:
            self.fields.setCurrentCell(row, 0)
            item = self.fields.item(row, 0)
            if item is not None:
                self.fields.editItem(item)

    def _remove_field(self) -> None:
        rows = sorted({i.row() for i in self.fields.selectedIndexes()}, reverse=True)
        for row in rows or ([self.fields.currentRow()] if self.fields.currentRow() >= 0 else []):
            self.fields.removeRow(row)

    def field_pairs(self) -> list[tuple[str, str]]:
        pairs = []
        for row in range(self.fields.rowCount()):
            name, value = self.fields.item(row, 0), self.fields.item(row, 1)
            pairs.append((name.text() if name else "", value.text() if value else ""))
        return pairs

    def typed(self) -> TypedContact:
        return TypedContact(
            self.name_edit.text(),
            self.numbers_edit.toPlainText(),
            self.field_pairs(),
            self.groups_edit.text(),
            self.notes_edit.toPlainText(),
        )

    def submit(self) -> None:
        try:
            card = self._check(self.typed())
        except CardRefused as exc:
            self.show_error(exc.message)
            return
        self.error.hide()
        self.buttons.setEnabled(False)
        self.save_requested.emit(card)

    def show_error(self, text: str) -> None:
        """A refusal (the form's or the store's): the dialog stays, everything kept."""
        self.error.setText(text)
        self.error.show()
        self.buttons.setEnabled(True)
