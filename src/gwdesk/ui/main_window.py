"""The main window: tabs, menus, the sandbox banner and the status bar; state restored.

It is built in two steps so the console paints at once: the frame (title, geometry,
menus, an empty tab area saying it is starting) needs only Qt, and is shown before
the gateway stack is imported; `attach` then adds the tabs and the status bar that
work through the session. The console's `attach` builds only the tab on screen at
once, the others in the idle time after (`ui.tab_slots`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QRect, QSettings, QSize, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMainWindow, QMenu, QVBoxLayout, QWidget

from gwdesk.domain.settings import WINDOW_GEOMETRY, WINDOW_TAB
from gwdesk.ui.tab_slots import TabFactory, TabSlots
from gwdesk.ui.widgets.scrolling_tabs import ScrollingTabs
from gwdesk.ui.window_state import keep, kept

if TYPE_CHECKING:
    from PySide6.QtGui import QCloseEvent

    from gwdesk.ui.session import Session
    from gwdesk.ui.status_bar import GatewayStatusBar
    from gwdesk.ui.tab_base import BaseTab
    from gwdesk.ui.tasks import TaskRunner
    from gwdesk.ui.theme import Theme

__all__ = ["MainWindow", "TabFactory", "clamped"]
SANDBOX_TEXT = (
    "SANDBOX: connected to the local simulated gateway. Messages, replies and balances "
    "are pretend; nothing reaches real phones."
)
STARTING_TEXT = "Starting gwdesk…"
DEFAULT_SIZE = QSize(1280, 800)
MINIMUM_SIZE = QSize(480, 320)
"""A 1024x700 screen at scale 2.0 offers 512x350: each tab scrolls in what it is given."""


class MainWindow(QMainWindow):
    """Owns the tab widgets; every service comes in through the `Session`."""

    closing = Signal()
    """Emitted once when the operator closes the window (the app then shuts down)."""
    profiles_requested = Signal()
    outbox_requested = Signal()
    """File ▸ Outbox…: the sends left unfinished, to resume or discard."""
    rules_requested = Signal()
    """File ▸ Keyword rules…: the profile's rules on replies, and what they did."""

    def __init__(self, settings: QSettings) -> None:
        """The frame alone: what can be shown before any service exists."""
        super().__init__()
        self.settings = settings
        self.closed = False
        self._attached = False
        self.slots: TabSlots | None = None
        self.setWindowTitle("gwdesk")
        self.setMinimumSize(MINIMUM_SIZE)

        self.banner = QLabel(SANDBOX_TEXT)
        self.banner.setObjectName("SandboxBanner")
        self.banner.setWordWrap(True)
        self.banner.setAccessibleName("Sandbox notice")
        self.banner.hide()
        self.tab_widget = ScrollingTabs()
        self.tab_widget.setDocumentMode(True)
        self.starting = QLabel(STARTING_TEXT)
        self.starting.setObjectName("StartingLabel")  # centred by the stylesheet
        self.starting.setProperty("role", "hint")
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        inner = QWidget()
        inner_layout = QVBoxLayout(inner)
        inner_layout.setContentsMargins(8, 8, 8, 4)
        inner_layout.addWidget(self.tab_widget)
        inner_layout.addWidget(self.starting)
        self.tab_widget.hide()
        layout.addWidget(inner, 1)
        self.setCentralWidget(central)
        # No status bar yet: `attach` adds the real one with the tabs, in the same turn of
        # the event loop (the first QStatusBar made costs ~6 ms, a twentieth of a bare
        # window's start).
        self._build_menus()
        self._restore_geometry()

    @classmethod
    def build(
        cls,
        session: Session,
        tasks: TaskRunner,
        theme: Theme,
        settings: QSettings,
        tab_factories: Sequence[TabFactory],
    ) -> MainWindow:
        """Frame and contents in one go (tests, and anything that need not paint first)."""
        window = cls(settings)
        window.attach(session, tasks, theme, tab_factories)
        return window

    def attach(
        self,
        session: Session,
        tasks: TaskRunner,
        theme: Theme,
        tab_factories: Sequence[TabFactory],
        *,
        in_idle_time: bool = False,
    ) -> None:
        """The session's tabs and status bar, into the frame already on screen.

        `in_idle_time`: every tab is in the tab bar at once but only the one on screen
        is built now, the others in the idle time after (each built at once if asked
        for sooner); otherwise all are built now.
        """
        from gwdesk.ui.status_bar import GatewayStatusBar

        self.session = session
        self.tasks = tasks
        slots = TabSlots(
            self.tab_widget,
            tab_factories,
            lambda make, holder: make(session, tasks, theme, holder),
        )
        self.slots = slots
        for factory in tab_factories:
            self.tab_widget.add_pending(theme.icon(factory.icon_name), factory.title)
        if not in_idle_time:
            slots.all()
        self.starting.hide()
        self.tab_widget.show()
        self.status: GatewayStatusBar = GatewayStatusBar(session, tasks, theme, self)
        self.setStatusBar(self.status)
        self._fill_menus(theme, tab_factories)
        session.changed.connect(self.on_session_changed)
        self.on_session_changed()
        self._restore_tab()
        # From here a tab is built (if it was not) before it is first shown.
        self.tab_widget.currentChanged.connect(self._tab_chosen)
        self._tab_chosen(self.tab_widget.currentIndex())
        slots.build_in_idle_time()
        self._attached = True

    @property
    def tabs(self) -> list[BaseTab]:
        """Every tab, in the tab bar's order (any not built yet is built now)."""
        return self.slots.all() if self.slots is not None else []

    @property
    def tabs_ready(self) -> bool:
        """Every tab is built (none waits for the idle time)."""
        return self.slots is not None and self.slots.complete

    def _tab_chosen(self, index: int) -> None:
        if self.slots is not None and 0 <= index < len(self.slots):
            self.slots.ensure(index)

    def _build_menus(self) -> None:
        self.file_menu = self.menuBar().addMenu("&File")
        self.profiles_action = QAction("&Profiles…", self)
        self.profiles_action.triggered.connect(self.profiles_requested.emit)
        self.profiles_action.setEnabled(False)  # until there is a session to connect
        self.file_menu.addAction(self.profiles_action)
        self.outbox_action = QAction("&Outbox…", self)
        self.outbox_action.setToolTip("The sends left unfinished: resume or discard them")
        self.outbox_action.triggered.connect(self.outbox_requested.emit)
        self.outbox_action.setEnabled(False)  # until there is a session's outbox
        self.file_menu.addAction(self.outbox_action)
        self.rules_action = QAction("&Keyword rules…", self)
        self.rules_action.setToolTip("Rules that answer, assign, tag or forward replies")
        self.rules_action.triggered.connect(self.rules_requested.emit)
        self.rules_action.setEnabled(False)  # until there is a session's store
        self.file_menu.addAction(self.rules_action)
        self.file_menu.addSeparator()
        self.quit_action = QAction("&Quit", self)
        self.quit_action.triggered.connect(self.close)
        self.file_menu.addAction(self.quit_action)
        self.view_menu: QMenu = self.menuBar().addMenu("&View")
        self.help_menu = self.menuBar().addMenu("&Help")
        self.about_action = QAction("&About gwdesk", self)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self.show_about)
        self.about_action.setEnabled(False)
        self.help_menu.addAction(self.about_action)

    def _fill_menus(self, theme: Theme, tabs: Sequence[TabFactory]) -> None:
        """Icons, shortcuts, the View menu's tabs, and the actions that need the session.

        Standard shortcuts wait until now: the first one costs ~25 ms (PySide6 builds
        the key enums), which would delay the first paint by as much again.
        """
        from PySide6.QtGui import QKeySequence  # its 70-odd standard keys: after the first paint

        self.profiles_action.setShortcut(QKeySequence.StandardKey.Preferences)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        self.profiles_action.setIcon(theme.icon("settings"))
        self.profiles_action.setEnabled(True)
        self.outbox_action.setEnabled(True)
        self.rules_action.setEnabled(True)
        self.about_action.setIcon(theme.icon("about"))
        self.about_action.setEnabled(True)
        for index, tab in enumerate(tabs):
            action = QAction(theme.icon(tab.icon_name), tab.title, self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda _=False, i=index: self.tab_widget.setCurrentIndex(i))
            self.view_menu.addAction(action)

    def show_about(self) -> None:
        from PySide6.QtCore import Qt

        from gwdesk.ui.dialogs.about import AboutDialog

        dialog = AboutDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def on_session_changed(self) -> None:
        from gwdesk.ui.plain_text import window_title  # after the first paint, like the tabs

        self.banner.setVisible(self.session.is_sandbox)
        profile = self.session.profile
        suffix = " [SANDBOX]" if self.session.is_sandbox else ""
        title = f"gwdesk — {profile.name}{suffix}" if profile else "gwdesk"
        self.setWindowTitle(window_title(title))  # the profile's name is the operator's text

    def _restore_geometry(self) -> None:
        """The window as it was left, but never bigger than the screen it opens on (a window
        saved on a larger screen, or at a smaller scale factor, would hang off the edges)."""
        geometry = kept(self.settings, WINDOW_GEOMETRY)
        if not geometry or not self.restoreGeometry(QByteArray(geometry)):
            self.resize(DEFAULT_SIZE)
        self.setGeometry(clamped(self.geometry(), self.screen().availableGeometry()))

    def _restore_tab(self) -> None:
        index = kept(self.settings, WINDOW_TAB)
        self.tab_widget.setCurrentIndex(index if index < self.tab_widget.count() else 0)

    def save_state(self) -> None:
        keep(self.settings, WINDOW_GEOMETRY, bytes(self.saveGeometry().data()))
        if self._attached:  # a frame closed before its tabs came keeps the saved tab
            keep(self.settings, WINDOW_TAB, max(self.tab_widget.currentIndex(), 0))
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.slots is not None:
            self.slots.stop_building()
        self.save_state()
        self.closed = True
        self.closing.emit()
        event.accept()

    def tab(self, kind: type[BaseTab]) -> BaseTab:
        """The first tab that is a `kind` (built now if it was not)."""
        if self.slots is None:
            raise LookupError(kind.__name__)
        return self.slots.find(kind)


def clamped(window: QRect, screen: QRect) -> QRect:
    """`window` made to fit `screen`: no bigger, and moved inside it."""
    size = window.size().boundedTo(screen.size())
    left = min(max(window.left(), screen.left()), screen.right() + 1 - size.width())
    top = min(max(window.top(), screen.top()), screen.bottom() + 1 - size.height())
    return QRect(left, top, size.width(), size.height())
