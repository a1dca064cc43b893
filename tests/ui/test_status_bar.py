"""The status bar: the latest activity stays short enough to keep the gateway's items in view;
the team's notices, whole at first, then counted, the last ones in the tooltip."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from gwdesk.app.setting_changes import SettingChange
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.plain_text import visible
from gwdesk.ui.status_bar import ACTIVITY_CHARS, MESSAGE_MIN_WIDTH, GatewayStatusBar
from gwdesk.ui.widgets.notice_label import HEADING, KEPT
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.plain_text_support import tooltip_shows


def test_a_long_activity_is_shortened_with_the_whole_text_in_its_tooltip(
    ui: UiBundle, qtbot: QtBot
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    long_text = "MMS to +61 412 345 604 sent successfully: " + "Message sent successfully. " * 5
    ui.session.activity.emit(long_text, True)
    shown = bar.connection_label.text()
    assert shown.startswith("Connected: MMS to +61 412 345 604")
    assert "…" in shown
    assert len(shown) <= len("Connected: ") + ACTIVITY_CHARS + len(" (00:00:00)")
    assert long_text.strip() in bar.connection_label.toolTip()


def test_a_short_activity_is_shown_whole(ui: UiBundle, qtbot: QtBot) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    ui.session.activity.emit("balance refreshed", False)
    assert bar.connection_label.text().startswith("Trouble: balance refreshed (")


async def test_in_a_narrow_window_the_labels_give_way_and_every_item_stays_in_view(
    ui: UiBundle, qtbot: QtBot
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    bar.profile_label.setText("Head office (operations.team @ https://gateway.example.com/api)")
    ui.session.activity.emit("batch: All 20 requests lodged: 2,000 recipients", True)
    bar.token_label.setText("token expired (renewed on next call)")
    bar.resize(900, 30)
    bar.show()
    await wait_until(lambda: bar.listener.isVisible())

    assert bar.listener.geometry().right() <= bar.width()
    assert bar.token_label.geometry().right() <= bar.listener.geometry().left()
    shown = bar.profile_label.shown_text()
    assert "…" in shown
    assert shown.startswith("Head office")
    assert bar.profile_label.text().endswith("example.com/api)")  # whole, for tooltips


# ---- the balance item: money or credits, and which resource said so ------------------------


async def loaded_balance(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> GatewayStatusBar:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    await ui.connect(sandbox)
    await wait_until(lambda: "(" in bar.balance_label.text(), 10, "the balance")
    return bar


async def test_the_balance_item_shows_prepaid_credits_from_account_info(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    bar = await loaded_balance(ui, qtbot, sandbox)
    assert bar.balance_label.text() == "Credits 10,000 (Account/Info, prepaid)"
    tip = tooltip_shows(bar.balance_label.toolTip())
    assert tip.startswith("From the account resource (GET /v2/Account/Info): account demo,")
    assert tip.endswith("10,000 message credits.")


async def test_the_balance_item_says_a_postpaid_account_has_no_credits(
    ui: UiBundle, qtbot: QtBot, sandbox_factory: SandboxFactory
) -> None:
    bar = await loaded_balance(ui, qtbot, sandbox_factory(account_type="postpaid"))
    assert bar.balance_label.text() == "Postpaid: no credits to show (Account/Info)"
    assert "for prepaid accounts only" in bar.balance_label.toolTip()


async def test_the_balance_item_falls_back_to_the_balance_endpoint_and_says_so(
    ui: UiBundle, qtbot: QtBot, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(faults="account_info:404=1")
    bar = await loaded_balance(ui, qtbot, sandbox)
    assert bar.balance_label.text() == "Balance 1,000.00 AUD, 10,000 credits (account balance)"
    assert "This gateway has no GET /v2/Account/Info (HTTP 404)." in bar.balance_label.toolTip()


async def test_a_refresh_shows_the_credits_a_send_spent(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    bar = await loaded_balance(ui, qtbot, sandbox)
    await asyncio.to_thread(httpx.put, f"{sandbox.rest_url}/sandbox/account", json={"credits": 42})
    bar.balance_button.click()
    await wait_until(lambda: bar.balance_label.text().startswith("Credits 42 "), 10, "refresh")


async def test_a_gateway_with_neither_account_resource_shows_the_balance_unavailable(
    ui: UiBundle, qtbot: QtBot, sandbox_factory: SandboxFactory
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    await ui.connect(sandbox_factory(faults="account_info+balance:404=1"))
    await wait_until(lambda: bar.balance_label.text() == "Balance: unavailable", 10, "failure")
    assert "neither GET /v2/Account/Info nor POST" in bar.balance_label.toolTip()


# ---- the team's notices: what changed at another desk, kept in the tooltip -----------------


def a_change(text: str, minute: int) -> SettingChange:
    at = datetime(2026, 3, 3, 9, minute, tzinfo=UTC)
    return SettingChange(minute, at, "Alex", "sending.marketing_default", text)


def test_a_notice_is_shown_whole_then_as_a_count_and_the_last_ones_stay_in_the_tooltip(
    ui: UiBundle, qtbot: QtBot
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    notice = bar.notice_label
    assert notice.isHidden()
    ui.session.team.settings_changed.emit(
        [a_change(f"Alex changed the opt-out keywords: STOP, W{n}", n) for n in range(KEPT + 2)]
    )

    latest = f"Alex changed the opt-out keywords: STOP, W{KEPT + 1}"
    assert not notice.isHidden()
    assert notice.fresh
    assert notice.text().startswith(f"{latest} (")
    history = tooltip_shows(notice.toolTip()).splitlines()
    assert history[0] == HEADING
    assert len(history) == 1 + KEPT
    assert history[1].endswith(latest)
    assert history[-1].endswith("STOP, W2")  # the two oldest made room

    notice.fade()
    assert not notice.fresh
    assert notice.text().startswith(f"Team notices: {KEPT + 2} · last ")
    assert tooltip_shows(notice.toolTip()).splitlines()[1].endswith(latest)


def test_a_notice_from_another_desk_is_one_line_of_plain_text(ui: UiBundle, qtbot: QtBot) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    hostile = "<b>Kim</b>\x1b[31m\n\u202e<img src='/dev/zero'> turned marketing on by default"
    ui.session.team.settings_changed.emit([a_change(hostile, 5)])

    notice = bar.notice_label
    assert notice.textFormat().name == "PlainText"
    said = "<b>Kim</b>␛[31m \ufffd<img src='/dev/zero'> turned marketing on by default"
    assert notice.text().startswith(said)
    assert said in tooltip_shows(notice.toolTip())
    assert "<img" not in notice.toolTip()


def test_replies_passed_over_are_said_with_where_the_log_is(ui: UiBundle, qtbot: QtBot) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    ui.session.replies.unreadable_passed.emit(2)

    notice = bar.notice_label
    assert notice.text().startswith(
        "2 replies could not be read (another desk's data this gwdesk cannot show); see the log"
    )
    assert notice.property("role") == "warning"
    assert str(ui.session.paths.log_file) in tooltip_shows(notice.toolTip())
    ui.session.changed.emit()  # another profile: its notices are its own
    assert notice.isHidden()
    assert notice.notices == []


async def test_a_long_message_is_seen_beside_the_permanent_items_shortened_and_kept_whole(
    ui: UiBundle, qtbot: QtBot
) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    window.setStatusBar(bar)
    window.resize(1024, 120)
    window.show()
    bar.profile_label.setText("Head office (operations.team @ https://gateway.example.com/api)")
    long_text = "Outbox: 3 interrupted requests checked: " + "1 lodged, 2 not lodged; " * 12

    bar.showMessage(long_text)
    await wait_until(lambda: bar.message_label.width() >= MESSAGE_MIN_WIDTH, 5, "its room")

    label = bar.message_label
    assert label.geometry().right() < bar.history.geometry().left()
    assert label.shown_text().endswith("…")
    assert bar.currentMessage() == long_text
    assert tooltip_shows(label.toolTip()) == long_text
    assert bar.listener.geometry().right() <= bar.width()  # every item still in view


async def test_a_message_with_a_timeout_goes_and_leaves_the_bar_as_it_was(
    ui: UiBundle, qtbot: QtBot
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    bar.showMessage("Connected to the sandbox gateway.", 50)
    assert bar.currentMessage() == "Connected to the sandbox gateway."
    await wait_until(lambda: bar.currentMessage() == "", 5, "the message gone")
    assert bar.message_label.isHidden()


async def test_the_recent_messages_are_listed_whole_newest_first_as_plain_text(
    ui: UiBundle, qtbot: QtBot
) -> None:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    hostile = "<b>Not sent</b> & \x1b[31mred\u202e " + "x" * 300
    bar.showMessage("Connected to the sandbox gateway.")
    bar.showMessage(hostile)

    bar.history.list_menu.aboutToShow.emit()
    newest, older = bar.history.list_menu.actions()
    assert "<b>Not sent</b> && ␛[31mred" in newest.text()
    assert newest.text().endswith("…")
    assert tooltip_shows(newest.toolTip()) == visible(hostile)
    assert older.text().endswith("Connected to the sandbox gateway.")
    newest.trigger()
    assert QGuiApplication.clipboard().text() == hostile
