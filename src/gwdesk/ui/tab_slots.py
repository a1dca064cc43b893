"""The main window's tabs, each built when first needed or in the idle time after start.

Building all eight tabs (and importing their modules) takes several times what Qt needs
to show the window. So the console puts every tab's title and icon in the tab bar at
once, builds the tab on screen right then, and the others one per turn of the event
loop after that, in the order the operator is likely to ask for them (`LazyTab.rank`):
the window answers input between two tabs. A tab asked for before its turn (clicked,
its shortcut, `MainWindow.tab`) is built right then, before it is shown: an empty tab
is never on screen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from gwdesk.ui.widgets.scrolling_tabs import ScrollingTabs

if TYPE_CHECKING:
    from gwdesk.ui.session import Session
    from gwdesk.ui.tab_base import BaseTab
    from gwdesk.ui.tasks import TaskRunner
    from gwdesk.ui.theme import Theme


class TabFactory(Protocol):
    """What makes a tab: a `BaseTab` subclass, or a `LazyTab` naming one."""

    @property
    def title(self) -> str: ...

    @property
    def icon_name(self) -> str: ...

    def __call__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None, /
    ) -> BaseTab: ...


@dataclass(frozen=True, slots=True)
class LazyTab:
    """A tab named by its module and class, so its title and icon are in the tab bar
    before that module (and all it imports) is loaded. `rank`: its turn in the idle
    time after start (lower first)."""

    module: str
    name: str
    title: str
    icon_name: str
    rank: int

    def kind(self) -> type[BaseTab]:
        """The tab's class (its module imported now, if it was not)."""
        kind: type[BaseTab] = getattr(importlib.import_module(self.module), self.name)
        return kind

    def __call__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None, /
    ) -> BaseTab:
        return self.kind()(session, tasks, theme, parent)


def rank_of(factory: TabFactory, index: int) -> int:
    """When a tab is built in the idle time: its `LazyTab.rank`, else its place."""
    return factory.rank if isinstance(factory, LazyTab) else index


def kind_of(factory: TabFactory) -> type[BaseTab]:
    if isinstance(factory, LazyTab):
        return factory.kind()
    assert isinstance(factory, type)
    return cast("type[BaseTab]", factory)


class TabSlots(QObject):
    """Each tab's place in the tab widget, and the tab once it is built."""

    all_built = Signal()
    """Emitted once, when the last tab has been built."""

    def __init__(
        self,
        pages: ScrollingTabs,
        factories: Sequence[TabFactory],
        make: Callable[[TabFactory, QWidget], BaseTab],
    ) -> None:
        super().__init__(pages)
        self._pages = pages
        self._factories = list(factories)
        self._make = make
        self._built: list[BaseTab | None] = [None] * len(self._factories)
        self._turns = sorted(
            range(len(self._factories)), key=lambda i: (rank_of(self._factories[i], i), i)
        )
        self.built_order: list[int] = []
        """The indexes of the tabs in the order they were built."""
        self._idle: QTimer | None = None

    def __len__(self) -> int:
        return len(self._factories)

    @property
    def complete(self) -> bool:
        """Every tab is built."""
        return all(tab is not None for tab in self._built)

    def pending(self) -> int:
        """How many tabs are not built yet."""
        return sum(tab is None for tab in self._built)

    def built(self) -> list[BaseTab]:
        """The tabs built so far, in the tab bar's order."""
        return [tab for tab in self._built if tab is not None]

    def all(self) -> list[BaseTab]:
        """Every tab, in the tab bar's order: those not built yet are built now."""
        return [self.ensure(index) for index in range(len(self._built))]

    def ensure(self, index: int) -> BaseTab:
        """The tab at `index`, built now if it was not."""
        tab = self._built[index]
        if tab is None:
            tab = self._make(self._factories[index], self._pages.holder(index))
            self._built[index] = tab
            self._pages.fill(index, tab)
            self.built_order.append(index)
            if self.complete:
                self._stop_idle()
                self.all_built.emit()
        return tab

    def find(self, kind: type[BaseTab]) -> BaseTab:
        """The first tab that is a `kind`, built now if it was not."""
        for index, factory in enumerate(self._factories):
            built = self._built[index]
            if isinstance(built, kind) or (built is None and issubclass(kind_of(factory), kind)):
                return self.ensure(index)
        raise LookupError(kind.__name__)

    def build_in_idle_time(self) -> None:
        """Build the remaining tabs one per turn of the event loop, by rank."""
        if self.complete or self._idle is not None:
            return
        self._idle = QTimer(self)
        self._idle.setInterval(0)
        self._idle.timeout.connect(self._next)
        self._idle.start()

    def stop_building(self) -> None:
        """Build no more in the idle time (the window is closing: a tab built while the
        session shuts down would only start reads of a closing store and service)."""
        self._stop_idle()

    def _next(self) -> None:
        for index in self._turns:
            if self._built[index] is None:
                self.ensure(index)
                return
        self._stop_idle()

    def _stop_idle(self) -> None:
        if self._idle is not None:
            self._idle.stop()
