"""The Replies tab with conversations as work (states, an assignment, the filter), as
the operator sees it on a 1024x700 and a 1366x768 screen at the scale factor this
process runs at (`QT_SCALE_FACTOR`, read once per process: run it again at 1.5 to see
a 1366x768 laptop at 150%). The conversation's strip and the Conversations list are
checked for clipped text, overlaps and boxes too small to use; the pictures are saved
under `GWDESK_SCREENSHOTS/replies-work/` when that is set."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize
from pytestqt.qtbot import QtBot

from gwdesk.app.conversations import ConversationsFlow
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.replies.tab import RepliesTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.layout_support import faults
from tests.ui.replies_support import post_reply, start_listener
from tests.ui.screenshot_support import shot

SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
SCREENS = (QSize(1024, 700), QSize(1366, 768)) if SCALE == 1 else (QSize(1366, 768),)
"""At 150% a 1024x700 screen is 683x467: the whole tab scrolls there, as every tab does."""
CUSTOMERS = {
    "61412000001": ("Can we move it to 11?", "done", None),
    "61412000002": ("YES", "waiting", "Sam Lee"),
    "61412000003": ("Is parking available?", "open", "me"),
    "61412000004": ("Wrong number sorry", "open", None),
}


def folder() -> Path | None:
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(shots) / "replies-work" if shots else None


async def test_the_replies_tab_with_conversations_as_work_fits_each_screen(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    window.show()
    await ui.connect(sandbox)
    tab = window.tab(RepliesTab)
    assert isinstance(tab, RepliesTab)
    window.tab_widget.setCurrentWidget(tab)
    template = await start_listener(ui)
    for number, (text, _state, _who) in CUSTOMERS.items():
        await post_reply(template, text=text, sender=number)
    await wait_until(lambda: tab.model is not None and tab.model.total == len(CUSTOMERS))
    store = ui.session.store
    assert store is not None
    flow = ConversationsFlow(store.conversations)
    for number, (_text, state, who) in CUSTOMERS.items():
        if state != "open":
            flow.done(number) if state == "done" else flow.wait(number)
        if who is not None:
            flow.take(number) if who == "me" else flow.assign(number, who)
    tab.conversations.refresh()
    await wait_until(lambda: tab.conversations.tree.topLevelItemCount() == len(CUSTOMERS))
    tab.conversation.open("61412000002")
    work = tab.conversation.work
    await wait_until(lambda: work.state_label.text() == "Waiting · assigned to Sam Lee")

    for screen in SCREENS:
        size = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        window.resize(size)
        await wait_until(lambda size=size: window.size() == size, 5, "the window resized")
        name = f"{screen.width()}x{screen.height()}@{SCALE:g}-replies-work.png"
        await shot(window, folder(), name, after=0.4)
        found = [*faults(work), *faults(tab.conversations)]
        assert not found, "\n".join(str(f) for f in found)
