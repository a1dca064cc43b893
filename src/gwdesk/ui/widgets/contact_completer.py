"""Names and numbers from the address book, offered as a number field is typed.

Typing a few letters of a name ("zo") or digits of a number ("0412 3") asks the
profile's contacts for matches (off the GUI thread, once typing pauses) and offers
each as "Zoë Nguyen · +61 412 345 678"; choosing one puts the number in the field.
Only what the operator types asks (a number set by the program does not). Names
are shown as plain text.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QCompleter, QLineEdit

from gwdesk.app.contact_editing import Contact, ContactStore
from gwdesk.domain.errors import StoreError
from gwdesk.domain.numbers import display
from gwdesk.ui.plain_text import visible
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.timers import single_shot

NUMBER_ROLE: Final = Qt.ItemDataRole.UserRole + 1
SEARCH_DELAY_MS: Final = 200
OFFERED: Final = 12
"""Contacts offered at once (the typing narrows them)."""
SEARCH_KEY: Final = "contact-completion"


def search_text(typed: str) -> str:
    """What the address book is searched for: a name's letters, or a number's digits
    without the trunk 0 (`0412 3` finds `614123…`)."""
    text = " ".join(typed.split())
    compact = text.replace(" ", "").replace("-", "")
    if compact.lstrip("+").isdigit():
        digits = compact.lstrip("+")
        return digits[1:] if digits.startswith("0") else digits
    return text


def offers(contacts: list[Contact]) -> list[tuple[str, str]]:
    """(what the list shows, the number put in the field), a line per number."""
    found = []
    for contact in contacts:
        for number in contact.numbers:
            shown = display(number)
            label = f"{visible(contact.name)} · {shown}" if contact.name else shown
            found.append((label, shown))
    return found[:OFFERED]


class ContactCompleter(QObject):
    """The completion of one line edit from one profile's contacts."""

    def __init__(self, edit: QLineEdit, tasks: TaskRunner) -> None:
        super().__init__(edit)
        self.edit = edit
        self.tasks = tasks
        self.contacts: ContactStore | None = None
        self.model = QStandardItemModel(self)
        self.completer = QCompleter(self.model, self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCompletionRole(NUMBER_ROLE)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setMaxVisibleItems(OFFERED)
        edit.setCompleter(self.completer)
        self._timer = single_shot(self, SEARCH_DELAY_MS, self.search)
        edit.textEdited.connect(lambda _t: self._timer.start())

    def set_contacts(self, contacts: ContactStore | None) -> None:
        self.contacts = contacts
        self.model.clear()

    def search(self) -> None:
        """Ask the address book about what is typed now."""
        self._timer.stop()
        contacts, wanted = self.contacts, search_text(self.edit.text())
        if contacts is None or len(wanted) < 2:
            self.model.clear()
            return
        self.tasks.run(
            self._search(contacts, wanted), key=SEARCH_KEY, owner=self, context="completing"
        )

    async def _search(self, contacts: ContactStore, wanted: str) -> None:
        try:
            found = await off_thread(lambda: contacts.listing(wanted, limit=OFFERED))
        except StoreError:
            return  # no completion this time; the field works as before
        if not alive(self) or contacts is not self.contacts:
            return
        self.model.clear()
        for label, number in offers(found):
            item = QStandardItem(label)
            item.setData(number, NUMBER_ROLE)
            item.setEditable(False)
            self.model.appendRow(item)
        if self.model.rowCount() and self.edit.hasFocus():
            self.completer.complete()

    def shown(self) -> list[str]:
        """What the list offers now (tests and accessibility)."""
        return [self.model.item(row).text() for row in range(self.model.rowCount())]
