"""Opt-outs tab: the account's list as replies change it, changes by hand with a reason,
import and export, each number's history, and outside text shown as text."""

from __future__ import annotations

import csv
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtWidgets import QDialogButtonBox

from gwdesk.app.list_send import ListSend
from gwdesk.domain.settings import OPT_IN_KEYWORDS, REPEAT_WINDOW_HOURS
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.replies import IncomingReply
from gwdesk.ui.optouts.change_dialog import ChangeDialog
from gwdesk.ui.optouts.tab import OptOutsTab
from gwdesk.ui.send.tab import SendTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.screenshot_support import WINDOW, in_window, shot

CUSTOMER = "61412345678"


async def connected_tab(ui: UiBundle, sandbox: SandboxThread, qtbot) -> OptOutsTab:
    await ui.connect(sandbox)
    tab = OptOutsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.resize(1100, 640)
    tab.show()
    return tab


def reply(ui: UiBundle, text: str, number: str = CUSTOMER) -> None:
    assert ui.session.store is not None
    ui.session.store.replies.add([IncomingReply(number, "61400000000", text, datetime.now(UTC))])


def dialog_of(tab: OptOutsTab) -> ChangeDialog:
    found = tab.findChildren(ChangeDialog)
    assert found, "the dialog is open"
    return found[-1]


