"""Seeding keeps the account's invariants, is repeatable, and reports its progress."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gwdesk.sandbox import seed as seeding
from gwdesk.sandbox.cli import main
from gwdesk.sandbox.db import ensure_account, open_database
from gwdesk.sandbox.engine import SERVICE_REST, Draft, Engine
from tests.conftest import SandboxFactory
from tests.sandbox.faults_support import client
from tests.sandbox.seed_support import END, seed, walk_since

INDEXES = {
    "messages_rank", "messages_lodged", "messages_to", "messages_batch", "messages_external",
    "messages_pending", "replies_received",
}  # fmt: skip


def ranks_follow_lodging(path: Path) -> None:
    """Ranks are exactly 1..n in lodging order and the account's counters match."""
    conn = open_database(path)
    try:
        rows = conn.execute(
            "SELECT rank, lodged_us FROM messages WHERE account_id = 1 ORDER BY rank"
        ).fetchall()
        assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
        stamps = [r[1] for r in rows]
        assert all(a < b for a, b in pairwise(stamps))
        count, last = conn.execute(
            "SELECT message_count, last_lodged_us FROM accounts WHERE id = 1"
        ).fetchone()
        assert (count, last) == (len(rows), stamps[-1])
        [(ids, distinct)] = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT message_id) FROM messages"
        ).fetchall()
        assert ids == distinct
    finally:
        conn.close()


def test_seeding_twice_interleaves_and_renumbers_the_ranks(tmp_path: Path) -> None:
    path = tmp_path / "twice.sqlite3"
    seed(path, 1200, seed=1)
    seed(path, 900, seed=2)
    ranks_follow_lodging(path)
    conn = open_database(path)
    assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 2100
    conn.close()


def test_seeding_after_live_messages_puts_the_seeded_ones_before_them(
    tmp_path: Path, sandbox_factory: SandboxFactory
) -> None:
    path = tmp_path / "live.sqlite3"
    conn = open_database(path)
    account = ensure_account(conn, "demo", "demo")
    engine = Engine(conn, ZoneInfo("Australia/Sydney"), random.Random(1))
    live = engine.lodge(
        account, Draft(type="SMS", text="live", service_id=SERVICE_REST), "61400000001"
    )
    conn.close()
    seeding.seed_account(path, 500, seed=3)
    ranks_follow_lodging(path)
    sandbox = sandbox_factory(db=str(path))
    with client(sandbox) as http:
        records = walk_since(http)
    assert len(records) == 501
    assert records[-1]["messageId"] == live["message_id"]


def test_the_same_seed_and_end_give_the_same_records(tmp_path: Path) -> None:
    columns = "rank, message_id, type, status, lodged_us, sent_us, receipt_us, to_number, message, tracking_id, batch_code"
    dumps = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.sqlite3"
        seed(path, 1500, seed=11)
        conn = open_database(path)
        dumps.append(
            (
                conn.execute(f"SELECT {columns} FROM messages ORDER BY rank").fetchall(),
                conn.execute(
                    "SELECT reply_id, text, received_us FROM replies ORDER BY id"
                ).fetchall(),
            )
        )
        conn.close()
    assert [tuple(r) for r in dumps[0][0]] == [tuple(r) for r in dumps[1][0]]
    assert [tuple(r) for r in dumps[0][1]] == [tuple(r) for r in dumps[1][1]]
    other = tmp_path / "other.sqlite3"
    seed(other, 1500, seed=12)
    conn = open_database(other)
    assert (
        conn.execute("SELECT message_id FROM messages WHERE rank = 1").fetchone()[0]
        != dumps[0][0][0][1]
    )
    conn.close()


def test_progress_is_reported_after_every_chunk(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    conn = open_database(tmp_path / "p.sqlite3")
    account = ensure_account(conn, "demo", "demo")
    seeding.seed_connection(
        conn, account, 2000, zone=ZoneInfo("UTC"), seed=1,
        end_us=int(END.timestamp() * 1e6), progress=lambda done, total: calls.append((done, total)),
        chunk_size=400,
    )  # fmt: skip
    conn.close()
    assert len(calls) >= 4
    assert calls[-1] == (2000, 2000)
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})


def test_a_big_seed_rebuilds_the_indexes_it_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seeding, "REBUILD_INDEX_AT", 100)
    path = tmp_path / "big.sqlite3"
    seed(path, 600, seed=1)
    seed(path, 600, seed=2)
    conn = open_database(path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM messages WHERE account_id = 1 AND to_number = '1'"
    ).fetchall()
    synchronous = conn.execute("PRAGMA synchronous").fetchone()[0]
    conn.close()
    assert names >= INDEXES
    assert "messages_to" in str([tuple(r) for r in plan])
    assert synchronous == 1  # NORMAL again: the seed's OFF does not outlive it
    ranks_follow_lodging(path)


def test_a_negative_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        seed(tmp_path / "n.sqlite3", -1)


def test_an_end_beyond_what_every_zone_can_show_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="from 2001 to 2100"):
        seeding.seed_account(
            tmp_path / "late.sqlite3", 5, end=datetime(9999, 12, 31, 23, tzinfo=UTC)
        )


def test_seeding_nothing_creates_the_account_only(tmp_path: Path) -> None:
    report = seed(tmp_path / "empty.sqlite3", 0)
    assert (report.messages, report.replies, report.batches) == (0, 0, 0)
    conn = open_database(tmp_path / "empty.sqlite3")
    assert conn.execute("SELECT username, message_count FROM accounts").fetchall()[0][:] == (
        "demo",
        0,
    )
    conn.close()


def test_the_seed_command_seeds_and_summarises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cli.sqlite3"
    code = main(
        ["seed", "--db", str(path), "--messages", "300", "--user", "ops", "--password", "pw",
         "--timezone", "Pacific/Auckland", "--end", "2025-06-30T17:00:00+12:00"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert code == 0
    assert "seeded 300 messages" in out.out
    assert "into account 'ops'" in out.out
    assert "seeded 300/300" in out.err
    conn = open_database(path)
    newest = conn.execute("SELECT MAX(lodged_us), MIN(message_id) FROM messages").fetchone()
    conn.close()
    assert newest[0] <= int(datetime(2025, 6, 30, 5, 0, tzinfo=UTC).timestamp() * 1e6)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--messages", "-5"], "--messages must not be negative"),
        (["--messages", "5", "--timezone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
        (["--messages", "5", "--end", "yesterday"], "--end: not an ISO 8601 time"),
        (["--messages", "5", "--end", "2025-06-30T17:00:00"], "--end must include a UTC offset"),
        (["--messages", "5", "--end", "9999-12-31T23:00:00+00:00"], "--end must lie from 2001"),
    ],
)
def test_the_seed_command_refuses_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], reason: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["seed", "--db", str(tmp_path / "x.sqlite3"), *args])
    assert exited.value.code == 2
    assert reason in capsys.readouterr().err
