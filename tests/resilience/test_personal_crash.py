"""Crash safety of a personal send: `gwdesk send --csv FILE TEMPLATE` SIGKILLed half way.

1,500 rows: 1,200 with a text of their own (one request each) and 300 sharing one
text (three requests of 100). Once the sandbox (its own thread, a SQLite file) has
lodged some of the single requests, the sending child is killed with SIGKILL and
`gwdesk outbox resume` run. Counting in the sandbox's database: every recipient has
exactly one message, with exactly its own text, and no request was accepted twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.resilience.test_crash_resume import environment, gwdesk, kill_when, run, wait_loaded

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

UNIQUE = 1_200
SHARED = 300
KILL_AFTER = 200
"""Single requests the sandbox has lodged when the sender is killed."""
TEMPLATE = "Hi {name}, your reference is {reference|none}. Reply STOP to opt out."


def number(i: int) -> str:
    return f"614{i:08d}"


def write_sheet(path: Path) -> dict[str, str]:
    """The file, and each recipient's expected text."""
    lines = ["name,mobile,reference"]
    expected = {}
    for i in range(UNIQUE + SHARED):
        if i < UNIQUE:
            name, reference = f"Customer {i}", f"R-{i:05d}"
        else:
            name, reference = "Neighbour", ""
        lines.append(f"{name},+{number(i)},{reference}")
        shown = reference or "none"
        expected[number(i)] = f"Hi {name}, your reference is {shown}. Reply STOP to opt out."
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return expected


def singles_lodged(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages WHERE batch_code IS NULL")[0][0])


def send_and_kill(sandbox: SandboxThread, sheet: Path) -> int:
    kill_when(
        gwdesk(sandbox, "send", TEMPLATE, "--csv", str(sheet), "--json", "--yes"),
        environment(),
        lambda: singles_lodged(sandbox) >= KILL_AFTER,
        within=60,
        what="the sender",
    )
    return singles_lodged(sandbox)


def test_a_personal_send_killed_mid_way_resumes_with_each_recipient_sent_their_text_once(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(
        db=str(tmp_path / "gateway.sqlite3"),
        faults="send:latency=0.005-0.02",
        batch_step=100,
        batch_step_delay=0.002,
    )
    expected = write_sheet(tmp_path / "customers.csv")

    at_kill = send_and_kill(sandbox, tmp_path / "customers.csv")
    assert KILL_AFTER <= at_kill < UNIQUE

    code, listing, _ = run(gwdesk(sandbox, "outbox", "--json"))
    assert code == 0
    [batch] = listing["batches"]
    assert batch["requests"] == UNIQUE + SHARED // 100
    assert batch["counts"]["pending"]["requests"] > 0

    code, report, stderr = run(gwdesk(sandbox, "outbox", "resume", "--json"))
    assert code == 0, stderr
    assert report["left"] == 0

    wait_loaded(sandbox)
    sent = sandbox.query("SELECT to_number, message FROM messages")
    per_recipient: dict[str, list[str]] = {}
    for to, text in sent:
        per_recipient.setdefault(to, []).append(text)
    assert {to: texts for to, texts in per_recipient.items() if len(texts) != 1} == {}
    assert {to: texts[0] for to, texts in per_recipient.items()} == expected
    singles = sandbox.query(
        "SELECT external_system_id, COUNT(*) FROM messages WHERE batch_code IS NULL GROUP BY 1"
    )
    assert len(singles) == UNIQUE
    assert {count for _, count in singles} == {1}
    shared = sandbox.query(
        "SELECT json_extract(template, '$.external_system_id'), COUNT(*), SUM(total) "
        "FROM batches GROUP BY 1"
    )
    assert sorted((count, total) for _, count, total in shared) == [(1, 100)] * 3
