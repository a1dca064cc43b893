"""Sending a scheduled send now and cancelling one are asked first: confirmed, they are
done (lodged once, or nothing lodged ever); declined, nothing changes."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.scheduled.tab import EMPTY
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.scheduled_support import (
    NUMBERS,
    answer_no,
    answer_yes,
    asked,
    core,
    listing,
    lodged,
    schedule,
    scheduled_tab,
)


async def test_cancel_asks_and_confirmed_removes_the_send_and_nothing_is_lodged(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Sale starts Friday")
    await listing(tab, 1)
    tab.select(held.batch_id)

    tab.cancel_send()
    box = await asked(tab)
    assert "None of it will be sent" in box.text()
    assert "Sale starts Friday" in box.text()
    answer_yes(box)

    await listing(tab, 0)
    await wait_until(lambda: not tab.acting, 10, "the cancel done")
    assert tab.empty.text() == EMPTY
    assert "cancelled" in tab.result.text()
    sending = ui.session.sending
    assert sending is not None
    assert held.due is not None
    late = held.due + timedelta(days=1)
    sending.now = lambda: late
    assert await core(ui).run_due() == []
    assert lodged(sandbox, "Sale starts Friday") == []


async def test_declining_the_cancel_question_keeps_the_send(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Keep this one")
    await listing(tab, 1)
    tab.select(held.batch_id)

    tab.cancel_send()
    box = await asked(tab)
    answer_no(box)  # "Keep it", the default

    await wait_until(lambda: not tab.acting, 10, "the question answered")
    assert [s.batch_id for s in await core(ui).listed()] == [held.batch_id]
    assert len(tab.model.rows) == 1
    assert tab.cancel_action.isEnabled()


async def test_send_now_asks_and_confirmed_lodges_once(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Right away please")
    await listing(tab, 1)
    tab.select(held.batch_id)

    tab.send_now()
    box = await asked(tab)
    assert "Send this scheduled send now" in box.text()
    answer_yes(box)

    await wait_until(lambda: not tab.acting, 20, "the send done")
    assert lodged(sandbox, "Right away please") == list(NUMBERS)
    assert "went: 3 recipients lodged" in tab.result.text()
    await listing(tab, 0)
    tab.send_now()  # nothing is selected any more: nothing is asked, nothing sent
    assert tab.question is None
    assert lodged(sandbox, "Right away please") == list(NUMBERS)


async def test_declining_send_now_sends_nothing(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Not yet")
    await listing(tab, 1)
    tab.select(held.batch_id)

    tab.send_now()
    answer_no(await asked(tab))

    await wait_until(lambda: not tab.acting, 10, "the question answered")
    assert lodged(sandbox, "Not yet") == []
    assert [s.batch_id for s in await core(ui).listed()] == [held.batch_id]


async def test_no_second_action_starts_while_a_question_is_open(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "One question at a time")
    await listing(tab, 1)
    tab.select(held.batch_id)
    tab.send_now()
    box = await asked(tab)

    tab.cancel_send()

    assert tab.question is box
    assert not tab.cancel_action.isEnabled()
    answer_no(box)
    await wait_until(lambda: not tab.acting, 10, "the question answered")
    assert tab.cancel_action.isEnabled()


async def test_delete_on_the_list_asks_to_cancel_the_selected_send(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    tab = await scheduled_tab(ui, qtbot, sandbox)
    held = await schedule(ui, "Deleted by key")
    await listing(tab, 1)
    tab.select(held.batch_id)
    tab.activateWindow()
    tab.table.setFocus()
    await wait_until(tab.table.hasFocus, 5, "the list focused")

    qtbot.keyClick(tab.table, Qt.Key.Key_Delete)

    box = await asked(tab)
    assert "Cancel this scheduled send" in box.text()
    answer_no(box)
    await wait_until(lambda: not tab.acting, 10, "the question answered")
    assert [s.batch_id for s in await core(ui).listed()] == [held.batch_id]
