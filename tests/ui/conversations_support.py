"""Waiting for the Replies tab's conversations without racing their background reads.

A test waits for a positive event that follows what it checks: a listing read started
after the change it looks for (`fresh_listing`), a window that is active and a widget
that has the focus before a keystroke is sent to it (`keystroke`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QWidget
from pytestqt.qtbot import QtBot

from gwdesk.ui.replies.conversations_list import STATE, ConversationsList
from tests.ui.conftest import wait_until


async def fresh_listing(
    listing: ConversationsList, start: Callable[[], object] | None = None, within: float = 20
) -> None:
    """Do `start` (a filter chosen, say), then wait until a read started after it (its
    own, or one asked now if it started none), or a newer one, is on screen: what it
    shows was read after everything done before."""
    before = listing.asked
    if start is not None:
        start()
    if listing.asked == before:
        listing.refresh()
    generation = listing.asked
    assert generation > before, "no read of the conversations was started"
    await wait_until(lambda: listing.shown >= generation, within, "the listing read shown")


def states(tree: QTreeWidget) -> list[str]:
    """The State column, top to bottom (empty while nothing is listed)."""
    return [tree.topLevelItem(n).text(STATE) for n in range(tree.topLevelItemCount())]


async def keystroke(qtbot: QtBot, window: QWidget, target: QWidget, key: Qt.Key) -> None:
    """Ctrl+`key` to `target` once its window is active and it has the focus: a shortcut
    only fires in the active window, which a busy machine activates late."""
    window.show()
    window.activateWindow()
    await wait_until(window.isActiveWindow, 10, "the window active")
    target.setFocus()
    await wait_until(target.hasFocus, 10, "the focus")
    qtbot.keyClick(target, key, Qt.KeyboardModifier.ControlModifier)
