"""Seeded accounts: realistic records, served whole and in order by the REST face."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from gwdesk.domain.segments import count_parts
from gwdesk.sandbox.server import SandboxThread
from gwdesk.sandbox.validation import REPLY_TYPES
from tests.conftest import SandboxFactory
from tests.sandbox.faults_support import client
from tests.sandbox.seed_support import END, LOG_FIELDS, seed, walk_since

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
SYDNEY = ZoneInfo("Australia/Sydney")


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 records ending at a fixed time, seeded once for the read-only tests here."""
    path = tmp_path_factory.mktemp("seed") / "sandbox.sqlite3"
    seed(path, 2000)
    return path


@pytest.fixture
def served(sandbox_factory: SandboxFactory, seeded_db: Path) -> SandboxThread:
    return sandbox_factory(db=str(seeded_db))


@pytest.fixture
def records(served: SandboxThread) -> list[dict[str, Any]]:
    with client(served) as http:
        return walk_since(http)


def test_every_seeded_record_has_every_field_of_the_log_record_table(
    records: list[dict[str, Any]],
) -> None:
    assert len(records) == 2000
    for record in records:
        assert list(record) == LOG_FIELDS


def test_seeded_records_have_sane_values(records: list[dict[str, Any]]) -> None:
    assert len(records) == 2000
    for r in records:
        lodged = datetime.fromisoformat(r["dateLodged"])
        sent = datetime.fromisoformat(r["dateSent"])
        assert lodged.utcoffset() == lodged.astimezone(SYDNEY).utcoffset()
        assert re.fullmatch(r"\d{20}", r["messageId"])
        assert r["messageId"][:14] == lodged.astimezone(SYDNEY).strftime("%Y%m%d%H%M%S")
        assert END - timedelta(days=400) < lodged <= END
        assert sent >= lodged
        assert r["status"] in ("ACTIVE", "DELIVERED", "FAILED")
        receipt = r["deliveryReceiptReceived"]
        if r["status"] == "ACTIVE":
            assert receipt is None
        else:
            assert sent <= datetime.fromisoformat(receipt) <= END
        assert r["sender"] == "demo"
        assert isinstance(r["costcentre"], str)
        assert r["from"]
        assert re.fullmatch(r"\d{8,15}", r["to"])
        assert r["message"]
        assert r["type"] in ("SMS", "WAP", "MMS", "FAX")
        assert r["parts"] == (count_parts(r["message"]) if r["type"] == "SMS" else 1)
        assert r["subject"] is None if r["type"] == "SMS" else r["subject"]
        assert isinstance(r["senderid"], int)
        assert r["senderserviceid"] in (1, 2)
        assert r["replytype"] in ("", *REPLY_TYPES)
        assert bool(r["replytype"]) == bool(r["replypath"])
        assert UUID4.fullmatch(r["trackingId"])
        assert r["batchTrackingId"] is None or UUID4.fullmatch(r["batchTrackingId"])


def test_the_seed_mixes_types_statuses_texts_and_batches(records: list[dict[str, Any]]) -> None:
    types = {r["type"] for r in records}
    statuses = {r["status"] for r in records}
    assert types == {"SMS", "WAP", "MMS", "FAX"}
    assert statuses == {"ACTIVE", "DELIVERED", "FAILED"}
    delivered = sum(r["status"] == "DELIVERED" for r in records)
    assert delivered > 0.8 * len(records)
    assert any(r["replytype"] in ("HTTP", "HTTPPOST", "EMAIL") for r in records)
    assert any(any(ord(c) > 0x2FFF for c in r["message"]) for r in records)  # CJK or emoji
    assert any(r["parts"] > 1 for r in records)
    assert len({r["to"] for r in records}) > 200
    assert any(r["to"].startswith("614") for r in records)
    assert any(r["to"].startswith(("64", "44", "1")) for r in records)
    batches = [r["batchTrackingId"] for r in records if r["batchTrackingId"]]
    assert len(batches) > len(set(batches)) > 0


