"""The Replies tab with conversations as work (states, assignments, a snooze, the
filters, hostile names and texts), as the operator sees it on a 1024x700 and a
1366x768 screen at the scale factor this process runs at (`QT_SCALE_FACTOR`, read
once per process: run it again at 1.5 to see a 1366x768 laptop at 150%), on the
platform it runs on (offscreen, or a real X server under `xvfb-run`). The
conversation's strip, the Conversations list and the Assign to… dialog are checked
for clipped text, overlaps and boxes too small to use (geometry, not timings); the
pictures are saved under `GWDESK_SCREENSHOTS/replies-work/` when that is set."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from gwdesk.app.conversations import ConversationsFlow, Showing
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.replies.tab import RepliesTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.conversations_support import fresh_listing
from tests.ui.layout_support import faults
from tests.ui.replies_support import post_reply, start_listener
from tests.ui.screenshot_support import shot

SCALE = float(os.environ.get("QT_SCALE_FACTOR", "1"))
SCREENS = (QSize(1024, 700), QSize(1366, 768)) if SCALE == 1 else (QSize(1366, 768),)
"""At 150% a 1024x700 screen is 683x467: the whole tab scrolls there, as every tab does."""
LONG_NAME = "Maximilian " + "Wolfeschlegelsteinhausenbergerdorff " * 8
"""300 characters (the record keeps the first 100 of an operator's name)."""
MARKUP_NAME = "<b>x</b> \u202eSam\u200f"
HOSTILE_TEXT = "<b>x</b> \u202eevil\u202c <img src='/dev/zero'> " + "long " * 40
LONG_NUMBER = "61412000005"
CUSTOMERS = {
    "61412000001": ("Can we move it to 11?", "done", None),
    "61412000002": ("YES", "waiting", "Sam Lee"),
    "61412000003": ("Is parking available?", "open", "me"),
    "61412000004": (HOSTILE_TEXT, "open", MARKUP_NAME),
    LONG_NUMBER: ("\u202eRTL and <i>markup</i> in a reply", "snoozed", LONG_NAME),
    "61412000006": ("Wrong number sorry", "open", None),
}


def folder() -> Path | None:
    shots = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(shots) / "replies-work" if shots else None


def platform() -> str:
    return QGuiApplication.platformName() or "unknown"


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
        if state == "done":
            flow.done(number)
        elif state == "waiting":
            flow.wait(number)
        elif state == "snoozed":
            flow.snooze(number, datetime.now(UTC) + timedelta(hours=20))
        if who is not None:
            flow.take(number) if who == "me" else flow.assign(number, who)
    for tag in ("refund", "<b>vip</b> \u202eRTL"):  # a rule's tags: markup kept as text
        store.conversations.tag(LONG_NUMBER, tag)
    conversations = tab.conversations
    await fresh_listing(conversations)
    assert conversations.tree.topLevelItemCount() == len(CUSTOMERS)
    tab.conversation.open(LONG_NUMBER)
    work = tab.conversation.work
    await wait_until(lambda: work.state_label.text().startswith("Snoozed until"))
    assert "Wolfeschlegelsteinhausenbergerdorff" in work.state_label.text()

    for screen in SCREENS:
        size = QSize(round(screen.width() / SCALE), round(screen.height() / SCALE))
        window.resize(size)
        await wait_until(lambda size=size: window.size() == size, 5, "the window resized")
        stem = f"{platform()}-{screen.width()}x{screen.height()}@{SCALE:g}"
        for showing in (Showing.ALL, Showing.MINE):
            await fresh_listing(conversations, lambda s=showing: conversations.show_only(s))
            await shot(window, folder(), f"{stem}-replies-work-{showing.value}.png", after=0.1)
            found = [*faults(work), *faults(conversations)]
            assert not found, "\n".join(str(f) for f in found)
        conversations.show_only(Showing.ALL)

        work.assign_button.click()
        dialog = work.assign_dialog
        assert dialog is not None
        await wait_until(lambda d=dialog: len(d.names()) >= 3, 10, "the operators read")
        await wait_until(dialog.isVisible, 5, "the dialog shown")
        await shot(dialog, folder(), f"{stem}-assign-to.png", after=0.1)
        found = faults(dialog)
        assert not found, "\n".join(str(f) for f in found)
        dialog.reject()
