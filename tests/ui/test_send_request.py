"""The Send tab's checks before sending (Qt-free): each refusal names the wire field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gwdesk.gateway.errors import ValidationError
from gwdesk.ui.tabs.send_request import Channel, FormValues, prepare

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def refusal(values: FormValues) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        prepare(values, "AU", NOW)
    return caught.value


def sms(**changes: object) -> FormValues:
    base = {"recipient": "0412 345 678", "text": "Hello"}
    base.update(changes)
    return FormValues(**base)  # type: ignore[arg-type]


def test_a_national_number_is_sent_in_international_digits() -> None:
    assert prepare(sms(), "AU", NOW).recipient == "61412345678"


@pytest.mark.parametrize(
    ("sender", "sent"),
    [("ACME", "ACME"), ("Dr. Who_2", "Dr. Who_2"), ("0412 345 678", "61412345678")],
)
def test_a_sender_is_a_name_of_up_to_11_or_a_number(sender: str, sent: str) -> None:
    assert prepare(sms(sender=sender), "AU", NOW).source == sent


@pytest.mark.parametrize("sender", ["TwelveLetter", "12345", "Ünïcode", "a\x00b"])
def test_an_unusable_sender_is_refused_as_source(sender: str) -> None:
    assert refusal(sms(sender=sender)).field == "Source"


def test_a_header_sender_replaces_from() -> None:
    request = prepare(sms(sender="Ignored", reply=("HEADER", "Shop")), "AU", NOW)
    assert (request.source, request.reply_type, request.reply_path) == (None, "HEADER", "Shop")


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        (("HTTPPOST", "not a url"), "ReplyPath"),
        (("HTTP", "javascript:alert(1)"), "ReplyPath"),
        (("EMAIL", "nobody"), "ReplyPath"),
        (("WWW", "  "), "ReplyPath"),
        (("", "https://example.com"), "ReplyType"),
        (("HEADER", ""), "ReplyPath"),
    ],
)
def test_a_reply_route_the_gateway_would_refuse_is_refused_first(
    reply: tuple[str, str], field: str
) -> None:
    assert refusal(sms(reply=reply)).field == field


def test_a_schedule_in_the_past_is_refused() -> None:
    assert refusal(sms(send_at=NOW - timedelta(minutes=2))).field == "SendAt"


def test_the_current_minute_still_counts_as_now() -> None:
    assert prepare(sms(send_at=NOW - timedelta(seconds=30)), "AU", NOW).send_at is not None


def test_tags_are_trimmed_and_empty_ones_dropped() -> None:
    assert prepare(sms(tags=" a, b ,, c "), "AU", NOW).tags == "a,b,c"


def test_lodge_errors_use_lodge_field_names() -> None:
    assert refusal(sms(channel=Channel.LODGE_SMS, recipient="12")).field == "PhoneNumber"
    assert refusal(sms(channel=Channel.LODGE_SMS, text="")).field == "PhoneMessage"


def test_lodge_takes_only_its_own_reply_types() -> None:
    values = sms(channel=Channel.LODGE_SMS, reply=("HTTPGET", "https://example.com/r"))
    assert refusal(values).field == "ReplyType"


def test_lodge_ignores_what_only_rest_has() -> None:
    values = sms(channel=Channel.LODGE_SMS, sender="bad sender!!", external_id="x", tags="t")
    request = prepare(values, "AU", NOW)
    assert (request.source, request.external_id, request.tags) == (None, None, None)


def test_a_wap_push_needs_an_http_url() -> None:
    values = FormValues(channel=Channel.WAP_PUSH, recipient="0412345678", wap_url="ftp://x/y")
    assert refusal(values).field == "URL"


def test_a_nul_in_the_text_is_refused_before_sending() -> None:
    assert refusal(sms(text="a\x00b")).field == "Message"
