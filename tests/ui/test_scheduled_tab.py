"""The Scheduled tab lists the sends gwdesk holds and changes them through the core,
against a real sandbox and the profile's real store: what it lists, what an edit
changes (and what then goes), a refusal at its field, hostile text as plain text, and
what it says when nothing is scheduled."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.recurrence import Recurrence, RecurrenceKind
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.models.rows import ROW_ROLE
from gwdesk.ui.scheduled.columns import BY, RECIPIENTS, TEXT, WHEN
from gwdesk.ui.scheduled.edits import RecipientsDialog, TextDialog, TimeDialog
from gwdesk.ui.scheduled.tab import EMPTY, ONE_DESK, ScheduledTab
from gwdesk.ui.session import NOT_CONNECTED
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.scheduled_support import (
    NUMBERS,
    core,
    fresh_read,
    listing,
    lodged,
    schedule,
    scheduled_tab,
)


def cell(tab: ScheduledTab, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> str:
    value = tab.model.data(tab.model.index(row, column), role)
    return "" if value is None else str(value)


async def test_the_tab_lists_a_scheduled_send_with_when_whom_text_and_who(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    card = ContactCard("Ann Lee", (NUMBERS[0],), (), ())
    await asyncio.to_thread(store.contacts.add, card)
    await schedule(ui, "Clinic opens at ten", at=timedelta(hours=2, minutes=30))

    await listing(tab, 1)

    assert "in 2 h 30 min" in cell(tab, 0, WHEN) or "in 2 h 29 min" in cell(tab, 0, WHEN)
    assert cell(tab, 0, RECIPIENTS).startswith("3 · Ann Lee (+61 412 000 101), +61 412 000 102")
    assert cell(tab, 0, RECIPIENTS).endswith("+1 more")
    assert cell(tab, 0, TEXT) == "Clinic opens at ten"
    assert cell(tab, 0, BY) == (store.operator or "–")  # who scheduled it, if named
    assert "1 scheduled send · the next in 2 h" in tab.summary.text()
    assert tab.stack.currentWidget() is tab.table


async def test_the_soonest_send_is_listed_first(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    await schedule(ui, "Later", at=timedelta(days=3))
    await schedule(ui, "Sooner", at=timedelta(minutes=40))

    await listing(tab, 2)

    assert [cell(tab, row, TEXT) for row in range(2)] == ["Sooner", "Later"]
    assert "in 40 min" in cell(tab, 0, WHEN) or "in 39 min" in cell(tab, 0, WHEN)
    assert "in 3 days" in cell(tab, 1, WHEN)


async def test_edit_text_changes_what_is_listed_and_what_goes_at_its_time(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Clinic opens at ten")
    await listing(tab, 1)
    assert tab.select(held.batch_id)

    tab.edit_text()
    dialog = tab.dialog
    assert isinstance(dialog, TextDialog)
    assert dialog.editor.text() == "Clinic opens at ten"
    dialog.editor.set_text("Clinic opens at eleven")
    dialog.save_button.click()

    await wait_until(lambda: tab.dialog is None, 10, "the dialog closed")
    await wait_until(lambda: cell(tab, 0, TEXT) == "Clinic opens at eleven", 10, "listed anew")
    assert "text was changed" in tab.result.text()
    sending = ui.session.sending
    assert sending is not None
    assert held.due is not None
    due = held.due
    sending.now = lambda: due  # its time has come
    await core(ui).run_due()
    assert lodged(sandbox, "Clinic opens at eleven") == list(NUMBERS)
    assert lodged(sandbox, "Clinic opens at ten") == []


async def test_an_edit_the_core_refuses_is_shown_at_its_field_and_changes_nothing(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Keep me")
    await listing(tab, 1)
    tab.select(held.batch_id)
    tab.edit_text()
    dialog = tab.dialog
    assert isinstance(dialog, TextDialog)

    dialog.editor.set_text("   ")
    dialog.save_button.click()

    error = dialog.error_at("Message")
    await wait_until(lambda: error.isVisible(), 10, "the refusal at the Message field")
    assert "empty" in error.text()
    assert dialog.isVisible()  # stays open with what was typed
    [kept] = await core(ui).listed()
    assert kept.text == "Keep me"
    dialog.reject()


async def test_change_time_moves_the_send_and_a_past_time_is_refused_at_send_at(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Moved along")
    await listing(tab, 1)
    tab.select(held.batch_id)
    tab.change_time()
    dialog = tab.dialog
    assert isinstance(dialog, TimeDialog)

    dialog.picker.set_moment(datetime.now(UTC) - timedelta(hours=1))
    dialog.save_button.click()
    error = dialog.error_at("SendAt")
    await wait_until(lambda: error.isVisible(), 10, "the refusal at Send at")
    assert "passed" in error.text()

    later = (datetime.now(UTC) + timedelta(days=2)).replace(second=0, microsecond=0)
    dialog.picker.set_moment(later)
    dialog.save_button.click()
    await wait_until(lambda: tab.dialog is None, 10, "the dialog closed")
    [moved] = await core(ui).listed()
    assert moved.due == later
    await fresh_read(tab)
    assert "in 2 days" in cell(tab, 0, WHEN)


async def test_change_recipients_sends_to_the_numbers_typed_and_refuses_an_unusable_one(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Other people")
    await listing(tab, 1)
    tab.select(held.batch_id)
    tab.change_recipients()
    dialog = tab.dialog
    assert isinstance(dialog, RecipientsDialog)
    assert dialog.numbers.toPlainText().splitlines()[0] == "+61 412 000 101"

    dialog.numbers.setPlainText("0412 000 199\nnot a number")
    dialog.save_button.click()
    error = dialog.error_at("Recipients")
    await wait_until(lambda: error.isVisible(), 10, "the refusal at Recipients")
    assert "line 2" in error.text()
    assert (await core(ui).listed())[0].recipients == NUMBERS

    dialog.numbers.setPlainText("0412 000 199")
    dialog.save_button.click()
    await wait_until(lambda: tab.dialog is None, 10, "the dialog closed")
    await wait_until(lambda: cell(tab, 0, RECIPIENTS) == "1 · +61 412 000 199", 10, "listed anew")


async def test_hostile_text_is_shown_as_plain_text_on_one_line(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    hostile = '<b>Hi</b> <img src="/dev/zero"> \x1b[31mred\x1b[0m \u202eevil\nsecond line'
    tab = await scheduled_tab(ui, qtbot, sandbox)
    await schedule(ui, hostile)
    await listing(tab, 1)

    shown = cell(tab, 0, TEXT)
    assert shown.startswith('<b>Hi</b> <img src="/dev/zero"> ␛[31mred')
    assert "\u202e" not in shown
    assert "\ufffdevil" in shown
    assert "\n" not in shown
    assert shown.endswith("evil second line")
    tip = cell(tab, 0, TEXT, Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;Hi&lt;/b&gt;" in tip
    assert "<b>Hi" not in tip
    assert "<br>second line" in tip  # the whole text, its line break kept
    row = tab.model.data(tab.model.index(0, TEXT), ROW_ROLE)
    assert row.send.text == hostile  # kept as data


async def test_the_empty_state_says_what_the_tab_is_for_and_how_to_schedule(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = ScheduledTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.show()
    assert tab.stack.currentWidget() is tab.empty
    assert tab.empty.text() == NOT_CONNECTED

    await ui.connect(sandbox)
    await wait_until(lambda: tab.empty.text() == EMPTY, 10, "the empty state")

    assert tab.stack.currentWidget() is tab.empty
    assert tab.empty.isVisible()
    assert "Nothing is scheduled" in EMPTY
    assert "Schedule under Send at" in EMPTY
    assert tab.summary.text() == "No scheduled sends."
    assert not any(button.isEnabled() for button in tab.buttons)


async def test_a_one_desk_profile_says_the_console_must_be_running_to_send(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)

    assert tab.note.isVisible()
    assert tab.note.text() == ONE_DESK
    assert "keep this console open" in ONE_DESK
    assert "gwdesk scheduled run" in ONE_DESK


async def test_every_action_is_in_the_context_menu_and_needs_a_selected_send(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Menu")
    await listing(tab, 1)
    tab.table.clearSelection()
    assert not any(action.isEnabled() for action in tab.actions_)

    tab.select(held.batch_id)

    assert all(action.isEnabled() for action in tab.actions_)
    assert all(button.isEnabled() for button in tab.buttons)
    assert [b.text() for b in tab.buttons] == [a.text() for a in tab.actions_]


async def test_a_recurring_send_says_how_it_repeats(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    first = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    every = Recurrence(RecurrenceKind.WEEKLY, first, "Australia/Sydney")
    await core(ui).schedule(SmsMessage(Channel.REST_SMS, "Weekly notice"), NUMBERS, first, every)

    await listing(tab, 1)

    assert cell(tab, 0, WHEN).endswith(" · weekly")
    assert f"It repeats {every.describe()}" in cell(tab, 0, WHEN, Qt.ItemDataRole.ToolTipRole)
