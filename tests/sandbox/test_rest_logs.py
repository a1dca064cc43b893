"""`GET /v2/message/logs`: the account's log records, by page, since a time, or one filter."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    JSON_UTF8,
    NUMBER,
    assert_failure,
    assert_success,
    lodge_directly,
    parse_iso,
    rest_client,
    send,
    simple_send,
    wait_until,
)

LOGS = "/v2/message/logs"
#: Every field of the spec's log record table, with the JSON types it may take.
RECORD_TYPES: dict[str, tuple[type, ...]] = {
    "messageId": (str,),
    "status": (str,),
    "dateSent": (str,),
    "dateLodged": (str,),
    "deliveryReceiptReceived": (type(None), str),
    "sender": (str,),
    "costcentre": (str,),
    "from": (str,),
    "to": (str,),
    "subject": (type(None), str),
    "message": (str,),
    "parts": (int,),
    "type": (str,),
    "senderid": (int,),
    "senderserviceid": (int,),
    "replytype": (str,),
    "replypath": (str,),
    "trackingId": (str,),
    "batchTrackingId": (type(None), str),
}


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def listing(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get(LOGS, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body: dict[str, Any] = response.json()
    assert set(body) == {"totalRecords", "messages"}
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [record["messageId"] for record in body["messages"]]


def sent_id(client: httpx.Client, **fields: Any) -> str:
    message_id: str = assert_success(simple_send(client, **fields))["Message"]["MessageId"]
    return message_id


# ---- the record ----------------------------------------------------------------------------


def test_every_field_of_the_record_is_present_with_its_type(api: httpx.Client) -> None:
    sent_id(api, Message="Hello there")
    [record] = listing(api)["messages"]
    assert list(record) == list(RECORD_TYPES)
    for name, types in RECORD_TYPES.items():
        assert type(record[name]) in types, (name, record[name])


def test_the_record_describes_the_message(api: httpx.Client) -> None:
    message_id = sent_id(api, Message="Hello there", Recipient="+61412345678")
    [record] = listing(api)["messages"]
    assert record["messageId"] == message_id
    assert record["status"] == "ACTIVE"
    assert record["message"] == "Hello there"
    assert record["to"] == "61412345678"
    assert record["sender"] == "demo"
    assert record["costcentre"] == ""
    assert record["type"] == "SMS"
    assert record["deliveryReceiptReceived"] is None
    assert record["subject"] is None
    assert record["batchTrackingId"] is None
    assert str(uuid.UUID(record["trackingId"])) == record["trackingId"]
    lodged = parse_iso(record["dateLodged"])
    assert lodged.utcoffset() in (timedelta(hours=10), timedelta(hours=11))  # Sydney
    assert parse_iso(record["dateSent"]) == lodged


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a" * 160, 1),
        ("a" * 161, 2),
        ("a" * 306, 2),
        ("a" * 307, 3),
        ("€" * 80, 1),
        ("€" * 81, 2),
        ("a" * 152 + "€" + "a" * 152, 3),
        ("ж" * 70, 1),
        ("ж" * 71, 2),
        ("😀" * 35, 1),
        ("ж" * 66 + "😀" + "ж" * 66, 3),
        ("😀" * 36, 2),
        ("é" * 160, 1),
        ("ê" * 70, 1),
    ],
    ids=[
        "160 GSM-7",
        "161 GSM-7",
        "306 GSM-7",
        "307 GSM-7",
        "80 escapes",
        "81 escapes",
        "escape not split",
        "70 UCS-2",
        "71 UCS-2",
        "35 surrogate pairs",
        "surrogate pair not split",
        "36 surrogate pairs",
        "e-acute is GSM-7",
        "e-circumflex is UCS-2",
    ],
)
def test_parts_count_gsm_03_38_segments(api: httpx.Client, text: str, parts: int) -> None:
    sent_id(api, Message=text)
    assert listing(api)["messages"][0]["parts"] == parts


# ---- page ----------------------------------------------------------------------------------


def test_no_parameter_is_the_first_page_newest_first(api: httpx.Client) -> None:
    sent = [sent_id(api) for _ in range(3)]
    body = listing(api)
    assert body["totalRecords"] == 3
    assert ids(body) == sent[::-1]


def test_an_empty_account_has_no_records(api: httpx.Client) -> None:
    assert listing(api) == {"totalRecords": 0, "messages": []}


def test_pages_hold_a_thousand_records_newest_first(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    lodged = lodge_directly(sandbox, 2500)
    pages = [listing(api, page=number) for number in (1, 2, 3, 4)]
    assert [body["totalRecords"] for body in pages] == [2500] * 4
    assert [len(body["messages"]) for body in pages] == [1000, 1000, 500, 0]
    assert [i for body in pages for i in ids(body)] == lodged[::-1]


@pytest.mark.parametrize(
    "page",
    ["0", "-1", "abc", "1.5", "1e3", "²", "١", " ", "9" * 5000, "99999999999"],
    ids=[
        "zero",
        "negative",
        "letters",
        "fraction",
        "exponent",
        "superscript",
        "arabic-indic",
        "blank",
        "5000 digits",
        "beyond the limit",
    ],
)
def test_a_bad_page_is_refused(api: httpx.Client, page: str) -> None:
    assert_failure(api.get(LOGS, params={"page": page}), 400, "page")


# ---- since ---------------------------------------------------------------------------------


def test_since_is_inclusive_and_oldest_first(sandbox: SandboxThread, api: httpx.Client) -> None:
    lodged = lodge_directly(sandbox, 5)
    third = listing(api, message_id=lodged[2])["messages"][0]["dateLodged"]
    body = listing(api, since=third)
    assert body["totalRecords"] == 3
    assert ids(body) == lodged[2:]


def test_since_returns_at_most_a_thousand_and_counts_all(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    lodged = lodge_directly(sandbox, 1200)
    body = listing(api, since="2000-01-01T00:00:00+00:00")
    assert body["totalRecords"] == 1200
    assert ids(body) == lodged[:1000]


def test_since_after_the_last_record_is_empty(api: httpx.Client) -> None:
    sent_id(api)
    assert listing(api, since="2999-01-01T00:00:00+00:00") == {"totalRecords": 0, "messages": []}


def test_paging_by_since_returns_each_record_exactly_once(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    lodged = lodge_directly(sandbox, 2500)
    held: dict[str, dict[str, Any]] = {}
    since, calls = "2000-01-01T00:00:00+00:00", 0
    while True:
        calls += 1
        fresh = [r for r in listing(api, since=since)["messages"] if r["messageId"] not in held]
        if not fresh:
            break
        held.update((r["messageId"], r) for r in fresh)
        since = fresh[-1]["dateLodged"]
    assert list(held) == lodged
    assert calls == 4


def test_a_since_whose_plus_was_not_encoded_is_refused_with_a_hint(api: httpx.Client) -> None:
    response = api.get(f"{LOGS}?since=2025-03-01T09:00:00.123456+11:00")
    assert "%2B" in assert_failure(response, 400, "since")


def test_an_encoded_since_is_accepted(api: httpx.Client) -> None:
    response = api.get(f"{LOGS}?since={quote('2025-03-01T09:00:00.123456+11:00', safe='')}")
    assert response.status_code == 200


@pytest.mark.parametrize(
    "since",
    ["2025-03-01T09:00:00", "2025-03-01", "yesterday", "0001-01-01T00:00:00+10:00"],
    ids=["no offset", "date only", "words", "out of range"],
)
def test_an_unusable_since_is_refused(api: httpx.Client, since: str) -> None:
    assert_failure(api.get(LOGS, params={"since": since}), 400, "since")


# ---- filters -------------------------------------------------------------------------------


def test_message_id_gives_that_record(api: httpx.Client) -> None:
    sent_id(api)
    wanted = sent_id(api)
    body = listing(api, message_id=wanted)
    assert body["totalRecords"] == 1
    assert ids(body) == [wanted]


def test_an_unknown_message_id_gives_no_records(api: httpx.Client) -> None:
    assert listing(api, message_id="20200101000000000001") == {"totalRecords": 0, "messages": []}


def test_batch_code_gives_the_batch(api: httpx.Client) -> None:
    sent_id(api)
    code = assert_success(send(api, Recipients=["61411111111", "61422222222"]))["BatchCode"]
    body = wait_until(
        lambda: b if (b := listing(api, batch_code=code))["totalRecords"] == 2 else None
    )
    assert sorted(r["to"] for r in body["messages"]) == ["61411111111", "61422222222"]
    assert len({r["batchTrackingId"] for r in body["messages"]}) == 1


@pytest.mark.parametrize("recipient", ["61422222222", "+61422222222"])
def test_recipient_gives_that_numbers_records_newest_first(
    api: httpx.Client, recipient: str
) -> None:
    first = sent_id(api, Recipient="61422222222")
    sent_id(api, Recipient=NUMBER)
    second = sent_id(api, Recipient="+61422222222")
    body = listing(api, recipient=recipient)
    assert body["totalRecords"] == 2
    assert ids(body) == [second, first]


def test_an_invalid_recipient_is_refused(api: httpx.Client) -> None:
    assert_failure(api.get(LOGS, params={"recipient": "12ab"}), 400, "recipient")


def test_another_accounts_records_are_not_listed(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "pw")])
    with rest_client(sandbox) as demo, rest_client(sandbox, ("other", "pw")) as other:
        message_id = sent_id(demo)
        assert listing(other) == {"totalRecords": 0, "messages": []}
        assert listing(other, message_id=message_id)["messages"] == []
        assert listing(other, recipient=NUMBER)["messages"] == []


# ---- the one-parameter rule ----------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["page=1&since=2025-01-01T00:00:00Z", "page=1&page=2", "recipient=61412345678&message_id=1"],
)
def test_several_parameters_are_refused(api: httpx.Client, query: str) -> None:
    assert_failure(api.get(f"{LOGS}?{query}"), 400)


@pytest.mark.parametrize("name", ["Page", "pageSize", "external_system_id", "to"])
def test_an_unknown_parameter_is_named(api: httpx.Client, name: str) -> None:
    assert_failure(api.get(LOGS, params={name: "1"}), 400, name)
