"""The reply flood benchmark still runs end to end (a second a side) and checks the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_flood_prints_its_figures_last_and_loses_nothing() -> None:
    command = [
        sys.executable, "-m", "benchmarks.reply_flood", "--seconds", "1", "--connections", "4",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    listener = figures["listener"]
    assert listener["acknowledged"] > 0
    assert listener["stored"] == listener["acknowledged"]
    assert listener["missing"] == 0
    assert listener["failures"] == 0
    assert figures["ceiling"]["per_second"] > 0
    metrics = figures["metrics"]
    assert metrics["on"]["missing"] == metrics["off"]["missing"] == 0
    assert metrics["scrapes"] >= 1
    assert metrics["ratio"] > 0
    assert any(line.startswith("check:") for line in lines)
    assert any(line.startswith("metrics:") for line in lines)
