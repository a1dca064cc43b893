"""The sandbox benchmark still runs end to end (tiny sizes) and ends with its JSON figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "messages", "python", "cpus", "seed_seconds", "seed_records_per_s",
    "logs_since_records", "logs_since_seconds", "logs_since_records_per_s",
    "logs_page_records", "logs_page_records_per_s", "simple_send_requests",
    "simple_send_concurrency", "simple_send_per_s", "simple_send_httpx_per_s",
    "simple_send_naive_requests", "simple_send_naive_per_s",
}  # fmt: skip


def test_the_quick_benchmark_prints_its_figures_as_json_last() -> None:
    command = [
        sys.executable, "-m", "benchmarks.sandbox_throughput", "--quick",
        "--messages", "300", "--sends", "40", "--naive-sends", "3", "--naive-pages", "1",
        "--concurrency", "4",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert set(figures) == KEYS
    assert figures["messages"] == figures["logs_since_records"] == 300
    assert figures["simple_send_requests"] == 40
    assert all(figures[k] > 0 for k in KEYS if k.endswith("_per_s"))
    assert any(line.startswith("seed: 300 records") for line in lines)


def test_the_benchmark_refuses_a_size_below_one() -> None:
    command = [sys.executable, "-m", "benchmarks.sandbox_throughput", "--messages", "0"]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "--messages must be at least 1" in done.stderr
