"""Raw wire helpers for the Lodge tests: envelopes, faults, results and sample files.

Deliberately independent of gwdesk's own Lodge code, so the tests speak the wire
format as a foreign client would.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from xml.sax.saxutils import escape

import httpx
from lxml import etree

NS = "http://sandbox.gwdesk.local/Lodge"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
CONTENT_TYPES = {SOAP11: "text/xml", SOAP12: "application/soap+xml"}
NUMBER = "61412345678"

# A DTD whose entity `&lol9;` would expand to a billion "lol"s, were entities expanded.
BILLION_LAUGHS_DTD = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>"
)

# The smallest byte strings that pass each format's signature check.
SAMPLES: dict[str, bytes] = {
    "jpg": b"\xff\xd8\xff\xe0" + b"\x00" * 60,
    "jpeg": b"\xff\xd8\xff\xdb" + b"\x00" * 60,
    "png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 56,
    "gif": b"GIF89a" + b"\x00" * 58,
    "txt": b"plain words\n",
    "amr": b"#!AMR\n" + b"\x00" * 58,
    "mp3": b"ID3\x04" + b"\x00" * 60,
    "3gp": b"\x00\x00\x00\x18ftyp3gp4" + b"\x00" * 52,
    "mp4": b"\x00\x00\x00\x18ftypisom" + b"\x00" * 52,
    "pdf": b"%PDF-1.4\n" + b"\x00" * 55,
    "tif": b"II*\x00" + b"\x00" * 60,
    "tiff": b"MM\x00*" + b"\x00" * 60,
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def padded(extension: str, size: int) -> bytes:
    """A sample of the given type, padded to exactly `size` bytes."""
    head = SAMPLES[extension]
    return head + b"\x00" * (size - len(head))


def params_xml(params: dict[str, str]) -> str:
    return "".join(f"<{k}>{escape(v)}</{k}>" for k, v in params.items())


def envelope(
    operation: str,
    inner: str,
    *,
    soap: str = SOAP11,
    ns: str = NS,
    header: str = "",
) -> bytes:
    head = f"<soap:Header>{header}</soap:Header>" if header else ""
    return (
        f'<?xml version="1.0" encoding="utf-8"?>'
        f'<soap:Envelope xmlns:soap="{soap}">{head}<soap:Body>'
        f'<{operation} xmlns="{ns}">{inner}</{operation}>'
        f"</soap:Body></soap:Envelope>"
    ).encode()


def post_soap(
    client: httpx.Client,
    url: str,
    body: bytes,
    *,
    soap: str = SOAP11,
    action: str | None = None,
    content_type: str | None = None,
) -> httpx.Response:
    headers = {"Content-Type": content_type or f"{CONTENT_TYPES[soap]}; charset=utf-8"}
    if action is not None:
        if soap == SOAP11:
            headers["SOAPAction"] = f'"{action}"'
        else:
            headers["Content-Type"] += f'; action="{action}"'
    return client.post(url, content=body, headers=headers)


def call(
    client: httpx.Client,
    url: str,
    operation: str,
    params: dict[str, str],
    *,
    soap: str = SOAP11,
) -> httpx.Response:
    return post_soap(
        client,
        url,
        envelope(operation, params_xml(params), soap=soap),
        soap=soap,
        action=f"{NS}/{operation}",
    )


def result_element(response: httpx.Response, operation: str) -> etree._Element:
    root = etree.fromstring(response.content)
    found = root.find(f".//{{{NS}}}{operation}Result")
    assert found is not None, response.text
    return found


def text_result(response: httpx.Response, operation: str) -> str:
    assert response.status_code == 200, response.text
    return result_element(response, operation).text or ""


def xml_result(response: httpx.Response, operation: str) -> etree._Element:
    assert response.status_code == 200, response.text
    children = list(result_element(response, operation))
    assert len(children) == 1, response.text
    return children[0]


def fault(response: httpx.Response) -> tuple[str, str]:
    """(fault code, reason) of a SOAP 1.1 or 1.2 fault response."""
    root = etree.fromstring(response.content)
    if root.tag == f"{{{SOAP11}}}Envelope":
        node = root.find(f"{{{SOAP11}}}Body/{{{SOAP11}}}Fault")
        assert node is not None, response.text
        return node.findtext("faultcode") or "", node.findtext("faultstring") or ""
    node = root.find(f"{{{SOAP12}}}Body/{{{SOAP12}}}Fault")
    assert node is not None, response.text
    code = node.findtext(f"{{{SOAP12}}}Code/{{{SOAP12}}}Value") or ""
    return code, node.findtext(f"{{{SOAP12}}}Reason/{{{SOAP12}}}Text") or ""


def fields(element: etree._Element) -> dict[str, str]:
    return {child.tag: child.text or "" for child in element}


def lodge_document(messages: str, credentials: tuple[str, str] = ("demo", "demo")) -> str:
    username, pwd = credentials
    return (
        f"<Lodge><Username>{username}</Username><Pwd>{pwd}</Pwd>"
        f"<Messages>{messages}</Messages></Lodge>"
    )


def message_xml(kind: str, number: str = NUMBER, files: str = "", **children: str) -> str:
    inner = f"<PhoneNumber>{number}</PhoneNumber>"
    inner += "".join(f"<{k}>{escape(v)}</{k}>" for k, v in children.items()) + files
    return f'<Message Type="{kind}">{inner}</Message>'


def attachment_xml(file_name: str, data: bytes) -> str:
    return f'<Attachment FileName="{file_name}">{b64(data)}</Attachment>'


def stored_attachments(value: str | None) -> list[dict[str, Any]]:
    return json.loads(value) if value else []
