"""`LodgeSMSMessageWithReply2`: `LodgeSMSMessageWithReply` under its own name, on all four ports.

A deployed public client calls it with a form POST (ReplyType=HEADER, ReplyPath a
mobile number); the real service offers it. Each answer is compared with the
sibling's where the point is "the same as the sibling", and with the text expected
too, so the two cannot agree on a wrong answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import zeep
from lxml import etree

from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.lodge_support import (
    BILLION_LAUGHS_DTD,
    NS,
    NUMBER,
    SOAP11,
    SOAP12,
    envelope,
    fault,
    params_xml,
    post_soap,
    result_element,
)

TWIN = "LodgeSMSMessageWithReply2"
SIBLING = "LodgeSMSMessageWithReply"
OK = "Message sent successfully."
REPLY_TO = "+61498765432"
"""The mobile number replies show as their sender (ReplyType HEADER)."""
FORM = {
    "Username": "demo",
    "Pwd": "demo",
    "PhoneNumber": NUMBER,
    "PhoneMessage": "Reply YES to confirm",
    "ReplyType": "HEADER",
    "ReplyPath": REPLY_TO,
}
SOAP_PORTS = {"soap11": SOAP11, "soap12": SOAP12}
PORTS = pytest.mark.parametrize("port", ["soap11", "soap12", "get", "post"])
HTTP_PORTS = pytest.mark.parametrize("port", ["get", "post"])
BINDINGS = ("LodgeSoap", "LodgeSoap12", "LodgeHttpGet", "LodgeHttpPost")

WSDL = "http://schemas.xmlsoap.org/wsdl/"
XSD = "http://www.w3.org/2001/XMLSchema"
SOAP_BINDING = "http://schemas.xmlsoap.org/wsdl/soap/"
SOAP12_BINDING = "http://schemas.xmlsoap.org/wsdl/soap12/"
HTTP_BINDING = "http://schemas.xmlsoap.org/wsdl/http/"


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as http:
        yield http


def answer(
    client: httpx.Client, sandbox: SandboxThread, port: str, operation: str, params: dict[str, str]
) -> tuple[int, str]:
    """(HTTP status, the result text, or the body of an error) of one call on `port`."""
    if port in SOAP_PORTS:
        soap = SOAP_PORTS[port]
        body = envelope(operation, params_xml(params), soap=soap)
        response = post_soap(client, sandbox.lodge_url, body, soap=soap, action=f"{NS}/{operation}")
        if response.status_code != 200:
            return response.status_code, response.text
        return 200, result_element(response, operation).text or ""
    url = f"{sandbox.lodge_url}/{operation}"
    response = client.get(url, params=params) if port == "get" else client.post(url, data=params)
    if response.status_code != 200:
        return response.status_code, response.text
    root = etree.fromstring(response.content)
    assert root.tag == f"{{{NS}}}string", response.text
    return 200, root.text or ""


def stored(sandbox: SandboxThread) -> list[tuple[Any, ...]]:
    return sandbox.query(
        "SELECT type, to_number, message, reply_type, reply_path, service_id FROM messages"
    )


def both(
    client: httpx.Client, sandbox: SandboxThread, port: str, params: dict[str, str]
) -> tuple[tuple[int, str], tuple[int, str]]:
    """The twin's answer and the sibling's to the same call."""
    return (
        answer(client, sandbox, port, TWIN, params),
        answer(client, sandbox, port, SIBLING, params),
    )


def fetch_wsdl(sandbox: SandboxThread) -> etree._Element:
    response = httpx.get(f"{sandbox.lodge_url}?WSDL")
    assert response.status_code == 200
    return etree.fromstring(response.content)


def named(root: etree._Element, tag: str, name: str) -> etree._Element:
    found = root.find(f"{tag}[@name='{name}']")
    assert found is not None, f"no {tag} named {name}"
    return found


# ---- lodging ---------------------------------------------------------------------------------


@PORTS
def test_the_twin_lodges_a_two_way_sms_with_its_reply_path(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    assert answer(client, sandbox, port, TWIN, FORM) == (200, OK)
    assert stored(sandbox) == [("SMS", NUMBER, "Reply YES to confirm", "HEADER", "61498765432", 2)]


@PORTS
def test_the_twin_keeps_every_reply_type_as_its_sibling_does(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    params = {**FORM, "ReplyType": "email", "ReplyPath": "desk@example.com"}
    assert both(client, sandbox, port, params) == ((200, OK), (200, OK))
    routes = [(row[3], row[4]) for row in stored(sandbox)]
    assert routes == [("EMAIL", "desk@example.com")] * 2


@pytest.mark.parametrize("port", ["soap11", "soap12"])
def test_soap_answers_in_the_twins_own_response_and_result_elements(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    soap = SOAP_PORTS[port]
    body = envelope(TWIN, params_xml(FORM), soap=soap)
    root = etree.fromstring(post_soap(client, sandbox.lodge_url, body, soap=soap).content)
    response = root.find(f"{{{soap}}}Body/{{{NS}}}{TWIN}Response")
    assert response is not None, etree.tostring(root)
    assert [child.tag for child in response] == [f"{{{NS}}}{TWIN}Result"]
    assert response[0].text == OK


@HTTP_PORTS
def test_the_operation_name_matches_in_any_letter_case_on_the_http_ports(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    assert answer(client, sandbox, port, TWIN.lower(), FORM) == (200, OK)
    assert len(stored(sandbox)) == 1


# ---- refusals, the sibling's own -------------------------------------------------------------

REFUSED = {
    "short-number": (
        {"ReplyPath": "1234"},
        "Error: ReplyPath is not a number of 8 to 15 digits, optionally starting with +.",
    ),
    "empty-path": ({"ReplyPath": ""}, "Error: ReplyPath is required with ReplyType HEADER."),
    "huge-path": (
        {"ReplyPath": "6" * 5000},
        "Error: ReplyPath is longer than 2000 characters.",
    ),
    "unknown-type": (
        {"ReplyType": "PIGEON"},
        "Error: ReplyType must be one of EMAIL, WWW, HTTP, HTTPGET, HTTPPOST, TCP/IP, HEADER.",
    ),
    "no-type": (
        {"ReplyType": ""},
        "Error: ReplyType is required for a two-way SMS: EMAIL, WWW, HTTP, TCP/IP or HEADER.",
    ),
    "bad-number": (
        {"PhoneNumber": "12ab"},
        "Error: PhoneNumber must be an international number of 8 to 15 digits, optionally "
        "starting with +: '12ab'.",
    ),
    "wrong-password": ({"Pwd": "wrong"}, "Error: invalid username or password"),
}


@PORTS
@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_value_is_refused_as_the_sibling_refuses_it(
    client: httpx.Client, sandbox: SandboxThread, port: str, case: str
) -> None:
    changes, expected = REFUSED[case]
    twin, sibling = both(client, sandbox, port, {**FORM, **changes})
    assert twin == sibling == (200, expected)
    assert stored(sandbox) == []


@HTTP_PORTS
def test_a_missing_parameter_is_a_500_naming_it_as_for_the_sibling(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    params = {k: v for k, v in FORM.items() if k != "ReplyPath"}
    twin, sibling = both(client, sandbox, port, params)
    assert twin == sibling == (500, "Missing parameter: ReplyPath.")
    assert stored(sandbox) == []


@pytest.mark.parametrize("port", ["soap11", "soap12"])
def test_a_missing_soap_element_is_the_operations_failure_as_for_the_sibling(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    params = {k: v for k, v in FORM.items() if k != "ReplyPath"}
    twin, sibling = both(client, sandbox, port, params)
    assert twin == sibling == (200, "Error: ReplyPath is required with ReplyType HEADER.")
    assert stored(sandbox) == []


# ---- hostile input ---------------------------------------------------------------------------


@PORTS
def test_markup_and_quotes_in_the_text_and_reply_path_are_kept_as_data(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    text = "Tom & Jerry <b>bold</b> ]]> 'quoted' \"twice\" €"
    name = "<b>Shop</b> & 'Co' ]]>"
    params = {**FORM, "PhoneMessage": text, "ReplyPath": name}
    assert answer(client, sandbox, port, TWIN, params) == (200, OK)
    assert stored(sandbox) == [("SMS", NUMBER, text, "HEADER", name, 2)]


@PORTS
def test_a_hidden_character_in_the_reply_path_is_refused_as_the_sibling_refuses_it(
    client: httpx.Client, sandbox: SandboxThread, port: str
) -> None:
    twin, sibling = both(client, sandbox, port, {**FORM, "ReplyPath": "Shop\u202eevil"})
    assert twin == sibling
    assert twin[0] == 200
    assert twin[1].startswith("Error: ReplyPath holds U+202E RIGHT-TO-LEFT OVERRIDE")
    assert stored(sandbox) == []


@HTTP_PORTS
@pytest.mark.parametrize("control", ["\x1b[2J", "\x00", "\x07"], ids=["escape", "nul", "bell"])
def test_a_control_character_in_the_reply_path_is_refused_in_a_well_formed_answer(
    client: httpx.Client, sandbox: SandboxThread, port: str, control: str
) -> None:
    twin, sibling = both(client, sandbox, port, {**FORM, "ReplyPath": f"Shop{control}"})
    assert twin == sibling
    assert twin[0] == 200
    assert twin[1].startswith("Error: ReplyPath holds U+00")
    assert twin[1].endswith("a control character; a sender name is plain text.")
    assert stored(sandbox) == []


@pytest.mark.parametrize("soap", [SOAP11, SOAP12], ids=["soap11", "soap12"])
def test_billion_laughs_in_a_twin_envelope_is_a_fault_without_expansion(
    client: httpx.Client, sandbox: SandboxThread, soap: str
) -> None:
    inner = params_xml({k: v for k, v in FORM.items() if k != "PhoneMessage"})
    body = envelope(TWIN, inner + "<PhoneMessage>&lol9;</PhoneMessage>", soap=soap).decode()
    body = body.replace("?>", "?>" + BILLION_LAUGHS_DTD, 1)
    response = post_soap(client, sandbox.lodge_url, body.encode(), soap=soap)
    assert response.status_code == 500
    assert fault(response)[1] == (
        "The SOAP envelope contains a DTD or entity declaration; they are not accepted."
    )
    assert len(response.content) < 1000
    assert stored(sandbox) == []


# ---- the service description -----------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_every_binding_lists_the_twin_right_after_its_sibling(
    sandbox: SandboxThread, binding: str
) -> None:
    node = named(fetch_wsdl(sandbox), f"{{{WSDL}}}binding", binding)
    listed = [op.get("name") for op in node.iterfind(f"{{{WSDL}}}operation")]
    assert listed[listed.index(SIBLING) + 1] == TWIN


@pytest.mark.parametrize(
    ("binding", "detail", "attribute", "value"),
    [
        ("LodgeSoap", f"{{{SOAP_BINDING}}}operation", "soapAction", f"{NS}/{TWIN}"),
        ("LodgeSoap12", f"{{{SOAP12_BINDING}}}operation", "soapAction", f"{NS}/{TWIN}"),
        ("LodgeHttpGet", f"{{{HTTP_BINDING}}}operation", "location", f"/{TWIN}"),
        ("LodgeHttpPost", f"{{{HTTP_BINDING}}}operation", "location", f"/{TWIN}"),
    ],
)
def test_each_binding_gives_the_twin_its_own_action_or_location(
    sandbox: SandboxThread, binding: str, detail: str, attribute: str, value: str
) -> None:
    node = named(fetch_wsdl(sandbox), f"{{{WSDL}}}binding", binding)
    operation = named(node, f"{{{WSDL}}}operation", TWIN)
    found = operation.find(detail)
    assert found is not None
    assert found.get(attribute) == value


def test_the_wsdl_declares_the_twin_with_its_siblings_parameters_and_a_text_result(
    sandbox: SandboxThread,
) -> None:
    root = fetch_wsdl(sandbox)
    schema = root.find(f"{{{WSDL}}}types/{{{XSD}}}schema")
    assert schema is not None

    def sequence(element: str) -> list[tuple[str | None, str | None]]:
        node = named(schema, f"{{{XSD}}}element", element)
        declared = node.iterfind(f"{{{XSD}}}complexType/{{{XSD}}}sequence/{{{XSD}}}element")
        return [(d.get("name"), d.get("type")) for d in declared]

    def parts(message: str) -> list[tuple[str | None, str | None]]:
        return [(p.get("name"), p.get("type")) for p in named(root, f"{{{WSDL}}}message", message)]

    assert sequence(TWIN) == sequence(SIBLING)
    assert [name for name, _ in sequence(TWIN)] == list(FORM)
    assert sequence(f"{TWIN}Response") == [(f"{TWIN}Result", "s:string")]
    for port in ("HttpGet", "HttpPost"):
        assert parts(f"{TWIN}{port}In") == parts(f"{SIBLING}{port}In")
        assert named(root, f"{{{WSDL}}}message", f"{TWIN}{port}Out")[0].get("element") == (
            "tns:string"
        )


@pytest.mark.parametrize("binding", BINDINGS)
def test_zeep_finds_the_twin_in_the_wsdl_and_lodges_through_it(
    sandbox: SandboxThread, binding: str
) -> None:
    zeep_client = zeep.Client(f"{sandbox.lodge_url}?WSDL")
    try:
        result = getattr(zeep_client.bind("Lodge", binding), TWIN)(**FORM)
    finally:
        zeep_client.transport.session.close()
    assert result == OK
    assert stored(sandbox) == [("SMS", NUMBER, "Reply YES to confirm", "HEADER", "61498765432", 2)]


def test_the_help_page_lists_the_twin(client: httpx.Client, sandbox: SandboxThread) -> None:
    page = client.get(sandbox.lodge_url).text
    assert f"<b>{TWIN}</b>(Username, Pwd, PhoneNumber, PhoneMessage, ReplyType, ReplyPath)" in page
