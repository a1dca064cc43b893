"""The batch send benchmark still runs end to end (a small batch) and ends with its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_batch_send_benchmark_lodges_every_request_through_the_outbox() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "benchmarks.batch_send", "--recipients", "1000",
            "--sweep-recipients", "300", "--naive-recipients", "300",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert (figures["recipients"], figures["requests"], figures["outbox_entries"]) == (1000, 10, 10)
    assert sorted(figures["sweep"]) == ["1", "4", "8"]
    rates = [
        figures["recipients_lodged_per_second"],
        figures["cli_recipients_per_second"],
        figures["naive_recipients_per_second"],
        *(level["recipients_per_second"] for level in figures["sweep"].values()),
    ]
    assert all(isinstance(rate, float) and rate > 0 for rate in rates)
    assert figures["peak_rss_mb"] >= figures["rss_before_mb"] > 0
