"""`POST /v2/message/send`: one recipient at once, several as a background batch."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    NUMBER,
    assert_failure,
    assert_success,
    log_of,
    parse_iso,
    rest_client,
    send,
    wait_until,
)


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def numbers(count: int) -> list[str]:
    return [f"6141{index:07d}" for index in range(count)]


def batch_code(response: httpx.Response) -> str:
    data = assert_success(response)
    assert set(data) == {"BatchCode"}
    assert isinstance(data["BatchCode"], str)
    assert data["BatchCode"]
    code: str = data["BatchCode"]
    return code


def batch_status(client: httpx.Client, code: str) -> list[dict[str, Any]]:
    response = client.get("/v2/message/status", params={"batch_code": code})
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()
    return messages


def complete_batch(client: httpx.Client, code: str, total: int) -> list[dict[str, Any]]:
    """Poll the batch's status until all its messages exist."""

    def probe() -> list[dict[str, Any]] | None:
        messages = batch_status(client, code)
        return messages if len(messages) == total else None

    return wait_until(probe)


# ---- one recipient -------------------------------------------------------------------------


def test_one_recipient_is_created_at_once_as_a_message(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    data = assert_success(send(api, Recipients=["+61412345678"]))
    assert set(data) == {"Message"}
    assert set(data["Message"]) == {"PhoneNumber", "MessageId", "Status"}
    assert data["Message"]["PhoneNumber"] == "61412345678"
    assert data["Message"]["Status"] == "ACTIVE"
    assert sandbox.query("SELECT message_id FROM messages") == [(data["Message"]["MessageId"],)]


def test_external_system_id_and_tags_are_echoed_when_supplied(api: httpx.Client) -> None:
    message = assert_success(send(api, ExternalSystemId="order-17", Tags="vip,late"))["Message"]
    assert message["ExternalSystemId"] == "order-17"
    assert message["Tags"] == "vip,late"


def test_only_the_supplied_one_of_external_system_id_and_tags_is_echoed(
    api: httpx.Client,
) -> None:
    message = assert_success(send(api, Tags="vip"))["Message"]
    assert set(message) == {"PhoneNumber", "MessageId", "Status", "Tags"}


@pytest.mark.parametrize("field", ["ExternalSystemId", "Tags"])
def test_an_over_long_reference_is_refused(api: httpx.Client, field: str) -> None:
    assert_failure(send(api, **{field: "x" * 256}), 400, field)


# ---- several recipients: batches -----------------------------------------------------------


def test_several_recipients_return_a_batch_code(api: httpx.Client) -> None:
    batch_code(send(api, Recipients=numbers(3)))


def test_a_batch_appears_over_time_until_complete(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(batch_step=5, batch_step_delay=0.05)
    recipients = numbers(40)
    with rest_client(sandbox) as client:
        code = batch_code(send(client, Recipients=recipients))
        counts = [len(batch_status(client, code))]
        while counts[-1] < len(recipients):
            counts.append(len(batch_status(client, code)))
            assert len(counts) < 2000, "the batch never completed"
        final = batch_status(client, code)
    assert counts == sorted(counts)
    assert any(0 < count < len(recipients) for count in counts), counts
    assert [m["PhoneNumber"] for m in final] == recipients
    assert all(m["Status"] == "ACTIVE" for m in final)
    assert len({m["MessageId"] for m in final}) == len(recipients)


def test_a_partial_batch_grows_in_steps(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(batch_step=5, batch_step_delay=0.05)
    with rest_client(sandbox) as client:
        code = batch_code(send(client, Recipients=numbers(40)))
        partial = wait_until(lambda: batch_status(client, code) or None)
        assert len(partial) % 5 == 0
        assert len(partial) < 40
        complete_batch(client, code, 40)


def test_every_message_of_a_batch_carries_its_fields(api: httpx.Client) -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    code = batch_code(
        send(
            api,
            Recipients=numbers(4),
            ExternalSystemId="campaign-9",
            Tags="spring",
            Source="61299990000",
            SendAt=when.isoformat(),
        )
    )
    messages = complete_batch(api, code, 4)
    assert {m["ExternalSystemId"] for m in messages} == {"campaign-9"}
    assert {m["Tags"] for m in messages} == {"spring"}
    records = [log_of(api, m["MessageId"]) for m in messages]
    assert {r["from"] for r in records} == {"61299990000"}
    assert {parse_iso(r["dateSent"]) for r in records} == {when}
    tracking = {r["batchTrackingId"] for r in records}
    assert len(tracking) == 1
    assert None not in tracking


def test_a_single_message_has_no_batch_tracking_id(api: httpx.Client) -> None:
    message_id = assert_success(send(api))["Message"]["MessageId"]
    assert log_of(api, message_id)["batchTrackingId"] is None


def test_a_hundred_recipients_are_accepted(api: httpx.Client) -> None:
    recipients = numbers(100)
    code = batch_code(send(api, Recipients=recipients))
    assert [m["PhoneNumber"] for m in complete_batch(api, code, 100)] == recipients


def test_a_hundred_and_one_recipients_are_refused(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    assert "100" in assert_failure(send(api, Recipients=numbers(101)), 400, "Recipients")
    assert sandbox.query("SELECT COUNT(*) FROM batches") == [(0,)]


@pytest.mark.parametrize(
    "recipients",
    [[], "61412345678", {"0": "61412345678"}, 61412345678, None],
    ids=["empty", "a string", "an object", "a number", "null"],
)
def test_recipients_must_be_a_non_empty_list(api: httpx.Client, recipients: object) -> None:
    assert_failure(send(api, Recipients=recipients), 400, "Recipients")


def test_missing_recipients_are_named(api: httpx.Client) -> None:
    response = api.post("/v2/message/send", json={"Message": "Hello"})
    assert_failure(response, 400, "Recipients")


@pytest.mark.parametrize(
    ("recipients", "field"),
    [
        ([NUMBER, 61412345679], "Recipients[1]"),
        ([NUMBER, NUMBER, None], "Recipients[2]"),
        ([NUMBER, ["61412345679"]], "Recipients[1]"),
        (["123"], "Recipients[0]"),
        ([NUMBER, NUMBER, "0412 345 678", NUMBER], "Recipients[2]"),
    ],
    ids=["a number", "null", "a nested list", "too short alone", "spaces at index 2"],
)
def test_a_bad_entry_is_named_by_its_index(
    api: httpx.Client, recipients: list[object], field: str
) -> None:
    assert_failure(send(api, Recipients=recipients), 400, field)


def test_a_missing_message_is_named(api: httpx.Client) -> None:
    response = api.post("/v2/message/send", json={"Recipients": [NUMBER]})
    assert_failure(response, 400, "Message")


# ---- Source, ReplyType and ReplyPath -------------------------------------------------------


def lodged_record(api: httpx.Client, **fields: Any) -> dict[str, Any]:
    return log_of(api, assert_success(send(api, **fields))["Message"]["MessageId"])


def test_source_is_the_sending_number(api: httpx.Client) -> None:
    assert lodged_record(api, Source="+61299990000")["from"] == "61299990000"


def test_an_unusable_source_is_refused(api: httpx.Client) -> None:
    assert_failure(send(api, Source="0412 345 678"), 400, "Source")


def test_a_source_name_longer_than_eleven_characters_is_recorded_as_given(
    api: httpx.Client,
) -> None:
    assert lodged_record(api, Source="AUSGRID Property")["from"] == "AUSGRID Property"


def test_header_shows_reply_path_as_the_sender(api: httpx.Client) -> None:
    record = lodged_record(api, ReplyType="HEADER", ReplyPath="MyShop", Source="61299990000")
    assert record["from"] == "MyShop"
    assert record["replytype"] == "HEADER"
    assert record["replypath"] == "MyShop"


def test_reply_type_is_case_insensitive(api: httpx.Client) -> None:
    assert lodged_record(api, ReplyType="header", ReplyPath="MyShop")["replytype"] == "HEADER"


def test_a_header_sender_must_be_a_usable_sender(api: httpx.Client) -> None:
    response = send(api, ReplyType="HEADER", ReplyPath="A name " + "far " * 12 + "too long")
    assert_failure(response, 400, "ReplyPath")


def test_a_header_sender_longer_than_eleven_characters_is_shown_as_given(
    api: httpx.Client,
) -> None:
    record = lodged_record(api, ReplyType="HEADER", ReplyPath="AUSGRID Property")
    assert record["from"] == "AUSGRID Property"


@pytest.mark.parametrize("reply_type", ["HTTP", "HTTPGET", "HTTPPOST"])
def test_an_http_reply_type_takes_a_url(api: httpx.Client, reply_type: str) -> None:
    url = "https://hooks.example.com/sms?from=#FROM#&msg=#MSG#"
    record = lodged_record(api, ReplyType=reply_type, ReplyPath=url)
    assert record["replytype"] == reply_type
    assert record["replypath"] == url


@pytest.mark.parametrize("reply_type", ["HTTP", "HTTPGET", "HTTPPOST"])
@pytest.mark.parametrize(
    "path", ["ftp://example.com/x", "example.com/hook", "mailto:a@example.com", "http://"]
)
def test_an_http_reply_type_refuses_anything_but_a_url(
    api: httpx.Client, reply_type: str, path: str
) -> None:
    assert_failure(send(api, ReplyType=reply_type, ReplyPath=path), 400, "ReplyPath")


def test_an_email_reply_type_takes_an_address(api: httpx.Client) -> None:
    assert lodged_record(api, ReplyType="EMAIL", ReplyPath="desk@example.com")["replytype"] == (
        "EMAIL"
    )
    assert_failure(send(api, ReplyType="EMAIL", ReplyPath="not an address"), 400, "ReplyPath")


def test_an_unknown_reply_type_is_refused(api: httpx.Client) -> None:
    assert_failure(send(api, ReplyType="PIGEON", ReplyPath="loft"), 400, "ReplyType")


def test_a_reply_path_without_a_reply_type_is_refused(api: httpx.Client) -> None:
    assert_failure(send(api, ReplyPath="https://example.com/hook"), 400, "ReplyType")


@pytest.mark.parametrize("reply_type", ["HEADER", "HTTP", "EMAIL"])
def test_a_reply_type_without_a_reply_path_is_refused(api: httpx.Client, reply_type: str) -> None:
    assert_failure(send(api, ReplyType=reply_type), 400, "ReplyPath")


def test_without_a_reply_type_the_record_has_empty_reply_fields(api: httpx.Client) -> None:
    record = lodged_record(api)
    assert record["replytype"] == ""
    assert record["replypath"] == ""
