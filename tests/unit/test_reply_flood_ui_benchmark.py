"""The console's reply-flood benchmark runs all three of its runs in one process to its JSON.

Each run shows a window and closes it; the second run once died with "Event loop
stopped before Future completed" when Qt quit at the first closed window.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_run_of_the_reply_flood_ui_benchmark_reaches_the_json_line() -> None:
    command = [
        sys.executable, "-m", "benchmarks.reply_flood_ui", "--seconds", "0.5",
        "--connections", "2",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=110, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for run in ("floor", "replies_tab", "naive"):
        assert figures[run]["stored"] > 0, run
        assert figures[run]["missing"] == 0, run
        assert figures[run]["shown"] == figures[run]["stored"], run
        assert figures[run]["lag"]["ticks"] > 0, run
