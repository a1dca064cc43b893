"""The console's tabs: every one in the tab bar at once, built in the idle time after
start in the operator's likely order, and one asked for sooner built before it shows."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget

from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tab_slots import LazyTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.tab_titles import TAB_TITLES

TITLES = TAB_TITLES
LIKELY = [
    "Send",
    "Replies",
    "Batch",
    "Status",
    "Logs",
    "Scheduled",
    "Contacts",
    "Opt-outs",
    "Fax / MMS",
]


class Paints(QObject):
    """Notes each paint inside a tab page (its scroll area and all in it): of a page with
    its tab in it, or of an empty one."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)  # goes with the window, and so does the filter
        self.areas: dict[QWidget, int] = {}
        self.full: list[int] = []
        self.empty: list[int] = []
        for index in range(window.tab_widget.count()):
            self.areas[window.tab_widget.widget(index)] = index
        QApplication.instance().installEventFilter(self)

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and isinstance(obj, QWidget):
            widget: QWidget | None = obj
            while widget is not None and widget not in self.areas:
                widget = widget.parentWidget()
            if isinstance(widget, QScrollArea):
                filled = widget.widget() is not None
                (self.full if filled else self.empty).append(self.areas[widget])
        return False


def console_window(ui: UiBundle, qtbot, saved_tab: int = 0) -> MainWindow:
    """The frame shown, then its tabs attached as the console does."""
    ui.settings.setValue("window/tab", saved_tab)
    window = MainWindow(ui.settings)
    qtbot.addWidget(window)
    window.show()
    window.attach(ui.session, ui.tasks, ui.theme, default_tabs(), in_idle_time=True)
    return window


def built_titles(window: MainWindow) -> list[str]:
    assert window.slots is not None
    return [TITLES[index] for index in window.slots.built_order]


async def test_every_tab_is_built_after_start_without_being_clicked(ui: UiBundle, qtbot) -> None:
    window = console_window(ui, qtbot)
    assert window.slots is not None
    assert window.slots.pending() > 0

    await wait_until(lambda: window.tabs_ready, 30, "every tab built")

    pages = [window.tab_widget.page(index) for index in range(window.tab_widget.count())]
    assert all(isinstance(page, BaseTab) for page in pages)
    assert [page.title for page in pages if isinstance(page, BaseTab)] == TITLES
    assert [window.tab_widget.tabText(i) for i in range(len(TITLES))] == TITLES
    assert window.tab_widget.currentIndex() == 0  # nothing was clicked


async def test_a_tab_clicked_before_its_turn_is_whole_when_shown(ui: UiBundle, qtbot) -> None:
    window = console_window(ui, qtbot)
    spy = Paints(window)
    last = TITLES.index(LIKELY[-1])
    assert window.tab_widget.page(last) is None  # not built yet: its turn is last

    bar = window.tab_widget.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(last).center())

    page = window.tab_widget.page(last)
    assert isinstance(page, BaseTab)
    assert page.title == TITLES[last]
    assert window.slots is not None
    assert window.slots.pending() > 0
    await wait_until(lambda: last in spy.full, 10, "the clicked tab painted")
    spy.stop()
    assert page.isVisible()
    assert spy.empty == []


async def test_a_shortcut_to_a_tab_not_built_yet_shows_it_whole(ui: UiBundle, qtbot) -> None:
    window = console_window(ui, qtbot)
    spy = Paints(window)
    logs = TITLES.index("Logs")

    window.view_menu.actions()[logs].trigger()

    page = window.tab_widget.page(logs)
    assert isinstance(page, BaseTab)
    assert page.title == "Logs"
    await wait_until(lambda: logs in spy.full, 10, "the Logs tab painted")
    spy.stop()
    assert page.isVisible()
    assert spy.empty == []


async def test_tabs_are_built_in_the_order_the_operator_is_likely_to_need_them(
    ui: UiBundle, qtbot
) -> None:
    window = console_window(ui, qtbot)

    await wait_until(lambda: window.tabs_ready, 30, "every tab built")

    assert built_titles(window) == LIKELY


async def test_the_tab_left_open_last_time_is_built_first(ui: UiBundle, qtbot) -> None:
    logs = TITLES.index("Logs")
    window = console_window(ui, qtbot, saved_tab=logs)

    await wait_until(lambda: window.tabs_ready, 30, "every tab built")

    assert window.tab_widget.currentIndex() == logs
    assert built_titles(window) == ["Logs"] + [title for title in LIKELY if title != "Logs"]


def test_each_tab_named_ahead_has_its_class_title_and_icon() -> None:
    for factory in default_tabs():
        assert isinstance(factory, LazyTab)
        kind = factory.kind()
        assert (kind.title, kind.icon_name) == (factory.title, factory.icon_name)


async def test_a_window_closed_before_every_tab_is_built_builds_no_more(
    ui: UiBundle, qtbot
) -> None:
    window = console_window(ui, qtbot)
    assert window.slots is not None
    pending = window.slots.pending()

    quits = ui.app.quitOnLastWindowClosed()
    ui.app.setQuitOnLastWindowClosed(False)  # as the console runs: it ends its loop itself
    try:
        window.close()
    finally:
        ui.app.setQuitOnLastWindowClosed(quits)
    turns = 0

    def turn() -> None:
        nonlocal turns
        turns += 1

    ticker = QTimer()  # fires once a turn of the loop, after the idle time's own timer
    ticker.timeout.connect(turn)
    ticker.start(0)
    await wait_until(lambda: turns >= 5, 10, "five turns of the event loop")
    ticker.stop()

    assert window.slots.pending() == pending
