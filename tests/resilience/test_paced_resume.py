"""A paced list keeps its pace across a SIGKILL: `gwdesk send --pace 600/h` holds 1,000
recipients in parts of 10 a minute apart; the sender of due parts (`gwdesk scheduled run`)
is killed mid-way; started again, it sends the due parts left, the part on the wire when
it died is settled and resumed (`gwdesk outbox resume`), the parts not yet due wait at
their times, and in the end each recipient is lodged exactly once."""

from __future__ import annotations

import os
import sqlite3
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract import test_cli
from tests.contract import test_cli_scheduled as cli
from tests.resilience.test_crash_resume import accepted, kill_when, wait_loaded

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

RECIPIENTS = 1_000
PER_PART = 10
PARTS = RECIPIENTS // PER_PART
DUE_NOW = 40
"""Parts made due before the sender starts (the rest wait at their pace)."""
KILL_AFTER = 15


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory, tmp_path: Path) -> SandboxThread:
    return sandbox_factory(
        db=str(tmp_path / "gateway.sqlite3"),
        faults="send:latency=0.05-0.1",
        extra_accounts=[("ops", test_cli.PASSWORD)],
    )


def sheet(path: Path) -> Path:
    numbers = [f"+614{i:08d}" for i in range(RECIPIENTS)]
    path.write_text("mobile\n" + "\n".join(numbers) + "\n", encoding="utf-8")
    return path


def held_times() -> dict[int, int]:
    """Each part still held: its time (µs)."""
    with sqlite3.connect(cli.profile_file()) as db:
        rows = db.execute(
            "SELECT id, held_until_us FROM outbox_batches WHERE held_until_us IS NOT NULL"
        ).fetchall()
    return {int(i): int(t) for i, t in rows}


def make_due(batch_ids: list[int]) -> None:
    for batch_id in batch_ids:
        cli.move_hold(batch_id, timedelta(seconds=30))


def lodged_per_recipient(gateway: SandboxThread) -> dict[str, int]:
    wait_loaded(gateway)
    rows = gateway.query("SELECT to_number, COUNT(*) FROM messages GROUP BY to_number")
    return {str(n): int(c) for n, c in rows}


def sender(gateway: SandboxThread) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env["GWDESK_DATA_DIR"] = os.environ["GWDESK_DATA_DIR"]
    env["GWDESK_PASSWORD"] = test_cli.PASSWORD
    where = ["--base-url", gateway.rest_url, "--username", "ops"]
    return ([test_cli.GWDESK, "scheduled", "run", *where], env)


def test_a_paced_list_keeps_its_pace_across_a_sigkill_and_lodges_each_recipient_once(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    at = cli.in_an_hour()
    done = cli.run(gateway, "send", "--json", "--yes", "--at", at.isoformat(), "--pace", "600/h",
                   "--csv", str(sheet(tmp_path / "list.csv")), "Paced")  # fmt: skip
    parts: list[dict[str, Any]] = cli.data(done)["parts"]
    assert [p["recipients"] for p in parts] == [PER_PART] * PARTS
    times = [datetime.fromisoformat(p["due_utc"]) for p in parts]
    assert times == [at + timedelta(minutes=i) for i in range(PARTS)]  # spread as asked
    ids = [int(p["id"]) for p in parts]
    make_due(ids[:DUE_NOW])

    command, env = sender(gateway)
    kill_when(command, env, lambda: accepted(gateway) >= KILL_AFTER, within=60, what="sender")
    assert KILL_AFTER <= accepted(gateway) < DUE_NOW

    again = cli.run(gateway, "scheduled", "run")
    assert again.returncode == 0, again.stderr
    resumed = cli.run(gateway, "outbox", "resume")
    assert resumed.returncode == 0, resumed.stderr
    first = lodged_per_recipient(gateway)
    assert len(first) == DUE_NOW * PER_PART
    assert set(first.values()) == {1}
    waiting = held_times()  # the pace goes on: the rest still at their own times
    assert sorted(waiting) == ids[DUE_NOW:]
    assert [waiting[i] for i in ids[DUE_NOW:]] == [
        int(t.timestamp() * 1_000_000) for t in times[DUE_NOW:]
    ]

    make_due(ids[DUE_NOW:])
    last = cli.run(gateway, "scheduled", "run")
    assert last.returncode == 0, last.stderr
    everyone = lodged_per_recipient(gateway)
    assert len(everyone) == RECIPIENTS
    assert set(everyone.values()) == {1}
