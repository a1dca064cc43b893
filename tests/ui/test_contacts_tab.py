"""The Contacts tab: the address book searched, edited, imported and exported, off the GUI thread."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.contacts.tab import ContactsTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import add_contacts, store_of

ANN = ContactCard(
    "Ann Lee", ("61412000001",), (("Clinic", "Glebe"),), ("Patients",), "Prefers mornings"
)
ZOE = ContactCard(
    "Zoë Nguyễn", ("61412000002", "61298765432"), (("Clinic", "Bondi"),), ("Patients", "Staff")
)


async def contacts_tab(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> ContactsTab:
    await ui.connect(sandbox)
    tab = ContactsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    return tab


async def listed(tab: ContactsTab, count: int) -> None:
    tab.refresh()
    await wait_until(lambda: len(tab.model.rows) == count, 10, f"{count} contacts listed")


def names(tab: ContactsTab) -> list[str]:
    return [c.name for c in tab.model.rows]


async def test_contacts_are_listed_by_name_with_their_numbers_groups_and_fields(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE, ANN)
    await listed(tab, 2)
    assert names(tab) == ["Ann Lee", "Zoë Nguyễn"]
    row = [tab.model.index(1, c).data() for c in range(5)]
    assert row == [
        "Zoë Nguyễn",
        "+61 412 000 002, +61 2 9876 5432",
        "Patients, Staff",
        "Clinic: Bondi",
        "",
    ]
    assert tab.counts.text() == "2 contacts · 2 groups"


async def test_the_search_and_a_group_narrow_the_list(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE, ANN)
    await listed(tab, 2)
    tab.search.setText("zoë")
    await wait_until(lambda: names(tab) == ["Zoë Nguyễn"], 10)
    assert tab.counts.text() == "1 of 2 contacts · 2 groups"
    tab.search.setText("")
    tab.group.setCurrentIndex(tab.group.findData("Staff"))
    tab.refresh()
    await wait_until(lambda: names(tab) == ["Zoë Nguyễn"], 10)


async def test_a_contact_is_added_through_the_dialog_and_the_others_are_told(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    told: list[bool] = []
    ui.session.contacts_changed.connect(lambda: told.append(True))
    tab.add()
    dialog = tab.dialog
    assert dialog is not None
    dialog.name_edit.setText("Mia  García")
    dialog.numbers_edit.setPlainText("0412 000 003\n+61 2 9876 0000")
    dialog.add_field("Clinic", "Newtown")
    dialog.groups_edit.setText("Patients, patients, Recall")
    dialog.notes_edit.setPlainText("Call after 3pm")
    dialog.submit()
    await wait_until(lambda: names(tab) == ["Mia García"], 10)
    (mia,) = store_of(ui).contacts.listing()
    assert mia.numbers == ("61412000003", "61298760000")
    assert mia.fields == (("Clinic", "Newtown"),)
    assert mia.groups == ("Patients", "Recall")
    assert mia.notes == "Call after 3pm"
    assert told == [True]
    assert tab.detail_name.text() == "Mia García"


async def test_a_bad_number_is_refused_in_the_dialog_and_nothing_is_lost(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    tab.add()
    dialog = tab.dialog
    assert dialog is not None
    dialog.name_edit.setText("Ann")
    dialog.numbers_edit.setPlainText("0412 000 001\n0412 3")
    dialog.submit()
    assert dialog.error.text().startswith("Number on line 2:")
    assert dialog.isVisible()
    assert dialog.name_edit.text() == "Ann"
    assert store_of(ui).contacts.count() == 0


async def test_a_number_another_contact_holds_is_refused_and_the_dialog_stays(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ANN)
    await listed(tab, 1)
    tab.add()
    dialog = tab.dialog
    assert dialog is not None
    dialog.name_edit.setText("Someone else")
    dialog.numbers_edit.setPlainText("0412 000 001")
    dialog.submit()
    await wait_until(lambda: not dialog.error.isHidden(), 10)
    assert "61412000001 already belongs to Ann Lee" in dialog.error.text()
    assert dialog.isVisible()
    assert store_of(ui).contacts.count() == 1


async def test_a_contact_is_edited_and_deleted_after_asking(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ANN)
    await listed(tab, 1)
    tab.table.selectRow(0)
    tab.edit()
    await wait_until(lambda: tab.dialog is not None, 10)
    dialog = tab.dialog
    assert dialog is not None
    assert dialog.numbers_edit.toPlainText() == "+61 412 000 001"
    dialog.name_edit.setText("Ann Lee-Smith")
    dialog.submit()
    await wait_until(lambda: names(tab) == ["Ann Lee-Smith"], 10)
    assert store_of(ui).contacts.listing()[0].fields == (("Clinic", "Glebe"),)

    tab.table.selectRow(0)
    tab.ask_delete()
    box = tab.question
    assert isinstance(box, QMessageBox)
    next(b for b in box.buttons() if b.text() == "Delete").click()
    await wait_until(lambda: names(tab) == [], 10)
    assert store_of(ui).contacts.count() == 0


async def test_a_contact_whose_number_opted_out_says_so(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ANN)
    await asyncio.to_thread(store_of(ui).optouts.set, "61412000001", True, reason="asked by phone")
    tab.refresh()  # a listing read before the STOP may land first: wait for the new one
    await wait_until(lambda: tab.model.rowCount() == 1 and tab.model.index(0, 4).data(), 10)
    assert tab.model.index(0, 4).data() == "opted out"
    tab.table.selectRow(0)
    await wait_until(lambda: not tab.detail_optout.isHidden(), 10)
    assert tab.detail_optout.text().startswith("+61 412 000 001 opted out")
    assert "asked by phone" in tab.detail_optout.text()
    assert tab.detail_numbers.text() == "+61 412 000 001 (opted out)"


async def test_a_csv_is_imported_with_the_rows_left_out_and_why(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    source = tmp_path / "patients.csv"
    source.write_text(
        "First name,Last name,Mobile,Groups,Clinic\n"
        "Ann,Lee,0412 000 001,Patients,Glebe\n"
        "Zoë,Nguyễn,0412 000 002,Patients;Staff,Bondi\n"
        "Bad,Number,0412 3,,Glebe\n",
        encoding="utf-8",
    )
    tab.import_from(source)
    await wait_until(lambda: len(tab.model.rows) == 2, 10)
    assert tab.message.text().startswith("patients.csv (CSV")
    assert "2 added, 0 updated, 1 left out" in tab.message.text()
    assert "row 4:" in tab.message.text()
    zoe = store_of(ui).contacts.listing("zoë")[0]
    assert zoe.values()["clinic"] == "Bondi"
    assert zoe.groups == ("Patients", "Staff")


async def test_a_vcard_file_is_imported(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    source = tmp_path / "phone.vcf"
    source.write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Søren Berg\r\nTEL;TYPE=CELL:+61 412 000 004\r\n"
        "CATEGORIES:Patients\r\nNOTE:Allergic to latex\r\nEND:VCARD\r\n",
        encoding="utf-8",
    )
    tab.import_from(source)
    await wait_until(lambda: names(tab) == ["Søren Berg"], 10)
    (soren,) = store_of(ui).contacts.listing()
    assert (soren.numbers, soren.groups, soren.notes) == (
        ("61412000004",),
        ("Patients",),
        "Allergic to latex",
    )


async def test_an_unreadable_file_says_why_and_changes_nothing(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    source = tmp_path / "photo.csv"
    source.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    tab.import_from(source)
    await wait_until(lambda: "was not imported" in tab.message.text(), 10)
    assert store_of(ui).contacts.count() == 0


async def test_the_contacts_are_exported_as_csv(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path
) -> None:
    tab = await contacts_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ANN, ZOE)
    await listed(tab, 2)
    target = tmp_path / "out.csv"
    tab.export_to(target)
    await wait_until(lambda: tab.message.text().startswith("2 contacts written"), 10)
    with target.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Name", "Numbers", "Groups", "Notes", "Clinic"]
    assert rows[1] == ["Ann Lee", "61412000001", "Patients", "Prefers mornings", "Glebe"]
