"""A tab that lists a profile's records beside a side panel: Contacts, Opt-outs.

What such a tab is made of is the same each time: a search box above (typing waits
`SEARCH_DELAY_MS` before the list is read again), a line of counts and the tab's
buttons, the list (or, when it is empty, what it would hold) beside a side panel, and
a result line under it all for what the last action came to. The tab's flow, its
columns, buttons and side panel are its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QTableView, QVBoxLayout, QWidget

from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.listing import hint_label, search_box
from gwdesk.ui.widgets.panes import column, panes
from gwdesk.ui.widgets.validity import set_role

SEARCH_DELAY_MS: Final = 250
NOT_CONNECTED: Final = "Not connected: choose a profile (File ▸ Profiles…)."


@dataclass(frozen=True)
class ListingWords:
    """A listing tab's words: its search box's name and hint, the accessible names of
    its counts and result line, and what the list holds when it has nothing."""

    search: str
    search_hint: str
    counts: str
    result: str
    empty: str


class ListingTab(BaseTab):
    """The search box, counts, empty note, result line and layout of a listing tab;
    subclasses read the list (`refresh`) and lay it out (`lay_out`)."""

    def __init__(
        self,
        session: Session,
        tasks: TaskRunner,
        theme: Theme,
        parent: QWidget | None,
        words: ListingWords,
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.search = search_box(theme, words.search, words.search_hint)
        self.counts = hint_label(name=words.counts, wrap=False)
        self.message = PlainLabel("")
        self.message.setWordWrap(True)
        self.message.setAccessibleName(words.result)
        self.empty = hint_label(words.empty, centred=True)
        self._table: QTableView | None = None
        self._search_timer = single_shot(self, SEARCH_DELAY_MS, self.refresh)
        self.search.textChanged.connect(lambda _t: self.refresh_soon())

    def refresh(self) -> None:
        """Read the list again (the subclass's)."""

    def refresh_soon(self) -> None:
        """Read the list again once the changes have paused (typing, a burst of replies)."""
        self._search_timer.start()

    def with_empty_note(self, table: QTableView) -> QWidget:
        """The list, and in its place when it is empty the note (`show_empty`)."""
        self._table = table
        return column((table, 1), (self.empty, 1))

    def show_empty(self, nothing: bool) -> None:
        self.empty.setVisible(nothing)
        if self._table is not None:
            self._table.setVisible(not nothing)

    def lay_out(
        self, filters: QWidget, buttons: Sequence[QWidget], main: QWidget, side: QWidget
    ) -> QSplitter:
        """The search and `filters` above, the counts and `buttons`, then `main` (the
        list) and `side` side by side (the list takes the room), the result line at the
        bottom. Returns the splitter between the two."""
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(filters)
        row = QHBoxLayout()
        row.addWidget(self.counts, 1)
        for button in buttons:
            row.addWidget(button)
        side_box = column(side, (QWidget(), 1))
        body = panes(Qt.Orientation.Horizontal, main, side_box, stretch=(3, 1))
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(row)
        layout.addWidget(body, 1)
        layout.addWidget(self.message)
        return body

    def say(self, text: str, role: str) -> None:
        """What the last action came to, in its role's colour."""
        self.message.setText(text)
        self.message.setToolTip("")
        set_role(self.message, role)
