"""Hostile input: every one gets a clear refusal, quickly, never a traceback or an expansion."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import etree

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.lodge_support import (
    BILLION_LAUGHS_DTD,
    NS,
    NUMBER,
    SOAP11,
    SOAP12,
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


def sms_with_text(text_xml: str, soap: str = SOAP11) -> str:
    inner = params_xml({k: v for k, v in SMS.items() if k != "PhoneMessage"})
    return envelope(
        "LodgeSMSMessage", inner + f"<PhoneMessage>{text_xml}</PhoneMessage>", soap=soap
    ).decode()


@BOTH
def test_malformed_xml_is_a_fault_saying_where(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS), soap=soap).replace(b"</Pwd>", b"</Pw>")
    response = post_soap(client, sandbox.lodge_url, body, soap=soap)
    assert response.status_code == 500
    code, reason = fault(response)
    assert code == SENDER[soap]
    assert reason.startswith(
        "The SOAP envelope is not well-formed XML: Opening and ending tag mismatch"
    )
    assert "(line 1, column" in reason


def test_an_empty_body_is_a_fault(client: httpx.Client, sandbox: SandboxThread) -> None:
    code, reason = fault(post_soap(client, sandbox.lodge_url, b""))
    assert code == "soap:Client"
    assert reason.startswith("The SOAP envelope is not well-formed XML: Document is empty")


@BOTH
def test_billion_laughs_is_refused_quickly_without_expansion(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    body = sms_with_text("&lol9;", soap)
    body = body.replace("?>", "?>" + BILLION_LAUGHS_DTD, 1).encode()
    started = time.perf_counter()
    response = post_soap(client, sandbox.lodge_url, body, soap=soap)
    assert time.perf_counter() - started < 1.0
    assert response.status_code == 500
    assert fault(response) == (
        SENDER[soap],
        "The SOAP envelope contains a DTD or entity declaration; they are not accepted.",
    )
    assert len(response.content) < 1000
    assert count(sandbox) == 0


def test_an_external_file_entity_is_refused_and_nothing_leaks(
    client: httpx.Client, sandbox: SandboxThread, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    dtd = f'<!DOCTYPE x [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    body = sms_with_text("&xxe;").replace("?>", "?>" + dtd, 1).encode()
    response = post_soap(client, sandbox.lodge_url, body)
    assert response.status_code == 500
    assert "DTD or entity declaration" in fault(response)[1]
    assert b"TOP-SECRET" not in response.content
    assert count(sandbox) == 0


def test_an_undeclared_entity_is_a_fault_not_an_empty_value(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = post_soap(client, sandbox.lodge_url, sms_with_text("&nbsp;").encode())
    assert "Entity 'nbsp' not defined" in fault(response)[1]
    assert count(sandbox) == 0


def test_a_dtd_inside_a_string_document_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = BILLION_LAUGHS_DTD + lodge_document(message_xml("SMS", Text="&lol9;"))
    response = call(client, sandbox.lodge_url, "LodgeXMLbyArg", {"strdocXML": document})
    values = [fields(r) for r in xml_result(response, "LodgeXMLbyArg")]
    assert values == [
        {
            "Result": "2",
            "ErrorMsg": "strdocXML contains a DTD or entity declaration; they are not accepted.",
            "MsgID": "",
        }
    ]
    assert count(sandbox) == 0


def test_a_dtd_in_a_string_document_over_http_get_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = BILLION_LAUGHS_DTD + lodge_document(message_xml("SMS", Text="&lol9;"))
    response = client.get(f"{sandbox.lodge_url}/LodgeXMLbyArg", params={"strdocXML": document})
    assert response.status_code == 200
    assert "DTD or entity declaration" in fields(etree.fromstring(response.content)[0])["ErrorMsg"]
    assert count(sandbox) == 0


def test_a_string_document_that_is_not_xml_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = call(client, sandbox.lodge_url, "LodgeXMLbyArg", {"strdocXML": "<Lodge><oops>"})
    error = fields(xml_result(response, "LodgeXMLbyArg")[0])["ErrorMsg"]
    assert error.startswith("strdocXML is not well-formed XML:")


@pytest.mark.parametrize("content_type", ["application/json", "text/plain; charset=utf-8"])
def test_a_wrong_content_type_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread, content_type: str
) -> None:
    body = envelope("LodgeSMSMessage", params_xml(SMS))
    response = post_soap(client, sandbox.lodge_url, body, content_type=content_type)
    assert response.status_code == 500
    code, reason = fault(response)
    assert code == "soap:Client"
    assert "is not a SOAP content type; use text/xml (SOAP 1.1) or application/soap+xml" in reason
    assert count(sandbox) == 0


def test_a_form_posted_to_the_soap_address_is_pointed_to_the_http_port(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = client.post(sandbox.lodge_url, data=SMS)
    assert fault(response)[1].endswith(
        "Forms for the HTTP POST port go to /dotnet/Lodge.asmx/<Operation>."
    )


def test_invalid_base64_in_a_base64binary_element_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    inner = params_xml(
        {"Username": "demo", "Pwd": "demo", "FaxNumber": NUMBER, "FileName": "a.pdf"}
    )
    inner += "<objFile>not*base64!</objFile>"
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeFAXMessageXML", inner))
    assert response.status_code == 500
    assert fault(response) == ("soap:Client", "objFile is not valid base64Binary.")


def test_invalid_base64_in_a_string_parameter_is_the_operations_failure(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {
        "Username": "demo",
        "Pwd": "demo",
        "PhoneNumber": NUMBER,
        "FileName": "a.png",
        "MMSContentBase64": "###",
    }
    response = call(client, sandbox.lodge_url, "LodgeMMSMessage", params)
    assert text_result(response, "LodgeMMSMessage") == (
        "Error: MMSContentBase64 is not valid base64."
    )


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_oversized_soap_body_is_refused_with_413(
    client: httpx.Client, sandbox_factory: SandboxFactory, chunked: bool
) -> None:
    sandbox = sandbox_factory(lodge_body_limit=64 * 1024)
    body = sms_with_text("x" * 70_000).encode()
    content: bytes | Iterator[bytes] = body
    if chunked:
        content = iter([body[:30_000], body[30_000:]])
    response = client.post(
        sandbox.lodge_url, content=content, headers={"Content-Type": "text/xml; charset=utf-8"}
    )
    assert response.status_code == 413
    assert fault(response) == (
        "soap:Client",
        "The request body is larger than 65,536 bytes; it was not read.",
    )
    assert count(sandbox) == 0


def test_an_oversized_form_is_refused_with_413(
    client: httpx.Client, sandbox_factory: SandboxFactory
) -> None:
    sandbox = sandbox_factory(lodge_body_limit=64 * 1024)
    response = client.post(
        f"{sandbox.lodge_url}/LodgeSMSMessage", data={**SMS, "PhoneMessage": "x" * 70_000}
    )
    assert response.status_code == 413
    assert response.text == "The request body is larger than 65,536 bytes."


def test_a_latin1_soap_body_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    body = sms_with_text("café").encode("latin-1")
    code, reason = fault(post_soap(client, sandbox.lodge_url, body))
    assert code == "soap:Client"
    assert reason.startswith("The SOAP envelope is not UTF-8 text (invalid byte at offset")


def test_a_declared_non_utf8_encoding_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    body = sms_with_text("plain").replace('encoding="utf-8"', 'encoding="ISO-8859-1"').encode()
    assert fault(post_soap(client, sandbox.lodge_url, body))[1] == (
        "The SOAP envelope declares encoding 'ISO-8859-1'; only UTF-8 is accepted."
    )


def test_a_utf16_body_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    body = sms_with_text("plain").replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")
    assert "not UTF-8 text" in fault(post_soap(client, sandbox.lodge_url, body))[1]


def test_a_non_utf8_charset_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    body = sms_with_text("plain").encode()
    response = post_soap(
        client, sandbox.lodge_url, body, content_type="text/xml; charset=iso-8859-1"
    )
    assert fault(response)[1] == "charset 'iso-8859-1' is not accepted; send UTF-8."


def test_a_non_utf8_form_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    response = client.post(
        f"{sandbox.lodge_url}/LodgeSMSMessage",
        content="PhoneMessage=café".encode("latin-1"),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 500
    assert response.text.startswith("The request body is not UTF-8")


def test_percent_encoded_non_utf8_in_a_query_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = client.get(f"{sandbox.lodge_url}/LodgeSMSMessage?PhoneMessage=caf%E9")
    assert response.status_code == 500
    assert response.text == "The query string has percent-encoded bytes that are not UTF-8."


def test_an_absurd_number_of_query_parameters_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    query = "&".join(f"p{i}=1" for i in range(150))
    response = client.get(f"{sandbox.lodge_url}/LodgeSMSMessage?{query}")
    assert response.status_code == 500
    assert response.text == "The query string has too many parameters; at most 100 are accepted."


def test_an_absurd_number_of_parameter_elements_is_a_fault(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    inner = params_xml(SMS) + "<Extra>1</Extra>" * 150
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeSMSMessage", inner))
    assert fault(response)[1] == (
        "LodgeSMSMessage was sent 154 parameter elements; at most 100 are accepted."
    )


def test_an_absurd_number_of_elements_is_refused_early(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = lodge_document("<x/>" * 200_000)
    body = envelope("LodgeXML", f"<docXML>{document}</docXML>")
    response = post_soap(client, sandbox.lodge_url, body)
    assert fault(response)[1] == (
        "The SOAP envelope contains more than 5000 XML elements; that is not accepted."
    )


def test_absurdly_deep_nesting_is_a_fault(client: httpx.Client, sandbox: SandboxThread) -> None:
    body = envelope("LodgeXML", "<docXML>" + "<a>" * 400 + "</a>" * 400 + "</docXML>")
    reason = fault(post_soap(client, sandbox.lodge_url, body))[1]
    assert "Excessive depth in document" in reason


def test_too_many_messages_in_one_document_are_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    document = lodge_document(message_xml("SMS", Text="x") * 101)
    response = post_soap(
        client, sandbox.lodge_url, envelope("LodgeXML", f"<docXML>{document}</docXML>")
    )
    values = fields(xml_result(response, "LodgeXML")[0])
    assert values["ErrorMsg"] == "docXML holds 101 messages; at most 100 are allowed."
    assert count(sandbox) == 0


def test_control_characters_never_break_the_xml_answer(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = client.get(
        f"{sandbox.lodge_url}/GetMessageStatusXML",
        params={"Username": "demo", "Pwd": "demo", "MsgID": "\x01\x02id"},
    )
    assert response.status_code == 200
    status = etree.fromstring(response.content)
    assert fields(status)["MsgID"] == "\ufffd\ufffdid"


def test_a_soap_call_to_the_http_address_is_an_error(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = post_soap(
        client, f"{sandbox.lodge_url}/LodgeSMSMessage", envelope("LodgeSMSMessage", params_xml(SMS))
    )
    assert response.status_code == 500
    assert "application/x-www-form-urlencoded" in response.text
    assert count(sandbox) == 0


def test_the_service_still_answers_after_hostile_input(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    post_soap(
        client,
        sandbox.lodge_url,
        sms_with_text("&lol9;").replace("?>", "?>" + BILLION_LAUGHS_DTD, 1).encode(),
    )
    post_soap(client, sandbox.lodge_url, b"\xff\xfe garbage")
    response = call(client, sandbox.lodge_url, "LodgeSMSMessage", SMS)
    assert text_result(response, "LodgeSMSMessage") == "Message sent successfully."
    assert NS in response.text
