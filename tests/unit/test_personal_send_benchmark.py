"""The personal send benchmark still runs end to end (a small file) and ends with its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_personal_send_benchmark_lodges_every_message_and_prints_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.personal_send", "--messages", "400",
         "--naive-messages", "50"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["personal"]["messages"] == figures["identical"]["messages"] == 400
    # 200 texts of their own and one shared by 200 recipients (two requests).
    assert (figures["distinct_texts"], figures["personal"]["requests"]) == (201, 202)
    assert figures["identical"]["requests"] == 4
    assert figures["ucs2_recipients"] == 20
    rates = [
        figures["personal_messages_per_second"],
        figures["identical_messages_per_second"],
        figures["naive_messages_per_second"],
    ]
    assert all(isinstance(rate, float) and rate > 0 for rate in rates)
