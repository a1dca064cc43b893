"""The status bar: the latest activity stays short enough to keep the gateway's items in view."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gwdesk.ui.status_bar import ACTIVITY_CHARS, GatewayStatusBar
from tests.ui.conftest import UiBundle


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
