"""Raw SOAP 1.1 and 1.2 over httpx: envelopes, dispatch, faults and result shapes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from lxml import etree

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.lodge_support import (
    NS,
    NUMBER,
    SAMPLES,
    SOAP11,
    SOAP12,
    attachment_xml,
    call,
    envelope,
    fault,
    fields,
    lodge_document,
    message_xml,
    params_xml,
    post_soap,
    text_result,
    xml_result,
)

SMS = {"Username": "demo", "Pwd": "demo", "PhoneNumber": NUMBER, "PhoneMessage": "Hello"}
BOTH = pytest.mark.parametrize("soap", [SOAP11, SOAP12], ids=["soap11", "soap12"])
SENDER = {SOAP11: "soap:Client", SOAP12: "soap:Sender"}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as http:
        yield http


def count(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


@BOTH
def test_a_call_is_answered_in_an_envelope_of_its_own_version(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", SMS, soap=soap)
    assert response.status_code == 200
    expected_type = "text/xml" if soap == SOAP11 else "application/soap+xml"
    assert response.headers["content-type"] == f"{expected_type}; charset=utf-8"
    root = etree.fromstring(response.content)
    assert root.tag == f"{{{soap}}}Envelope"
    assert root[0][0].tag == f"{{{NS}}}LodgeSMSMessageResponse"
    assert text_result(response, "LodgeSMSMessage") == "Message sent successfully."
    assert sandbox.query("SELECT type, to_number, message FROM messages") == [
        ("SMS", NUMBER, "Hello")
    ]


def test_soap12_takes_the_action_from_the_content_type(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS), soap=SOAP12)
    response = post_soap(
        client,
        sandbox.lodge_url,
        body,
        soap=SOAP12,
        content_type=f'application/soap+xml; charset=utf-8; action="{NS}/LodgeXML"',
    )
    assert response.status_code == 500
    assert fault(response) == (
        "soap:Sender",
        "The SOAPAction names LodgeXML but the body holds LodgeSMSMessage.",
    )


@BOTH
def test_the_soap_action_may_be_left_out(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS), soap=soap)
    response = post_soap(client, sandbox.lodge_url, body, soap=soap)
    assert text_result(response, "LodgeSMSMessage") == "Message sent successfully."


def test_a_soap_action_naming_another_operation_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS))
    response = post_soap(client, sandbox.lodge_url, body, action=f"{NS}/LodgeWAPPush")
    assert response.status_code == 500
    assert fault(response) == (
        "soap:Client",
        "The SOAPAction names LodgeWAPPush but the body holds LodgeSMSMessage.",
    )
    assert count(sandbox) == 0


def test_a_soap_action_from_another_service_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS))
    response = post_soap(client, sandbox.lodge_url, body, action="urn:other/LodgeSMSMessage")
    code, reason = fault(response)
    assert code == "soap:Client"
    assert "'urn:other/LodgeSMSMessage' is not an action of this service" in reason


@BOTH
def test_an_unknown_operation_is_a_fault_naming_the_real_ones(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    response = post_soap(
        client, sandbox.lodge_url, envelope("SendLotsOfSpam", "", soap=soap), soap=soap
    )
    assert response.status_code == 500
    code, reason = fault(response)
    assert code == SENDER[soap]
    assert reason.startswith(
        "Unknown operation 'SendLotsOfSpam'; this service offers LodgeSMSMessage,"
    )


def test_an_operation_in_another_namespace_is_a_fault(
    client: httpx.Client, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(namespace="urn:configured")
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", SMS)
    code, reason = fault(response)
    assert code == "soap:Client"
    assert "its operations are in namespace 'urn:configured'" in reason


def test_a_configured_namespace_is_the_one_served(
    client: httpx.Client, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(namespace="urn:configured")
    body = envelope("LodgeSMSMessage", params_xml(SMS), ns="urn:configured")
    response = post_soap(client, sandbox.lodge_url, body, action="urn:configured/LodgeSMSMessage")
    root = etree.fromstring(response.content)
    assert root.findtext(".//{urn:configured}LodgeSMSMessageResult") == "Message sent successfully."


@pytest.mark.parametrize(
    ("sent", "as_type"), [(SOAP12, SOAP11), (SOAP11, SOAP12)], ids=["12-as-11", "11-as-12"]
)
def test_an_envelope_of_the_other_version_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread, sent: str, as_type: str
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS), soap=sent)
    response = post_soap(client, sandbox.lodge_url, body, soap=as_type)
    code, reason = fault(response)
    assert code == SENDER[as_type]
    assert "envelope was sent as" in reason
    assert count(sandbox) == 0


def test_a_header_that_must_be_understood_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    header = f'<x:Session xmlns:x="urn:x" soap:mustUnderstand="1" xmlns:soap="{SOAP11}"/>'
    body = envelope("LodgeSMSMessage", params_xml(SMS), header=header)
    code, reason = fault(post_soap(client, sandbox.lodge_url, body))
    assert code == "soap:MustUnderstand"
    assert "{urn:x}Session" in reason
    assert count(sandbox) == 0


def test_an_optional_header_is_ignored(client: httpx.Client, sandbox: SandboxThread) -> None:
    body = envelope(
        "LodgeSMSMessage", params_xml(SMS), header='<x:Trace xmlns:x="urn:x">1</x:Trace>'
    )
    assert text_result(post_soap(client, sandbox.lodge_url, body), "LodgeSMSMessage") == (
        "Message sent successfully."
    )


@BOTH
def test_a_wrong_password_gives_the_text_failure(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", {**SMS, "Pwd": "nope"}, soap=soap)
    assert text_result(response, "LodgeSMSMessage") == "Error: invalid username or password"
    assert count(sandbox) == 0


def test_a_refused_value_gives_an_error_text_naming_it(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", {**SMS, "PhoneNumber": "12ab"})
    text = text_result(response, "LodgeSMSMessage")
    assert text.startswith("Error: PhoneNumber must be an international number")


def test_an_xml_operation_fails_with_a_lodge_result(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {**SMS, "Pwd": "nope", "ReplyType": "EMAIL", "ReplyPath": "a@example.com"}
    response = call(client, sandbox.lodge_url, "LodgeSMSMessageWithReplyXML", params)
    result = xml_result(response, "LodgeSMSMessageWithReplyXML")
    assert result.tag == "LodgeResult"  # no namespace: the document is the same on every port
    assert fields(result) == {
        "Result": "1",
        "ErrorMsg": "invalid username or password",
        "MsgID": "",
    }


def test_a_two_way_sms_needs_a_reply_type(client: httpx.Client, sandbox: SandboxThread) -> None:
    response = call(client, sandbox.lodge_url, "LodgeSMSMessageWithReplyXML", SMS)
    values = fields(xml_result(response, "LodgeSMSMessageWithReplyXML"))
    assert values["Result"] == "2"
    assert values["ErrorMsg"].startswith("ReplyType is required")


def test_message_status_of_an_unknown_id_fails(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {"Username": "demo", "Pwd": "demo", "MsgID": "20240101000000000001"}
    status = xml_result(
        call(client, sandbox.lodge_url, "GetMessageStatusXML", params), "GetMessageStatusXML"
    )
    assert status.tag == "MessageStatus"
    values = fields(status)
    assert values["Result"] == "3"
    assert values["ErrorMsg"] == "No message has MsgID '20240101000000000001'."
    assert values["PhoneNumber"] == values["Status"] == ""


def test_message_status_of_another_accounts_message_reads_as_unknown(
    client: httpx.Client, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "secret")])
    params = {**SMS, "ReplyType": "WWW", "ReplyPath": "x"}
    lodged = xml_result(
        call(client, sandbox.lodge_url, "LodgeSMSMessageWithReplyXML", params),
        "LodgeSMSMessageWithReplyXML",
    )
    msg_id = fields(lodged)["MsgID"]
    asked = {"Username": "other", "Pwd": "secret", "MsgID": msg_id}
    status = xml_result(
        call(client, sandbox.lodge_url, "GetMessageStatusXML", asked), "GetMessageStatusXML"
    )
    assert fields(status)["Result"] == "3"
    assert fields(status)["PhoneNumber"] == ""


def test_message_status_with_a_wrong_password_fails(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {"Username": "demo", "Pwd": "x", "MsgID": "1"}
    status = xml_result(
        call(client, sandbox.lodge_url, "GetMessageStatusXML", params), "GetMessageStatusXML"
    )
    assert fields(status)["Result"] == "1"


def doc_call(client: httpx.Client, url: str, operation: str, document: str) -> etree._Element:
    """Call a document operation with `document` inline in docXML (none when empty)."""
    inner = f"<docXML>{document}</docXML>" if document else ""
    response = post_soap(client, url, envelope(operation, inner), action=f"{NS}/{operation}")
    return xml_result(response, operation)


def test_document_messages_succeed_or_fail_on_their_own(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    messages = (
        message_xml("SMS", Text="first")
        + message_xml("SMS", number="not-a-number", Text="second")
        + message_xml("WAP", Subject="App", Text="https://example.com/w")
    )
    results = doc_call(client, sandbox.lodge_url, "LodgeXML", lodge_document(messages))
    assert results.tag == "LodgeResults"
    values = [fields(r) for r in results]
    assert [v["Result"] for v in values] == ["0", "2", "0"]
    assert values[1]["ErrorMsg"].startswith("Message 2: PhoneNumber must be")
    assert values[1]["MsgID"] == ""
    stored = sandbox.query("SELECT message_id, type FROM messages ORDER BY id")
    assert stored == [(values[0]["MsgID"], "SMS"), (values[2]["MsgID"], "WAP")]


def test_a_document_with_bad_credentials_fails_as_a_whole(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = lodge_document(message_xml("SMS", Text="x") * 2, credentials=("demo", "wrong"))
    results = doc_call(client, sandbox.lodge_url, "LodgeXML", document)
    assert [fields(r) for r in results] == [
        {"Result": "1", "ErrorMsg": "invalid username or password", "MsgID": ""}
    ]
    assert count(sandbox) == 0


def test_a_document_without_messages_fails(client: httpx.Client, sandbox: SandboxThread) -> None:
    results = doc_call(client, sandbox.lodge_url, "LodgeXML", lodge_document(""))
    assert fields(results[0])["ErrorMsg"] == "docXML holds no <Messages><Message> elements."


def test_a_missing_document_fails(client: httpx.Client, sandbox: SandboxThread) -> None:
    results = doc_call(client, sandbox.lodge_url, "LodgeXML", "")
    assert fields(results[0])["Result"] == "2"
    assert fields(results[0])["ErrorMsg"].startswith("docXML is required")


def test_a_document_may_also_arrive_as_escaped_text(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = lodge_document(message_xml("SMS", Text="escaped"))
    response = call(client, sandbox.lodge_url, "LodgeXML", {"docXML": document})
    assert [fields(r)["Result"] for r in xml_result(response, "LodgeXML")] == ["0"]
    assert sandbox.query("SELECT message FROM messages") == [("escaped",)]


def test_the_multi_mms_document_operations_refuse_other_types(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    messages = message_xml("SMS", Text="no") + message_xml(
        "MMS", files=attachment_xml("a.png", SAMPLES["png"])
    )
    results = doc_call(
        client, sandbox.lodge_url, "LodgeMultiMMSMessageXMLMSGID", lodge_document(messages)
    )
    values = [fields(r) for r in results]
    assert values[0]["Result"] == "2"
    assert "Type 'SMS' cannot be lodged by this operation; use MMS" in values[0]["ErrorMsg"]
    assert values[1]["Result"] == "0"
    assert values[1]["MsgID"]


def test_multi_mms_xml_results_carry_no_msgid(client: httpx.Client, sandbox: SandboxThread) -> None:
    messages = message_xml("MMS", files=attachment_xml("a.png", SAMPLES["png"]))
    results = doc_call(
        client, sandbox.lodge_url, "LodgeMultiMMSMessageXML", lodge_document(messages)
    )
    assert [fields(r) for r in results] == [{"Result": "0", "ErrorMsg": ""}]


def test_a_message_without_a_type_is_an_sms_in_lodge_xml(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = lodge_document(
        f"<Message><PhoneNumber>{NUMBER}</PhoneNumber><Text>t</Text></Message>"
    )
    doc_call(client, sandbox.lodge_url, "LodgeXML", document)
    assert sandbox.query("SELECT type FROM messages") == [("SMS",)]


def test_unknown_parameter_elements_are_ignored(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", {**SMS, "Priority": "high"})
    assert text_result(response, "LodgeSMSMessage") == "Message sent successfully."


def test_a_repeated_parameter_element_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    inner = params_xml(SMS) + f"<PhoneNumber>{NUMBER}</PhoneNumber>"
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeSMSMessage", inner))
    assert fault(response) == ("soap:Client", "Parameter PhoneNumber is given more than once.")


def test_a_parameter_outside_the_service_namespace_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    body = (
        f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body><t:LodgeSMSMessage xmlns:t="{NS}">'
        "<Username>demo</Username></t:LodgeSMSMessage></soap:Body></soap:Envelope>"
    ).encode()
    code, reason = fault(post_soap(client, sandbox.lodge_url, body))
    assert code == "soap:Client"
    assert reason.startswith("Parameter element 'Username' must be in the service namespace")


def test_a_string_parameter_holding_elements_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    inner = params_xml({k: v for k, v in SMS.items() if k != "PhoneMessage"})
    inner += "<PhoneMessage><b>bold</b></PhoneMessage>"
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeSMSMessage", inner))
    assert fault(response) == ("soap:Client", "PhoneMessage must hold text, not XML elements.")


def test_a_nil_parameter_reads_as_missing(client: httpx.Client, sandbox: SandboxThread) -> None:
    inner = params_xml({k: v for k, v in SMS.items() if k != "PhoneMessage"})
    inner += '<PhoneMessage xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>'
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeSMSMessage", inner))
    assert text_result(response, "LodgeSMSMessage") == "Error: PhoneMessage is required."
