"""Send tab over REST: what reaches the sandbox, refusals at the field, results in the history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.app.scheduled import ScheduledSends
from gwdesk.app.sms import Channel
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.widgets.reply_options import ReplyMode
from gwdesk.ui.widgets.validity import is_invalid
from tests.conftest import SandboxFactory
from tests.hours_support import inside_sending_hours
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import (
    fill,
    message_count,
    messages,
    send_and_wait,
    send_tab,
)


async def test_a_rest_send_reaches_the_gateway_with_every_field(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "Your table is ready.")
    tab.form.sender_edit.setText("ACME")
    tab.form.external_id.setText("booking-17")
    tab.form.tags.setText("tables, evening")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert row["to_number"] == "61412345678"
    assert row["message"] == "Your table is ready."
    assert row["from_number"] == "ACME"
    assert row["external_system_id"] == "booking-17"
    assert row["tags"] == "tables,evening"
    assert row["service_id"] == 1
    assert row["sent_us"] == row["lodged_us"]


async def test_the_history_lists_the_result_and_the_store_records_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "+61 412 345 678", "First")
    await send_and_wait(tab)
    fill(tab, "+61 412 345 679", "Second")
    await send_and_wait(tab)
    entries = tab.history.entries()
    assert [e.text for e in entries] == ["Second", "First"]
    newest = entries[0]
    assert newest.ok
    assert newest.status == "ACTIVE"
    assert newest.message_id == sandbox.query("SELECT message_id FROM messages ORDER BY id")[1][0]
    assert newest.external_system_id is not None
    assert newest.external_system_id.startswith("gwd-")
    assert newest.message_id in tab.status_label.text()
    assert ui.session.store is not None
    stored = ui.session.store.history.since(datetime.now(UTC) - timedelta(minutes=1))
    assert [e.message_id for e in stored] == [e.message_id for e in entries]


async def test_a_two_way_send_carries_httppost_and_its_reply_path(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Reply YES to confirm")
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("HTTPPOST")
    tab.form.replies.path_edit.setText("https://hooks.example.com/sms?from=#FROM#&text=#MSG#")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert row["reply_type"] == "HTTPPOST"
    assert row["reply_path"] == "https://hooks.example.com/sms?from=#FROM#&text=#MSG#"


async def test_a_header_sender_is_what_the_recipient_sees_as_from(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Sale starts today")
    tab.form.replies.set_mode(ReplyMode.HEADER)
    tab.form.replies.sender_edit.setText("ShopCo")
    assert not tab.form.sender_edit.isEnabled()
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert (row["reply_type"], row["reply_path"], row["from_number"]) == (
        "HEADER",
        "ShopCo",
        "ShopCo",
    )


async def test_a_send_kept_by_the_gateway_is_lodged_now_with_its_send_at(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Reminder: dentist at 3")
    when = (datetime.now(UTC) + timedelta(hours=3)).replace(second=0, microsecond=0)
    tab.form.send_at.set_value(when)
    tab.form.send_at.set_held(False)
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert row["sent_us"] == int(when.timestamp()) * 1_000_000
    assert row["lodged_us"] < row["sent_us"]
    assert "Scheduled" in tab.status_label.text()


async def test_a_send_kept_by_gwdesk_is_held_and_nothing_is_lodged_before_its_time(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Reminder: dentist at 4")
    assert ui.session.profile is not None
    when = inside_sending_hours(ui.session.profile.zone)
    tab.form.send_at.set_value(when)
    assert tab.form.send_at.held(), "gwdesk keeps a scheduled send unless told otherwise"
    await send_and_wait(tab)
    assert tab.status_label.text().startswith("Scheduled for +61 412 345 678 at")
    assert "Scheduled tab" in tab.status_label.text()
    [held] = await ScheduledSends(ui.session.require_sending()).listed()
    assert (held.text, held.recipients, held.due) == (
        "Reminder: dentist at 4",
        ("61412345678",),
        when,
    )
    assert message_count(sandbox) == 0


async def test_the_schedule_shows_the_gateway_zone(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.send_at.enabled_box.setChecked(True)
    assert "Australia/Sydney" in tab.form.send_at.zone_label.text()
    assert "Your time" in tab.form.send_at.zone_label.text()


async def test_ctrl_enter_sends(ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.show()
    tab.activateWindow()
    await wait_until(tab.isActiveWindow, message="the tab's window to be active")
    fill(tab, "0412345678", "Sent with the keyboard")
    tab.form.external_id.setFocus()
    qtbot.keyClick(tab.form.external_id, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    await wait_until(lambda: tab.history.entries(), message="a history entry")
    assert message_count(sandbox) == 1


async def test_ctrl_enter_in_the_message_sends_instead_of_adding_a_line(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "One line")
    qtbot.keyClick(tab.form.editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    await wait_until(lambda: tab.history.entries(), message="a history entry")
    assert messages(sandbox)[0]["message"] == "One line"


async def test_the_button_says_sending_while_the_send_is_under_way(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:latency=0.6")
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Slow gateway")
    tab.send()
    assert tab.send_button.text() == "Sending…"
    assert not tab.send_button.isEnabled()
    assert not tab.busy.isHidden()
    tab.send()  # a second press while sending does nothing
    await wait_until(lambda: not tab.sending())
    assert tab.send_button.isEnabled()
    assert message_count(sandbox) == 1


async def test_a_gateway_failure_keeps_the_text_and_shows_the_message(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:503=1")
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Will this go?")
    tab.form.tags.setText("urgent")
    await send_and_wait(tab, within=30)
    assert message_count(sandbox) == 0
    assert tab.status_label.text().startswith("Not sent:")
    assert "503" in tab.status_label.text() or "unavailable" in tab.status_label.text().lower()
    assert tab.form.editor.text() == "Will this go?"
    assert tab.form.recipient.text() == "0412345678"
    assert tab.form.tags.text() == "urgent"
    [entry] = tab.history.entries()
    assert not entry.ok


async def test_a_lost_answer_is_settled_without_sending_twice(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="send:drop_after=1")
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Exactly once")
    await send_and_wait(tab, within=30)
    assert message_count(sandbox) == 1
    [entry] = tab.history.entries()
    assert entry.ok
    assert entry.message_id == sandbox.query("SELECT message_id FROM messages")[0][0]
    assert "status query" in entry.detail


async def test_a_value_only_the_gateway_refuses_points_at_its_field(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.show()
    fill(tab, "0412345678", "Tagged too much")
    tab.form.tags.setText("t" * 300)
    await send_and_wait(tab)
    assert message_count(sandbox) == 0
    assert "Tags" in tab.form.error_text("tags")
    assert is_invalid(tab.form.tags)
    assert tab.focusWidget() is tab.form.tags
    assert tab.form.editor.text() == "Tagged too much"


async def test_an_invalid_number_is_refused_before_any_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.show()
    fill(tab, "0412 345", "Hello")
    tab.send()
    assert not tab.sending()
    assert message_count(sandbox) == 0
    assert "not a valid number for AU" in tab.form.error_text("recipient")
    assert is_invalid(tab.form.recipient.edit)
    assert tab.focusWidget() is tab.form.recipient.edit
    assert tab.form.editor.text() == "Hello"


async def test_empty_text_is_refused_before_any_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "   ")
    tab.send()
    assert message_count(sandbox) == 0
    assert "empty" in tab.form.error_text("text")
    assert is_invalid(tab.form.editor.edit)


async def test_a_reply_type_without_a_path_is_refused_before_any_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Reply please")
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("EMAIL")
    tab.send()
    assert message_count(sandbox) == 0
    assert "needs a reply path" in tab.form.error_text("reply_path")
    assert is_invalid(tab.form.replies.path_edit)


async def test_a_bad_sender_name_is_refused_before_any_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Hello")
    tab.form.sender_edit.setText("ACME_")
    tab.send()
    assert not tab.sending()  # refused at once: no task, no request
    assert message_count(sandbox) == 0
    assert "underscore" in tab.form.error_text("sender")
    assert is_invalid(tab.form.sender_edit)


async def test_editing_a_refused_field_clears_its_error(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "")
    tab.send()
    assert is_invalid(tab.form.editor.edit)
    qtbot.keyClicks(tab.form.editor.edit, "Now with text")
    assert not is_invalid(tab.form.editor.edit)
    assert tab.form.error_text("text") == ""


async def test_a_send_without_a_gateway_says_to_choose_a_profile(
    ui: UiBundle, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot)
    fill(tab, "0412345678", "Hello")
    tab.send()
    assert "No gateway is connected" in tab.status_label.text()
    assert tab.form.editor.text() == "Hello"


async def test_fields_the_channel_does_not_use_are_disabled_with_a_reason(
    ui: UiBundle, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot)
    tab.form.set_channel(Channel.LODGE_SMS)
    assert not tab.form.external_id.isEnabled()
    assert "Only the REST channel" in tab.form.external_id.toolTip()
    assert not tab.form.send_at.isEnabled()
    assert "cannot be scheduled" in tab.form.send_at.toolTip()
    tab.form.set_channel(Channel.WAP_PUSH)
    assert not tab.form.replies.isEnabled()
    assert "WAP push" in tab.form.replies.toolTip()
    assert tab.form.message_pages.currentIndex() == 1
    tab.form.set_channel(Channel.REST_SMS)
    assert tab.form.external_id.isEnabled()
    assert tab.form.replies.isEnabled()


async def test_a_send_kept_by_gwdesk_may_repeat_and_is_held_with_its_rule(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Daily reminder")
    assert ui.session.profile is not None
    when = inside_sending_hours(ui.session.profile.zone)
    tab.form.send_at.set_value(when)
    tab.form.send_at.set_repeat("daily")
    await send_and_wait(tab)
    [held] = await ScheduledSends(ui.session.require_sending()).listed()
    assert held.every is not None
    assert (held.every.kind.value, held.due) == ("daily", when)
    assert message_count(sandbox) == 0


async def test_a_send_handed_to_the_gateway_cannot_repeat(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.send_at.set_value(inside_sending_hours(ZoneInfo("UTC")))
    tab.form.send_at.set_repeat("daily")
    tab.form.send_at.set_held(False)
    assert not tab.form.send_at.repeat_box.isEnabled()
    assert tab.form.send_at.repeat() == ""
