"""Every tab and the main dialogs fit screens of 1024x700, 1366x768 and 1920x1080 pixels
at scale factors 1.0, 1.5 and 2.0 (the operator's 100%, 150% and 200%).

`QT_SCALE_FACTOR` is read when the QApplication is made, so each scale runs
`layout_pass.py` in a process of its own, on offscreen screens of those sizes: the
window fills each screen in turn, filled with long and hostile data, and the pass
fails on a clipped label, overlapping siblings, a text box shorter than three lines,
a widget pushed outside its window, or a window or dialog bigger than its screen.
With `GWDESK_SCREENSHOTS` set it saves every tab and dialog at each size and scale
under `layout/` there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.layout_pass import screens_config

PASS = Path(__file__).with_name("layout_pass.py")
ROOT = PASS.parents[2]


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("scale", ["1.0", "1.5", "2.0"])
def test_every_tab_and_dialog_fits_each_screen_at_scale(scale: str, tmp_path: Path) -> None:
    config = tmp_path / "screens.json"
    config.write_text(json.dumps(screens_config()), encoding="utf-8")
    env = {
        **os.environ,
        "QT_SCALE_FACTOR": scale,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
    }
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--basetemp",
            str(tmp_path / "pass"),
            str(PASS),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=220,
    )
    assert done.returncode == 0, done.stdout[-12000:] + done.stderr[-3000:]
