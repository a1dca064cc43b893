"""Contacts tab: the profile's address book, searched, edited, imported and exported.

What is checked, read, written and read again is the flow's
(`gwdesk.app.contact_editing.ContactEditing`, one per profile): the contacts are the
profile's own (a name, numbers, the fields a template's placeholders take ({clinic}),
groups and notes), and whether a contact's number opted out is read from the account's
opt-out list each time the contact is shown, never kept here. Every read and write
runs off the GUI thread; after a change the session says so (`contacts_changed`), so
the names beside numbers elsewhere (Replies, the Send tab's history) are read again.
Names, fields and notes are the operator's or a file's text: shown as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QWidget,
)

from gwdesk.app.contact_editing import (
    Contact,
    ContactCard,
    ContactEditing,
    ContactListing,
    ImportFailed,
    StoreError,
)
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.ui.contacts.editor import ContactDialog
from gwdesk.ui.formatting import optout_sentence
from gwdesk.ui.listing_tab import NOT_CONNECTED, ListingTab, ListingWords
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.plain_text import plain_box, tooltip, wrapped_label
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.listing import csv_to_save, dated_csv, file_to_open, row_table, selected_row
from gwdesk.ui.widgets.validity import set_role

WORDS: Final = ListingWords(
    search="Search contacts",
    search_hint="Search names, notes or numbers",
    counts="Contact counts",
    result="Contacts result",
    empty=(
        "No contacts yet. Add one, or import a CSV (a header row naming Name, Mobile, "
        "Groups and any fields) or a vCard file exported from a phone or mail program."
    ),
)
ALL_GROUPS: Final = ""
FILE_FILTER: Final = "Contacts (*.csv *.vcf *.vcard *.txt);;All files (*)"
OUT_COLOUR: Final = QColor("#d32f2f")
#: Rows of an import that were left out, listed in the result's tooltip.
LEFT_OUT_SHOWN: Final = 40


def fields_text(contact: Contact) -> str:
    return "; ".join(f"{name}: {' '.join(value.split())}" for name, value in contact.fields)


def numbers_text(contact: Contact) -> str:
    return ", ".join(display(n) for n in contact.numbers)


COLUMNS: Final[list[Column[Contact]]] = [
    Column("Name", lambda c: c.name or "(no name)", "The contact's name"),
    Column("Numbers", numbers_text, "The first is the one a group send uses"),
    Column("Groups", lambda c: ", ".join(c.groups), "The groups a batch can send to"),
    Column("Fields", fields_text, "Merge fields: a template's {field} takes these values"),
    Column(
        "Opt-out",
        lambda c: "opted out" if c.opted_out else "",
        "On the account's opt-out list now (Opt-outs tab: how and when)",
        colour=lambda c: OUT_COLOUR if c.opted_out else None,
    ),
]


class ContactsTab(ListingTab):
    title = "Contacts"
    icon_name = "contacts"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent, WORDS)
        self.flow: ContactEditing | None = None
        """The profile's address book, as edited here (None: no profile)."""
        self.dialog: ContactDialog | None = None
        self.question: QMessageBox | None = None
        self.group = QComboBox()
        self.group.setAccessibleName("Group")
        self.group.setToolTip("Show one group's contacts")
        self.group.setMinimumContentsLength(18)
        self.add_button = QPushButton(theme.icon("contacts"), "Add contact…")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete…")
        self.import_button = QPushButton(theme.icon("import"), "Import…")
        self.import_button.setToolTip("Add or update contacts from a CSV or vCard file")
        self.export_button = QPushButton(theme.icon("export"), "Export…")
        self.export_button.setToolTip("Save the contacts shown (all, or the group) as CSV")

        self.model: RowsModel[Contact] = RowsModel(COLUMNS, self)
        self.table = row_table("Contacts", self.model)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for column, width in enumerate((190, 250, 150, 260, 90)):
            self.table.setColumnWidth(column, width)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)

        self.detail_box = QGroupBox("Contact")
        self.detail_name = wrapped_label("Contact shown")
        self.detail_name.setStyleSheet("font-size: 13pt; font-weight: 600;")
        self.detail_numbers = wrapped_label("Numbers of the contact")
        self.detail_optout = wrapped_label("Opt-out of the contact")
        self.detail_optout.hide()
        set_role(self.detail_optout, "error")
        self.detail_fields = wrapped_label("Fields of the contact")
        self.detail_groups = wrapped_label("Groups of the contact")
        self.detail_notes = wrapped_label("Notes of the contact")
        self.detail_notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        detail = QFormLayout(self.detail_box)
        detail.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        detail.addRow(self.detail_name)
        detail.addRow("Numbers", self.detail_numbers)
        detail.addRow(self.detail_optout)
        detail.addRow("Fields", self.detail_fields)
        detail.addRow("Groups", self.detail_groups)
        detail.addRow("Notes", self.detail_notes)
        self.detail_box.setMinimumWidth(300)

        buttons = (
            self.add_button,
            self.edit_button,
            self.delete_button,
            self.import_button,
            self.export_button,
        )
        body = self.lay_out(self.group, buttons, self.with_empty_note(self.table), self.detail_box)
        body.setSizes([860, 360])

        self.group.activated.connect(lambda _i: self.refresh())
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.table.doubleClicked.connect(lambda _index: self.edit())
        self.add_button.clicked.connect(self.add)
        self.edit_button.clicked.connect(self.edit)
        self.delete_button.clicked.connect(self.ask_delete)
        self.import_button.clicked.connect(self.choose_import)
        self.export_button.clicked.connect(self.choose_export)
        self.connect_tracked(session.replies.replies_arrived, lambda _d: self.refresh_soon())
        self.connect_tracked(session.contacts_changed, self.refresh_soon)
        self._show_detail(None)
        self.on_session_changed()

    # ---- reading -----------------------------------------------------------------------

    def on_session_changed(self) -> None:
        store, profile = self.session.store, self.session.profile
        region = profile.region if profile else DEFAULT_REGION
        self.flow = ContactEditing(store.contacts, store.optouts, region) if store else None
        enabled = self.flow is not None
        for button in (self.add_button, self.import_button, self.export_button):
            button.setEnabled(enabled)
        self.edit_button.setEnabled(False)
        self.delete_button.setEnabled(False)
        self.group.clear()
        self.group.addItem("All contacts", ALL_GROUPS)
        self.say("", "hint")
        self.refresh()

    def chosen_group(self) -> str | None:
        value = self.group.currentData()
        return value if isinstance(value, str) and value != ALL_GROUPS else None

    def refresh(self) -> None:
        flow = self.flow
        if flow is None:
            self.model.set_rows([])
            self.counts.setText(NOT_CONNECTED)
            self.show_empty(not self.search.text().strip() and not self.chosen_group())
            return
        self.tasks.run(self._load(flow), key="load", owner=self, context="reading the contacts")

    async def _load(self, flow: ContactEditing, select: int | None = None) -> None:
        search, group = self.search.text(), self.chosen_group()
        try:
            listing = await off_thread(lambda: flow.listing(search, group))
        except StoreError as exc:
            self.say(f"The contacts could not be read: {exc}", "error")
            return
        if not alive(self) or flow is not self.flow:
            return
        self._show(listing)
        if select is not None:
            self._select(select)

    def _show(self, listing: ContactListing) -> None:
        selected = self.selected()
        self.model.set_rows(listing.rows)
        self._fill_groups(listing.groups)
        self.counts.setText(listing.counts)
        self.show_empty(listing.empty)
        if selected is not None:
            self._select(selected.id)
        else:
            self._show_detail(None)

    def _fill_groups(self, groups: list[tuple[str, int]]) -> None:
        chosen = self.chosen_group()
        self.group.clear()
        self.group.addItem("All contacts", ALL_GROUPS)
        for name, count in groups:
            self.group.addItem(f"{' '.join(name.split())} ({count:,})", name)
        index = self.group.findData(chosen) if chosen is not None else 0
        self.group.setCurrentIndex(max(0, index))

    def selected(self) -> Contact | None:
        return selected_row(self.table, Contact)

    def _select(self, contact_id: int) -> None:
        for row, contact in enumerate(self.model.rows):
            if contact.id == contact_id:
                self.table.selectRow(row)
                self._show_detail(contact)
                return
        self._show_detail(None)

    def _selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_detail(self.selected())

    def _show_detail(self, contact: Contact | None) -> None:
        self.edit_button.setEnabled(contact is not None)
        self.delete_button.setEnabled(contact is not None)
        self.detail_box.setEnabled(contact is not None)
        self.detail_optout.hide()
        if contact is None:
            self.detail_name.setText("Choose a contact to see it here.")
            for label in (
                self.detail_numbers,
                self.detail_fields,
                self.detail_groups,
                self.detail_notes,
            ):
                label.setText("")
            return
        self.detail_name.setText(contact.name or "(no name)")
        self.detail_numbers.setText(
            "\n".join(
                display(n) + (" (opted out)" if n in contact.opted_out else "")
                for n in contact.numbers
            )
        )
        self.detail_fields.setText(
            "\n".join(f"{name}: {value}" for name, value in contact.fields) or "none"
        )
        self.detail_groups.setText(", ".join(contact.groups) or "none")
        self.detail_notes.setText(contact.notes or "none")
        if contact.opted_out:
            self.tasks.run(
                self._show_optouts(contact),
                key="optouts",
                owner=self,
                context="reading a contact's opt-out",
            )

    async def _show_optouts(self, contact: Contact) -> None:
        lines = await self.optout_lines(contact)
        current = self.selected()
        if lines and current is not None and current.id == contact.id:
            self.detail_optout.setText("\n".join(lines))
            self.detail_optout.show()

    async def optout_lines(self, contact: Contact) -> list[str]:
        """How and when each of the contact's opted-out numbers opted out."""
        flow = self.flow
        if flow is None or not contact.opted_out:
            return []
        try:
            found = await off_thread(lambda: flow.opt_outs(contact))
        except StoreError as exc:
            return [f"The opt-out list could not be read: {exc}"]
        return [optout_sentence(optout) for optout in found]

    # ---- changes -----------------------------------------------------------------------

    def add(self) -> None:
        self._open(None, [])

    def edit(self) -> None:
        contact = self.selected()
        if contact is None:
            return
        self.tasks.run(self._edit(contact), key="open", owner=self, context="editing a contact")

    async def _edit(self, contact: Contact) -> None:
        lines = await self.optout_lines(contact)
        if alive(self):
            self._open(contact, lines)

    def _open(self, contact: Contact | None, optout_lines: list[str]) -> None:
        flow = self.flow
        if flow is None:
            return
        if self.dialog is not None:
            self.dialog.close()
        dialog = ContactDialog(flow.check, contact, optout_lines, self)
        dialog.save_requested.connect(
            lambda card: self.tasks.run(
                self._save(flow, dialog, contact, card),
                key="save",
                owner=self,
                context="saving a contact",
            )
        )
        dialog.finished.connect(lambda _r: self._dialog_closed(dialog))
        self.dialog = dialog
        dialog.open()

    def _dialog_closed(self, dialog: ContactDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    async def _save(
        self,
        flow: ContactEditing,
        dialog: ContactDialog,
        contact: Contact | None,
        card: ContactCard,
    ) -> None:
        try:
            saved = await off_thread(lambda: flow.save(contact, card))
        except StoreError as exc:
            if alive(dialog):
                dialog.show_error(str(exc))
            return
        if alive(dialog):
            dialog.accept()
        self.say(f"{saved.name or numbers_text(saved)} is saved.", "ok")
        await self._changed(flow, saved.id)

    async def _changed(self, flow: ContactEditing, select: int | None = None) -> None:
        """After a change: the others told, the listing read again."""
        self.session.contacts_changed.emit()
        # One reading of the list at a time (the "load" task): a search typed meanwhile
        # reads it again, and this older reading never lands after that one.
        self.tasks.run(
            self._load(flow, select), key="load", owner=self, context="reading the contacts"
        )

    def ask_delete(self) -> None:
        contact = self.selected()
        if contact is None or self.flow is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete the contact?",
            f"Delete {contact.name or numbers_text(contact)}? Messages sent to its numbers "
            "stay in the history; its opt-out state stays on the opt-out list.",
            parent=self,
        )
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def finished(_result: int) -> None:
            self.question = None
            if box.clickedButton() is delete:
                self.delete(contact)
            box.deleteLater()

        box.finished.connect(finished)
        self.question = box
        plain_box(box).open()

    def delete(self, contact: Contact) -> None:
        flow = self.flow
        if flow is not None:
            self.tasks.run(
                self._delete(flow, contact), key="save", owner=self, context="deleting a contact"
            )

    async def _delete(self, flow: ContactEditing, contact: Contact) -> None:
        try:
            await off_thread(lambda: flow.remove(contact))
        except StoreError as exc:
            self.say(f"Not deleted: {exc}", "error")
            return
        self.say(f"{contact.name or numbers_text(contact)} is deleted.", "ok")
        await self._changed(flow)

    # ---- files -------------------------------------------------------------------------

    def choose_import(self) -> None:
        path = file_to_open(self, "Import contacts", FILE_FILTER)
        if path is not None:
            self.import_from(path)

    def import_from(self, path: Path) -> None:
        flow = self.flow
        if flow is None:
            return
        self.say(f"Importing {path.name}…", "hint")
        self.tasks.run(
            self._import(flow, path), key="file", owner=self, context="importing contacts"
        )

    async def _import(self, flow: ContactEditing, path: Path) -> None:
        try:
            report = await off_thread(lambda: flow.import_file(path))
        except ImportFailed as exc:
            self.say(f"{path.name} was not imported: {exc.message}", "error")
            return
        except (StoreError, OSError) as exc:
            self.say(f"{path.name} was not imported: {exc}", "error")
            return
        left = report.invalid
        self.say(
            f"{path.name} ({report.kind}): {report.summary()}."
            + (f" Left out: {_left_out(left[0].row, left[0].reason)}" if left else ""),
            "hint" if left else "ok",
        )
        self.message.setToolTip(
            tooltip("\n".join(_left_out(r.row, r.reason) for r in left[:LEFT_OUT_SHOWN]))
        )
        await self._changed(flow)

    def choose_export(self) -> None:
        path = csv_to_save(self, "Export the contacts", dated_csv("contacts"))
        if path is not None:
            self.export_to(path)

    def export_to(self, path: Path) -> None:
        flow = self.flow
        if flow is None:
            return
        group = self.chosen_group()
        self.tasks.run(self._export(flow, path, group), key="file", owner=self, context="exporting")

    async def _export(self, flow: ContactEditing, path: Path, group: str | None) -> None:
        try:
            count = await off_thread(lambda: flow.export_file(path, group))
        except (StoreError, OSError) as exc:
            self.say(f"The contacts were not exported: {exc}", "error")
            return
        self.say(f"{count:,} contacts written to {path}.", "ok")


def _left_out(row: int, reason: str) -> str:
    return f"row {row}: {reason}"
