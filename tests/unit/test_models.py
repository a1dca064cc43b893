"""Wire models: tolerant of what the real gateway may add, strict about times and secrets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from gwdesk.domain.models import (
    ACTIVE,
    Balance,
    LogListing,
    LogRecord,
    Message,
    Secret,
    SendEnvelope,
    StatusList,
    Token,
)

RECORD = {
    "messageId": "20151224130000812923",
    "status": "ACTIVE",
    "dateSent": "2015-12-24T13:00:00.812+11:00",
    "dateLodged": "2015-12-24T13:00:00.812+11:00",
    "deliveryReceiptReceived": None,
    "sender": "demo",
    "costcentre": "",
    "from": "61400000000",
    "to": "61412345678",
    "subject": None,
    "message": "Hello",
    "parts": 1,
    "type": "SMS",
    "senderid": 1,
    "senderserviceid": 1,
    "replytype": "",
    "replypath": "",
    "trackingId": "0b6c1e8e-7a6e-4f55-9d7b-1a8f0f7f2c11",
    "batchTrackingId": None,
}


def test_a_log_record_reads_every_field_of_the_spec() -> None:
    record = LogRecord.model_validate(RECORD)
    assert record.from_ == "61400000000"
    assert record.to == "61412345678"
    assert record.date_lodged == datetime(2015, 12, 24, 2, 0, 0, 812000, tzinfo=UTC)
    assert record.tracking_id == RECORD["trackingId"]
    assert record.parts == 1
    assert record.model_dump(by_alias=True)["from"] == "61400000000"


def test_unknown_fields_and_statuses_pass_through() -> None:
    record = LogRecord.model_validate({**RECORD, "status": "QUEUED", "carrier": "X"})
    assert record.status == "QUEUED"
    assert record.model_extra == {"carrier": "X"}
    message = Message.model_validate(
        {"PhoneNumber": "1", "MessageId": "2", "Status": "NEW", "Route": 7}
    )
    assert message.status == "NEW"
    assert message.status != ACTIVE


def test_a_time_without_offset_is_read_in_the_accounts_zone() -> None:
    naive = {**RECORD, "dateLodged": "2015-12-24T13:00:00"}
    sydney = LogRecord.model_validate(naive, context={"zone": ZoneInfo("Australia/Sydney")})
    utc = LogRecord.model_validate(naive)
    assert sydney.date_lodged.utcoffset() == timedelta(hours=11)
    assert utc.date_lodged.tzinfo is UTC


def test_a_delivery_receipt_is_a_time_when_it_reads_as_one() -> None:
    timed = LogRecord.model_validate({**RECORD, "deliveryReceiptReceived": "2015-12-24T13:00:05Z"})
    flagged = LogRecord.model_validate({**RECORD, "deliveryReceiptReceived": True})
    assert timed.delivery_receipt_received == datetime(2015, 12, 24, 13, 0, 5, tzinfo=UTC)
    assert flagged.delivery_receipt_received is True


def test_a_record_without_its_id_is_refused() -> None:
    with pytest.raises(ValidationError):
        LogRecord.model_validate({k: v for k, v in RECORD.items() if k != "messageId"})


def test_send_envelopes_hold_a_message_or_a_batch_code() -> None:
    single = SendEnvelope.model_validate(
        {
            "Data": {
                "Message": {"PhoneNumber": "61412345678", "MessageId": "1", "Status": "ACTIVE"}
            },
            "Status": "Success",
            "StatusCode": 200,
        }
    )
    batch = SendEnvelope.model_validate(
        {"Data": {"BatchCode": "ABC"}, "Status": "Success", "StatusCode": 200}
    )
    assert single.data.message is not None
    assert single.data.batch_code is None
    assert batch.data.batch_code == "ABC"


def test_listings_statuses_and_balances() -> None:
    listing = LogListing.model_validate({"totalRecords": 1, "messages": [RECORD]})
    statuses = StatusList.model_validate(
        [{"PhoneNumber": "1", "MessageId": "2", "Status": "ACTIVE"}]
    )
    balance = Balance.model_validate({"Balance": 12.34, "Currency": "AUD", "MessageCredits": None})
    assert listing.messages[0].message_id == RECORD["messageId"]
    assert statuses.root[0].message_id == "2"
    assert str(balance.balance) == "12.34"


def test_a_token_never_shows_its_value() -> None:
    token = Token.model_validate(
        {"access_token": "tok-123", "token_type": "bearer", "expires_in": 3599, ".issued": "x"}
    )
    assert token.access_token.reveal() == "tok-123"
    assert token.issued == "x"
    for shown in (repr(token), str(token), token.model_dump_json(), str(token.model_dump())):
        assert "tok-123" not in shown


def test_a_secret_compares_by_value_and_refuses_pickling() -> None:
    import pickle

    assert Secret("a") == Secret("a")
    assert Secret("a") != Secret("b")
    with pytest.raises(TypeError):
        pickle.dumps(Secret("a"))
