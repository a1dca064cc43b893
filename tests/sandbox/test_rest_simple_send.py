"""`POST /v2/message/simple_send`: one message to one recipient, created at once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.rest_support import (
    NUMBER,
    assert_failure,
    assert_success,
    log_of,
    parse_iso,
    rest_client,
    simple_send,
)


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def lodged_id(response: httpx.Response) -> str:
    message_id: str = assert_success(response)["Message"]["MessageId"]
    return message_id


def test_the_response_carries_exactly_phone_number_message_id_and_status(
    api: httpx.Client,
) -> None:
    data = assert_success(
        simple_send(api, Recipient="+61412345678", ExternalSystemId="ref-1", Tags="a,b")
    )
    assert set(data) == {"Message"}
    message = data["Message"]
    assert set(message) == {"PhoneNumber", "MessageId", "Status"}
    assert message["PhoneNumber"] == "61412345678"
    assert message["Status"] == "ACTIVE"
    assert re.fullmatch(r"\d{20}", message["MessageId"])


def test_the_message_id_begins_with_the_lodging_time(api: httpx.Client) -> None:
    message_id = lodged_id(simple_send(api))
    lodged = parse_iso(log_of(api, message_id)["dateLodged"])
    assert message_id[:14] == lodged.strftime("%Y%m%d%H%M%S")


def test_each_send_gets_its_own_message_id(api: httpx.Client) -> None:
    ids = {lodged_id(simple_send(api)) for _ in range(20)}
    assert len(ids) == 20


def test_the_message_is_lodged_with_its_text_and_recipient(api: httpx.Client) -> None:
    record = log_of(api, lodged_id(simple_send(api, Message="Your table is ready")))
    assert record["message"] == "Your table is ready"
    assert record["to"] == NUMBER
    assert record["type"] == "SMS"
    assert record["status"] == "ACTIVE"


@pytest.mark.parametrize(
    ("sender", "shown"),
    [("MyShop", "MyShop"), ("+61299990000", "61299990000"), ("61299990000", "61299990000")],
)
def test_from_is_what_the_recipient_sees_as_sender(
    api: httpx.Client, sender: str, shown: str
) -> None:
    assert log_of(api, lodged_id(simple_send(api, From=sender)))["from"] == shown


@pytest.mark.parametrize(
    "sender",
    ["AUSGRID Property", "TwelveLetter", "My!Shop & Co.", " Café Nord ", "x" * 49 + "y"],
)
def test_a_name_longer_than_eleven_characters_is_accepted_and_recorded_as_given(
    api: httpx.Client, sender: str
) -> None:
    # The 11-character limit is a handset's (and ACMA's): the gateway accepts longer names.
    assert log_of(api, lodged_id(simple_send(api, From=sender)))["from"] == sender


def test_without_from_the_account_number_is_the_sender(api: httpx.Client) -> None:
    assert log_of(api, lodged_id(simple_send(api)))["from"] == "61400000000"


@pytest.mark.parametrize(
    "sender",
    ["1234567", "+1234567890123456", 61299990000, "x" * 51, "   ", "+61 (2) 9999", "Line\nBreak"],
    ids=["7 digits", "16 digits", "not a string", "51 characters", "blank", "no letter", "LF"],
)
def test_an_unusable_from_is_refused(api: httpx.Client, sender: object) -> None:
    assert_failure(simple_send(api, From=sender), 400, "From")


def test_a_name_hiding_a_right_to_left_override_is_refused_naming_it(api: httpx.Client) -> None:
    message = assert_failure(simple_send(api, From="Bank\u202eknaB"), 400, "From")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in message
    assert "\u202e" not in message


def test_a_name_hiding_a_zero_width_space_is_refused_naming_it(api: httpx.Client) -> None:
    message = assert_failure(simple_send(api, From="My\u200bShop"), 400, "From")
    assert "U+200B ZERO WIDTH SPACE" in message


# ---- required fields -----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["Message", "Recipient"])
def test_a_missing_required_field_is_named(api: httpx.Client, field: str) -> None:
    body = {"Message": "Hello", "Recipient": NUMBER}
    del body[field]
    response = api.post("/v2/message/simple_send", json=body)
    assert field in assert_failure(response, 400, field)


@pytest.mark.parametrize("field", ["Message", "Recipient"])
@pytest.mark.parametrize("value", [None, 12345678, ["61412345678"], {"a": 1}, True])
def test_a_required_field_that_is_not_a_string_is_named(
    api: httpx.Client, field: str, value: object
) -> None:
    assert_failure(simple_send(api, **{field: value}), 400, field)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_message_is_refused(api: httpx.Client, text: str) -> None:
    assert_failure(simple_send(api, Message=text), 400, "Message")


def test_nothing_is_lodged_when_a_field_is_refused(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    simple_send(api, Recipient="123")
    assert sandbox.query("SELECT COUNT(*) FROM messages") == [(0,)]


# ---- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "digits"),
    [
        ("61412345678", "61412345678"),
        ("+61412345678", "61412345678"),
        ("12345678", "12345678"),
        ("+123456789012345", "123456789012345"),
    ],
    ids=["digits", "plus", "eight digits", "fifteen digits"],
)
def test_an_international_number_is_accepted(api: httpx.Client, number: str, digits: str) -> None:
    assert assert_success(simple_send(api, Recipient=number))["Message"]["PhoneNumber"] == digits


@pytest.mark.parametrize(
    "number",
    [
        "1234567",
        "1234567890123456",
        "0412 345 678",
        "61-412-345-678",
        "(02) 9999 0000",
        "++61412345678",
        "61412345678+",
        "+",
        "abcdefghij",
        "٦١٤١٢٣٤٥٦٧٨",
        "６１４１２３４５６７８",
    ],
    ids=[
        "seven digits",
        "sixteen digits",
        "spaces",
        "dashes",
        "brackets",
        "double plus",
        "trailing plus",
        "plus alone",
        "letters",
        "arabic-indic digits",
        "fullwidth digits",
    ],
)
def test_a_number_outside_the_rules_is_refused(api: httpx.Client, number: str) -> None:
    assert_failure(simple_send(api, Recipient=number), 400, "Recipient")


# ---- message length ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("a" * 1530, True),
        ("a" * 1531, False),
        ("ж" * 670, True),
        ("ж" * 671, False),
        ("a" * 1528 + "€", True),
        ("a" * 1529 + "€", False),
        ("{" * 760, True),
        ("{" * 761, False),
    ],
    ids=[
        "1530 GSM-7",
        "1531 GSM-7",
        "670 UCS-2",
        "671 UCS-2",
        "1530 septets with an escape",
        "1531 septets with an escape",
        "760 escapes fill ten parts",
        "761 escapes need eleven",
    ],
)
def test_a_message_may_take_at_most_ten_parts(api: httpx.Client, text: str, accepted: bool) -> None:
    response = simple_send(api, Message=text)
    if accepted:
        assert log_of(api, lodged_id(response))["parts"] == 10
    else:
        assert "10" in assert_failure(response, 400, "Message")


# ---- SendAt --------------------------------------------------------------------------------


def at(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def test_a_future_send_at_is_lodged_now_and_sent_then(api: httpx.Client) -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    before = datetime.now(UTC)
    record = log_of(api, lodged_id(simple_send(api, SendAt=at(when))))
    assert parse_iso(record["dateSent"]) == when
    lodged = parse_iso(record["dateLodged"])
    assert before - timedelta(seconds=1) <= lodged <= datetime.now(UTC)


def test_send_at_keeps_its_instant_whatever_its_offset(api: httpx.Client) -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)
    western = when.astimezone(timezone(timedelta(hours=-5)))
    record = log_of(api, lodged_id(simple_send(api, SendAt=at(western))))
    assert parse_iso(record["dateSent"]) == when


def test_send_at_may_be_given_in_utc_with_z(api: httpx.Client) -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=30)
    text = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    record = log_of(api, lodged_id(simple_send(api, SendAt=text)))
    assert parse_iso(record["dateSent"]) == when


def test_a_send_at_a_little_in_the_past_is_sent_at_once(api: httpx.Client) -> None:
    when = datetime.now(UTC) - timedelta(minutes=4)
    record = log_of(api, lodged_id(simple_send(api, SendAt=at(when))))
    assert record["dateSent"] == record["dateLodged"]


def test_a_send_at_more_than_five_minutes_past_is_refused(api: httpx.Client) -> None:
    when = datetime.now(UTC) - timedelta(minutes=5, seconds=5)
    assert "5 minutes" in assert_failure(simple_send(api, SendAt=at(when)), 400, "SendAt")


@pytest.mark.parametrize(
    "value",
    [
        "2030-01-01T09:00:00",
        "2030-01-01",
        "tomorrow",
        "01/02/2030 09:00 +10:00",
        "9999-12-31T23:59:59+00:00",
        "0001-01-01T00:00:00+10:00",
        1893456000,
    ],
    ids=[
        "no offset",
        "date only",
        "words",
        "not iso",
        "beyond year 9998",
        "before year 1",
        "a number",
    ],
)
def test_an_unusable_send_at_is_refused(api: httpx.Client, value: Any) -> None:
    assert_failure(simple_send(api, SendAt=value), 400, "SendAt")


def test_an_empty_send_at_means_now(api: httpx.Client) -> None:
    record = log_of(api, lodged_id(simple_send(api, SendAt="")))
    assert record["dateSent"] == record["dateLodged"]
