"""Pictures of personal messages and contacts at 1280x800, saved with `GWDESK_SCREENSHOTS`.

The template picker's menu and its Manage window, the Batch tab with a template's
merge fields and totals (a column pointed at another), the preview's phone, and
the Contacts tab, all with realistic data and some hostile text (markup in a
name, an escape code in a field). Every run checks each picture; the folder only
decides whether they are saved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.contacts.tab import ContactsTab
from gwdesk.ui.send.tab import SendTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import (
    add_contacts,
    batch_tab,
    imported,
    planned,
    set_credits,
    store_of,
)
from tests.ui.screenshot_support import WINDOW, in_window, shot
from tests.ui.send_support import send_tab

PEOPLE = [
    ("Zoë", "Nguyễn", "0412 000 101", "Glebe", "3 March"),
    ("Ann", "Lee", "0412 000 102", "Newtown", "5 March"),
    ("Søren", "Berg", "0412 000 103", "Bondi", "5 March"),
    ("Chloé", "Martin", "0412 000 104", "", "6 March"),
    ("Mia", "García", "0412 000 105", "Glebe", ""),
    ("<b>Kai</b>", "Ong", "0412 000 106", "Bondi", "7 March"),
    ("Łukasz", "Nowak", "0412 000 107", "Newtown", "9 March"),
    ("José", "Silva", "0412 000 108", "Glebe", "9 March"),
]
REMINDER = (
    "Hi {given}, your check-up at Harbour Dental {clinic|Glebe} is due on {due}. "
    "Reply YES to book or call 02 9876 5432."
)


def write_patients(path: Path) -> Path:
    lines = ["Given,Surname,Mobile,Clinic,Due"]
    lines += [",".join(person) for person in PEOPLE]
    lines += [f"Patient {i},Smith,0412 001 {i:03d},Glebe,12 March" for i in range(40)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_screenshot_template_picker(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    window = in_window(qtbot, tab)
    templates = store_of(ui).templates
    for name, text in (
        ("Check-up reminder", REMINDER),
        ("Closed Monday", "Harbour Dental is closed on Monday for the public holiday."),
        ("Results ready <b>lab</b>", "Hi {name|there}, your results are in: call us."),
        ("Thanks", "Thanks {name|there}, see you soon!"),
    ):
        await asyncio.to_thread(templates.add, name, text)
    tab.picker.refresh()
    await wait_until(lambda: len(tab.picker.templates) == 4)
    tab.picker.choose("check-up reminder")
    tab.form.recipient.set_text("0412 000 101")
    await shot(window, screenshots_dir, "template-picker-send.png", WINDOW)

    menu = tab.picker.menu_
    menu.popup(tab.picker.mapToGlobal(tab.picker.rect().bottomLeft()))
    await wait_until(menu.isVisible)
    await shot(menu, screenshots_dir, "template-picker-menu.png")
    menu.hide()

    tab.picker.manage()
    dialog = tab.picker.dialog
    assert dialog is not None
    await wait_until(lambda: dialog.names.count() == 4)
    dialog.select("Check-up reminder")
    await shot(dialog, screenshots_dir, "template-manage.png")
    dialog.close()


async def test_screenshot_merge_fields_and_preview(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path, screenshots_dir: Path | None
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    window = in_window(qtbot, tab)
    await set_credits(sandbox, 40)
    tab.compose.editor.set_text(REMINDER)
    tab.compose.sender_edit.setText("0412 999 000")
    await imported(tab, write_patients(tmp_path / "march-recalls.csv"))
    await planned(tab)
    await wait_until(lambda: bool(tab.totals.cost_label.text()), 10, "the cost")
    assert tab.planner.plan is not None
    await shot(window, screenshots_dir, "batch-merge-fields.png", WINDOW)

    tab.open_preview()
    assert tab.preview.dialog is not None
    tab.preview.dialog.panel.show_at(0)
    await shot(tab.preview.dialog, screenshots_dir, "preview-phone.png")
    tab.preview.dialog.panel.next_invalid()
    await shot(tab.preview.dialog, screenshots_dir, "preview-phone-invalid.png")
    tab.preview.dialog.close()


async def test_screenshot_contacts(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    await ui.connect(sandbox)
    tab = ContactsTab(ui.session, ui.tasks, ui.theme)
    window = in_window(qtbot, tab)
    cards = [
        ContactCard(
            f"{given} {surname}",
            ("61" + mobile.replace(" ", "")[1:],),
            (("Clinic", clinic or "Glebe"), ("Due", due), ("Given", given)),
            ("Patients", "March recall") if i % 2 else ("Patients",),
            "Prefers mornings" if i == 0 else "",
        )
        for i, (given, surname, mobile, clinic, due) in enumerate(PEOPLE)
    ]
    cards.append(
        ContactCard(
            "Front desk",
            ("61298765432", "61412999000"),
            (("Note", "<img src=/dev/zero> <b>VIP</b> desk"),),
            ("Staff",),
        )
    )
    await add_contacts(ui, *cards)
    await asyncio.to_thread(store_of(ui).optouts.set, "61412000103", True, reason="asked by phone")
    tab.refresh()
    await wait_until(lambda: len(tab.model.rows) == len(cards), 10)
    row = next(i for i, c in enumerate(tab.model.rows) if c.name == "Søren Berg")
    tab.table.selectRow(row)
    await wait_until(lambda: not tab.detail_optout.isHidden(), 10)
    await shot(window, screenshots_dir, "contacts.png", WINDOW)

    tab.edit()
    await wait_until(lambda: tab.dialog is not None, 10)
    assert tab.dialog is not None
    await shot(tab.dialog, screenshots_dir, "contact-dialog.png")
    tab.dialog.reject()


async def test_screenshot_send_tab_cost_and_name(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    tab: SendTab = await send_tab(ui, qtbot, sandbox)
    window = in_window(qtbot, tab)
    await set_credits(sandbox, 1)
    await add_contacts(
        ui, ContactCard("Zoë Nguyễn", ("61412000101",), (("Clinic", "Glebe"), ("Due", "3 March")))
    )
    tab.form.recipient.set_text("0412 000 101")
    tab.form.editor.set_text("Hi {name}, your check-up at {clinic} is due on {due}. " * 3)
    await wait_until(lambda: "Zoë" in tab.form.recipient.feedback.text(), 10)
    await wait_until(lambda: "more than the balance" in tab.cost_label.text(), 10)
    await shot(window, screenshots_dir, "send-template-cost.png", WINDOW)
