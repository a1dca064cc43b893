"""Pictures of the real console on a real X display (Xvfb), one per tab: not a test.

    Xvfb :77 -screen 0 1366x768x24 &
    DISPLAY=:77 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.25 GWDESK_CONFIG_DIR=$(mktemp -d) \\
        GWDESK_DATA_DIR=$(mktemp -d) python -m tests.ui.xsession_shots docs/screenshots

It starts the console as `gwdesk --sandbox` does (its own sandbox child), waits until
it is connected, types a long message into the Send and Batch tabs, then shows each
tab in turn and saves the window as the X server drew it (`xsession-<tab>.png`), plus
the whole screen once (`import -window root`, when ImageMagick is there).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from gwdesk.ui import app as console
from gwdesk.ui.main_window import MainWindow

TEXT = (
    "Harbour Dental: your check-up is due. Reply YES to book, or call 02 9999 0000 "
    "before Friday; we are closed on Monday for the public holiday."
)


def shoot(folder: Path) -> None:
    """Once the console is connected: every tab's picture, then quit."""
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    window = windows[0] if windows else None
    status = getattr(window, "status", None)
    if window is None or status is None or "Credits" not in status.balance_label.text():
        QTimer.singleShot(500, lambda: shoot(folder))
        return
    from gwdesk.ui.batch.tab import BatchTab
    from gwdesk.ui.send.tab import SendTab

    send, batch = window.tab(SendTab), window.tab(BatchTab)
    assert isinstance(send, SendTab)
    assert isinstance(batch, BatchTab)
    send.form.recipient.set_text("0412 345 678")
    send.form.editor.set_text(TEXT)
    batch.compose.editor.set_text(TEXT)
    window.setGeometry(window.screen().availableGeometry())  # as an operator maximises it
    folder.mkdir(parents=True, exist_ok=True)

    def tab(index: int) -> None:
        if index == len(window.tabs):
            if shutil.which("import"):
                root = folder / "xsession-screen.png"
                subprocess.run(["import", "-window", "root", str(root)], check=False)
            window.close()
            return
        window.tab_widget.setCurrentIndex(index)
        name = window.tabs[index].title.lower().replace(" / ", "_").replace(" ", "_")

        def grab() -> None:
            window.grab().save(str(folder / f"xsession-{name}.png"))
            tab(index + 1)

        QTimer.singleShot(700, grab)

    QTimer.singleShot(1000, lambda: tab(0))


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    QApplication(sys.argv[:1])  # the console's own, made first so the timer has a loop
    QTimer.singleShot(0, lambda: shoot(folder))
    code = console.main(["--sandbox"])
    screen = QGuiApplication.primaryScreen()
    print(
        f"screen {screen.geometry().width()}x{screen.geometry().height()} logical, "
        f"ratio {screen.devicePixelRatio()}: pictures in {folder}"
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
