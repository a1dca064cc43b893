"""Logs tab: fills from a real sandbox, filters and sorts, follows its record, exports, charts."""

from __future__ import annotations

import asyncio
import csv
from datetime import date, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from PySide6.QtCharts import QBarCategoryAxis
from PySide6.QtCore import QDate, QPoint, Qt
from PySide6.QtWidgets import QMainWindow

from gwdesk.logs.query import DayCounts
from gwdesk.logs.rows import FIELDS
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.logs.chart import LogChart
from gwdesk.ui.logs.tab import NO_MATCH, NO_RECORDS, SYNCING, LogsTab
from tests.conftest import SandboxFactory
from tests.sandbox.seed_support import seed
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.header_support import drawn_arrow
from tests.ui.screenshot_support import WINDOW, shot

SEEDED = 400
COLUMN = {f.column: i for i, f in enumerate(FIELDS)}


@pytest.fixture
def seeded(tmp_path: Path, sandbox_factory: SandboxFactory) -> SandboxThread:
    seed(tmp_path / "gateway.sqlite3", SEEDED)
    return sandbox_factory(db=str(tmp_path / "gateway.sqlite3"))


async def open_tab(ui: UiBundle, sandbox: SandboxThread, qtbot: object, rows: int) -> LogsTab:
    await ui.connect(sandbox)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    tab.resize(1260, 660)
    tab.show()
    await settled(tab, rows)
    return tab


async def settled(tab: LogsTab, rows: int) -> None:
    await wait_until(
        lambda: (
            tab.model is not None
            and not tab.sync.running
            and not tab.model.pending
            and tab.model.rowCount() == rows
        ),
        within=20,
        message=f"{rows} rows after the sync",
    )


def column_values(tab: LogsTab, column: str, rows: range) -> list[str]:
    model = tab.model
    assert model is not None
    return [model.data(model.index(r, COLUMN[column])) for r in rows]


def lodge(sandbox: SandboxThread, text: str, recipient: str) -> str:
    response = httpx.post(
        f"{sandbox.rest_url}/v2/message/simple_send",
        json={"Message": text, "Recipient": recipient},
        auth=("demo", "demo"),
    )
    assert response.status_code == 200, response.text
    return str(response.json()["Data"]["Message"]["MessageId"])


