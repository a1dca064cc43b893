"""The log cache benchmarks still run end to end (tiny sizes) and end with their JSON figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", *args, "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


@pytest.mark.slow
def test_the_log_sync_benchmark_fills_the_whole_cache() -> None:
    figures = run("benchmarks.log_sync")
    assert figures["sync_records"] == figures["messages"] == 3000
    assert figures["incremental_new"] == 200
    assert all(
        isinstance(v, int | float) and v > 0 for k, v in figures.items() if k.endswith("_per_s")
    )


@pytest.mark.slow
def test_the_logs_tab_benchmark_times_every_step_beside_its_floor() -> None:
    figures = run("benchmarks.logs_tab")
    assert figures["records"] == 5000
    for step in ("first_rows", "text_filter", "status_filter", "sort", "scroll_end"):
        assert isinstance(figures[f"{step}_ms"], float)
        assert isinstance(figures[f"{step}_sqlite_floor_ms"], float)
