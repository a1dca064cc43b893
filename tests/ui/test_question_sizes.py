"""The question every list send asks fits the screens operators have, at 1.0 and 1.5.

Each size and scale renders in a process of its own (`question_render`: the
offscreen screen's size and `QT_SCALE_FACTOR` are read once per process): the
longest question (every concern, a long message holding markup, bidi and escape
codes, or a text with no space to wrap at) must open inside the screen, with no
part outside the box, no button or label cut. The pictures are saved in the
screenshots folder (`GWDESK_SCREENSHOTS`), else in the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZES = [(1024, 700), (1366, 768)]
SCALES = ["1", "1.5"]


@pytest.mark.parametrize("text", ["hostile", "unbroken"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize(("width", "height"), SIZES, ids=lambda v: str(v))
def test_the_longest_question_fits_the_screen(
    width: int, height: int, scale: str, text: str, tmp_path: Path, screenshots_dir: Path | None
) -> None:
    config = tmp_path / "screen.json"
    screen = {"name": "S", "x": 0, "y": 0, "width": width, "height": height}
    config.write_text(json.dumps({"screens": [{**screen, "logicalDpi": 96, "dpr": 1}]}))
    folder = screenshots_dir or tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / f"batch-question-{text}-{width}x{height}-{scale}.png"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        "QT_SCALE_FACTOR": scale,
        "PYTHONPATH": os.pathsep.join([*sys.path, str(ROOT)]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.ui.question_render", str(picture), text],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    assert picture.stat().st_size > 0
