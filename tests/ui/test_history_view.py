"""The sent-messages table fits its width: no sideways scrolling, long values elided with tooltips."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.store.history import HistoryEntry
from gwdesk.ui.widgets.history_view import COLUMNS, HistoryView
from tests.ui.plain_text_support import tooltip_shows

TITLES = [c.title for c in COLUMNS]
LONG_TEXT = "Harbour Dental: the clinic is closed on Monday for the public holiday. " * 5


def entry(n: int) -> HistoryEntry:
    return HistoryEntry(
        at=datetime(2026, 3, 2, 9, 30, n, tzinfo=UTC),
        channel="SMS (REST)",
        recipients="61412345678",
        text=LONG_TEXT,
        ok=True,
        message_id=f"2026030209300000000{n}",
        status="ACTIVE",
        external_system_id=f"gwd-20260302T093000Z-07c25d02a58b-000{n}",
    )


def shown(qtbot: QtBot, width: int, **options: bool) -> HistoryView:
    view = HistoryView(**options)
    qtbot.addWidget(view)
    view.resize(width, 400)
    view.show()
    view.set_entries([entry(1), entry(2)])
    qtbot.waitExposed(view)
    return view


def test_a_narrow_history_keeps_the_external_id_and_never_scrolls_sideways(qtbot: QtBot) -> None:
    view = shown(qtbot, 580)  # the Send tab's history pane at 1280x800
    table = view.table
    assert view.shown_columns() == ["Time", "To", "Status", "Result", "External ID"]
    assert table.horizontalHeader().length() <= table.viewport().width()
    assert table.horizontalScrollBar().maximum() == 0
    assert table.columnWidth(TITLES.index("External ID")) >= 150


def test_a_wide_history_shows_every_column_with_the_text_stretched(qtbot: QtBot) -> None:
    view = shown(qtbot, 1240)  # the Fax / MMS tab's history at full width
    table = view.table
    assert view.shown_columns()[-2:] == ["External ID", "Message"]
    assert table.horizontalHeader().length() <= table.viewport().width()
    assert table.horizontalScrollBar().maximum() == 0


def test_growing_the_history_brings_the_hidden_columns_back(qtbot: QtBot) -> None:
    view = shown(qtbot, 580)
    view.resize(1240, 400)
    qtbot.waitUntil(lambda: "Message" in view.shown_columns())
    assert "Channel" in view.shown_columns()


def test_an_elided_cell_has_its_whole_value_as_tooltip(qtbot: QtBot) -> None:
    view = shown(qtbot, 580)
    external = TITLES.index("External ID")
    tooltip = view.model.index(0, external).data(Qt.ItemDataRole.ToolTipRole)
    assert tooltip_shows(tooltip) == "gwd-20260302T093000Z-07c25d02a58b-0001"


def test_the_message_column_shows_the_text_on_one_line(qtbot: QtBot) -> None:
    view = shown(qtbot, 1240)
    message = TITLES.index("Message")
    value = view.model.index(0, message).data()
    assert "\n" not in value
    assert value.startswith("Harbour Dental: the clinic is closed")


def test_without_external_ids_the_text_takes_the_room(qtbot: QtBot) -> None:
    view = shown(qtbot, 700, external_ids=False)  # Lodge sends: no ExternalSystemId
    assert view.shown_columns() == ["Time", "To", "Status", "Result", "Channel", "Message"]
    assert view.table.horizontalScrollBar().maximum() == 0


def test_the_detail_can_sit_beside_the_table(qtbot: QtBot) -> None:
    view = shown(qtbot, 1200, detail_beside=True)
    view.table.selectRow(0)
    qtbot.waitUntil(view.detail_area.isVisible)
    assert view.detail_area.x() > view.table.x() + view.table.width()
    assert "gwd-20260302T093000Z-07c25d02a58b-0001" in view.detail.text()


def test_a_lodge_answer_without_an_id_shows_the_answer_as_the_result(qtbot: QtBot) -> None:
    view = shown(qtbot, 1200, external_ids=False)
    lodged = HistoryEntry(
        at=datetime(2026, 3, 2, 9, 31, tzinfo=UTC),
        channel="MMS",
        recipients="61412345678",
        text="Your card",
        ok=True,
        status="Lodged",
        detail="Lodge answered 'Message sent successfully.' (a text operation returns no MessageId).",
    )
    view.add(lodged)
    result = view.model.index(0, TITLES.index("Result")).data()
    assert result == "Message sent successfully."
