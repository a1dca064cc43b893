"""Two desks and the office's receiver, each its own `gwdesk` process, on one shared store.

On a team's server (`--store postgresql://…`) each desk has a data folder of its own,
as two workstations have; on the SQLite store (one workstation) both use the profile's
file. The sandbox is the gateway; counting in its database says what was lodged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.listener_support import Starter, listen_processes
from tests.resilience.test_crash_resume import accepted, kill_when, wait_loaded

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

CUSTOMER = "61412345678"
RECIPIENTS = 3_000
REQUESTS = RECIPIENTS // 100
KILL_AFTER = 8
"""Requests the sandbox has accepted when desk A is killed."""


@dataclass(frozen=True)
class Office:
    """How each desk's `gwdesk` is run: its data folder and the store it names."""

    sandbox: SandboxThread
    store: list[str]
    """`--store URL` on a team's server; nothing on one workstation's file."""
    homes: dict[str, Path]

    def command(self, desk: str, *args: str) -> tuple[list[str], dict[str, str]]:
        command, *rest = args
        where = ["--base-url", self.sandbox.rest_url, "--username", "demo", *self.store]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GWDESK_", "PG"))}
        env["GWDESK_DATA_DIR"] = str(self.homes[desk] / "data")
        env["GWDESK_CONFIG_DIR"] = str(self.homes[desk] / "config")
        env["GWDESK_PASSWORD"] = "demo"
        env["LOGNAME"] = env["USER"] = desk  # the operator's name, as the OS gives it
        return ([sys.executable, "-m", "gwdesk.cli", command, *where, *rest], env)

    def run(self, desk: str, *args: str) -> tuple[int, Any, str]:
        command, env = self.command(desk, *args)
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        out = json.loads(done.stdout) if done.stdout.strip() else None
        return (done.returncode, out, done.stderr)


@pytest.fixture(params=["sqlite", "postgresql"])
def office(
    request: pytest.FixtureRequest, sandbox_factory: SandboxFactory, tmp_path: Path
) -> Office:
    sandbox = sandbox_factory(
        db=str(tmp_path / "gateway.sqlite3"),
        faults="send:latency=0.02-0.05",
        batch_step=100,
        batch_step_delay=0.002,
    )
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        homes = {"alex": tmp_path / "alex", "sam": tmp_path / "sam", "receiver": tmp_path / "rx"}
        return Office(sandbox, ["--store", url], homes)
    one = tmp_path / "desk"
    return Office(sandbox, [], {"alex": one, "sam": one, "receiver": one})


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


def write_list(path: Path, numbers: list[str]) -> Path:
    path.write_text("mobile\n" + "\n".join(f"+{n}" for n in numbers) + "\n", encoding="utf-8")
    return path


def test_a_stop_taken_by_the_receiver_leaves_the_number_out_of_another_desks_list(
    office: Office, start: Starter, tmp_path: Path
) -> None:
    command, env = office.command("receiver", "listen", "--port", "0", "--quiet", "--no-backfill")
    listening = start(*command[4:], env=env)  # after `python -m gwdesk.cli listen`
    template = listening.line()
    called = (
        template.replace("#FROM#", CUSTOMER)
        .replace("#TO#", "61400000000")
        .replace("#MSG#", "STOP")
        .replace("#SENTDTS#", "20-Nov-2026%2009%3A00%3A00")
        .replace("#RCVDDTS#", "20-Nov-2026%2009%3A00%3A00")
    )
    assert httpx.get(called, timeout=30).text == "OK"  # stored before it answers

    others = [f"614120{n:05d}" for n in range(4)]
    sheet = write_list(tmp_path / "list.csv", [*others[:2], CUSTOMER, *others[2:]])
    code, report, stderr = office.run(
        "sam", "send", "Sale on now", "--csv", str(sheet), "--json", "--yes"
    )

    assert code == 0, stderr
    assert report["excluded_numbers"] == [CUSTOMER]
    wait_loaded(office.sandbox)
    texted = {n for (n,) in office.sandbox.query("SELECT to_number FROM messages")}
    assert texted == set(others)


