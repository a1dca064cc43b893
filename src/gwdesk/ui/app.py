"""`gwdesk` with no arguments: the console on the qasync loop.

The window is shown first and the gateway connected after, so the operator sees
the console at once even while the embedded sandbox is still starting.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from logging.handlers import RotatingFileHandler

import qasync
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from gwdesk import __version__
from gwdesk.paths import AppPaths
from gwdesk.settings import PasswordVault, ProfileStore
from gwdesk.ui.controller import AppController, default_service_factory, default_tabs
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.gc_guard import GuiThreadCollector
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.outbox_startup import OutboxMonitor
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme, app_icon

APP_ID = "io.github.gwdesk.Gwdesk"


def configure_logging(paths: AppPaths) -> None:
    paths.data.mkdir(parents=True, exist_ok=True)
    handler = RotatingFileHandler(
        paths.log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
    )
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

    def handler(_signum: int, _frame: object) -> None:
        loop.call_soon_threadsafe(window.close)

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, handler)
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(250)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gwdesk", description="the gwdesk operator console")
    parser.add_argument("--profile", help="open this saved profile instead of the default")
    parser.add_argument("--sandbox", action="store_true", help="use the embedded sandbox gateway")
    parser.add_argument("--quit-after", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("gwdesk")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    # The controller ends the loop once shutdown is done (the sandbox child stopped);
    # Qt quitting on its own at the last window would stop the loop half way.
    app.setQuitOnLastWindowClosed(False)
    theme = Theme(app)
    collector = GuiThreadCollector(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    paths = AppPaths.default()
    configure_logging(paths)
    reporter = ErrorReporter()
    reporter.install(loop)
    tasks = TaskRunner(reporter)
    session = Session(paths, default_service_factory)
    settings = QSettings(str(paths.config / "console.ini"), QSettings.Format.IniFormat)
    window = MainWindow(session, tasks, theme, settings, default_tabs())
    reporter.dialog_parent = lambda: window
    controller = AppController(
        window, session, tasks, ProfileStore(), PasswordVault(), paths, reporter
    )
    # Interrupted sends are settled on each profile activation, and offered for resuming.
    OutboxMonitor(window, session, tasks)
    quit_on_signals(window, loop)
    window.show()
    with loop:
        code: int = loop.run_until_complete(
            controller.run(profile=args.profile, sandbox=args.sandbox, quit_after=args.quit_after)
        )
    collector.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
