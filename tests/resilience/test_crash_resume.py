"""Crash safety: a real `gwdesk send --csv` of 10,000 recipients, SIGKILLed half way.

The sandbox runs on its own thread in this process (a SQLite file); the CLI runs as
a child process with its own data directory. Once the sandbox has accepted some of
the batch's requests, the child is killed with SIGKILL (no clean-up runs), and
`gwdesk outbox resume` is run. Counting in the sandbox's database, every recipient
must have exactly one message, and no request may have been accepted twice.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

RECIPIENTS = 10_000
REQUESTS = RECIPIENTS // 100
KILL_AFTER = 25
"""Requests the sandbox has accepted when the sender is killed."""
TEXT = "Crash test: your appointment is confirmed"
FAULTS = "*:503=0.08,drop_before=0.02,drop_after=0.04,slow=0.04@1.5,latency=0.005-0.03"


def numbers() -> list[str]:
    return [f"614{i:08d}" for i in range(RECIPIENTS)]


def write_csv(path: Path) -> Path:
    rows = [f"+61 4{n[3:6]} {n[6:9]} {n[9:]}" for n in numbers()]
    path.write_text("name,number\n" + "\n".join(f"Customer {i},{r}" for i, r in enumerate(rows)))
    return path


def gwdesk(sandbox: SandboxThread, *args: str, timeout: float | None = None) -> list[str]:
    where = ["--base-url", sandbox.rest_url, "--username", "demo"]
    if timeout is not None:
        where += ["--timeout", str(timeout)]
    command, *rest = args
    return [sys.executable, "-m", "gwdesk.cli", command, *where, *rest]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env["GWDESK_DATA_DIR"] = os.environ["GWDESK_DATA_DIR"]  # this test's own (conftest)
    env["GWDESK_CONFIG_DIR"] = os.environ["GWDESK_CONFIG_DIR"]
    env["GWDESK_PASSWORD"] = "demo"
    return env


def run(command: list[str]) -> tuple[int, Any, str]:
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment(), timeout=60, check=False
    )
    return (done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr)


def accepted(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM batches")[0][0])


def kill_when(
    command: list[str],
    env: dict[str, str],
    reached: Callable[[], bool],
    *,
    within: float,
    what: str = "the send",
) -> None:
    """Run `command`; SIGKILL it once `reached()` holds (polled), failing if it ends first
    or `reached()` does not hold within `within` seconds."""
    started = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while not reached():
            code = child.poll()
            assert code is None, f"{what} ended ({code}) before it was killed"
            assert time.monotonic() - started < within, f"{what} never got going"
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stderr is not None:
            child.stderr.close()


def send_and_kill(sandbox: SandboxThread, sheet: Path, timeout: float | None) -> tuple[int, float]:
    """Start the batch, SIGKILL the sender once KILL_AFTER requests were accepted."""
    started = time.monotonic()
    kill_when(
        gwdesk(sandbox, "send", TEXT, "--csv", str(sheet), "--json", "--yes", timeout=timeout),
        environment(),
        lambda: accepted(sandbox) >= KILL_AFTER,
        within=40,
        what="the sender",
    )
    return (accepted(sandbox), time.monotonic() - started)


def wait_loaded(sandbox: SandboxThread, within: float = 30.0) -> None:
    """The sandbox creates a batch's messages in the background: wait for all of them."""
    deadline = time.monotonic() + within
    while sandbox.query("SELECT COUNT(*) FROM batches WHERE done = 0")[0][0]:
        assert time.monotonic() < deadline, "the sandbox did not finish loading the batches"
        time.sleep(0.05)


def assert_each_recipient_lodged_once(sandbox: SandboxThread) -> None:
    per_recipient = dict(
        sandbox.query("SELECT to_number, COUNT(*) FROM messages GROUP BY to_number")
    )
    repeated = {n: c for n, c in per_recipient.items() if c != 1}
    assert repeated == {}
    assert sorted(per_recipient) == numbers()
    # No request was accepted twice either (a second copy of a chunk would be a batch).
    per_request = sandbox.query(
        "SELECT json_extract(template, '$.external_system_id'), COUNT(*), SUM(total) "
        "FROM batches GROUP BY 1"
    )
    assert len(per_request) == REQUESTS
    assert {(count, total) for _id, count, total in per_request} == {(1, 100)}


