"""Personal messages from the Batch tab, against a real sandbox: a template filled per recipient.

A 250-row CSV of first names (some needing UCS-2) with three rows missing a field:
every text is made before anything is sent, the totals give the parts as a range
and name who turns the message into UCS-2, the three are listed with why, and the
send lodges 247 messages, each recipient's own text in the sandbox. A contact group
as the recipients; a placeholder pointed at another column; the preview stepping
through recipients; a test to the operator's own number; the question a send asks
when the credits do not cover it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.settings import OWN_NUMBER
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState
from tests.ui.batch_support import confirm_send
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import (
    MISSING,
    TEMPLATE,
    UCS2_NAMES,
    add_contacts,
    batch_tab,
    confirm,
    expected_texts,
    idle,
    imported,
    messages_by_number,
    number,
    planned,
    sent,
    set_credits,
    store_of,
    write_sheet,
)
from tests.ui.plain_text_support import label_shows


async def test_the_totals_give_the_parts_as_a_range_and_name_the_ucs2_recipients(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv"))
    await planned(tab)

    assert tab.totals.figures["valid"].text() == "247"
    assert tab.totals.figures["invalid"].text() == "3"
    assert tab.totals.figures["parts"].text() == "1"
    assert tab.totals.figures["total_parts"].text() == "247"
    assert tab.totals.figures["requests"].text() == "30"  # 10 names x 3 clinics, each text shared
    line = tab.totals.ucs2_label.text()
    assert line.startswith("UCS-2 (70 characters a part) for 74 recipients")
    assert {name for name in UCS2_NAMES if name in line} | {
        name for name in UCS2_NAMES if name in tab.totals.ucs2_label.toolTip()
    } == UCS2_NAMES
    assert "row 3, +61 412 000 001: {first name} “Zoë” has ë" in line
    assert tab.totals.plan_label.text().startswith("247 personal messages, 1 parts each")


async def test_the_recipients_missing_a_field_are_listed_with_why_and_exported(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv"))
    await planned(tab)

    listed = [(r.row, r.reason) for r in tab.recipients.invalid.rows]
    assert listed == [(i + 2, "no value for {clinic}") for i in MISSING]
    model = tab.recipients.invalid.model
    assert model.rowCount() == 3
    export = tmp_path / "invalid.csv"
    tab.recipients.export_invalid(export)
    await wait_until(lambda: tab.recipients.invalid.export_note.text().startswith("Saved"))
    lines = export.read_text(encoding="utf-8-sig").splitlines()
    assert len(lines) == 4
    assert all("no value for {clinic}" in line for line in lines[1:])


async def test_a_250_row_csv_lodges_247_messages_each_with_its_own_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv"))
    await planned(tab)

    tab.send()
    box = await confirm(tab, "Send to 247 recipients")
    assert "3 recipients cannot be sent to" in box.text()
    await sent(tab)

    assert tab.run is not None
    assert tab.run.personal is not None
    assert [e.state for e in tab.run.entries] == [EntryState.LODGED] * 30
    assert tab.totals.outcome.text().startswith("All 30 requests lodged: 247 recipients.")
    await wait_until(lambda: len(messages_by_number(sandbox)) == 247, 30, "messages created")
    assert messages_by_number(sandbox) == expected_texts()
    await idle(tab, ui)


async def test_a_placeholder_takes_another_column_when_pointed_at_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv", 20, first="Given"))
    await planned(tab)
    assert tab.planner.failure is not None
    assert "{first name}" in tab.planner.failure.message  # no column of that name
    assert "Same name" in tab.merge.combos["first name"].currentText()

    tab.merge.choose("first name", "given")
    await planned(tab)
    plan = tab.planner.plan
    assert plan is not None
    assert plan.messages[0].text == "Hi Ann, your check-up at Glebe is due on 3 March."
    assert tab.merge.examples["first name"].text() == "e.g. Ann"


async def test_the_first_name_column_is_matched_in_any_letter_case(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv", 5, first="FIRST  NAME"))
    await planned(tab)
    plan = tab.planner.plan
    assert plan is not None
    assert plan.messages[1].text == "Hi Zoë, your check-up at Newtown is due on 3 March."
    assert "FIRST  NAME" in tab.merge.combos["first name"].currentText()


async def test_a_contact_group_is_the_recipients_each_with_their_own_fields(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    await add_contacts(
        ui,
        ContactCard("Ann Lee", ("61412000001",), (("Clinic", "Glebe"),), ("Patients",)),
        ContactCard("Zoë Nguyễn", ("61412000002",), (("Clinic", "Bondi"),), ("patients",)),
        ContactCard("Staff Room", ("61412000009",), (), ("Staff",)),
    )
    tab.recipients.reload_groups()
    await wait_until(lambda: [g for g, _n in tab.recipients.groups] == ["Patients", "Staff"])
    tab.compose.editor.set_text("Dear {name}, {clinic} clinic is open late this week.")
    tab.recipients.choose_groups(["Patients"])
    await planned(tab)
    assert tab.totals.figures["valid"].text() == "2"
    assert "2 contacts of the group Patients" in tab.recipients.summary.text()

    question = await confirm_send(tab)  # a group send asks, as every list send does
    assert question.startswith(
        "Message: “Dear {name}, {clinic} clinic is open late this week.”\nRecipients: 2\n"
    )
    await sent(tab)
    await wait_until(lambda: len(messages_by_number(sandbox)) == 2, 20, "messages created")
    assert messages_by_number(sandbox) == {
        "61412000001": "Dear Ann Lee, Glebe clinic is open late this week.",
        "61412000002": "Dear Zoë Nguyễn, Bondi clinic is open late this week.",
    }
    await idle(tab, ui)


async def test_a_group_adds_its_members_to_a_same_for_all_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    await add_contacts(ui, ContactCard("Ann", ("61412000001",), (), ("Patients",)))
    tab.recipients.reload_groups()
    await wait_until(lambda: bool(tab.recipients.groups))
    tab.compose.editor.set_text("The clinic is closed on Monday.")
    tab.recipients.paste.setPlainText("0412 000 002\n0412 000 001")
    tab.recipients.check_paste()
    tab.recipients.choose_groups(["Patients"])
    await wait_until(lambda: not tab.recipients.pending() and tab.recipients.result is not None)
    result = tab.recipients.result
    assert result is not None
    assert result.numbers == ("61412000002", "61412000001")
    assert result.duplicates == 1  # Ann was pasted too: texted once
    await idle(tab, ui)


async def test_the_preview_steps_through_recipients_and_jumps_to_an_invalid_one(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text(TEMPLATE)
    tab.compose.sender_edit.setText("0412 999 000")
    await imported(tab, write_sheet(tmp_path / "patients.csv", 40))
    await planned(tab)
    tab.open_preview()
    assert tab.preview.dialog is not None
    panel = tab.preview.dialog.panel
    phone = panel.phone
    assert panel.position.text() == "Recipient 1 of 40 · row 2"
    assert phone.message == "Hi Ann, your check-up at Glebe is due on 3 March."
    assert phone.sender_label.text() == "+61 412 999 000"
    assert phone.parts.text().startswith("1 part · GSM-7")

    panel.next()
    assert panel.recipient.text() == "+61 412 000 001"
    assert phone.message == "Hi Zoë, your check-up at Newtown is due on 3 March."
    assert "UCS-2" in phone.parts.text()
    panel.previous()
    assert panel.index == 0

    panel.next_invalid()
    assert panel.position.text() == "Recipient 18 of 40 · row 19"
    assert phone.message is None
    assert phone.refusal.text() == "Not sent to this recipient: no value for {clinic}"
    assert not phone.refusal.isHidden()


async def test_send_a_test_to_me_sends_the_first_message_to_the_own_number(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    await asyncio.to_thread(store_of(ui).settings.set, OWN_NUMBER, "61499888777")
    ui.session.rules_changed.emit()  # as the Opt-outs tab does once the rules are saved
    await wait_until(lambda: tab.send_to_me.own_number == "61499888777")
    tab.compose.editor.set_text(TEMPLATE)
    await imported(tab, write_sheet(tmp_path / "patients.csv", 12))
    await planned(tab)

    tab.send_test()
    await wait_until(lambda: tab.totals.outcome.text().startswith("Test sent to"), 20)
    await wait_until(lambda: bool(messages_by_number(sandbox)), 20)
    assert messages_by_number(sandbox) == {
        "61499888777": "Hi Ann, your check-up at Glebe is due on 3 March."
    }
    assert tab.run is None  # the batch itself is not sent


async def test_send_a_test_to_me_without_an_own_number_says_where_to_set_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text("Hello")
    tab.send_test()
    assert "Opt-outs tab ▸ Rules" in tab.totals.error.text()
    assert not tab.totals.error.isHidden()


async def test_a_send_the_credits_do_not_cover_asks_first(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    await set_credits(sandbox, 10)
    tab.compose.editor.set_text("Hi {first name}, your check-up is due.")
    await imported(tab, write_sheet(tmp_path / "patients.csv", 20))
    await planned(tab)
    await wait_until(lambda: "more than the balance" in tab.totals.cost_label.text(), 10)
    assert tab.totals.cost_label.text().startswith(
        "Cost: 20 parts, 20 credits, but the account has 10"
    )

    tab.send()
    box = await confirm(tab, "Cancel")
    assert "needs 20 credits and the account has 10" in box.text()
    await wait_until(lambda: not tab.sending)
    assert tab.run is None
    assert store_of(ui).outbox.batches(open_only=False) == []
    assert messages_by_number(sandbox) == {}


async def test_a_same_for_all_batch_the_credits_do_not_cover_asks_first(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    await set_credits(sandbox, 2)
    tab.compose.editor.set_text("The clinic is closed on Monday.")
    tab.recipients.paste.setPlainText("\n".join(f"0412 000 {i:03d}" for i in range(5)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.pending())
    tab.send()
    box = await confirm(tab, "Send to 5 recipients")
    assert "needs 5 credits and the account has 2" in box.text()
    await sent(tab)
    assert tab.run is not None
    assert tab.run.count(EntryState.LODGED) == 1
    await idle(tab, ui)


async def test_an_unreadable_template_is_refused_at_the_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text("Hi {first name, see you")
    await imported(tab, write_sheet(tmp_path / "patients.csv", 3))
    tab.send()
    assert "never closed" in tab.compose.error_text("text")
    assert tab.run is None
    assert "character 4" in tab.compose.editor.template_label.text()


async def test_numbers_are_grouped_per_identical_text_in_the_outbox(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    tab.compose.editor.set_text("Your check-up at {clinic} is due.")
    await imported(tab, write_sheet(tmp_path / "patients.csv", 9))
    await planned(tab)
    await confirm_send(tab)
    await sent(tab)
    assert tab.run is not None
    texts = [dict(e.body)["text"] for e in tab.run.entries]
    assert sorted(texts) == sorted(
        f"Your check-up at {c} is due." for c in ("Glebe", "Newtown", "Bondi")
    )
    assert sorted(e.recipient_count for e in tab.run.entries) == [3, 3, 3]
    assert number(0) in tab.run.entries[0].recipients
    await idle(tab, ui)


async def test_hostile_values_and_headers_are_shown_as_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await batch_tab(ui, qtbot, sandbox)
    source = tmp_path / "hostile.csv"
    source.write_text(
        '"<i>First</i> name",Mobile\n'
        '"<b>Zoë</b> <img src=""/dev/zero"">",0412 000 001\n'
        '"\x1b[2J Ann \u202e",0412 000 002\n',
        encoding="utf-8",
    )
    tab.compose.editor.set_text("Hi {first name}, see you soon.")
    await imported(tab, source)
    await planned(tab)
    assert tab.planner.failure is not None  # no column is called "first name"
    tab.merge.choose("first name", "<i>first</i> name")
    await planned(tab)
    plan = tab.planner.plan
    assert plan is not None
    assert [r.reason for r in plan.invalid] == [
        "its {first name} holds U+001B, a control character"
    ]
    combo = tab.merge.combos["first name"]
    assert "Column: <i>First</i> name" in [combo.itemText(i) for i in range(combo.count())]
    assert label_shows(tab.totals.ucs2_label).text.count("<b>Zoë</b>") == 1
    assert label_shows(tab.totals.ucs2_label).bold == []
    tab.open_preview()
    assert tab.preview.dialog is not None
    bubble = tab.preview.dialog.panel.phone.bubble
    seen = label_shows(bubble)
    assert (seen.images, seen.bold) == ([], [])
    assert (
        tab.preview.dialog.panel.phone.message
        == 'Hi <b>Zoë</b> <img src="/dev/zero">, see you soon.'
    )
    tab.preview.dialog.panel.next_invalid()
    refusal = label_shows(tab.preview.dialog.panel.phone.refusal)
    assert "\x1b" not in refusal.text
    assert "{first name} holds" in refusal.text
