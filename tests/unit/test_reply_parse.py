"""Reading a reply webhook's parameters and a keyword forward's JSON, and refusing bad ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.replies.parse import (
    MAX_PARAMS,
    Rejected,
    WebhookClock,
    decode_form,
    reply_from_keyword,
    reply_from_params,
)
from gwdesk.replies.template import ReplyTemplate

SYDNEY = ZoneInfo("Australia/Sydney")
TEMPLATE = ReplyTemplate.generate("127.0.0.1", 8642, "s3cr3t-Path_segment-0123456789ab")
NOW = datetime(2024, 1, 5, 3, 4, 10, tzinfo=UTC)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
GOOD = "from=61412345678&to=61400000000&msg=Yes%20please&sent=05-Jan-2024%2014%3A04%3A05&rcvd=05-Jan-2024%2014%3A04%3A07"


def read(raw: str, now: datetime = NOW, zone: ZoneInfo = SYDNEY) -> Any:
    return reply_from_params(raw, TEMPLATE, WebhookClock(zone), now=now)


def refusal(raw: str) -> Rejected:
    with pytest.raises(Rejected) as caught:
        read(raw)
    return caught.value


def keyword(**fields: Any) -> bytes:
    body: dict[str, Any] = {
        "ReplyId": "R-1",
        "From": "61412345678",
        "To": "61400000000",
        "Message": "STOP now",
        "Keyword": "STOP",
        "SentAt": "2024-01-05T14:04:05+11:00",
        "ReceivedAt": "2024-01-05T14:04:07+11:00",
        "OriginalMessageId": "M-9",
    }
    body.update(fields)
    return json.dumps({k: v for k, v in body.items() if v is not ...}).encode()


def keyword_refusal(body: bytes) -> Rejected:
    with pytest.raises(Rejected) as caught:
        reply_from_keyword(body, SYDNEY)
    return caught.value


def test_a_webhook_call_becomes_a_reply_with_utc_times() -> None:
    reply = read(GOOD)
    assert (reply.from_number, reply.to_number, reply.text) == (
        "61412345678",
        "61400000000",
        "Yes please",
    )
    assert reply.sent_at == datetime(2024, 1, 5, 3, 4, 5, tzinfo=UTC)
    assert reply.received_at == datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)
    assert reply.source == "webhook"


def test_parameters_the_template_does_not_name_are_ignored() -> None:
    assert read(GOOD + "&utm_source=gateway&x=").text == "Yes please"


def test_an_empty_reply_text_is_still_a_reply() -> None:
    assert read(GOOD.replace("msg=Yes%20please", "msg=")).text == ""


def test_sent_time_is_optional_when_the_template_leaves_it_out() -> None:
    template = ReplyTemplate.parse(f"{TEMPLATE.base_url}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#")
    raw = "f=614&t=615&m=hi&r=05-Jan-2024%2014%3A04%3A07"
    reply = reply_from_params(raw, template, WebhookClock(SYDNEY), now=NOW)
    assert reply.sent_at is None
    assert reply.text == "hi"


@pytest.mark.parametrize(
    ("drop", "complaint"),
    [
        ("from=61412345678&", "missing parameter 'from' (#FROM#)"),
        ("to=61400000000&", "missing parameter 'to' (#TO#)"),
        ("msg=Yes%20please&", "missing parameter 'msg' (#MSG#)"),
        ("&rcvd=05-Jan-2024%2014%3A04%3A07", "missing parameter 'rcvd' (#RCVDDTS#)"),
    ],
)
def test_a_missing_parameter_is_named(drop: str, complaint: str) -> None:
    refused = refusal(GOOD.replace(drop, ""))
    assert (refused.status, refused.reason) == (400, complaint)


def test_a_repeated_parameter_is_refused() -> None:
    refused = refusal(GOOD + "&msg=again")
    assert refused.status == 400
    assert "'msg' is given more than once" in refused.reason


@pytest.mark.parametrize(
    "stamp",
    ["2024-01-05 14:04:05", "05-Foo-2024%2014:04:05", "31-Feb-2024%2010:00:00", "yesterday"],
)
def test_an_unparsable_time_is_refused_with_the_parameter_named(stamp: str) -> None:
    refused = refusal(GOOD.replace("sent=05-Jan-2024%2014%3A04%3A05", f"sent={stamp}"))
    assert refused.status == 400
    assert refused.reason.startswith("parameter 'sent' (#SENTDTS#):")


def test_a_time_skipped_by_daylight_saving_is_refused() -> None:
    refused = refusal(GOOD.replace("05-Jan-2024%2014%3A04%3A07", "06-Oct-2024%2002%3A30%3A00"))
    assert "does not exist in Australia/Sydney" in refused.reason


def test_an_unfilled_placeholder_says_the_gateway_did_not_substitute() -> None:
    refused = refusal(GOOD.replace("from=61412345678", "from=%23FROM%23"))
    assert refused.status == 400
    assert "holds #FROM# unfilled" in refused.reason


def test_a_reply_that_says_msg_placeholder_is_just_text() -> None:
    assert read(GOOD.replace("msg=Yes%20please", "msg=%23MSG%23")).text == "#MSG#"


def test_percent_encoded_bytes_that_are_not_utf8_are_refused() -> None:
    refused = refusal(GOOD.replace("Yes%20please", "caf%E9"))
    assert (refused.status, refused.reason) == (400, "the parameters are not UTF-8 text")


def test_a_raw_form_body_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(Rejected, match="not UTF-8"):
        decode_form(b"msg=caf\xe9")


def test_absurdly_many_parameters_are_refused_before_parsing() -> None:
    refused = refusal(GOOD + "&x=1" * MAX_PARAMS)
    assert refused.status == 400
    assert f"at most {MAX_PARAMS}" in refused.reason


@pytest.mark.parametrize(
    ("number", "complaint"),
    [("%20%20", "is empty"), ("6" * 65, "65 characters"), ("614%0012", "control characters")],
)
def test_a_sender_that_is_no_phone_number_is_refused(number: str, complaint: str) -> None:
    refused = refusal(GOOD.replace("from=61412345678", f"from={number}"))
    assert complaint in refused.reason


def test_the_repeated_hour_is_read_as_the_one_nearest_arrival() -> None:
    """03 Apr 2016 02:30 happened twice in Sydney (+11:00, then +10:00)."""
    raw = GOOD.replace("05-Jan-2024%2014%3A04%3A07", "03-Apr-2016%2002%3A30%3A00")
    raw = raw.replace("05-Jan-2024%2014%3A04%3A05", "03-Apr-2016%2002%3A29%3A58")
    first = datetime(2016, 4, 2, 15, 30, tzinfo=UTC)
    second = first + timedelta(hours=1)
    clock = WebhookClock(SYDNEY)
    early = reply_from_params(raw, TEMPLATE, clock, now=first + timedelta(seconds=2))
    late = reply_from_params(raw, TEMPLATE, clock, now=second + timedelta(seconds=2))
    assert (early.received_at, late.received_at) == (first, second)
    assert late.sent_at == second - timedelta(seconds=2)


@given(
    st.datetimes(datetime(1990, 1, 1), datetime(2040, 1, 1), timezones=st.just(UTC)),
    st.sampled_from(["Australia/Sydney", "America/New_York", "Asia/Kolkata", "UTC"]),
)
def test_any_received_time_comes_back_as_the_same_utc_second(moment: datetime, name: str) -> None:
    zone = ZoneInfo(name)
    local = moment.astimezone(zone)
    stamp = (
        f"{local:%d}-{MONTHS[local.month - 1]}-{local:%Y}%20{local:%H}%3A{local:%M}%3A{local:%S}"
    )
    raw = f"from=614&to=615&msg=x&rcvd={stamp}"
    reply = read(raw, now=moment, zone=zone)
    assert reply.received_at == moment.replace(microsecond=0)
    assert reply.received_at.tzinfo is UTC


# ---- keyword forwards ----------------------------------------------------------------------


def test_a_keyword_forward_becomes_a_reply_with_its_ids() -> None:
    reply = reply_from_keyword(keyword(), SYDNEY)
    assert (reply.from_number, reply.to_number, reply.text) == (
        "61412345678",
        "61400000000",
        "STOP now",
    )
    assert (reply.reply_id, reply.message_id, reply.keyword) == ("R-1", "M-9", "STOP")
    assert reply.received_at == datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)
    assert reply.source == "keyword"


def test_keyword_times_without_an_offset_are_in_the_gateway_zone() -> None:
    reply = reply_from_keyword(keyword(ReceivedAt="2024-01-05T14:04:07"), SYDNEY)
    assert reply.received_at == datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)


def test_a_keyword_forward_without_its_optional_fields_is_accepted() -> None:
    body = keyword(ReplyId=..., Keyword=..., SentAt=None, OriginalMessageId=...)
    reply = reply_from_keyword(body, SYDNEY)
    assert (reply.reply_id, reply.sent_at, reply.message_id) == (None, None, None)


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (keyword(From=...), "missing field From"),
        (keyword(From=..., ReceivedAt=None), "missing fields From, ReceivedAt"),
        (keyword(Message=5), "Message must be a string"),
        (keyword(To=["614"]), "To must be a string"),
        (keyword(ReceivedAt="05-Jan-2024 14:04:07"), "ReceivedAt is not an ISO 8601 time"),
        (keyword(SentAt=17), "SentAt must be an ISO 8601 time string"),
        (keyword(ReplyId="R" * 201), "ReplyId is 201 characters long"),
        (b'{"From": "614", ', "the body is not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "not JSON"),
        (json.dumps({f"k{i}": i for i in range(100)}).encode(), "100 fields"),
    ],
)
def test_a_bad_keyword_forward_is_refused_with_the_reason(body: bytes, complaint: str) -> None:
    refused = keyword_refusal(body)
    assert refused.status == 400
    assert complaint in refused.reason
