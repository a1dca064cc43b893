"""The main window: tabs, menus, the sandbox banner and the status bar; state restored."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from gwdesk.ui.session import Session
from gwdesk.ui.status_bar import GatewayStatusBar
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme, app_icon

TabFactory = Callable[[Session, TaskRunner, Theme], BaseTab]
SANDBOX_TEXT = (
    "SANDBOX: connected to the local simulated gateway. Messages, replies and balances "
    "are pretend; nothing reaches real phones."
)


class MainWindow(QMainWindow):
    """Owns the tab widgets; every service comes in through the `Session`."""

    closing = Signal()
    """Emitted once when the operator closes the window (the app then shuts down)."""
    profiles_requested = Signal()

    def __init__(
        self,
        session: Session,
        tasks: TaskRunner,
        theme: Theme,
        settings: QSettings,
        tab_factories: list[TabFactory],
    ) -> None:
        super().__init__()
        self.session = session
        self.tasks = tasks
        self.settings = settings
        self.setWindowTitle("gwdesk")
        self.setWindowIcon(app_icon())
        self.setMinimumSize(960, 640)

        self.banner = QLabel(SANDBOX_TEXT)
        self.banner.setObjectName("SandboxBanner")
        self.banner.setWordWrap(True)
        self.banner.setAccessibleName("Sandbox notice")
        self.tab_widget = QTabWidget()
        self.tab_widget.setDocumentMode(True)
        self.tabs: list[BaseTab] = []
        for factory in tab_factories:
            tab = factory(session, tasks, theme)
            self.tabs.append(tab)
            self.tab_widget.addTab(tab, theme.icon(tab.icon_name), tab.title)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        inner = QWidget()
        inner_layout = QVBoxLayout(inner)
        inner_layout.setContentsMargins(8, 8, 8, 4)
        inner_layout.addWidget(self.tab_widget)
        layout.addWidget(inner, 1)
        self.setCentralWidget(central)
        self.status = GatewayStatusBar(session, tasks, theme, self)
        self.setStatusBar(self.status)
        self._build_menus(theme)
        session.changed.connect(self.on_session_changed)
        self.on_session_changed()
        self.restore_state()

    def _build_menus(self, theme: Theme) -> None:
        file_menu = self.menuBar().addMenu("&File")
        profiles = QAction(theme.icon("settings"), "&Profiles…", self)
        profiles.setShortcut(QKeySequence.StandardKey.Preferences)
        profiles.triggered.connect(self.profiles_requested.emit)
        file_menu.addAction(profiles)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view_menu = self.menuBar().addMenu("&View")
        for index, tab in enumerate(self.tabs):
            action = QAction(theme.icon(tab.icon_name), tab.title, self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda _=False, i=index: self.tab_widget.setCurrentIndex(i))
            view_menu.addAction(action)
        self.help_menu = self.menuBar().addMenu("&Help")
        self.about_action = QAction(theme.icon("about"), "&About gwdesk", self)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self.show_about)
        self.help_menu.addAction(self.about_action)

    def show_about(self) -> None:
        from gwdesk.ui.dialogs.about import AboutDialog

        dialog = AboutDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def on_session_changed(self) -> None:
        self.banner.setVisible(self.session.is_sandbox)
        profile = self.session.profile
        suffix = " [SANDBOX]" if self.session.is_sandbox else ""
        self.setWindowTitle(f"gwdesk — {profile.name}{suffix}" if profile else "gwdesk")

    def restore_state(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        index = self.settings.value("window/tab", 0)
        try:
            self.tab_widget.setCurrentIndex(int(index))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            self.tab_widget.setCurrentIndex(0)

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/tab", self.tab_widget.currentIndex())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        self.closing.emit()
        event.accept()

    def tab(self, kind: type[BaseTab]) -> BaseTab:
        for tab in self.tabs:
            if isinstance(tab, kind):
                return tab
        raise LookupError(kind.__name__)
