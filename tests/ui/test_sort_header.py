"""The sort arrow points the way operators read it: ▼ descending (newest first), ▲ ascending."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from gwdesk.ui.widgets.sort_header import SortHeader
from tests.ui.header_support import drawn_arrow


def table_sorted(qtbot: QtBot, order: Qt.SortOrder) -> QTableView:
    table = QTableView()
    qtbot.addWidget(table)
    table.setHorizontalHeader(SortHeader(table))
    model = QStandardItemModel(3, 2, table)
    model.setHorizontalHeaderLabels(["Lodged", "Status"])
    table.setModel(model)
    table.setColumnWidth(0, 160)
    table.resize(400, 160)
    header = table.horizontalHeader()
    header.setSortIndicatorShown(True)
    header.setSortIndicator(0, order)
    table.show()
    qtbot.waitExposed(table)
    return table


def test_descending_draws_a_down_arrow(qtbot: QtBot) -> None:
    table = table_sorted(qtbot, Qt.SortOrder.DescendingOrder)
    assert drawn_arrow(table.horizontalHeader(), 0) == "▼"


def test_ascending_draws_an_up_arrow(qtbot: QtBot) -> None:
    table = table_sorted(qtbot, Qt.SortOrder.AscendingOrder)
    assert drawn_arrow(table.horizontalHeader(), 0) == "▲"


def test_the_order_itself_is_left_as_set(qtbot: QtBot) -> None:
    table = table_sorted(qtbot, Qt.SortOrder.DescendingOrder)
    assert table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
