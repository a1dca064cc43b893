"""`gwdesk report BATCH`: the real entry point in a subprocess against a sandbox that
delivers (two numbers' deliveries fail): the report as JSON and as lines escaped for the
terminal, its CSV, and `--resend-failed`, refused without `--yes` and sent with it."""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.report_support import DELIVERING, fail_deliveries
from tests.contract.rest_support import endpoint_requests
from tests.contract.test_cli import PASSWORD, run

NUMBERS = [f"614{i:08d}" for i in range(30_000, 30_012)]
FAILING = (NUMBERS[2], NUMBERS[9])
HOSTILE = "Hi \x1b[31mthere\x1b[0m \u202eevil"


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    sandbox = sandbox_factory(**DELIVERING, extra_accounts=[("ops", PASSWORD)])
    fail_deliveries(sandbox, FAILING)
    return sandbox


def sent_list(gateway: SandboxThread, text: str = "Closed Monday") -> int:
    """A list sent by `gwdesk send`; its outbox batch number."""
    to = [f"--to={n}" for n in NUMBERS]
    done = run(gateway, "send", *to, "--yes", "--json", text)
    assert done.returncode == 0, done.stderr
    batch: int = json.loads(done.stdout)["outbox_batch"]
    return batch


def settled_report(gateway: SandboxThread, batch: int) -> dict[str, Any]:
    """`report BATCH --json` once no message awaits a final status (asked again till then)."""
    deadline = time.monotonic() + 30
    while True:
        done = run(gateway, "report", str(batch), "--json")
        assert done.returncode == 0, done.stderr
        found: dict[str, Any] = json.loads(done.stdout)
        if found["totals"]["awaiting"] == 0:
            return found
        assert time.monotonic() < deadline, f"still awaiting: {found['totals']}"


def texted(gateway: SandboxThread) -> Counter[str]:
    return Counter(n for (n,) in gateway.query("SELECT to_number FROM messages"))


def test_the_json_report_counts_as_the_sandbox_does(gateway: SandboxThread) -> None:
    batch = sent_list(gateway)
    report = settled_report(gateway, batch)
    counted = dict(gateway.query("SELECT status, COUNT(*) FROM messages GROUP BY status"))
    assert counted == {"DELIVERED": 10, "FAILED": 2}
    assert report["ok"] is True
    assert report["batch"] == batch
    assert report["totals"]["delivered"] == 10
    assert report["totals"]["delivery_failed"] == 2
    failed = {r["number"] for r in report["recipients"] if r["outcome"] == "delivery_failed"}
    assert failed == {f"+{n}" for n in FAILING}
    assert len(report["recipients"]) == len(NUMBERS)


def test_the_lines_name_the_failed_and_escape_what_the_terminal_would_obey(
    gateway: SandboxThread,
) -> None:
    batch = sent_list(gateway, HOSTILE)
    settled_report(gateway, batch)
    done = run(gateway, "report", str(batch))
    assert done.returncode == 0, done.stderr
    assert "12 recipients: 10 delivered, 2 failed (0 when sent, 2 on delivery)" in done.stdout
    assert "failed on delivery: +61 400 030 002" in done.stdout
    assert "\x1b" not in done.stdout
    assert "\u202e" not in done.stdout
    assert "\\x1b[31m" in done.stdout


def test_csv_holds_every_recipient(gateway: SandboxThread, tmp_path: Path) -> None:
    batch = sent_list(gateway)
    settled_report(gateway, batch)
    sheet = tmp_path / "report.csv"
    done = run(gateway, "report", str(batch), "--csv", str(sheet))
    assert done.returncode == 0, done.stderr
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["Number"] for r in rows] == [f"'+{n}" for n in NUMBERS]
    assert Counter(r["Outcome"] for r in rows) == {"delivered": 10, "failed on delivery": 2}


def test_resend_failed_without_yes_is_refused_and_sends_nothing(gateway: SandboxThread) -> None:
    batch = sent_list(gateway)
    settled_report(gateway, batch)
    before = endpoint_requests(gateway, "send")
    done = run(gateway, "report", str(batch), "--resend-failed")
    assert done.returncode == 2
    assert "--yes" in done.stderr
    assert "nothing was sent" in done.stderr
    assert endpoint_requests(gateway, "send") == before


def test_resend_failed_with_yes_sends_exactly_the_failed(gateway: SandboxThread) -> None:
    batch = sent_list(gateway)
    settled_report(gateway, batch)
    before = texted(gateway)
    done = run(gateway, "report", str(batch), "--resend-failed", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["resent_from"] == batch
    assert result["lodged"] == 2
    assert texted(gateway) - before == Counter(FAILING)


def test_a_batch_that_is_not_in_the_outbox_is_a_usage_error(gateway: SandboxThread) -> None:
    done = run(gateway, "report", "99", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["message"] == "There is no outbox batch 99."
