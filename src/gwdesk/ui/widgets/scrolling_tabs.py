"""Tabs whose pages scroll when the window is smaller than a page needs.

A 1366x768 laptop at 150% offers the console 910x512 logical pixels, a 1024x700
screen at 200% only 512x350: a tab squeezed below its minimum size lays its widgets
over each other and shrinks its text boxes to slivers. Each page here sits in a
frameless scroll area that gives it at least its minimum size and the whole window
when there is more, so nothing is squeezed and everything stays reachable.

The tab widget still answers for the tab itself (`indexOf`, `setCurrentWidget`), not
for the scroll area around it. A page may come after its tab (`add_pending`, then
`fill`): the console shows its tab bar whole before every tab is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QScrollArea, QTabWidget, QWidget

from gwdesk.ui.widgets.fitting import scroll_area

if TYPE_CHECKING:  # not at run time: importing QIcon builds its 150 theme-icon names
    from PySide6.QtGui import QIcon


class ScrollingTabs(QTabWidget):
    def add_page(self, page: QWidget, icon: QIcon, title: str) -> int:
        """Add `page` in a scroll area of its own; its index."""
        index = self.add_pending(icon, title)
        self.fill(index, page)
        return index

    def add_pending(self, icon: QIcon, title: str) -> int:
        """A tab whose page comes later (`fill`); its index."""
        area = scroll_area()
        area.setObjectName("TabScroller")
        area.viewport().setAutoFillBackground(False)
        return self.addTab(area, icon, title)

    def holder(self, index: int) -> QWidget:
        """The widget a page for the pending tab at `index` is best made in: made there, it
        is not styled again when it moves in (a move under the application's stylesheet
        polishes every widget of the page once more)."""
        area = self.widget(index)
        assert isinstance(area, QScrollArea)
        return area.viewport()

    def fill(self, index: int, page: QWidget) -> None:
        """Put `page` in the pending tab at `index`."""
        area = self.widget(index)
        assert isinstance(area, QScrollArea)
        assert area.widget() is None
        page.setAutoFillBackground(False)
        area.setWidget(page)
        if area.isVisible():  # a scroll area shows only the content it had when shown
            page.show()

    def page(self, index: int) -> QWidget | None:
        """The page at `index`, without its scroll area."""
        area = self.widget(index)
        return area.widget() if isinstance(area, QScrollArea) else area

    def indexOf(self, page: QWidget) -> int:
        for index in range(self.count()):
            if page is self.widget(index) or page is self.page(index):
                return index
        return -1

    def setCurrentWidget(self, page: QWidget) -> None:
        index = self.indexOf(page)
        if index >= 0:
            self.setCurrentIndex(index)
