"""Templates and contacts where a single message is composed: the Send tab and a conversation.

The template picker fills the Send tab and a conversation's reply box, saves the
text as a template, renames and deletes them; a template sent to one number takes
the fields of the contact holding it, or is refused at the message with why (never
sent with a hole); the To field completes names and numbers from the address book;
the contact's name shows beside the number in the Replies table, the conversation
and the send history; a send the credits do not cover asks first. Through a real
sandbox.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from PySide6.QtWidgets import QDialog, QDialogButtonBox
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.table import FROM
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.widgets.phone_preview import phone_time
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import add_contacts, set_credits, store_of
from tests.ui.replies_support import CUSTOMER, post_reply, replies_tab
from tests.ui.send_support import fill, message_count, messages, send_and_wait, send_tab

REMINDER = "Hi {name}, your check-up at {clinic} is due on {due|3 March}."
ZOE = ContactCard("Zoë Nguyễn", (CUSTOMER,), (("Clinic", "Glebe"),), ("Patients",))


async def saved_templates(ui: UiBundle, *pairs: tuple[str, str]) -> None:
    templates = store_of(ui).templates
    await asyncio.to_thread(lambda: [templates.add(name, text) for name, text in pairs])


async def listed(tab: SendTab, count: int) -> None:
    tab.picker.refresh()
    await wait_until(lambda: len(tab.picker.templates) == count, 10, "the templates listed")


# ---- the picker ------------------------------------------------------------------------------


async def test_the_picker_fills_the_send_tab_with_a_saved_template(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await saved_templates(ui, ("Reminder", REMINDER), ("Closed", "Closed on Monday."))
    await listed(tab, 2)
    titles = [a.text() for a in tab.picker.menu_.actions() if a.text()]
    assert titles[:2] == ["Closed", "Reminder"]
    next(a for a in tab.picker.menu_.actions() if a.text() == "Reminder").trigger()
    assert tab.form.editor.text() == REMINDER
    assert "{name}, {clinic}, {due|3 March}" in tab.form.editor.template_label.text()


async def test_the_text_is_saved_as_a_template_and_renamed_and_deleted(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.editor.set_text("Your order {order} is ready.")
    tab.picker.ask_name()
    editor = tab.picker.prompt
    assert editor is not None
    assert editor.text() == "Your order {order} is ready."
    assert editor.fields.text() == "Fields: {order}"
    editor.name_edit.setText("Order ready")
    editor.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    await wait_until(lambda: [t.name for t in tab.picker.templates] == ["Order ready"])
    assert tab.template_note.text() == "Saved as the template 'Order ready'."
    assert tab.picker.prompt is None  # the editor closed once the template was kept

    await tab.picker.rename("Order ready", "Pick-up")  # type: ignore[misc]
    assert [(t.name, t.text) for t in tab.picker.templates] == [
        ("Pick-up", "Your order {order} is ready.")
    ]
    await tab.picker.delete("Pick-up")  # type: ignore[misc]
    assert tab.picker.templates == []
    assert store_of(ui).templates.listing() == []


async def test_saving_over_a_template_asks_first(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await saved_templates(ui, ("Reminder", "old text"))
    await listed(tab, 1)
    tab.form.editor.set_text("new text")
    await tab.picker.save("reminder")  # type: ignore[misc]
    box = tab.picker.question
    assert box is not None
    assert "is kept already" in box.text()
    next(b for b in box.buttons() if b.text() == "Replace").click()
    await wait_until(lambda: tab.picker.templates[0].text == "new text")


async def test_a_template_that_cannot_be_read_is_not_saved(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.editor.set_text("Hi {name, see you")
    await tab.picker.save("Broken")  # type: ignore[misc]
    assert tab.template_note.text().startswith("Not saved: the text is not a usable template")
    assert store_of(ui).templates.listing() == []


async def test_a_name_the_store_refuses_is_said_at_the_name_and_the_text_is_kept(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.editor.set_text("<b>Hi</b> {name}")
    tab.picker.ask_name()
    editor = tab.picker.prompt
    assert editor is not None
    editor.name_edit.setText("Spoof\u202egnp.exe")
    editor.save()
    await wait_until(lambda: editor.name_error.isVisible(), 10, "the name refused")
    assert "U+202E" in editor.name_error.text()
    assert editor.isVisible()
    assert editor.text() == "<b>Hi</b> {name}"
    assert store_of(ui).templates.listing() == []


async def test_a_text_that_is_no_template_is_said_at_the_text_in_the_editor(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.editor.set_text("Hi {name, see you")
    tab.picker.ask_name()
    editor = tab.picker.prompt
    assert editor is not None
    assert editor.fields.text().startswith("Not a usable template")
    editor.name_edit.setText("Broken")
    editor.save()
    await wait_until(lambda: editor.text_error.isVisible(), 10, "the text refused")
    assert editor.text_error.text().startswith("Not a usable template")
    assert store_of(ui).templates.listing() == []


async def test_a_saved_templates_name_and_text_are_edited_from_the_manage_list(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await saved_templates(ui, ("Reminder", REMINDER))
    await listed(tab, 1)
    tab.picker.manage()
    dialog = tab.picker.dialog
    assert dialog is not None
    await wait_until(lambda: dialog.names.count() == 1)
    dialog.rename_button.click()
    editor = tab.picker.prompt
    assert editor is not None
    assert (editor.name(), editor.text()) == ("Reminder", REMINDER)
    editor.name_edit.setText("Check-up")
    editor.text_edit.setPlainText("Hi {name}, see you at {clinic|our clinic}.")
    assert editor.fields.text() == "Fields: {name}, {clinic|our clinic}"
    editor.save()
    await wait_until(lambda: [t.name for t in tab.picker.templates] == ["Check-up"], 10)
    assert store_of(ui).templates.get("Check-up").text == (  # type: ignore[union-attr]
        "Hi {name}, see you at {clinic|our clinic}."
    )
    assert store_of(ui).templates.get("Reminder") is None


async def test_the_manage_dialog_uses_a_template(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await saved_templates(ui, ("Reminder", REMINDER))
    await listed(tab, 1)
    tab.picker.manage()
    dialog = tab.picker.dialog
    assert dialog is not None
    await wait_until(lambda: dialog.names.count() == 1)
    assert dialog.text.toPlainText() == REMINDER
    dialog.use()
    assert tab.form.editor.text() == REMINDER
    assert dialog.result() == QDialog.DialogCode.Accepted


async def test_the_picker_fills_the_conversation_box(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    await saved_templates(ui, ("Thanks", "Thanks {name|there}, see you soon."))
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Is Friday still ok?")
    await wait_until(lambda: tab.model is not None and tab.model.total == 1)
    tab.table.selectRow(0)
    pane = tab.conversation
    pane.picker.refresh()
    await wait_until(lambda: len(pane.picker.templates) == 1)
    pane.picker.choose("thanks")
    assert pane.editor.text() == "Thanks {name|there}, see you soon."

    pane.send()
    await wait_until(lambda: not pane.sending(), 20)
    assert [m["message"] for m in messages(sandbox)] == ["Thanks there, see you soon."]


# ---- a template to one number ----------------------------------------------------------------


async def test_a_template_to_a_contact_takes_the_contacts_fields(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE)
    fill(tab, "0412 345 678", REMINDER)
    await send_and_wait(tab)
    assert [m["message"] for m in messages(sandbox)] == [
        "Hi Zoë Nguyễn, your check-up at Glebe is due on 3 March."
    ]
    assert tab.status_label.text().startswith("Sent to +61 412 345 678")


async def test_a_template_to_a_number_that_is_no_contact_is_refused_at_the_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 679", REMINDER)
    await send_and_wait(tab)
    assert message_count(sandbox) == 0
    error = tab.form.error_text("text")
    assert error.startswith("No value for {name}: +61 412 345 679 is not one of your contacts")
    assert tab.form.editor.text() == REMINDER  # kept
    assert store_of(ui).outbox.batches(open_only=False) == []


async def test_a_contact_without_the_field_is_refused_with_why(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ContactCard("Ann", (CUSTOMER,)))
    fill(tab, "0412 345 678", REMINDER)
    await send_and_wait(tab)
    assert message_count(sandbox) == 0
    assert "the contact Ann has no field 'clinic'" in tab.form.error_text("text")


async def test_the_preview_shows_a_single_templated_message_filled_in(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE)
    fill(tab, "0412 345 678", REMINDER)
    tab.open_preview()
    await wait_until(lambda: tab.preview is not None and tab.preview.isVisible(), 10)
    assert tab.preview is not None
    phone = tab.preview.panel.phone
    assert phone.message == "Hi Zoë Nguyễn, your check-up at Glebe is due on 3 March."
    assert "UCS-2" in phone.parts.text()
    assert message_count(sandbox) == 0


async def test_the_preview_shows_a_scheduled_message_arriving_at_its_time(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "See you on Monday")
    monday = next_weekday(datetime.now().astimezone() + timedelta(days=2), 0, hour=9)
    tab.form.send_at.enabled_box.setChecked(True)
    tab.form.send_at.set_moment(monday)
    tab.open_preview()
    await wait_until(lambda: tab.preview is not None and tab.preview.isVisible(), 10)
    assert tab.preview is not None
    kind = tab.preview.panel.phone.kind
    assert kind.text() == f"Text Message · {monday:%A} 09:00"
    assert kind.toolTip().startswith(f"Scheduled for {monday:%A %-d %B %Y} 09:00")


def next_weekday(after: datetime, weekday: int, *, hour: int) -> datetime:
    """The first `weekday` (0: Monday) after `after`, at `hour` o'clock."""
    day = after + timedelta(days=(weekday - after.weekday()) % 7)
    return day.replace(hour=hour, minute=0, second=0, microsecond=0)


