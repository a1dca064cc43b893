"""Preset column widths give way on a narrow table: the Message column stays readable."""

from __future__ import annotations

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTableView
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.tab import WIDTHS
from gwdesk.ui.replies.table import MESSAGE
from gwdesk.ui.widgets.column_fit import STRETCH_SHARE, ColumnFit
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import post_reply, replies_tab

PRESETS = {0: 104, 1: 196, 2: 122, 4: 84, 5: 124}
STRETCHED = 3


def table(qtbot: QtBot, width: int) -> tuple[QTableView, ColumnFit]:
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(QStandardItemModel(3, 6, view))
    header = view.horizontalHeader()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setSectionResizeMode(STRETCHED, QHeaderView.ResizeMode.Stretch)
    fit = ColumnFit(view, PRESETS)
    view.resize(width, 300)
    view.show()
    qtbot.waitExposed(view)
    return view, fit


def test_a_narrow_table_shrinks_its_presets_so_the_stretching_column_keeps_its_share(
    qtbot: QtBot,
) -> None:
    view, _fit = table(qtbot, 500)
    room = view.viewport().width()
    assert view.columnWidth(STRETCHED) >= int(room * STRETCH_SHARE) - len(PRESETS)
    assert all(view.columnWidth(c) < w for c, w in PRESETS.items())


def test_a_wide_table_keeps_every_preset_width(qtbot: QtBot) -> None:
    view, _fit = table(qtbot, 1400)
    assert {c: view.columnWidth(c) for c in PRESETS} == PRESETS


def test_the_presets_come_back_when_the_table_widens(qtbot: QtBot) -> None:
    view, _fit = table(qtbot, 500)
    view.resize(1400, 300)
    qtbot.waitUntil(lambda: view.columnWidth(1) == PRESETS[1])
    assert {c: view.columnWidth(c) for c in PRESETS} == PRESETS


def test_a_column_the_operator_dragged_keeps_its_width_through_resizes(qtbot: QtBot) -> None:
    view, fit = table(qtbot, 1400)
    view.horizontalHeader().resizeSection(1, 300)  # as a drag of the section's edge does
    view.resize(500, 300)
    qtbot.waitUntil(lambda: view.viewport().width() < 500)
    assert fit.operator_sized
    assert view.columnWidth(1) == 300


async def test_the_replies_message_column_and_every_title_fit_a_1024_px_window(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    assert ui.session.replies.template is not None
    await post_reply(ui.session.replies.template, text="<b>Yes</b>, Friday \u202eworks")
    await wait_until(lambda: tab.model is not None and tab.model.total == 1)
    tab.resize(1024, 700)
    tab.show()
    await wait_until(lambda: tab.table.isVisible() and tab.table.viewport().width() > 200)
    header = tab.table.horizontalHeader()
    await wait_until(lambda: tab.table.columnWidth(MESSAGE) > 100)
    assert all(
        tab.table.columnWidth(c) >= header.sectionSizeHint(c) for c in WIDTHS
    )  # every title whole