async def test_the_first_sync_fills_the_table_with_every_record(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    await wait_until(lambda: tab.summary.text() == f"{SEEDED:,} records")
    newest = seeded.query("SELECT message_id FROM messages ORDER BY lodged_us DESC LIMIT 1")[0][0]
    assert tab.model is not None
    assert tab.model.message_id_at(0) == newest
    assert tab.empty.isHidden()


async def test_newest_first_shows_a_descending_arrow_on_lodged(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    header = tab.table.horizontalHeader()
    assert (header.sortIndicatorSection(), header.sortIndicatorOrder()) == (
        COLUMN["date_lodged"],
        Qt.SortOrder.DescendingOrder,
    )
    lodged = column_values(tab, "date_lodged", range(20))
    assert lodged == sorted(lodged, reverse=True)
    assert drawn_arrow(header, COLUMN["date_lodged"]) == "▼"


async def test_the_recipient_filter_shows_its_whole_hint(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    edit = tab.filters.recipient
    hint = edit.fontMetrics().horizontalAdvance(edit.placeholderText())
    assert edit.width() >= hint + 40  # frame, margins and the clear button


async def test_the_default_columns_fit_without_sideways_scrolling(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    tab.select_row(0)  # the detail pane fills in
    await asyncio.sleep(0.2)
    assert tab.table.horizontalScrollBar().maximum() == 0


async def test_the_log_table_filters_by_text_and_sorts_by_a_header_click(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    expected = seeded.query(
        "SELECT COUNT(*) FROM messages WHERE message LIKE '%appointment%' "
        "OR subject LIKE '%appointment%'"
    )[0][0]
    assert 0 < expected < SEEDED
    qtbot.keyClicks(tab.filters.text, "appointm")  # type: ignore[attr-defined]
    await settled(tab, expected)
    assert all("appointment" in m.lower() for m in column_values(tab, "message", range(expected)))
    header = tab.table.horizontalHeader()
    section = COLUMN["to_number"]
    qtbot.mouseClick(  # type: ignore[attr-defined]
        header.viewport(),
        Qt.MouseButton.LeftButton,
        pos=QPoint(header.sectionViewportPosition(section) + 20, header.height() // 2),
    )
    await wait_until(lambda: tab.query.sort.column == "to_number" and not tab.model.pending)  # type: ignore[union-attr]
    recipients = column_values(tab, "to_number", range(expected))
    assert recipients == sorted(recipients, reverse=tab.query.sort.descending)
    assert tab.query.filter.text == "appointm"


async def test_the_status_and_type_filters_offer_the_values_held(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    await wait_until(lambda: tab.filters.status.findData("DELIVERED") > 0)
    failed = seeded.query("SELECT COUNT(*) FROM messages WHERE status = 'FAILED'")[0][0]
    tab.filters.status.setCurrentIndex(tab.filters.status.findData("FAILED"))
    await settled(tab, failed)
    assert set(column_values(tab, "status", range(failed))) == {"FAILED"}
    mms = seeded.query("SELECT COUNT(*) FROM messages WHERE status = 'FAILED' AND type = 'MMS'")
    tab.filters.type.setCurrentIndex(tab.filters.type.findData("MMS"))
    await settled(tab, mms[0][0])
    assert tab.summary.text().endswith(f"of {SEEDED:,} records")


async def test_the_recipient_and_date_range_filters_narrow_the_view(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    prefix = "6141"
    expected = seeded.query(
        "SELECT COUNT(*) FROM messages WHERE to_number LIKE ?", (prefix + "%",)
    )[0][0]
    qtbot.keyClicks(tab.filters.recipient, "+" + prefix)  # type: ignore[attr-defined]
    await settled(tab, expected)
    assert all(r.startswith(prefix) for r in column_values(tab, "to_number", range(expected)))
    tab.filters.recipient.clear()
    start, end = date(2025, 6, 1), date(2025, 6, 15)
    lodged = [r[0] for r in seeded.query("SELECT lodged_us FROM messages")]
    in_range = sum(1 for us in lodged if start <= datetime.fromtimestamp(us / 1e6).date() <= end)
    tab.filters.date_from.setDate(QDate(2025, 6, 1))
    tab.filters.date_to.setDate(QDate(2025, 6, 15))
    tab.filters.use_from.setChecked(True)
    tab.filters.use_to.setChecked(True)
    await settled(tab, in_range)
    assert 0 < in_range < SEEDED


async def test_a_filter_without_matches_says_so(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    tab.filters.recipient.setText("999999")
    tab.filters.flush()
    await settled(tab, 0)
    assert tab.empty.isVisible()
    assert tab.empty.text() == NO_MATCH
    tab.filters.clear()
    await settled(tab, SEEDED)
    assert not tab.empty.isVisible()


async def test_the_detail_pane_empties_when_the_filter_hides_its_record(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    assert tab.model is not None
    tab.select_row(0)
    chosen = tab.model.message_id_at(0)
    assert tab.detail.message_id == chosen
    tab.filters.recipient.setText("999999")
    tab.filters.flush()
    await settled(tab, 0)
    assert tab.detail.message_id is None
    assert tab.selected is None


async def test_the_detail_pane_keeps_its_record_when_the_filter_still_shows_it(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    assert tab.model is not None
    tab.select_row(0)
    chosen = tab.model.message_id_at(0)
    number = seeded.query("SELECT to_number FROM messages WHERE message_id = ?", (chosen,))[0][0]
    tab.filters.recipient.setText(number)
    tab.filters.flush()
    await wait_until(lambda: tab.model is not None and tab.model.rowCount() >= 1)
    await wait_until(lambda: tab.table.currentIndex().isValid(), 10, "the record chosen again")
    assert tab.detail.message_id == chosen


async def test_an_empty_account_says_it_is_syncing_then_what_to_do(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: object
) -> None:
    sandbox = sandbox_factory(faults="logs:latency=0.6")
    await ui.connect(sandbox)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    tab.show()
    await wait_until(lambda: tab.empty.text() == SYNCING and tab.empty.isVisible())
    await wait_until(lambda: not tab.sync.running)
    await wait_until(lambda: tab.empty.text() == NO_RECORDS)


async def test_the_detail_pane_follows_its_record_while_rows_are_added_above_it(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    assert tab.model is not None
    tab.select_row(5)
    chosen = tab.model.message_id_at(5)
    assert chosen is not None
    assert tab.detail.message_id == chosen
    for n in range(3):  # newest first: these go above the selected row
        lodge(seeded, f"Arrived later {n}", f"6141255500{n}")
    tab.sync_now()
    await settled(tab, SEEDED + 3)
    await wait_until(lambda: tab.table.currentIndex().row() == 8)
    assert tab.selected == chosen
    assert tab.model.message_id_at(8) == chosen
    assert tab.detail.message_id == chosen
    assert tab.detail.values["message_id"].text() == chosen


async def test_a_filtered_sorted_view_takes_in_what_the_sync_brings(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    tab.table.sortByColumn(COLUMN["to_number"], Qt.SortOrder.AscendingOrder)
    tab.filters.text.setText("zebra")
    tab.filters.flush()
    await settled(tab, 0)
    for recipient in ("61400000009", "61400000001", "61400000005"):
        lodge(seeded, f"Zebra crossing reminder for {recipient}", recipient)
    lodge(seeded, "Something else", "61400000003")
    tab.sync_now()
    await settled(tab, 3)
    assert column_values(tab, "to_number", range(3)) == [
        "61400000001",
        "61400000005",
        "61400000009",
    ]
    assert tab.empty.isHidden()


async def test_the_detail_pane_shows_every_field_and_copies_them(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    tab.select_row(0)
    record = tab.detail.record
    assert record is not None
    assert set(tab.detail.values) == {f.column for f in FIELDS}
    assert tab.detail.values["to_number"].text() == record["to_number"]
    tab.detail.copy_all()
    copied = ui.app.clipboard().text()
    assert f"Message ID: {record['message_id']}" in copied
    assert "Tracking ID: " in copied


async def test_an_export_writes_the_rows_of_the_view_in_order(
    ui: UiBundle, seeded: SandboxThread, qtbot: object, tmp_path: Path
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    tab.filters.status.setCurrentIndex(0)
    qtbot.keyClicks(tab.filters.text, "your")  # type: ignore[attr-defined]
    await wait_until(lambda: tab.query.filter.text == "your" and not tab.model.pending)  # type: ignore[union-attr]
    assert tab.model is not None
    shown = tab.model.rowCount()
    assert shown > 0
    target = tmp_path / "view.csv"
    outcomes: list[tuple[bool, str]] = []
    assert tab.export is not None
    tab.export.finished.connect(lambda ok, text: outcomes.append((ok, text)))
    tab.export_to(target)
    await wait_until(lambda: bool(outcomes), message="the export")
    assert outcomes[0][0], outcomes
    with target.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert tab.columns is not None
    assert rows[0] == [FIELDS[COLUMN[c]].title for c in tab.columns.visible_columns()]
    assert len(rows) - 1 == shown
    message = rows[0].index("Message")
    assert all("your" in row[message].lower() for row in rows[1:])


async def test_the_chart_counts_every_record_of_the_view(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    await wait_until(lambda: tab.chart.counts.total() == SEEDED)
    failed = seeded.query("SELECT COUNT(*) FROM messages WHERE status = 'FAILED'")[0][0]
    assert tab.chart.counts.total("FAILED") == failed
    tab.filters.status.setCurrentIndex(tab.filters.status.findData("FAILED"))
    await wait_until(lambda: tab.chart.counts.total() == failed)


async def test_the_column_choice_is_kept_for_the_next_time(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    tab = await open_tab(ui, seeded, qtbot, SEEDED)
    assert tab.columns is not None
    tab.columns.set_shown("message_id", True)
    tab.columns.set_shown("parts", False)
    tab.columns.save()
    shown = tab.columns.visible_columns()
    again = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(again)  # type: ignore[attr-defined]
    assert again.columns is not None
    assert again.columns.visible_columns() == shown
    assert "parts" not in shown


async def test_sync_progress_and_outcome_reach_the_status_bar(
    ui: UiBundle, seeded: SandboxThread, qtbot: object
) -> None:
    reports: list[tuple[str, bool]] = []
    ui.session.activity.connect(lambda what, ok: reports.append((what, ok)))
    await open_tab(ui, seeded, qtbot, SEEDED)
    assert (f"Logs synced: {SEEDED:,} new, 0 updated", True) in reports


async def test_a_broken_gateway_answer_is_shown_in_plain_words(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: object
) -> None:
    sandbox = sandbox_factory(faults="logs:malformed=1")
    lodge(sandbox, "Hello", "61412345678")
    await ui.connect(sandbox)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    await wait_until(lambda: not tab.error.isHidden(), message="the error")
    assert "not valid JSON" in tab.error.text()


async def test_screenshot_logs(
    ui: UiBundle, seeded: SandboxThread, qtbot: object, screenshots_dir: Path | None
) -> None:
    await ui.connect(seeded)
    window = QMainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    window.setCentralWidget(tab)
    window.resize(WINDOW)
    window.show()
    await settled(tab, SEEDED)
    await wait_until(lambda: tab.chart.counts.total() == SEEDED)
    tab.select_row(3)
    await wait_until(lambda: tab.detail.record is not None)
    assert tab.model is not None
    await wait_until(lambda: tab.model.has_rows(0, tab.visible_rows()))  # type: ignore[union-attr]
    await shot(window, screenshots_dir, "logs.png", WINDOW)
    assert tab.chart.isVisible()
    assert tab.detail.isVisible()


def test_a_chart_over_six_weeks_keeps_one_bar_per_day(qtbot: object) -> None:
    days = [date(2025, 5, 20) + timedelta(days=n) for n in range(42)]
    chart = LogChart()
    qtbot.addWidget(chart)  # type: ignore[attr-defined]
    chart.set_counts(DayCounts(days, {"DELIVERED": [1] * 42, "FAILED": [0] * 41 + [2]}))
    (axis,) = [a for a in chart.chart().axes() if isinstance(a, QBarCategoryAxis)]
    assert axis.count() == 42
    assert axis.titleText() == "20 May 2025 – 30 Jun 2025"