def test_a_phone_lists_a_message_by_how_far_off_it_arrives() -> None:
    now = datetime(2026, 11, 28, 14, 5).astimezone()  # a Saturday
    assert phone_time(now, now) == "Today 14:05"
    assert phone_time(now + timedelta(days=1, hours=-5), now) == "Tomorrow 09:05"
    assert phone_time(now + timedelta(days=2), now) == "Monday 14:05"
    assert phone_time(now + timedelta(days=7), now) == "5 Dec 14:05"
    assert phone_time(now + timedelta(days=40), now) == "7 Jan 2027 14:05"


# ---- names beside numbers ---------------------------------------------------------------------


async def test_the_to_field_completes_names_and_numbers_from_contacts(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE, ContactCard("Zack Ong", ("61412000777",)))
    tab.completer.edit.setText("zo")
    tab.completer.search()
    await wait_until(lambda: tab.completer.shown() == ["Zoë Nguyễn · +61 412 345 678"])
    tab.completer.edit.setText("0412 000")
    tab.completer.search()
    await wait_until(lambda: tab.completer.shown() == ["Zack Ong · +61 412 000 777"])
    index = tab.completer.model.index(0, 0)
    assert tab.completer.completer.pathFromIndex(index) == "+61 412 000 777"  # what goes in To


