"""The checks of every SMS before it is recorded (Qt-free): each refusal names the wire field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gwdesk.app.sms import Channel, SmsForm, SmsMessage, check_message, check_sms
from gwdesk.gateway.errors import ValidationError

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def refusal(values: SmsForm) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        check_sms(values, "AU", NOW)
    return caught.value


def checked(values: SmsForm) -> SmsMessage:
    return check_sms(values, "AU", NOW)[0]


def sms(**changes: object) -> SmsForm:
    base = {"recipient": "0412 345 678", "text": "Hello"}
    base.update(changes)
    return SmsForm(**base)  # type: ignore[arg-type]


def test_a_national_number_is_sent_in_international_digits() -> None:
    assert check_sms(sms(), "AU", NOW)[1] == "61412345678"


@pytest.mark.parametrize(
    ("sender", "sent"),
    [("ACME", "ACME"), ("Dr. Who_2", "Dr. Who_2"), ("0412 345 678", "61412345678")],
)
def test_a_sender_is_a_name_of_up_to_11_or_a_number(sender: str, sent: str) -> None:
    assert checked(sms(sender=sender)).source == sent


@pytest.mark.parametrize(
    "sender", ["12345", "Ünïcode", "a\x00b", " ACME", "ACME_", "Unverified", "A" * 51]
)
def test_a_sender_breaking_acma_rules_is_refused_as_source(sender: str) -> None:
    assert refusal(sms(sender=sender)).field == "Source"


def test_a_sender_name_longer_than_11_is_sent_as_typed() -> None:
    assert checked(sms(sender="AUSGRID Property")).source == "AUSGRID Property"


def test_a_marketing_message_ends_with_the_instruction_once() -> None:
    message = checked(sms(text="Sale today", marketing=True))
    assert message.text == "Sale today\nReply STOP to opt out"
    again = checked(sms(text="Sale today. Reply STOP to opt out", marketing=True))
    assert again.text == "Sale today. Reply STOP to opt out"


def test_the_instruction_counts_in_the_parts() -> None:
    assert refusal(sms(text="y" * 1520, marketing=True)).field == "Message"  # 11 parts with it
    assert checked(sms(text="y" * 1520)).text == "y" * 1520


def test_a_marketing_message_must_be_answerable() -> None:
    assert refusal(sms(sender="ACME", marketing=True)).field == "Source"
    assert refusal(sms(reply=("HEADER", "ACME"), marketing=True)).field == "ReplyPath"
    assert checked(sms(sender="0412 345 678", marketing=True)).source == "61412345678"
    assert checked(sms(marketing=True)).source is None


def test_marketing_and_factual_together_are_refused() -> None:
    assert refusal(sms(marketing=True, factual=True)).field == "Marketing"


def test_a_header_sender_replaces_from() -> None:
    request = checked(sms(sender="Ignored", reply=("HEADER", "Shop")))
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
    assert checked(sms(send_at=NOW - timedelta(seconds=30))).send_at is not None


def test_tags_are_trimmed_and_empty_ones_dropped() -> None:
    assert checked(sms(tags=" a, b ,, c ")).tags == "a,b,c"


def test_lodge_errors_use_lodge_field_names() -> None:
    assert refusal(sms(channel=Channel.LODGE_SMS, recipient="12")).field == "PhoneNumber"
    assert refusal(sms(channel=Channel.LODGE_SMS, text="")).field == "PhoneMessage"


def test_lodge_takes_only_its_own_reply_types() -> None:
    values = sms(channel=Channel.LODGE_SMS, reply=("HTTPGET", "https://example.com/r"))
    assert refusal(values).field == "ReplyType"


def test_lodge_ignores_what_only_rest_has() -> None:
    values = sms(channel=Channel.LODGE_SMS, sender="bad sender!!", external_id="x", tags="t")
    request = checked(values)
    assert (request.source, request.external_id, request.tags) == (None, None, None)


def test_a_wap_push_needs_an_http_url() -> None:
    values = SmsForm(channel=Channel.WAP_PUSH, recipient="0412345678", wap_url="ftp://x/y")
    assert refusal(values).field == "URL"


def test_a_nul_in_the_text_is_refused_before_sending() -> None:
    assert refusal(sms(text="a\x00b")).field == "Message"


def test_a_list_message_is_checked_without_a_recipient() -> None:
    message = check_message(sms(recipient=""), "AU", NOW)
    assert (message.channel, message.text) == (Channel.REST_SMS, "Hello")


def test_what_the_outbox_keeps_reads_back_as_the_same_message() -> None:
    message = checked(sms(sender="ACME", reply=("HTTP", "https://x.example/r"), tags="a"))
    assert SmsMessage.from_json(message.to_json()) == message


def test_a_wap_push_reads_back_from_the_outbox_with_its_url() -> None:
    message = checked(
        SmsForm(
            channel=Channel.WAP_PUSH,
            recipient="0412345678",
            wap_app="Shop",
            wap_url="https://x.example/a",
        )
    )
    assert SmsMessage.from_json(message.to_json()) == message


@pytest.mark.parametrize(
    "body", [{}, {"text": ""}, {"text": 3}, {"text": "x", "send_at": "2026-01-01T00:00:00"}]
)
def test_a_damaged_outbox_body_is_not_a_message(body: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the reason is the operator's, not the test's
        SmsMessage.from_json(body)


def test_a_marketing_message_with_no_text_is_refused_not_sent_as_the_instruction_alone() -> None:
    refused = refusal(sms(text="  ", marketing=True))
    assert refused.field == "Message"
    assert "empty" in refused.message
