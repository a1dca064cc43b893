"""Replies tab under a flood: every reply shown in order, the operator's selection and
search kept, and names and opt-out marks as they are now on the rows a paint shows."""

from __future__ import annotations

import asyncio

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.cells import OPTED_OUT_COLOUR
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.replies.table import FROM, OPT_OUT
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import add_contacts, store_of
from tests.ui.replies_support import CUSTOMER, Flood, post_reply, replies_tab


async def shown_tab(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> RepliesTab:
    tab = await replies_tab(ui, qtbot, sandbox)
    tab.resize(1100, 500)
    tab.show()
    return tab


def painted(tab: RepliesTab, row: int, column: int) -> tuple[str, str]:
    """What a paint of the cell shows: its text and its colour (as the table's delegate
    asks the view's model for them, right after a paint)."""
    tab.table.viewport().repaint()
    option = QStyleOptionViewItem()
    QStyledItemDelegate().initStyleOption(option, tab.table.model().index(row, column))
    return option.text, option.palette.brush(QPalette.ColorRole.Text).color().name()


async def test_a_flood_is_shown_whole_and_in_the_order_it_was_stored(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await shown_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None

    flood = Flood(template, 1500).start()
    await wait_until(lambda: flood.done and tab.model.total == 1500, 60, "1,500 replies shown")

    model = tab.model
    assert model is not None
    for number in range(1500):
        model.row(number)  # asks for any window not held
    await wait_until(lambda: model.has_rows(0, 1499))
    rows = [model.row(number) for number in range(1500)]
    assert all(row is not None for row in rows)
    keys = [row.key for row in rows if row is not None]
    assert keys == sorted(keys)  # received time, then storing order
    assert {row.text for row in rows if row is not None} == {f"flood {n}" for n in range(1500)}
    assert tab.pacer.idle
    await wait_until(lambda: tab.at_newest())


async def test_a_selected_reply_stays_selected_while_a_flood_lands(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await shown_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    for number in range(4):
        await post_reply(template, text=f"before {number}")
    await wait_until(lambda: tab.model.total == 4)
    tab.table.selectRow(2)
    chosen = tab.selected_reply()
    assert chosen is not None
    assert chosen.text == "before 2"

    flood = Flood(template, 800).start()
    await wait_until(lambda: flood.done and tab.model.total == 804, 60, "the flood shown")

    assert tab.selected_reply() == chosen
    assert [index.row() for index in tab.table.selectionModel().selectedRows()] == [2]


async def test_a_search_set_during_a_flood_filters_what_arrives_after_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await shown_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    model = tab.model
    assert model is not None
    expected = {f"flood {n}" for n in range(1200) if "flood 7" in f"flood {n}"}

    flood = Flood(template, 1200).start()
    await wait_until(lambda: model.total >= 50, 30, "the flood under way")
    tab.search_edit.setText("flood 7")
    tab.apply_search()
    await wait_until(lambda: flood.done, 60, "the flood sent")
    await wait_until(lambda: tab.pacer.idle and not model.pending and model.total == len(expected))

    for number in range(model.total):
        model.row(number)
    await wait_until(lambda: model.has_rows(0, model.total - 1))
    shown = [model.row(number) for number in range(model.total)]
    assert {row.text for row in shown if row is not None} == expected


async def test_new_rows_show_a_name_and_opt_out_mark_given_after_earlier_rows_were_painted(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await shown_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    model = tab.model
    assert model is not None
    await post_reply(template, text="first")
    await wait_until(lambda: model.total == 1)
    await wait_until(lambda: painted(tab, 0, FROM)[0] == "+61 412 345 678")  # no name yet
    assert painted(tab, 0, OPT_OUT)[0] == ""

    await add_contacts(ui, ContactCard("Zoë Nguyễn", (CUSTOMER,)))
    ui.session.contacts_changed.emit()  # as the Contacts tab does after a change
    optouts = store_of(ui).optouts
    await asyncio.to_thread(lambda: optouts.set(CUSTOMER, True, reason="asked by phone"))
    tab.refresh_opted_out()  # as the tab does when the opt-out list changes
    await post_reply(template, text="second")
    await wait_until(lambda: model.total == 2)

    named = "Zoë Nguyễn · +61 412 345 678"
    red = OPTED_OUT_COLOUR.name()
    for row in (0, 1):
        await wait_until(lambda row=row: painted(tab, row, FROM) == (named, red), 10)
        assert painted(tab, row, OPT_OUT) == ("opted out", red)
