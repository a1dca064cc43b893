"""zeep, a real SOAP client, loads the WSDL and calls all 13 operations on both SOAP ports."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import zeep
from lxml import etree
from zeep.plugins import HistoryPlugin

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.lodge_support import (
    NUMBER,
    SAMPLES,
    SOAP11,
    SOAP12,
    attachment_xml,
    b64,
    fields,
    lodge_document,
    message_xml,
    stored_attachments,
)

OK = "Message sent successfully."
CREDENTIALS = {"Username": "demo", "Pwd": "demo"}


@pytest.fixture(params=["LodgeSoap", "LodgeSoap12"])
def service(request: pytest.FixtureRequest, sandbox: SandboxThread) -> Iterator[Any]:
    client = zeep.Client(f"{sandbox.lodge_url}?WSDL")
    yield client.bind("Lodge", request.param)
    client.transport.session.close()


LAST_COLUMNS = (
    "message_id",
    "type",
    "to_number",
    "message",
    "subject",
    "url",
    "reply_type",
    "reply_path",
    "service_id",
    "attachments",
)


def last_message(sandbox: SandboxThread) -> dict[str, Any]:
    columns = ", ".join(LAST_COLUMNS)
    rows = sandbox.query(f"SELECT {columns} FROM messages ORDER BY id DESC LIMIT 1")
    return dict(zip(LAST_COLUMNS, rows[0], strict=True))


def all_messages(sandbox: SandboxThread) -> list[tuple[Any, ...]]:
    return sandbox.query("SELECT message_id, type, to_number, message FROM messages ORDER BY id")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_lodge_sms_message_lands_as_a_one_way_sms(service: Any, sandbox: SandboxThread) -> None:
    result = service.LodgeSMSMessage(**CREDENTIALS, PhoneNumber="+61412345678", PhoneMessage="Hi")
    assert result == OK
    row = last_message(sandbox)
    assert (row["type"], row["to_number"], row["message"]) == ("SMS", NUMBER, "Hi")
    assert (row["reply_type"], row["service_id"]) == ("", 2)


def test_lodge_wap_push_lands_with_its_url_and_application_name(
    service: Any, sandbox: SandboxThread
) -> None:
    result = service.LodgeWAPPush(
        **CREDENTIALS, PhoneNumber=NUMBER, ApplicationName="Menu", URL="https://example.com/m"
    )
    assert result == OK
    row = last_message(sandbox)
    assert (row["type"], row["subject"], row["url"]) == ("WAP", "Menu", "https://example.com/m")
    assert row["message"] == "https://example.com/m"


def test_lodge_sms_message_with_reply_keeps_the_reply_route(
    service: Any, sandbox: SandboxThread
) -> None:
    result = service.LodgeSMSMessageWithReply(
        **CREDENTIALS,
        PhoneNumber=NUMBER,
        PhoneMessage="Reply YES",
        ReplyType="email",
        ReplyPath="desk@example.com",
    )
    assert result == OK
    row = last_message(sandbox)
    assert (row["type"], row["reply_type"], row["reply_path"]) == (
        "SMS",
        "EMAIL",
        "desk@example.com",
    )


def test_lodge_sms_message_with_reply_xml_returns_the_msgid(
    service: Any, sandbox: SandboxThread
) -> None:
    result = service.LodgeSMSMessageWithReplyXML(
        **CREDENTIALS,
        PhoneNumber=NUMBER,
        PhoneMessage="Reply",
        ReplyType="HTTP",
        ReplyPath="http://127.0.0.1:9/hook?from=#FROM#",
    )
    assert result.tag == "LodgeResult"
    values = fields(result)
    assert (values["Result"], values["ErrorMsg"]) == ("0", "")
    row = last_message(sandbox)
    assert values["MsgID"] == row["message_id"]
    assert row["reply_type"] == "HTTP"


def test_get_message_status_xml_reports_a_lodged_message(
    service: Any, sandbox: SandboxThread
) -> None:
    lodged = service.LodgeSMSMessageWithReplyXML(
        **CREDENTIALS, PhoneNumber=NUMBER, PhoneMessage="x", ReplyType="WWW", ReplyPath="site"
    )
    msg_id = fields(lodged)["MsgID"]
    status = service.GetMessageStatusXML(**CREDENTIALS, MsgID=msg_id)
    assert status.tag == "MessageStatus"
    values = fields(status)
    assert values["Result"] == "0"
    assert (values["MsgID"], values["PhoneNumber"], values["Status"]) == (msg_id, NUMBER, "ACTIVE")
    assert values["DateLodged"][:2] == "20"
    assert values["DateSent"] >= values["DateLodged"]


def test_lodge_mms_message_carries_its_attachment(service: Any, sandbox: SandboxThread) -> None:
    picture = SAMPLES["png"]
    result = service.LodgeMMSMessage(
        **CREDENTIALS,
        PhoneNumber=NUMBER,
        MMSSubject="Photo",
        MMSMessageText="Look",
        FileName="pic.png",
        MMSContentBase64=b64(picture),
    )
    assert result == OK
    row = last_message(sandbox)
    assert (row["type"], row["subject"], row["message"]) == ("MMS", "Photo", "Look")
    assert stored_attachments(row["attachments"]) == [
        {"file_name": "pic.png", "content_type": "image/png", "size": 64, "sha256": sha(picture)}
    ]


def test_lodge_multi_mms_message_carries_three_attachments(
    service: Any, sandbox: SandboxThread
) -> None:
    files = {"a.jpg": SAMPLES["jpg"], "b.gif": SAMPLES["gif"], "c.txt": SAMPLES["txt"]}
    encoded = [b64(data) for data in files.values()]
    result = service.LodgeMultiMMSMessage(
        **CREDENTIALS,
        PhoneNumber=NUMBER,
        MMSSubject="Three",
        MMSMessageText="",
        FileName="a.jpg",
        MMSContentBase64=encoded[0],
        FileName2="b.gif",
        MMSContent2Base64=encoded[1],
        FileName3="c.txt",
        MMSContent3Base64=encoded[2],
    )
    assert result == OK
    stored = stored_attachments(last_message(sandbox)["attachments"])
    assert [(a["file_name"], a["sha256"]) for a in stored] == [
        (name, sha(data)) for name, data in files.items()
    ]
    assert [a["content_type"] for a in stored] == ["image/jpeg", "image/gif", "text/plain"]


def mms_document() -> etree._Element:
    messages = message_xml(
        "MMS", Subject="One", Text="first", files=attachment_xml("a.gif", SAMPLES["gif"])
    ) + message_xml("MMS", number="61498765432", files=attachment_xml("b.mp4", SAMPLES["mp4"]))
    return etree.fromstring(lodge_document(messages))


def test_lodge_multi_mms_message_xml_lodges_each_mms_without_msgids(
    service: Any, sandbox: SandboxThread
) -> None:
    result = service.LodgeMultiMMSMessageXML(docXML={"_value_1": mms_document()})
    assert result.tag == "LodgeResults"
    assert [fields(r) for r in result] == [{"Result": "0", "ErrorMsg": ""}] * 2
    assert [(t, n) for _, t, n, _ in all_messages(sandbox)] == [
        ("MMS", NUMBER),
        ("MMS", "61498765432"),
    ]


def test_lodge_multi_mms_message_xml_msgid_returns_each_msgid(
    service: Any, sandbox: SandboxThread
) -> None:
    result = service.LodgeMultiMMSMessageXMLMSGID(docXML={"_value_1": mms_document()})
    ids = [fields(r)["MsgID"] for r in result]
    assert ids == [m[0] for m in all_messages(sandbox)]
    assert len(ids) == 2


def test_lodge_fax_message_xml_carries_its_files(service: Any, sandbox: SandboxThread) -> None:
    pdf, tiff = SAMPLES["pdf"], SAMPLES["tiff"]
    result = service.LodgeFAXMessageXML(
        **CREDENTIALS,
        FaxNumber="+61299998888",
        FaxSubject="Invoice",
        CoverPageText="Please find attached",
        FileName="invoice.pdf",
        objFile=pdf,
        FileName2="scan.tiff",
        objFile2=tiff,
    )
    values = fields(result)
    assert values["Result"] == "0", values
    row = last_message(sandbox)
    assert values["MsgID"] == row["message_id"]
    assert (row["type"], row["to_number"], row["subject"]) == ("FAX", "61299998888", "Invoice")
    assert row["message"] == "Please find attached"
    stored = stored_attachments(row["attachments"])
    assert [(a["file_name"], a["content_type"], a["sha256"]) for a in stored] == [
        ("invoice.pdf", "application/pdf", sha(pdf)),
        ("scan.tiff", "image/tiff", sha(tiff)),
    ]


def test_lodge_mms_message_by_url_keeps_the_url(service: Any, sandbox: SandboxThread) -> None:
    result = service.LodgeMMSMessageByURL(
        **CREDENTIALS,
        PhoneNumber=NUMBER,
        MMSSubject="Clip",
        MMSMessageText="Watch",
        URL="https://example.com/clip.mp4",
    )
    assert result == OK
    row = last_message(sandbox)
    assert (row["type"], row["url"], row["subject"]) == (
        "MMS",
        "https://example.com/clip.mp4",
        "Clip",
    )


def test_lodge_xml_lodges_every_kind_of_message(service: Any, sandbox: SandboxThread) -> None:
    messages = (
        message_xml("SMS", Text="plain")
        + message_xml("WAP", Subject="App", Text="https://example.com/w")
        + message_xml("MMS", files=attachment_xml("x.amr", SAMPLES["amr"]))
        + message_xml("FAX", Subject="Fax", Text="cover", files=attachment_xml("f.txt", b"hi"))
    )
    result = service.LodgeXML(docXML={"_value_1": etree.fromstring(lodge_document(messages))})
    values = [fields(r) for r in result]
    assert [v["Result"] for v in values] == ["0"] * 4
    stored = all_messages(sandbox)
    assert [v["MsgID"] for v in values] == [m[0] for m in stored]
    assert [m[1] for m in stored] == ["SMS", "WAP", "MMS", "FAX"]


def test_lodge_xml_by_arg_takes_the_document_as_a_string(
    service: Any, sandbox: SandboxThread
) -> None:
    document = lodge_document(message_xml("SMS", Text="from a string"))
    result = service.LodgeXMLbyArg(strdocXML=document)
    assert [fields(r)["Result"] for r in result] == ["0"]
    assert all_messages(sandbox)[0][3] == "from a string"


def test_a_failure_comes_back_as_a_result_not_a_fault(service: Any, sandbox: SandboxThread) -> None:
    result = service.LodgeSMSMessage(
        Username="demo", Pwd="wrong", PhoneNumber=NUMBER, PhoneMessage="x"
    )
    assert result == "Error: invalid username or password"
    assert all_messages(sandbox) == []


@pytest.mark.parametrize(("port", "envelope_ns"), [("LodgeSoap", SOAP11), ("LodgeSoap12", SOAP12)])
def test_each_port_sends_its_own_soap_version(
    sandbox: SandboxThread, port: str, envelope_ns: str
) -> None:
    history = HistoryPlugin()
    client = zeep.Client(f"{sandbox.lodge_url}?WSDL", plugins=[history])
    try:
        client.bind("Lodge", port).LodgeSMSMessage(
            **CREDENTIALS, PhoneNumber=NUMBER, PhoneMessage="v"
        )
    finally:
        client.transport.session.close()
    assert history.last_sent["envelope"].tag == f"{{{envelope_ns}}}Envelope"
    assert history.last_received["envelope"].tag == f"{{{envelope_ns}}}Envelope"


def test_zeep_follows_a_configured_namespace(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(namespace="urn:example:lodge")
    client = zeep.Client(f"{sandbox.lodge_url}?WSDL")
    try:
        result = client.bind("Lodge", "LodgeSoap12").LodgeSMSMessage(
            **CREDENTIALS, PhoneNumber=NUMBER, PhoneMessage="ns"
        )
    finally:
        client.transport.session.close()
    assert result == OK
    assert sandbox.query("SELECT message FROM messages") == [("ns",)]