async def test_a_contacts_number_shows_its_name_at_to_and_in_the_history(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE)
    fill(tab, "0412 345 678", "Your results are in.")
    await wait_until(lambda: "· Zoë Nguyễn" in tab.form.recipient.feedback.text(), 10)
    await send_and_wait(tab)
    model = tab.history.model
    await wait_until(lambda: model.rowCount() == 1 and "Zoë" in str(model.index(0, 1).data()))
    assert model.index(0, 1).data() == "+61 412 345 678 · Zoë Nguyễn"


async def test_a_reply_from_a_contact_shows_the_contacts_name(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ZOE)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="See you Friday")
    await post_reply(template, text="Who is this?", sender="61412000555")
    model = tab.model
    assert model is not None
    await wait_until(lambda: model.total == 2)

    def cell(row: int) -> str:
        return str(model.index(row, FROM).data())

    await wait_until(lambda: "Zoë" in cell(0), 10, "the name beside the number")
    assert cell(0) == "Zoë Nguyễn · +61 412 345 678"
    assert cell(1) == "+61 412 000 555"
    tab.table.selectRow(0)
    pane = tab.conversation
    await wait_until(lambda: "Zoë" in pane.title.text(), 10)
    assert pane.title.text() == "Conversation with Zoë Nguyễn · +61 412 345 678"


async def test_a_contact_renamed_in_the_address_book_is_renamed_in_the_replies(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    (zoe,) = await add_contacts(ui, ZOE)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="See you Friday")
    model = tab.model
    assert model is not None
    await wait_until(lambda: "Zoë" in str(model.index(0, FROM).data()), 10)
    contacts = store_of(ui).contacts
    await asyncio.to_thread(contacts.update, zoe.id, ContactCard("Zoe N.", (CUSTOMER,)))
    ui.session.contacts_changed.emit()  # as the Contacts tab does after a change
    await wait_until(lambda: str(model.index(0, FROM).data()).startswith("Zoe N. ·"), 10)


async def test_a_send_the_credits_do_not_cover_asks_first_and_keeps_the_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    await set_credits(sandbox, 1)
    fill(tab, "0412 345 678", "x" * 200)  # 2 parts
    tab.send()
    await wait_until(lambda: tab.confirm_box is not None and tab.confirm_box.isVisible(), 10)
    box = tab.confirm_box
    assert box is not None
    assert "needs 2 credits and the account has 1" in box.text()
    next(b for b in box.buttons() if b.text() == "Cancel").click()
    await wait_until(lambda: not tab.sending())
    assert message_count(sandbox) == 0
    assert tab.form.editor.text() == "x" * 200
    assert tab.status_label.text() == "Not sent: your message is kept."
