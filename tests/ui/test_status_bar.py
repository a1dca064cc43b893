"""The status bar: the latest activity stays short enough to keep the gateway's items in view."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gwdesk.ui.status_bar import ACTIVITY_CHARS, GatewayStatusBar
from tests.ui.conftest import UiBundle, wait_until


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
