"""Lodge answers into typed results, refusals into the error an operator can act on."""

from __future__ import annotations

from datetime import datetime

import pytest
from lxml import etree

from gwdesk.domain.models import LodgeText
from gwdesk.gateway.errors import (
    AuthenticationError,
    GatewayError,
    NotFoundError,
    ProtocolError,
    ValidationError,
)
from gwdesk.gateway.lodge import catalog as ops
from gwdesk.gateway.lodge import results


def xml(text: str) -> etree._Element:
    return etree.fromstring(text.encode())


def test_the_success_sentence_is_a_lodge_text() -> None:
    assert results.text_result(" Message sent successfully.\n", ops.LODGE_SMS) == LodgeText(
        operation="LodgeSMSMessage", text="Message sent successfully."
    )


def test_an_error_about_credentials_is_an_authentication_error() -> None:
    with pytest.raises(AuthenticationError, match="invalid username or password"):
        results.text_result("Error: invalid username or password", ops.LODGE_SMS)


def test_an_error_naming_a_parameter_is_a_validation_error_for_that_field() -> None:
    with pytest.raises(ValidationError) as caught:
        results.text_result("Error: PhoneNumber must be a number.", ops.LODGE_SMS)
    assert caught.value.field == "PhoneNumber"
    assert "PhoneNumber must be a number." in caught.value.message


def test_any_other_text_is_a_failure_that_shows_it() -> None:
    with pytest.raises(GatewayError) as caught:
        results.text_result("Queued for later", ops.LODGE_WAP_PUSH)
    assert type(caught.value) is GatewayError
    assert "'Queued for later'" in caught.value.message


@pytest.mark.parametrize(
    ("code", "error"),
    [("1", AuthenticationError), ("2", ValidationError), ("3", NotFoundError), ("9", GatewayError)],
)
def test_each_result_code_is_its_error(code: str, error: type[GatewayError]) -> None:
    answer = xml(f"<LodgeResult><Result>{code}</Result><ErrorMsg>why</ErrorMsg></LodgeResult>")
    with pytest.raises(error, match="why"):
        results.result(answer, ops.LODGE_FAX_XML)


def test_a_lodge_result_keeps_fields_it_does_not_know() -> None:
    answer = xml(
        "<LodgeResult><Result>0</Result><ErrorMsg/><MsgID>42</MsgID><Cost>0.1</Cost></LodgeResult>"
    )
    found = results.result(answer, ops.LODGE_SMS_WITH_REPLY_XML)
    assert (found.ok, found.msg_id) == (True, "42")
    assert found.model_extra == {"Cost": "0.1"}


def test_a_whole_document_failure_raises_but_a_per_message_one_is_an_outcome() -> None:
    whole = xml(
        "<LodgeResults><LodgeResult><Result>2</Result><ErrorMsg>docXML holds no "
        "messages.</ErrorMsg></LodgeResult></LodgeResults>"
    )
    with pytest.raises(ValidationError):
        results.results(whole, ops.LODGE_XML)
    one = xml(
        "<LodgeResults><LodgeResult><Result>2</Result><ErrorMsg>Message 1: Text is "
        "required.</ErrorMsg><MsgID/></LodgeResult></LodgeResults>"
    )
    outcome = results.results(one, ops.LODGE_XML)
    assert outcome.lodged == 0
    assert outcome.failed[0][0] == 1


def test_a_status_reads_its_times_and_keeps_an_unknown_status_verbatim() -> None:
    answer = xml(
        "<MessageStatus><Result>0</Result><ErrorMsg/><MsgID>7</MsgID><PhoneNumber>614"
        "</PhoneNumber><Status>QUEUED_AT_CARRIER</Status><DateLodged>2025-01-31T09:30:00+11:00"
        "</DateLodged><DateSent>31/01/2025 9:30</DateSent></MessageStatus>"
    )
    status = results.status(answer, ops.GET_MESSAGE_STATUS_XML)
    assert status.status == "QUEUED_AT_CARRIER"
    assert isinstance(status.date_lodged, datetime)
    assert status.date_lodged.isoformat() == "2025-01-31T09:30:00+11:00"
    assert status.date_sent == "31/01/2025 9:30"


def test_an_xml_result_sent_as_escaped_text_is_read_with_the_same_hardening() -> None:
    plain = "<LodgeResult><Result>0</Result><ErrorMsg/><MsgID>1</MsgID></LodgeResult>"
    assert results.result_element(plain, ops.LODGE_XML).tag == "LodgeResult"
    laughs = '<!DOCTYPE r [<!ENTITY a "aaaa">]><LodgeResult>&a;</LodgeResult>'
    with pytest.raises(ProtocolError, match="DTD"):
        results.result_element(laughs, ops.LODGE_XML)


def test_no_result_at_all_is_a_protocol_error_that_may_have_lodged() -> None:
    with pytest.raises(ProtocolError) as caught:
        results.result_element(None, ops.LODGE_XML)
    assert caught.value.maybe_processed
