"""Hostile answers from a tiny server of our own: each is a clear error, quickly, never a hang.

The server answers the WSDL properly (unless the WSDL itself is the hostile part)
and every operation with the hostile body, on all four ports.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.errors import AmbiguousSendError, ProtocolError, ValidationError
from gwdesk.gateway.retry import RetryPolicy
from tests.contract.lodge_client_support import (
    NAMESPACE,
    PORTS,
    SOAP_PORTS,
    Answer,
    HostileServer,
    hostile_service,
    wsdl_text,
)

#: One try, so each case measures one hostile answer.
ONCE = RetryPolicy(attempts=1, send_attempts=1)
MB = 1024 * 1024
LAUGHS = b"".join(
    b'<!ENTITY lol%d "%s">' % (n, b"".join(b"&lol%d;" % (n - 1) for _ in range(10)))
    for n in range(1, 10)
)
BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">' + LAUGHS + b"]>"
    b"<MessageStatus><Result>0</Result><ErrorMsg>&lol9;</ErrorMsg></MessageStatus>"
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    b"<MessageStatus><Result>0</Result><ErrorMsg>&e;</ErrorMsg></MessageStatus>"
)
HTML = b"<!DOCTYPE html><html><head><title>502</title></head><body>Bad Gateway</body></html>"
ENVELOPES = {
    "soap11": b"http://schemas.xmlsoap.org/soap/envelope/",
    "soap12": b"http://www.w3.org/2003/05/soap-envelope",
}

#: Answers that are broken whatever port asked.
RAW_ANSWERS = {
    "billion laughs": Answer(BILLION_LAUGHS),
    "external entity": Answer(EXTERNAL_ENTITY),
    "50 MB body with its length": Answer(b"<a>", stream_bytes=50 * MB),
    "50 MB body without a length": Answer(b"<a>", stream_bytes=50 * MB, declare_length=False),
    "HTML page": Answer(HTML, content_type="text/html"),
    "HTML page sent as XML": Answer(HTML),
    "invalid XML": Answer(b"<MessageStatus><Result>0</Res"),
    "bytes that are not UTF-8": Answer(
        b'<?xml version="1.0" encoding="utf-8"?><MessageStatus><ErrorMsg>\xff\xfe'
        b"</ErrorMsg></MessageStatus>"
    ),
    "an empty body": Answer(b""),
}
#: Result documents that are wrong in themselves; SOAP ports get them in a proper envelope.
DOCUMENTS = {
    "an unexpected document": b"<Unexpected><Result>0</Result></Unexpected>",
    "a Result that is not a number": (
        b"<MessageStatus><Result>zero</Result><ErrorMsg/></MessageStatus>"
    ),
    "a result element with nothing in it": b"",
}


def answer_for(case: str, port: LodgePort) -> Answer:
    if case in RAW_ANSWERS:
        return RAW_ANSWERS[case]
    document = DOCUMENTS[case]
    if port not in ENVELOPES:
        return Answer(document)
    return Answer(
        b'<soap:Envelope xmlns:soap="' + ENVELOPES[port] + b'"><soap:Body>'
        b'<GetMessageStatusXMLResponse xmlns="' + NAMESPACE.encode() + b'">'
        b"<GetMessageStatusXMLResult>" + document + b"</GetMessageStatusXMLResult>"
        b"</GetMessageStatusXMLResponse></soap:Body></soap:Envelope>"
    )


@pytest.fixture
def server() -> Iterator[HostileServer]:
    running = HostileServer(wsdl=Answer(wsdl_text("http://127.0.0.1:9/unused"))).start()
    yield running
    running.stop()


@pytest.mark.parametrize("port", PORTS)
@pytest.mark.parametrize("case", [*RAW_ANSWERS, *DOCUMENTS])
async def test_a_hostile_answer_to_a_status_query_is_a_protocol_error(
    server: HostileServer, port: LodgePort, case: str
) -> None:
    server.answer = answer_for(case, port)
    started = time.monotonic()
    async with hostile_service(server, port, retry=ONCE) as service:
        with pytest.raises(ProtocolError) as caught:
            await asyncio.wait_for(service.lodge.get_message_status_xml("1"), 10)
    assert time.monotonic() - started < 3
    assert "Traceback" not in caught.value.message
    assert len(caught.value.message) < 400
    assert server.operation_requests()


@pytest.mark.parametrize("port", PORTS)
@pytest.mark.parametrize("case", ["HTML page", "invalid XML", "50 MB body without a length"])
async def test_a_hostile_answer_to_a_send_is_ambiguous_and_says_why(
    server: HostileServer, port: LodgePort, case: str
) -> None:
    server.answer = RAW_ANSWERS[case]
    async with hostile_service(server, port) as service:
        with pytest.raises(AmbiguousSendError) as caught:
            await asyncio.wait_for(service.lodge.lodge_sms("0412345678", "x"), 10)
    assert isinstance(caught.value.__cause__, ProtocolError)
    assert "may or may not have lodged" in caught.value.message
    assert len(server.operation_requests()) == 1  # never resent


async def test_a_proxy_page_with_503_is_retried_as_not_lodged(server: HostileServer) -> None:
    server.answer = Answer(HTML, status=503, content_type="text/html")
    async with hostile_service(server, "http_post") as service:
        with pytest.raises(ProtocolError) as caught:
            await service.lodge.lodge_sms("0412345678", "x")
    assert not caught.value.maybe_processed
    assert len(server.operation_requests()) == 4


HOSTILE_WSDLS = {
    "billion laughs": Answer(BILLION_LAUGHS),
    "50 MB": Answer(b"<a>", stream_bytes=50 * MB),
    "HTML page": Answer(HTML, content_type="text/html"),
    "invalid XML": Answer(b"<wsdl:definitions xmlns:wsdl='http://schemas.xmlsoap.org/wsdl/'"),
    "not a WSDL": Answer(b"<Lodge/>"),
    "a WSDL without the SOAP 1.2 binding": Answer(
        wsdl_text("http://127.0.0.1:9/").replace(b'name="LodgeSoap12"', b'name="Other"')
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_WSDLS))
async def test_a_hostile_wsdl_is_a_protocol_error_before_any_operation(
    server: HostileServer, case: str
) -> None:
    server.wsdl = HOSTILE_WSDLS[case]
    started = time.monotonic()
    async with hostile_service(server, "soap12", retry=ONCE) as service:
        with pytest.raises(ProtocolError):
            await asyncio.wait_for(service.lodge.lodge_sms("0412345678", "x"), 10)
    assert time.monotonic() - started < 3
    assert server.operation_requests() == []


async def test_a_wsdl_that_imports_another_document_is_refused_without_fetching_it(
    server: HostileServer,
) -> None:
    evil = server.url.replace("/dotnet/Lodge.asmx", "/evil.xsd")
    importing = wsdl_text("http://127.0.0.1:9/").replace(
        b"<wsdl:types>",
        b'<wsdl:types><s:schema><s:import namespace="urn:evil" schemaLocation="'
        + evil.encode()
        + b'" /></s:schema>',
        1,
    )
    server.wsdl = Answer(importing)
    async with hostile_service(server, "soap11", retry=ONCE) as service:
        with pytest.raises(ProtocolError):
            await service.lodge.lodge_sms("0412345678", "x")
    assert [path for _, path, _ in server.requests] == ["/dotnet/Lodge.asmx?WSDL"]


@pytest.mark.parametrize("port", SOAP_PORTS)
async def test_a_soap_fault_for_a_malformed_request_is_a_validation_error(
    server: HostileServer, port: LodgePort
) -> None:
    fault = (
        b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
        b"<soap:Fault><faultcode>soap:Client</faultcode><faultstring>Bad envelope"
        b"</faultstring></soap:Fault></soap:Body></soap:Envelope>"
    )
    if port == "soap12":
        fault = (
            b'<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>'
            b"<soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value></soap:Code>"
            b'<soap:Reason><soap:Text xml:lang="en">Bad envelope</soap:Text></soap:Reason>'
            b"</soap:Fault></soap:Body></soap:Envelope>"
        )
    server.answer = Answer(fault, status=500)
    async with hostile_service(server, port) as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_sms("0412345678", "x")
    assert "Bad envelope" in caught.value.message
    assert not caught.value.maybe_processed
    assert len(server.operation_requests()) == 1
