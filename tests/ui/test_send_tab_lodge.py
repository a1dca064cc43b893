"""Send tab over the legacy Lodge service: one-way and two-way SMS, WAP push, refusals."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gwdesk.app.sms import Channel
from gwdesk.domain.models import Secret
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import sandbox_profile
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.widgets.reply_options import ReplyMode
from gwdesk.ui.widgets.validity import is_invalid
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle
from tests.ui.send_support import (
    fill,
    message_count,
    messages,
    send_and_wait,
    send_tab,
)


async def test_a_lodge_sms_reaches_the_lodge_service(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.LODGE_SMS)
    fill(tab, "0412 345 678", "Sent the old way")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert (row["service_id"], row["type"]) == (2, "SMS")
    assert (row["to_number"], row["message"]) == ("61412345678", "Sent the old way")
    [entry] = tab.history.entries()
    assert entry.ok
    assert entry.channel == "SMS (Lodge)"
    assert "Sent to +61 412 345 678" in tab.status_label.text()


async def test_a_lodge_two_way_sms_carries_its_reply_route_and_names_its_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.LODGE_SMS)
    fill(tab, "0412345678", "Reply to this")
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("EMAIL")
    tab.form.replies.path_edit.setText("desk@example.com")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert (row["service_id"], row["reply_type"], row["reply_path"]) == (
        2,
        "EMAIL",
        "desk@example.com",
    )
    [entry] = tab.history.entries()
    assert entry.message_id == sandbox.query("SELECT message_id FROM messages")[0][0]


async def test_a_lodge_header_sender_shows_as_from(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.LODGE_SMS)
    fill(tab, "0412345678", "From a name")
    tab.form.replies.set_mode(ReplyMode.HEADER)
    tab.form.replies.sender_edit.setText("Clinic")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert (row["service_id"], row["from_number"]) == (2, "Clinic")


async def test_a_wap_push_reaches_the_gateway_as_a_wap_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.WAP_PUSH)
    tab.form.recipient.set_text("+61 412 345 678")
    tab.form.wap_app.setText("Rewards")
    tab.form.wap_url.setText("https://example.com/rewards?id=7")
    await send_and_wait(tab)
    [row] = messages(sandbox)
    assert (row["service_id"], row["type"]) == (2, "WAP")
    assert (row["subject"], row["url"]) == ("Rewards", "https://example.com/rewards?id=7")
    assert tab.history.entries()[0].text == "Rewards: https://example.com/rewards?id=7"


async def test_a_wap_push_without_a_url_is_refused_at_the_url_field(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.WAP_PUSH)
    tab.form.recipient.set_text("0412345678")
    tab.form.wap_url.setText("example.com/no-scheme")
    tab.send()
    assert message_count(sandbox) == 0
    assert "http(s)" in tab.form.error_text("wap_url")
    assert is_invalid(tab.form.wap_url)


async def test_lodge_refuses_reply_types_it_does_not_take_before_any_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("HTTPPOST")
    tab.form.set_channel(Channel.LODGE_SMS)
    assert tab.form.replies.reply_type() != "HTTPPOST"
    index = tab.form.replies.type_combo.findData("HTTPPOST")
    assert "Lodge's two-way SMS takes only" in str(
        tab.form.replies.type_combo.itemData(index, 3)  # ToolTipRole
    )


async def test_a_lodge_failure_keeps_the_text_and_shows_the_message(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="lodge:503=1")
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.LODGE_SMS)
    fill(tab, "0412345678", "Lodge is down")
    await send_and_wait(tab, within=30)
    assert message_count(sandbox) == 0
    assert tab.status_label.text().startswith("Not sent:")
    assert tab.form.editor.text() == "Lodge is down"
    assert tab.form.channel() is Channel.LODGE_SMS
    assert not tab.history.entries()[0].ok


async def test_a_lodge_send_whose_answer_is_lost_is_reported_as_unknown_not_resent(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    sandbox = sandbox_factory(faults="lodge:drop_after=1")
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.LODGE_SMS)
    fill(tab, "0412345678", "Did it go?")
    await send_and_wait(tab, within=30)
    assert message_count(sandbox) == 1
    assert tab.status_label.text().startswith("Outcome unknown:")
    assert tab.history.entries()[0].status == "Unknown"
    assert tab.form.editor.text() == "Did it go?"


async def test_without_a_lodge_url_the_lodge_channels_are_disabled_with_a_reason(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url)).model_copy(
        update={"lodge_url": None}
    )
    await ui.session.activate(profile, Secret("demo"))
    tab = await send_tab(ui, qtbot)
    button = tab.form.channel_buttons[Channel.LODGE_SMS]
    assert not button.isEnabled()
    assert "no Lodge URL" in button.toolTip()
    assert tab.form.channel() is Channel.REST_SMS
