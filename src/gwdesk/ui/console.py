"""The console's second stage: services, tabs and the qasync loop, into the shown frame.

`gwdesk.ui.app` has already painted the window's frame; everything here (the
gateway stack, the tabs, the loop) is imported and built after that, so its cost
is spent while the operator already sees the window.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from logging.handlers import RotatingFileHandler
from typing import Final

import qasync
from PySide6.QtWidgets import QApplication

from gwdesk.paths import AppPaths
from gwdesk.private_files import private_file, private_folder, private_rotator, tighten
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.ui.controller import AppController, default_service_factory, default_tabs
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.gc_guard import GuiThreadCollector
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.outbox.monitor import OutboxMonitor
from gwdesk.ui.rules.opener import RulesOpener
from gwdesk.ui.scheduled.serving import ScheduledServing
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, to_gui_thread
from gwdesk.ui.theme import Theme, app_icon
from gwdesk.ui.timers import repeating

LOG_BACKUPS: Final = 3


def configure_logging(paths: AppPaths) -> None:
    private_folder(paths.data)
    private_file(paths.log_file)  # the handler appends to it; its rotations stay private too
    for number in range(1, LOG_BACKUPS + 1):
        tighten(f"{paths.log_file}.{number}")
    handler = RotatingFileHandler(
        paths.log_file, maxBytes=2_000_000, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.rotator = private_rotator
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("gwdesk")
    root.setLevel(logging.INFO)
    root.addHandler(handler)


def quit_on_signals(window: MainWindow, loop: asyncio.AbstractEventLoop) -> None:
    """Ctrl+C in the terminal (or SIGTERM) closes the window as File → Quit does.

    So the usual shutdown runs: tasks drained, the embedded sandbox stopped. Python
    runs signal handlers only when it gets control, which a sleeping Qt loop does
    not give it; a quiet timer wakes it a few times a second.
    """

    close = to_gui_thread(loop, window, window.close)

    def handler(_signum: int, _frame: object) -> None:
        close()

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, handler)
    repeating(window, 250, lambda: None)


def show_scheduled(window: MainWindow) -> None:
    """The Scheduled tab to the front (its module loaded now if it was not)."""
    from gwdesk.ui.scheduled.tab import ScheduledTab

    window.tab_widget.setCurrentWidget(window.tab(ScheduledTab))


def run_console(
    app: QApplication,
    window: MainWindow,
    theme: Theme,
    paths: AppPaths,
    args: argparse.Namespace,
) -> int:
    """Fill `window` with the session's tabs, connect, and run until it is closed."""
    app.setWindowIcon(app_icon())
    collector = GuiThreadCollector(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    configure_logging(paths)
    reporter = ErrorReporter()
    reporter.install(loop)
    tasks = TaskRunner(reporter)
    session = Session(paths, default_service_factory)
    window.attach(session, tasks, theme, default_tabs(), in_idle_time=True)
    reporter.dialog_parent = lambda: window
    vault = PasswordVault()
    controller = AppController(window, session, tasks, ProfileStore(), vault, paths, reporter)
    # Interrupted sends are settled on each profile activation, and offered for resuming
    # (by itself when something needs the operator, and always from File ▸ Outbox…).
    OutboxMonitor(window, session, tasks, opened_by=window.outbox_requested)
    # Scheduled sends go while the console is open (those missed while it was closed: asked).
    ScheduledServing(window, session, tasks, review=lambda: show_scheduled(window))
    # File ▸ Keyword rules…: the profile's rules, their signing secrets in this keyring.
    RulesOpener(window, session, tasks, vault, opened_by=window.rules_requested)
    quit_on_signals(window, loop)
    with loop:
        code: int = loop.run_until_complete(
            controller.run(profile=args.profile, sandbox=args.sandbox, quit_after=args.quit_after)
        )
    collector.stop()
    return code
