"""What a Lodge operation returns, independent of the port that carries it.

Text operations return `TextResult` (the contract's `Message sent successfully.` or
`Error: <reason>`); XML operations return `XmlResult` with a namespace-less document
(`LodgeResult`, `LodgeResults`, `MessageStatus`), the same bytes over SOAP and HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from lxml import etree

SUCCESS_TEXT: Final = "Message sent successfully."

RESULT_OK: Final = 0
RESULT_AUTH: Final = 1
"""Username/Pwd were missing or wrong."""
RESULT_INVALID: Final = 2
"""A parameter (or a message of a document) was refused; ErrorMsg names it."""
RESULT_NOT_FOUND: Final = 3
"""GetMessageStatusXML: no message of this account has that MsgID."""

AUTH_FAILURE: Final = "invalid username or password"

_XML_INVALID_RE: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """Text that XML 1.0 can carry: other control characters become U+FFFD."""
    return _XML_INVALID_RE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class TextResult:
    text: str

    @property
    def ok(self) -> bool:
        return self.text == SUCCESS_TEXT


@dataclass(frozen=True, slots=True)
class XmlResult:
    root: etree._Element


Result = TextResult | XmlResult


class LodgeFailure(Exception):
    """An operation failed for a reason the caller is told, with a `Result` code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def failure_text(message: str) -> TextResult:
    return TextResult(f"Error: {message}")


def _child(parent: etree._Element, name: str, text: str | None) -> None:
    element = etree.SubElement(parent, name)
    if text:
        element.text = xml_text(text)


def lodge_result(
    code: int, error: str = "", msg_id: str | None = None, *, with_id: bool = True
) -> etree._Element:
    """`<LodgeResult><Result/><ErrorMsg/><MsgID/></LodgeResult>`; MsgID only `with_id`."""
    root = etree.Element("LodgeResult")
    _child(root, "Result", str(code))
    _child(root, "ErrorMsg", error)
    if with_id:
        _child(root, "MsgID", msg_id)
    return root


def lodge_results(items: Iterable[etree._Element]) -> etree._Element:
    """The wrapper of a document operation: one LodgeResult per message, in order."""
    root = etree.Element("LodgeResults")
    root.extend(items)
    return root


def message_status(
    code: int,
    error: str,
    msg_id: str,
    *,
    phone_number: str = "",
    status: str = "",
    date_lodged: str = "",
    date_sent: str = "",
) -> etree._Element:
    root = etree.Element("MessageStatus")
    _child(root, "Result", str(code))
    _child(root, "ErrorMsg", error)
    _child(root, "MsgID", msg_id)
    _child(root, "PhoneNumber", phone_number)
    _child(root, "Status", status)
    _child(root, "DateLodged", date_lodged)
    _child(root, "DateSent", date_sent)
    return root
