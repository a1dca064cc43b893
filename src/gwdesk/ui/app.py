"""`gwdesk` with no arguments: the console, painted first and assembled after.

Importing the gateway stack (httpx, zeep, pydantic, keyring) and building the tabs
takes about a second, several times what Qt needs to show a window. So this module
imports only Qt and the window's frame: it shows the frame (with the saved geometry,
saying it is starting), lets it paint, and only then imports `gwdesk.ui.console`,
which fills the frame and runs the qasync loop. The window does not move or resize
between the two, so the operator sees the console at once and its tabs a moment
later. The gateway is connected after that, while the tabs already work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from gwdesk import __version__
from gwdesk.paths import AppPaths
from gwdesk.private_files import private_file, private_folder
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.theme import Theme

APP_ID = "io.github.gwdesk.Gwdesk"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gwdesk", description="the gwdesk operator console")
    parser.add_argument("--profile", help="open this saved profile instead of the default")
    parser.add_argument("--sandbox", action="store_true", help="use the embedded sandbox gateway")
    parser.add_argument("--quit-after", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def console_settings(paths: AppPaths) -> QSettings:
    """The window's saved state, in a file only its owner can read.

    Made private before Qt first reads or writes it: Qt rewrites it through a
    `QSaveFile`, which keeps the mode of the file it replaces.
    """
    path = private_file(private_folder(paths.config) / "console.ini")
    return QSettings(str(path), QSettings.Format.IniFormat)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("gwdesk")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    # The console ends the loop once shutdown is done (the sandbox child stopped);
    # Qt quitting on its own at the last window would stop the loop half way.
    app.setQuitOnLastWindowClosed(False)
    theme = Theme(app)
    paths = AppPaths.default()
    window = MainWindow(console_settings(paths))
    window.show()
    app.processEvents()  # the frame paints now, before the imports below

    from gwdesk.ui.console import run_console

    return run_console(app, window, theme, paths, args)


if __name__ == "__main__":
    sys.exit(main())
