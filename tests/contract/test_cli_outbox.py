"""`gwdesk outbox` (list, resume, discard) and `gwdesk send` recording, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gwdesk.paths import AppPaths
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import NewEntry, OutboxStore
from tests.conftest import SandboxFactory

BODY = {"text": "Left behind"}


def run(sandbox: SandboxThread, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GWDESK_PASSWORD"}
    env["GWDESK_PASSWORD"] = "demo"
    command, *rest = args
    where = ["--base-url", sandbox.rest_url, "--username", "demo"]
    return subprocess.run(
        [sys.executable, "-m", "gwdesk.cli", command, *where, *rest],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def data(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def cli_outbox() -> OutboxStore:
    """The store an inline gateway's commands use (profile "command line")."""
    return OutboxStore(AppPaths.default().profile_db("command_line"))


def leave_pending(sandbox: SandboxThread, count: int = 2) -> int:
    """A batch recorded and never sent (the sender died before the first request)."""
    outbox = cli_outbox()
    try:
        batch, _ = outbox.record(
            gateway=f"demo@{sandbox.rest_url.lower()}", channel="sms", label="Left behind",
            send_id="gwd-20250101T000000Z-aaaaaaaaaaaa",
            entries=[NewEntry(i, (f"6141200{i:04d}",), BODY,
                              f"gwd-20250101T000000Z-aaaaaaaaaaaa-{i:04d}")
                     for i in range(1, count + 1)],
        )  # fmt: skip
    finally:
        outbox.close()
    return batch.id


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory()


def test_a_send_is_recorded_and_listed_as_done(gateway: SandboxThread) -> None:
    sent = run(gateway, "send", "--json", "--yes", "--to", "0412345678", "--to", "0412345679", "Hi")
    assert sent.returncode == 0, sent.stderr
    batch_id = data(sent)["outbox_batch"]
    listing = data(run(gateway, "outbox", "--all", "--json"))
    [batch] = listing["batches"]
    assert (batch["batch"], batch["open"], batch["recipients"]) == (batch_id, False, 2)
    assert batch["counts"]["lodged"] == {"requests": 1, "recipients": 2}
    assert data(run(gateway, "outbox", "--json"))["batches"] == []


def test_resume_sends_what_was_recorded_and_never_sent(gateway: SandboxThread) -> None:
    batch_id = leave_pending(gateway)
    listed = run(gateway, "outbox")
    assert listed.returncode == 0
    assert f"batch {batch_id}" in listed.stdout
    assert "2 pending" in listed.stdout

    done = run(gateway, "outbox", "resume", "--json")
    assert done.returncode == 0, done.stderr
    report = data(done)
    assert (report["lodged"], report["left"], report["reconciled"]) == (2, 0, [])
    rows = gateway.query("SELECT to_number, external_system_id FROM messages ORDER BY to_number")
    assert rows == [
        ("61412000001", "gwd-20250101T000000Z-aaaaaaaaaaaa-0001"),
        ("61412000002", "gwd-20250101T000000Z-aaaaaaaaaaaa-0002"),
    ]
    again = run(gateway, "outbox", "resume", "--json")
    assert data(again)["requests"] == []
    assert len(gateway.query("SELECT 1 FROM messages")) == 2


def test_one_batch_lists_its_requests(gateway: SandboxThread) -> None:
    batch_id = leave_pending(gateway, 3)
    listing = data(run(gateway, "outbox", "--batch", str(batch_id), "--json"))
    [batch] = listing["batches"]
    assert [e["request"] for e in batch["entries"]] == [1, 2, 3]
    assert {e["state"] for e in batch["entries"]} == {"pending"}


def test_discard_gives_a_batch_up_and_sends_nothing(gateway: SandboxThread) -> None:
    batch_id = leave_pending(gateway)
    done = run(gateway, "outbox", "discard", "--batch", str(batch_id), "--json")
    assert done.returncode == 0, done.stderr
    assert data(done)["discarded"] == [{"batch": batch_id, "requests": 2}]
    assert data(run(gateway, "outbox", "--json"))["batches"] == []
    assert run(gateway, "outbox", "resume", "--json").returncode == 0
    assert gateway.query("SELECT COUNT(*) FROM messages")[0][0] == 0


def test_a_batch_of_another_gateway_is_listed_but_not_resumed(
    gateway: SandboxThread, sandbox_factory: SandboxFactory
) -> None:
    leave_pending(gateway)
    other = sandbox_factory()
    listed = run(other, "outbox", "--json")
    [batch] = data(listed)["batches"]
    assert batch["this_gateway"] is False
    assert data(run(other, "outbox", "resume", "--json"))["requests"] == []
    assert other.query("SELECT COUNT(*) FROM messages")[0][0] == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("outbox", "discard"), "Name the batch to discard"),
        (("outbox", "--batch", "999"), "no outbox batch 999"),
        (("outbox", "--batch", "x"), "a batch number"),
        (("outbox", "rewind"), "invalid choice"),
    ],
)
def test_wrong_outbox_commands_say_what_is_wrong(
    gateway: SandboxThread, args: tuple[str, ...], says: str
) -> None:
    done = run(gateway, *args)
    assert done.returncode == 2
    assert says in done.stderr


def test_a_damaged_store_file_stops_the_send_before_any_request(
    gateway: SandboxThread,
) -> None:
    path = AppPaths.default().profile_db("command_line")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00garbage, not a database" * 200)
    done = run(gateway, "send", "--to", "0412345678", "Hi")
    assert done.returncode == 2
    assert "cannot be opened" in done.stderr
    assert "gwdesk sends nothing without it" in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages")[0][0] == 0
    assert Path(path).read_bytes().startswith(b"\x00garbage")  # left as it was, for the operator
