"""Console start to first window painted, beside a bare PySide6 `QMainWindow`.

    python -m benchmarks.startup              # 5 runs of each (targets: first paint within
                                              # 1.3x of bare, every tab ready within 4x)
    python -m benchmarks.startup --runs 2     # a smoke run

Each run is a fresh process (`QT_QPA_PLATFORM=offscreen`, empty config and data
folders, no keyring), timed from the moment the parent spawns it to the first
paint of its main window, which the child reports through an event filter on that
window (installed as it is shown) and then exits. Measured:

- bare: import PySide6, create a `QApplication`, show an empty `QMainWindow`;
- console: the same start, then `gwdesk.ui.app.main(["--sandbox"])`, the real
  console. It paints its frame (menus, saved geometry, "Starting gwdesk…") before
  importing the gateway stack and building the tabs, so the figure is when the
  operator sees the window;
- tabs: for the console runs, also the moment every tab is built and in the window
  (the console builds the tab on screen first and the others in the idle time after;
  this is the moment the last of them is built, not when the tab bar first shows);
- connected: and the moment the status bar says the sandbox is connected (the
  embedded gateway started and signed in).

Beside each moment the child's own CPU time by then is noted: on a busy machine the
wall clock measures the neighbours too.

The package is byte-compiled first, as installing a wheel does (pip compiles on
install); in a checkout run with PYTHONDONTWRITEBYTECODE=1 every start would
otherwise compile gwdesk's sources again, while PySide6 (the bare baseline) is
already compiled in site-packages.

The median of the runs is the figure. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.3
TABS_TARGET_RATIO = 4.0

CHILD = r"""
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

def report(what):
    sys.stdout.write(f"{what} {time.time():.6f} {time.process_time():.6f}\n")
    sys.stdout.flush()

class FirstPaint(QObject):
    def __init__(self):
        super().__init__()
        self.painted = False
    def eventFilter(self, obj, event):
        if not self.painted and event.type() == QEvent.Type.Paint:
            self.painted = True
            report("shown")
            if MODE == "bare":
                QTimer.singleShot(0, lambda: os._exit(0))
            else:
                QTimer.singleShot(0, lambda: watch_tabs(obj))
        return False

def watch_tabs(window):
    # Every tab built and in its place (a tab bar whose tabs wait for the idle time is
    # not ready); a console that builds them all at once has none pending once it has any.
    if window.tab_widget.count() and getattr(window, "tabs_ready", True):
        report("tabs")
        QTimer.singleShot(50, watch_connection)
        return
    QTimer.singleShot(5, lambda: watch_tabs(window))

def watch_connection():
    window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow))
    if "sandbox" in window.statusBar().currentMessage().lower() and "connected" in window.statusBar().currentMessage().lower():
        report("connected")
        window.close()
        return
    QTimer.singleShot(20, watch_connection)

MODE = sys.argv[1]
app = QApplication(sys.argv[:1])
spy = FirstPaint()
# The spy watches the main window alone, in both modes: a filter on the application
# would take every event of every widget through Python (some 350 before the console's
# frame paints, ~25 ms of CPU the console never spends without it).
_show = QMainWindow.show
def show_watched(window):
    window.installEventFilter(spy)
    _show(window)
QMainWindow.show = show_watched
if MODE == "bare":
    window = QMainWindow()
    window.resize(1280, 800)
    window.show()
    app.exec()
else:
    from gwdesk.ui.app import main
    sys.exit(main(["--sandbox"]))
"""


def one_run(mode: str, timeout: float = 60.0) -> dict[str, float]:
    """The moments (seconds from the spawn) the child reported, and for each the CPU
    the child had used by then (`cpu_` + its name: a figure that survives a busy
    machine better than the wall clock does)."""
    with tempfile.TemporaryDirectory(prefix="gwdesk-startup-") as folder:
        env = dict(
            os.environ,
            QT_QPA_PLATFORM="offscreen",
            GWDESK_CONFIG_DIR=str(Path(folder) / "config"),
            GWDESK_DATA_DIR=str(Path(folder) / "data"),
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        started = time.time()
        process = subprocess.Popen(
            [sys.executable, "-c", CHILD, mode],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        marks: dict[str, float] = {}
        try:
            assert process.stdout is not None
            for line in process.stdout:
                what, stamp, cpu = line.split()
                marks[what] = float(stamp) - started
                marks[f"cpu_{what}"] = float(cpu)
            process.wait(timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        if "shown" not in marks:
            raise RuntimeError(f"the {mode} run never showed its window")
        return marks


def measure(runs: int) -> dict[str, Any]:
    bare, console, tabs, connected = [], [], [], []
    cpu_bare, cpu_console, cpu_tabs = [], [], []
    for _ in range(runs):  # interleaved, so a noisy moment hits both alike
        marks = one_run("bare")
        bare.append(marks["shown"])
        cpu_bare.append(marks["cpu_shown"])
        marks = one_run("console")
        console.append(marks["shown"])
        cpu_console.append(marks["cpu_shown"])
        if "tabs" in marks:
            tabs.append(marks["tabs"])
            cpu_tabs.append(marks["cpu_tabs"])
        if "connected" in marks:
            connected.append(marks["connected"])
    bare_ms = statistics.median(bare) * 1000
    console_ms = statistics.median(console) * 1000
    return {
        "benchmark": "startup",
        "runs": runs,
        "bare_window_ms": round(bare_ms, 1),
        "console_window_ms": round(console_ms, 1),
        "ratio": round(console_ms / bare_ms, 2),
        "target_ratio": TARGET_RATIO,
        "console_tabs_ms": round(statistics.median(tabs) * 1000, 1) if tabs else None,
        "tabs_ratio": round(statistics.median(tabs) * 1000 / bare_ms, 2) if tabs else None,
        "tabs_target_ratio": TABS_TARGET_RATIO,
        "sandbox_connected_ms": round(statistics.median(connected) * 1000, 1)
        if connected
        else None,
        "cpu_bare_ms": round(statistics.median(cpu_bare) * 1000, 1),
        "cpu_console_ms": round(statistics.median(cpu_console) * 1000, 1),
        "cpu_tabs_ms": round(statistics.median(cpu_tabs) * 1000, 1) if cpu_tabs else None,
        "bare_runs_ms": [round(x * 1000, 1) for x in bare],
        "console_runs_ms": [round(x * 1000, 1) for x in console],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def compile_package() -> None:
    """Byte-compile gwdesk where it is imported from, as a wheel install does."""
    import gwdesk

    compileall.compile_dir(Path(gwdesk.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compile_package()
    result = measure(args.runs)
    print(f"bare QMainWindow first paint:  {result['bare_window_ms']:8.1f} ms (median)")
    print(
        f"gwdesk console first paint:    {result['console_window_ms']:8.1f} ms "
        f"({result['ratio']}x bare; target {TARGET_RATIO}x)"
    )
    if result["console_tabs_ms"] is not None:
        print(
            f"every tab built and in place:  {result['console_tabs_ms']:8.1f} ms "
            f"({result['tabs_ratio']}x bare; target {TABS_TARGET_RATIO}x)"
        )
    print(
        f"CPU used by then (median):      bare {result['cpu_bare_ms']:.1f} ms, "
        f"console first paint {result['cpu_console_ms']:.1f} ms, "
        f"every tab {result['cpu_tabs_ms']} ms"
    )
    if result["sandbox_connected_ms"] is not None:
        print(f"sandbox started and connected: {result['sandbox_connected_ms']:8.1f} ms")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
