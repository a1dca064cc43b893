"""The status bar's recent messages: each one whole, newest first, a click away.

A status-bar message lasts a few seconds and is shortened to the room the bar has
left; an operator who looked away, or whose message was cut at "…", finds it here:
the last `KEPT` messages with the time they were shown, each whole in its tooltip, a
click copying it. They quote gateway errors and names from outside, so every one is
shown as plain text (`visible`), its `&` never read as a shortcut.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Final

from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from gwdesk.ui.plain_text import tooltip, visible

#: Messages kept for the menu (older ones are dropped).
KEPT: Final = 30
#: Characters of a message in its menu line (the whole is in its tooltip).
LINE_CHARS: Final = 110


def menu_line(stamp: str, text: str) -> str:
    """`14:02:07  Sent to …`: one line, shortened, `&` kept as a character."""
    one_line = " ".join(visible(text).split())
    if len(one_line) > LINE_CHARS:
        one_line = one_line[: LINE_CHARS - 1].rstrip() + "…"
    return f"{stamp}  {one_line}".replace("&", "&&")


class MessageHistory(QToolButton):
    """A small button whose menu lists the status bar's recent messages."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("☰")
        self.setAutoRaise(True)
        self.setAccessibleName("Recent status messages")
        self.setToolTip("Recent status messages, whole (a click copies one)")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.messages: deque[tuple[str, str]] = deque(maxlen=KEPT)
        """(time shown, text), oldest first."""
        self.list_menu = QMenu(self)
        self.list_menu.setToolTipsVisible(True)
        self.list_menu.aboutToShow.connect(self._fill)
        self.setMenu(self.list_menu)
        self.setEnabled(False)

    def record(self, text: str) -> None:
        if text.strip():
            self.messages.append((time.strftime("%H:%M:%S"), text))
            self.setEnabled(True)

    def _fill(self) -> None:
        self.list_menu.clear()
        for stamp, text in reversed(self.messages):
            action = QAction(menu_line(stamp, text), self.list_menu)
            action.setToolTip(tooltip(text))
            action.triggered.connect(
                lambda _checked=False, whole=text: QGuiApplication.clipboard().setText(whole)
            )
            self.list_menu.addAction(action)