async def test_a_stop_reply_is_listed_with_how_and_when(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    reply(ui, "Stop!")
    tab.refresh()
    await wait_until(lambda: tab.model.rowCount() == 1)
    row = tab.model.rows[0]
    assert (row.number, row.opted_out, row.keyword) == (CUSTOMER, True, "STOP")
    assert tab.counts.text().startswith("1 opted out · 0 opted back in")


async def test_opting_back_in_by_hand_needs_a_reason_and_keeps_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    reply(ui, "STOP")
    tab.refresh()
    await wait_until(lambda: tab.model.rowCount() == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: tab.remove_button.isEnabled())
    tab.remove_button.click()
    dialog = dialog_of(tab)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.isVisible()
    assert "Say why" in dialog.error.text()
    dialog.reason_edit.setText("signed the consent form")
    dialog.accept()
    await wait_until(lambda: "opted back in" in tab.message.text())
    assert ui.session.store is not None
    now = ui.session.store.optouts.get(CUSTOMER)
    assert now is not None
    assert (now.opted_out, now.reason) == (False, "signed the consent form")
    tab.show_opted_in.setChecked(True)
    await wait_until(lambda: tab.model.rowCount() == 1 and not tab.model.rows[0].opted_out)


async def test_a_number_opted_out_by_hand_shows_its_history(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    tab.change(opt_out=True)
    dialog = dialog_of(tab)
    dialog.number_edit.setText("0412 345 678")
    dialog.reason_edit.setText("complaint by email")
    dialog.accept()
    await wait_until(lambda: tab.model.rowCount() == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: tab.history_model.rowCount() == 1)
    assert tab.history_model.rows[0].reason == "complaint by email"
    assert "+61 412 345 678" in tab.history_box.title()


async def test_an_unusable_number_is_refused_in_the_dialog(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    tab.change(opt_out=True)
    dialog = dialog_of(tab)
    dialog.number_edit.setText("0412 345")
    dialog.reason_edit.setText("x")
    dialog.accept()
    assert dialog.isVisible()
    assert "Not a usable number" in dialog.error.text()


async def test_import_and_export_round_trip_and_exports_are_safe(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    source = tmp_path / "stop-list.csv"
    source.write_text("number,note\n0412 345 678,a\n+61 412 000 111,b\nnot a number,c\n")
    tab.import_from(source)
    await wait_until(lambda: tab.model.rowCount() == 2)
    assert "2 opted out" in tab.message.text()
    assert "1 unusable" in tab.message.text()
    assert ui.session.store is not None
    ui.session.store.optouts.set("61412000222", True, reason="=cmd|' /C calc'!A0")
    target = tmp_path / "out.csv"
    tab.export_to(target)
    await wait_until(lambda: "written to" in tab.message.text())
    rows = list(csv.reader(target.read_text(encoding="utf-8-sig").splitlines()))
    assert {r[0] for r in rows[1:]} == {CUSTOMER, "61412000111", "61412000222"}
    assert any(r[-1].startswith("'=") for r in rows)  # a formula never runs
    assert os.stat(target).st_mode & 0o777 == 0o600


async def test_a_reason_holding_markup_is_shown_as_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    assert ui.session.store is not None
    ui.session.store.optouts.set(CUSTOMER, True, reason='<img src="/dev/zero"><b>x</b>')
    tab.refresh()
    await wait_until(lambda: tab.model.rowCount() == 1)
    index = tab.model.index(0, len(tab.model.columns) - 1)
    assert tab.model.data(index) == '<img src="/dev/zero"><b>x</b>'
    assert "&lt;img" in str(tab.model.data(index, 3))  # the tooltip is escaped rich text


async def save_rules(tab: OptOutsTab, **fields: str | bool | int) -> None:
    """Type the rules given (the others as loaded) and save them; waits for the result."""
    await wait_until(lambda: tab.rules.opt_out_edit.text().startswith("STOP"))
    rules = tab.rules
    for name, value in fields.items():
        if name == "marketing_default":
            rules.marketing_box.setChecked(bool(value))
        elif name == "repeat":
            rules.repeat_edit.setValue(int(value))
        else:
            getattr(rules, f"{name}_edit").setText(str(value))
    rules.save_button.click()
    await wait_until(lambda: not rules.note.isHidden() and rules.note.text() != "Saving…")


async def test_saved_keywords_decide_what_the_next_reply_does(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await save_rules(tab, opt_out="HALT, stop", opt_in="resume")
    assert tab.rules.note.text().startswith("Saved")
    reply(ui, "Halt!")
    reply(ui, "stop", number="61412000111")
    assert ui.session.store is not None
    halted = ui.session.store.optouts.get(CUSTOMER)
    assert halted is not None
    assert (halted.opted_out, halted.keyword) == (True, "HALT")
    reply(ui, "START", number="61412000111")  # no longer an opt-in keyword
    still = ui.session.store.optouts.get("61412000111")
    assert still is not None
    assert still.opted_out


async def test_a_keyword_in_both_lists_is_refused_at_its_field_and_nothing_is_saved(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await wait_until(lambda: tab.rules.opt_out_edit.text().startswith("STOP"))
    tab.rules.opt_in_edit.setText("START, stop")
    tab.rules.save_button.click()
    assert "STOP cannot both opt out and opt back in" in tab.rules.errors["opt_in"].text()
    assert not tab.rules.errors["opt_in"].isHidden()
    assert ui.session.store is not None
    assert ui.session.store.settings.get(OPT_IN_KEYWORDS) == ("START", "UNSTOP")


async def test_an_empty_instruction_is_refused_at_its_field(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await wait_until(lambda: tab.rules.opt_out_edit.text().startswith("STOP"))
    tab.rules.instruction_edit.setText("   ")
    tab.rules.save_button.click()
    assert "say how to opt out" in tab.rules.errors["instruction"].text()


async def test_the_saved_instruction_is_what_the_send_tab_counts(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    send = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(send)
    send.form.editor.set_text("Sale today")
    send.form.marking.marketing.setChecked(True)
    await save_rules(tab, instruction="Text END to stop these")
    await wait_until(lambda: "Text END to stop these" in send.form.editor.appended_label.text())
    assert send.form.editor.sent_text() == "Sale today\nText END to stop these"
    assert tab.rules.note.property("role") == "ok"  # END is an opt-out keyword


async def test_an_instruction_naming_no_keyword_is_saved_with_a_warning(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await save_rules(tab, instruction="Call 02 9876 5432 to be removed")
    assert "names none of the opt-out keywords" in tab.rules.note.text()
    assert tab.rules.note.property("role") == "warning"


async def test_marketing_by_default_ticks_a_new_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await save_rules(tab, marketing_default=True)
    assert ui.session.sending is not None
    assert ui.session.sending.compliance.marketing_default
    send = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(send)
    assert send.form.marking.marketing.isChecked()


async def test_screenshot_optouts(
    ui: UiBundle, sandbox: SandboxThread, qtbot, screenshots_dir: Path | None
) -> None:
    await ui.connect(sandbox)
    tab = OptOutsTab(ui.session, ui.tasks, ui.theme)
    window = in_window(qtbot, tab)
    for number, text in (
        (CUSTOMER, "STOP"),
        ("61412000111", "stop please"),
        ("61412000222", "Unsubscribe"),
        ("61412000444", "End <b>NOW</b> \x1b[2J\x1b]0;pwned\x07"),
    ):
        reply(ui, text, number)
    assert ui.session.store is not None
    ui.session.store.optouts.set(
        "61412000333", True, reason='asked by phone <img src="x"> \x1b[31mred\x1b[0m \u202egnp'
    )
    tab.refresh()
    await wait_until(lambda: tab.model.rowCount() == 5)
    tab.table.selectRow(tab.model.rows.index(ui.session.store.optouts.get("61412000333")))
    await wait_until(lambda: tab.history_model.rowCount() >= 1)
    await wait_until(lambda: tab.rules.opt_out_edit.text().startswith("STOP"))
    await shot(window, screenshots_dir, "optouts.png", WINDOW)


async def test_the_repeat_window_is_saved_with_the_rules_and_read_by_the_next_send(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await connected_tab(ui, sandbox, qtbot)
    await wait_until(lambda: tab.rules.opt_out_edit.text().startswith("STOP"))
    assert tab.rules.repeat_edit.value() == 24  # the default: a day
    await save_rules(tab, repeat=6)
    assert tab.rules.note.text().startswith("Saved")
    store, sending = ui.session.store, ui.session.sending
    assert store is not None
    assert sending is not None
    assert store.settings.get(REPEAT_WINDOW_HOURS) == 6
    assert await ListSend.of(sending, store).repeat_window() == timedelta(hours=6)
    again = OptOutsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(again)
    await wait_until(lambda: again.rules.repeat_edit.value() == 6)