def open_batch(listing: Any) -> dict[str, Any]:
    [batch] = listing["batches"]
    assert batch["open"] is True
    return dict(batch)


def test_a_batch_killed_mid_way_resumes_with_every_recipient_lodged_once(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(
        db=str(tmp_path / "gateway.sqlite3"),
        faults="send:latency=0.02-0.05",
        batch_step=100,
        batch_step_delay=0.002,
    )
    sheet = write_csv(tmp_path / "customers.csv")

    at_kill, kill_time = send_and_kill(sandbox, sheet, timeout=None)
    assert KILL_AFTER <= at_kill < REQUESTS

    code, listing, _ = run(gwdesk(sandbox, "outbox", "--json"))
    assert code == 0
    batch = open_batch(listing)
    counts = batch["counts"]
    assert batch["requests"] == REQUESTS
    assert batch["recipients"] == RECIPIENTS
    in_flight = counts["in_flight"]["requests"]
    # Each request the sandbox accepted was marked in flight before it left.
    assert counts["lodged"]["requests"] + in_flight >= at_kill
    assert counts["pending"]["requests"] > 0

    started = time.monotonic()
    code, report, stderr = run(gwdesk(sandbox, "outbox", "resume", "--json"))
    resume_time = time.monotonic() - started
    assert code == 0, stderr
    # Every request the kill left in flight was settled by a status query first.
    assert len(report["reconciled"]) == in_flight
    assert all(r["outcome"] in ("lodged", "not lodged") for r in report["reconciled"])
    settled_lodged = sum(r["outcome"] == "lodged" for r in report["reconciled"])
    assert report["left"] == 0

    wait_loaded(sandbox)
    assert_each_recipient_lodged_once(sandbox)
    _, after, _ = run(gwdesk(sandbox, "outbox", "--json"))
    assert after["batches"] == []
    print(
        f"\ncrash test: killed after {kill_time:.2f} s with {at_kill} of {REQUESTS} requests "
        f"accepted; outbox at kill: {counts['lodged']['requests']} lodged, {in_flight} in flight, "
        f"{counts['pending']['requests']} pending; resume settled {len(report['reconciled'])} "
        f"({settled_lodged} found lodged) and sent {len(report['requests'])} requests "
        f"in {resume_time:.2f} s; {RECIPIENTS} recipients, each lodged once"
    )


def test_with_faults_and_short_tokens_a_killed_batch_still_lodges_each_recipient_once(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(
        db=str(tmp_path / "gateway.sqlite3"),
        faults=FAULTS,
        token_ttl=2,
        seed=7,
        batch_step=100,
        batch_step_delay=0.002,
    )
    sheet = write_csv(tmp_path / "customers.csv")

    at_kill, kill_time = send_and_kill(sandbox, sheet, timeout=1.0)
    assert at_kill < REQUESTS

    runs = []
    started = time.monotonic()
    for _ in range(4):  # a run may leave failures that can pass (503s): the next sends them
        code, report, stderr = run(gwdesk(sandbox, "outbox", "resume", "--json", timeout=1.0))
        assert code in (0, 4, 5), stderr
        runs.append((code, len(report["reconciled"]), len(report["requests"]), report["left"]))
        if code == 0:
            break
    resume_time = time.monotonic() - started
    assert runs[-1][0] == 0, runs

    wait_loaded(sandbox)
    assert_each_recipient_lodged_once(sandbox)
    injected = httpx.get(f"{sandbox.rest_url}/sandbox/faults").json()["injected"]
    assert injected["drop_after"] + injected["slow"] > 0
    print(
        f"\nfault crash test: killed after {kill_time:.2f} s with {at_kill} requests accepted; "
        f"resume runs (exit, settled, sent, left): {runs} in {resume_time:.2f} s; faults "
        f"injected: {injected}"
    )


# ---- the console itself --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def console(phase: str, home: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.resilience.console_driver", phase, *args],
        cwd=ROOT,
        env=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def read_file_db(path: Path, sql: str) -> list[Any]:
    """Read the embedded sandbox's database while it runs (WAL: readers do not block it)."""
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # not created yet
    finally:
        conn.close()


def next_line(child: subprocess.Popen[str], within: float) -> dict[str, Any]:
    """The driver's next JSON line (read on a thread, so a silent child cannot hang the test)."""
    box: list[str] = []
    reader = threading.Thread(
        target=lambda: box.append(child.stdout.readline() if child.stdout else "")
    )
    reader.daemon = True
    reader.start()
    reader.join(within)
    assert box, "the console driver said nothing"
    assert box[0], "the console driver ended without a word"
    return dict(json.loads(box[0]))


def processes_using(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the sandbox child in /proc")
def test_the_console_killed_mid_batch_resumes_with_each_recipient_lodged_once(
    tmp_path: Path,
) -> None:
    home = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")},
        "QT_QPA_PLATFORM": "offscreen",
        "GWDESK_CONFIG_DIR": str(tmp_path / "config"),
        "GWDESK_DATA_DIR": str(tmp_path / "data"),
    }
    db = tmp_path / "data" / "sandbox" / "sandbox.sqlite3"
    started = time.monotonic()
    sender = console("send", home, str(RECIPIENTS))
    try:
        assert next_line(sender, 40) == {"phase": "send", "valid": RECIPIENTS}
        while len(read_file_db(db, "SELECT 1 FROM batches")) < KILL_AFTER:
            assert sender.poll() is None, "the console ended before it was killed"
            assert time.monotonic() - started < 50, "the batch never got going"
            time.sleep(0.005)
        sender.send_signal(signal.SIGKILL)
        sender.wait(10)
        kill_time = time.monotonic() - started
        deadline = time.monotonic() + 15
        while processes_using(str(db)):  # the sandbox child exits when its console dies
            assert time.monotonic() < deadline, "the sandbox outlived its console"
            time.sleep(0.05)
        at_kill = len(read_file_db(db, "SELECT 1 FROM batches"))  # all it ever accepted
    finally:
        if sender.poll() is None:
            sender.kill()
            sender.wait()
    assert KILL_AFTER <= at_kill < REQUESTS

    restarted = time.monotonic()
    again = console("resume", home)
    try:
        found = next_line(again, 40)
        assert found["phase"] == "found"
        assert found["rows"] == 1  # the Outbox window lists the interrupted batch
        assert int(found["to_send"].replace(",", "")) == RECIPIENTS - 100 * at_kill
        resumed = next_line(again, 40)
        resume_time = time.monotonic() - restarted
        assert resumed["phase"] == "resumed"
        assert resumed["rows"] == 0
        assert ", 0 not." in resumed["state"]
        deadline = time.monotonic() + 40
        while read_file_db(db, "SELECT COUNT(*) FROM batches WHERE done = 0") != [(0,)]:
            assert time.monotonic() < deadline, "the sandbox did not load every batch"
            time.sleep(0.1)
        again.send_signal(signal.SIGTERM)  # the console's clean quit
        assert again.wait(30) == 0
    finally:
        if again.poll() is None:
            again.kill()
            again.wait()
        for pid in processes_using(str(tmp_path)):
            os.kill(pid, signal.SIGKILL)

    per_recipient = dict(read_file_db(db, "SELECT to_number, COUNT(*) FROM messages GROUP BY 1"))
    assert sorted(per_recipient) == sorted(f"61412{i:06d}" for i in range(RECIPIENTS))
    assert set(per_recipient.values()) == {1}
    requests = read_file_db(
        db,
        "SELECT json_extract(template, '$.external_system_id'), COUNT(*) FROM batches GROUP BY 1",
    )
    assert len(requests) == REQUESTS
    assert {count for _id, count in requests} == {1}
    print(
        f"\nconsole crash test: killed {kill_time:.2f} s after start with {at_kill} of "
        f"{REQUESTS} requests accepted; status bar: {found['status']!r}; settled "
        f"{found['settled']} ({found['to_send']} "
        f"recipients to send); resumed in {resume_time:.2f} s from restart: {resumed['state']}"
    )
