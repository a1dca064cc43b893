"""A credits read not yet asked when the profile's session closes is never asked."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from tests.ui.conftest import UiBundle
from tests.ui.send_support import fill, send_tab


async def test_the_send_tabs_credits_read_due_is_dropped_when_the_session_closes(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "What will this cost? <b>bold</b> \u202e")
    assert tab.cost.read_due  # the read is due after a pause in typing

    await ui.session.close()

    assert not tab.cost.read_due