def test_seeded_traffic_follows_working_hours(records: list[dict[str, Any]]) -> None:
    hours = [datetime.fromisoformat(r["dateLodged"]).hour for r in records]
    working = sum(8 <= h < 18 for h in hours)
    night = sum(h < 6 for h in hours)
    assert working > 0.6 * len(hours)
    assert night < 0.05 * len(hours)


def test_since_paging_returns_every_record_once_in_lodging_order(
    served: SandboxThread, records: list[dict[str, Any]]
) -> None:
    ids = [r["messageId"] for r in records]
    assert len(set(ids)) == len(ids) == 2000
    times = [datetime.fromisoformat(r["dateLodged"]) for r in records]
    assert times == sorted(times)
    assert len(set(times)) == len(times)
    stored = served.query("SELECT message_id FROM messages ORDER BY rank")
    assert ids == [row[0] for row in stored]


def test_total_records_counts_the_whole_account(served: SandboxThread) -> None:
    with client(served) as http:
        first = http.get("/v2/message/logs", params={"page": 1}).json()
        second = http.get("/v2/message/logs", params={"page": 2}).json()
        since = http.get("/v2/message/logs", params={"since": "2000-01-01T00:00:00+00:00"}).json()
    assert first["totalRecords"] == second["totalRecords"] == since["totalRecords"] == 2000
    assert len(first["messages"]) == 1000
    newest = [r["dateLodged"] for r in first["messages"] + second["messages"]]
    assert newest == sorted(newest, reverse=True)


def test_seeded_batches_answer_a_status_query(served: SandboxThread) -> None:
    [(code, count)] = served.query(
        "SELECT batch_code, COUNT(*) FROM messages WHERE batch_code IS NOT NULL "
        "GROUP BY batch_code ORDER BY COUNT(*) DESC LIMIT 1"
    )
    with client(served) as http:
        response = http.get("/v2/message/status", params={"batch_code": code})
    assert response.status_code == 200
    assert len(response.json()) == count
    assert served.query(
        "SELECT total, created, done FROM batches WHERE batch_code = ?", (code,)
    ) == [(count, count, 1)]


def test_external_ids_and_tags_are_seeded_on_rest_sends(served: SandboxThread) -> None:
    [(external,)] = served.query(
        "SELECT external_system_id FROM messages WHERE external_system_id IS NOT NULL "
        "AND batch_code IS NULL LIMIT 1"
    )
    with client(served) as http:
        [message] = http.get("/v2/message/status", params={"external_system_id": external}).json()
    assert message["ExternalSystemId"] == external
    assert served.query("SELECT COUNT(*) FROM messages WHERE tags LIKE '%,%'")[0][0] > 0


def test_replies_are_seeded_for_two_way_messages_and_backfill_finds_them(
    served: SandboxThread,
) -> None:
    rows = served.query(
        "SELECT r.from_number, m.to_number, r.to_number, m.from_number, m.reply_type, "
        "r.received_us, r.sent_us, m.sent_us FROM replies r "
        "JOIN messages m ON m.message_id = r.message_id"
    )
    assert len(rows) > 10
    for reply_from, sent_to, reply_to, sent_from, reply_type, received, sent, original in rows:
        assert (reply_from, reply_to) == (sent_to, sent_from)
        assert reply_type not in ("", "HEADER")
        assert original < sent < received
    latest = max(row[5] for row in rows)
    day = datetime.fromtimestamp(latest / 1e6, UTC).astimezone(SYDNEY).date().isoformat()
    with client(served) as http:
        page = http.get(
            "/v2/Replies/GetByDate", params={"startDate": day, "endDate": day, "PageSize": 1000}
        ).json()
    assert page["TotalRecords"] >= 1
    assert len(page["Items"]) == page["TotalRecords"]
    assert all(item["MessageId"] for item in page["Items"])


def test_the_demo_account_still_signs_in_after_a_seed(served: SandboxThread) -> None:
    response = httpx.post(
        f"{served.rest_url}/v2/oauth/access_token",
        data={"grant_type": "password", "username": "demo", "password": "demo"},
    )
    assert response.status_code == 200
