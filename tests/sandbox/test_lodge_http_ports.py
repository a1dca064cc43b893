"""The HTTP GET and HTTP POST ports: `{legacy_url}/<Operation>` with plain parameters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from lxml import etree

from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.lodge_support import (
    NS,
    NUMBER,
    SAMPLES,
    b64,
    fields,
    lodge_document,
    message_xml,
    stored_attachments,
)

CREDENTIALS = {"Username": "demo", "Pwd": "demo"}
MMS = {**CREDENTIALS, "PhoneNumber": NUMBER, "MMSSubject": "S", "MMSMessageText": "T"}
FAX = {
    **CREDENTIALS,
    "FaxNumber": "61299998888",
    "FaxSubject": "Fax",
    "CoverPageText": "Cover",
    "FileName": "a.pdf",
    "objFile": b64(SAMPLES["pdf"]),
    "FileName2": "",
    "FileName3": "",
}
REPLY = {"ReplyType": "EMAIL", "ReplyPath": "desk@example.com"}

# operation -> (parameters, stored type, result kind)
CASES: dict[str, tuple[dict[str, str], str, str]] = {
    "LodgeSMSMessage": (
        {**CREDENTIALS, "PhoneNumber": NUMBER, "PhoneMessage": "Hi"},
        "SMS",
        "text",
    ),
    "LodgeWAPPush": (
        {**CREDENTIALS, "PhoneNumber": NUMBER, "ApplicationName": "A", "URL": "http://x.io/w"},
        "WAP",
        "text",
    ),
    "LodgeSMSMessageWithReply": (
        {**CREDENTIALS, "PhoneNumber": NUMBER, "PhoneMessage": "Hi", **REPLY},
        "SMS",
        "text",
    ),
    "LodgeSMSMessageWithReplyXML": (
        {**CREDENTIALS, "PhoneNumber": NUMBER, "PhoneMessage": "Hi", **REPLY},
        "SMS",
        "LodgeResult",
    ),
    "LodgeMMSMessage": (
        {**MMS, "FileName": "p.gif", "MMSContentBase64": b64(SAMPLES["gif"])},
        "MMS",
        "text",
    ),
    "LodgeMultiMMSMessage": (
        {
            **MMS,
            "FileName": "p.gif",
            "MMSContentBase64": b64(SAMPLES["gif"]),
            "FileName2": "s.mp3",
            "MMSContent2Base64": b64(SAMPLES["mp3"]),
            "FileName3": "",
            "MMSContent3Base64": "",
        },
        "MMS",
        "text",
    ),
    "LodgeFAXMessageXML": (FAX, "FAX", "LodgeResult"),
    "LodgeMMSMessageByURL": ({**MMS, "URL": "https://x.io/m.gif"}, "MMS", "text"),
    "LodgeXMLbyArg": (
        {"strdocXML": lodge_document(message_xml("SMS", Text="doc"))},
        "SMS",
        "LodgeResults",
    ),
}
VERBS = pytest.mark.parametrize("verb", ["GET", "POST"])


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as http:
        yield http


def send(
    client: httpx.Client, sandbox: SandboxThread, verb: str, operation: str, params: Any
) -> httpx.Response:
    url = f"{sandbox.lodge_url}/{operation}"
    if verb == "GET":
        return client.get(url, params=params)
    return client.post(url, data=params)


def stored(sandbox: SandboxThread) -> list[tuple[Any, ...]]:
    return sandbox.query("SELECT message_id, type, service_id FROM messages ORDER BY id")


@VERBS
@pytest.mark.parametrize("operation", list(CASES))
def test_every_http_operation_lodges_its_message(
    client: httpx.Client, sandbox: SandboxThread, verb: str, operation: str
) -> None:
    params, kind, result = CASES[operation]
    response = send(client, sandbox, verb, operation, params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/xml; charset=utf-8"
    root = etree.fromstring(response.content)
    rows = stored(sandbox)
    assert [(t, s) for _, t, s in rows] == [(kind, 2)]
    if result == "text":
        assert root.tag == f"{{{NS}}}string"
        assert root.text == "Message sent successfully."
    elif result == "LodgeResult":
        assert root.tag == "LodgeResult"
        assert fields(root) == {"Result": "0", "ErrorMsg": "", "MsgID": rows[0][0]}
    else:
        assert root.tag == "LodgeResults"
        assert [fields(r)["MsgID"] for r in root] == [rows[0][0]]


@VERBS
def test_get_message_status_xml_answers_with_the_bare_document(
    client: httpx.Client, sandbox: SandboxThread, verb: str
) -> None:
    params, _, _ = CASES["LodgeSMSMessageWithReplyXML"]
    lodged = etree.fromstring(
        send(client, sandbox, verb, "LodgeSMSMessageWithReplyXML", params).content
    )
    msg_id = fields(lodged)["MsgID"]
    response = send(client, sandbox, verb, "GetMessageStatusXML", {**CREDENTIALS, "MsgID": msg_id})
    assert response.headers["content-type"] == "text/xml; charset=utf-8"
    status = etree.fromstring(response.content)
    assert status.tag == "MessageStatus"
    assert fields(status)["MsgID"] == msg_id
    assert fields(status)["Status"] == "ACTIVE"


@VERBS
def test_a_text_failure_is_wrapped_like_a_success(
    client: httpx.Client, sandbox: SandboxThread, verb: str
) -> None:
    params = {**CASES["LodgeSMSMessage"][0], "Pwd": "wrong"}
    response = send(client, sandbox, verb, "LodgeSMSMessage", params)
    assert response.status_code == 200
    root = etree.fromstring(response.content)
    assert (root.tag, root.text) == (f"{{{NS}}}string", "Error: invalid username or password")
    assert stored(sandbox) == []


@VERBS
def test_a_missing_parameter_is_a_500_naming_it(
    client: httpx.Client, sandbox: SandboxThread, verb: str
) -> None:
    params = {k: v for k, v in CASES["LodgeSMSMessage"][0].items() if k != "PhoneMessage"}
    response = send(client, sandbox, verb, "LodgeSMSMessage", params)
    assert response.status_code == 500
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Missing parameter: PhoneMessage."


def test_an_empty_parameter_is_present_but_refused_by_the_operation(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {**CASES["LodgeSMSMessage"][0], "PhoneMessage": ""}
    response = send(client, sandbox, "GET", "LodgeSMSMessage", params)
    assert etree.fromstring(response.content).text == "Error: PhoneMessage must not be empty."


def test_a_repeated_parameter_is_a_500(client: httpx.Client, sandbox: SandboxThread) -> None:
    params = [*CASES["LodgeSMSMessage"][0].items(), ("PhoneNumber", "61400000001")]
    response = send(client, sandbox, "GET", "LodgeSMSMessage", params)
    assert response.status_code == 500
    assert response.text == "Parameter PhoneNumber was given 2 times; it takes one value."


def test_parameter_names_match_without_regard_to_case(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {k.lower(): v for k, v in CASES["LodgeSMSMessage"][0].items()}
    response = send(client, sandbox, "GET", "lodgesmsmessage", params)
    assert etree.fromstring(response.content).text == "Message sent successfully."


@VERBS
@pytest.mark.parametrize(
    "operation", ["LodgeXML", "LodgeMultiMMSMessageXML", "LodgeMultiMMSMessageXMLMSGID"]
)
def test_soap_only_operations_are_refused(
    client: httpx.Client, sandbox: SandboxThread, verb: str, operation: str
) -> None:
    response = send(client, sandbox, verb, operation, {"docXML": "<Lodge/>"})
    assert response.status_code == 500
    assert response.text == (
        f"{operation} is offered over SOAP only; POST a SOAP envelope to /dotnet/Lodge.asmx."
    )


def test_an_unknown_operation_is_a_500(client: httpx.Client, sandbox: SandboxThread) -> None:
    response = send(client, sandbox, "GET", "DeleteEverything", {})
    assert response.status_code == 500
    assert "unexpectedly ending in '/DeleteEverything'" in response.text


def test_a_head_request_lodges_nothing(client: httpx.Client, sandbox: SandboxThread) -> None:
    response = client.head(
        f"{sandbox.lodge_url}/LodgeSMSMessage", params=CASES["LodgeSMSMessage"][0]
    )
    assert response.status_code == 405
    assert stored(sandbox) == []


def test_a_post_that_is_not_a_form_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    response = client.post(f"{sandbox.lodge_url}/LodgeSMSMessage", json=CASES["LodgeSMSMessage"][0])
    assert response.status_code == 500
    assert response.text.startswith(
        "Content-Type must be application/x-www-form-urlencoded for the HTTP POST port"
    )


@VERBS
def test_objfile_values_are_joined_before_decoding(
    client: httpx.Client, sandbox: SandboxThread, verb: str
) -> None:
    pdf = SAMPLES["pdf"] + b"more bytes of the document"
    encoded = b64(pdf)
    params: dict[str, Any] = {**FAX, "objFile": [encoded[:10], encoded[10:27], encoded[27:]]}
    response = send(client, sandbox, verb, "LodgeFAXMessageXML", params)
    assert fields(etree.fromstring(response.content))["Result"] == "0"
    row = sandbox.query("SELECT attachments FROM messages")[0]
    assert stored_attachments(row[0])[0]["size"] == len(pdf)


def test_a_fax_may_leave_out_the_objfile_arrays(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    params = {k: v for k, v in FAX.items() if k != "objFile"}
    params["FileName"] = ""
    response = send(client, sandbox, "POST", "LodgeFAXMessageXML", params)
    assert fields(etree.fromstring(response.content))["Result"] == "0"
    assert sandbox.query("SELECT type, message, attachments FROM messages") == [
        ("FAX", "Cover", None)
    ]


def test_invalid_base64_in_objfile_is_the_operations_failure(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    response = send(client, sandbox, "GET", "LodgeFAXMessageXML", {**FAX, "objFile": "***"})
    values = fields(etree.fromstring(response.content))
    assert (values["Result"], values["ErrorMsg"]) == ("2", "objFile is not valid base64.")


def test_the_service_path_matches_in_any_letter_case(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    url = sandbox.lodge_url.replace("/dotnet/Lodge.asmx", "/DotNet/lodge.ASMX")
    response = client.get(f"{url}/LodgeSMSMessage", params=CASES["LodgeSMSMessage"][0])
    assert etree.fromstring(response.content).text == "Message sent successfully."
    assert client.get(url, params={"wsdl": ""}).status_code == 200


def test_other_paths_under_dotnet_are_not_the_service(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    url = sandbox.lodge_url.replace("/dotnet/Lodge.asmx", "/dotnet/Lodge.asmxx")
    assert client.get(url).status_code == 404