def send_and_kill(office: Office, sheet: Path) -> int:
    """Desk A starts the list; it is SIGKILLed once KILL_AFTER requests were accepted."""
    command, env = office.command(
        "alex", "send", "Your order is ready", "--csv", str(sheet), "--yes"
    )
    kill_when(
        command, env, lambda: accepted(office.sandbox) >= KILL_AFTER, within=60, what="desk A"
    )
    return accepted(office.sandbox)


def test_a_list_killed_on_one_desk_is_resumed_on_another_each_recipient_lodged_once(
    office: Office, tmp_path: Path
) -> None:
    numbers = [f"614{i:08d}" for i in range(RECIPIENTS)]
    at_kill = send_and_kill(office, write_list(tmp_path / "list.csv", numbers))
    assert KILL_AFTER <= at_kill < REQUESTS

    code, listing, stderr = office.run("sam", "outbox", "--json")
    assert code == 0, stderr
    [batch] = listing["batches"]
    assert batch["open"] is True
    assert batch["counts"]["pending"]["requests"] > 0

    code, report, stderr = office.run("sam", "outbox", "resume", "--json")
    assert code == 0, stderr
    assert report["left"] == 0

    wait_loaded(office.sandbox)
    per_recipient = dict(
        office.sandbox.query("SELECT to_number, COUNT(*) FROM messages GROUP BY to_number")
    )
    assert {n: c for n, c in per_recipient.items() if c != 1} == {}
    assert sorted(per_recipient) == numbers
    per_request = office.sandbox.query(
        "SELECT json_extract(template, '$.external_system_id'), COUNT(*) FROM batches GROUP BY 1"
    )
    assert len(per_request) == REQUESTS
    assert {count for _id, count in per_request} == {1}
    code, after, _ = office.run("alex", "outbox", "--json")
    assert code == 0
    assert after["batches"] == []


def midday_zone() -> str:
    """A fixed-offset zone where it is about midday now: a send due in seconds is inside
    the sending hours there whatever the hour the tests run."""
    offset = (12 - datetime.now(UTC).hour + 12) % 24 - 12  # -12..11 hours from UTC
    return f"Etc/GMT{-offset:+d}" if offset else "UTC"  # Etc/GMT-10 is UTC+10


def test_the_receiver_sends_a_due_scheduled_send_once_while_every_desk_is_closed(
    office: Office, start: Starter
) -> None:
    zone = ["--timezone", midday_zone()]
    # Far enough ahead for the command to start and check it on a loaded machine.
    at = (datetime.now(UTC) + timedelta(seconds=12)).isoformat()
    code, held, stderr = office.run(
        "alex", "send", "--json", "--at", at, "--to", CUSTOMER, *zone, "Your table is ready"
    )
    assert code == 0, stderr
    batch = held["scheduled"]["id"]
    command, env = office.command("receiver", "listen", "--port", "0", "--quiet", *zone)
    receiver = start(*command[4:], env=env)
    receiver.line()  # listening (its ReplyPath)
    sent = receiver.note(f"scheduled send {batch} sent", timeout=60)
    assert "1 of 1 recipients lodged" in sent
    receiver.stop()
    wait_loaded(office.sandbox)
    assert office.sandbox.query("SELECT to_number FROM messages") == [(CUSTOMER,)]
    for desk in ("alex", "sam"):
        code, listing, stderr = office.run(desk, "scheduled", "list", "--json", *zone)
        assert code == 0, stderr
        assert listing["scheduled"] == [], desk
        code, outbox, stderr = office.run(desk, "outbox", "--all", "--json", *zone)
        assert code == 0, stderr
        [shown] = [b for b in outbox["batches"] if b["batch"] == batch]
        assert shown["counts"]["lodged"]["recipients"] == 1, desk
