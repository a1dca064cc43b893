"""The Lodge operations as the client knows them: parameters, result kind, ports.

The spec's 13, which `client.py` calls, and `LodgeSMSMessageWithReply2`, which the
real service also offers: its sibling `LodgeSMSMessageWithReply` under a second name
(gwdesk calls the sibling). Both the SOAP and the HTTP ports read this one table, so
an operation cannot be called with one parameter list over SOAP and another over
HTTP. It is the client's own copy of the service's table (the sandbox keeps its own),
so a mismatch between the two shows up as a failing contract test
(`tests/contract/test_lodge_catalog.py`) rather than hiding behind shared code.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Final


class ResultKind(enum.Enum):
    TEXT = "text"
    """A sentence: `Message sent successfully.` or `Error: <reason>`."""
    RESULT = "result"
    """One `<LodgeResult>`."""
    RESULTS = "results"
    """`<LodgeResults>`: one `<LodgeResult>` per message of a `<Lodge>` document."""
    STATUS = "status"
    """`<MessageStatus>`."""


@dataclass(frozen=True, slots=True)
class Operation:
    name: str
    params: tuple[str, ...]
    result: ResultKind
    http: bool
    """Offered on the HTTP GET/POST ports as well as SOAP (some are SOAP only)."""
    sends: bool = True
    """It lodges messages, so an answer lost on the way is never simply retried."""
    binary: frozenset[str] = frozenset()
    """Parameters typed `base64Binary` in SOAP (bytes) and string arrays over HTTP."""
    document: str | None = None
    """The parameter holding a `<Lodge>` document (an XML element in SOAP)."""


_CREDENTIALS = ("Username", "Pwd")
_REPLY = (*_CREDENTIALS, "PhoneNumber", "PhoneMessage", "ReplyType", "ReplyPath")
_MMS = (*_CREDENTIALS, "PhoneNumber", "MMSSubject", "MMSMessageText")

LODGE_SMS: Final = Operation(
    "LodgeSMSMessage", (*_CREDENTIALS, "PhoneNumber", "PhoneMessage"), ResultKind.TEXT, http=True
)
LODGE_WAP_PUSH: Final = Operation(
    "LodgeWAPPush",
    (*_CREDENTIALS, "PhoneNumber", "ApplicationName", "URL"),
    ResultKind.TEXT,
    http=True,
)
LODGE_SMS_WITH_REPLY: Final = Operation(
    "LodgeSMSMessageWithReply", _REPLY, ResultKind.TEXT, http=True
)
LODGE_SMS_WITH_REPLY_2: Final = replace(LODGE_SMS_WITH_REPLY, name="LodgeSMSMessageWithReply2")
"""Not in the spec's table; the real service's twin of `LodgeSMSMessageWithReply`."""
LODGE_SMS_WITH_REPLY_XML: Final = Operation(
    "LodgeSMSMessageWithReplyXML", _REPLY, ResultKind.RESULT, http=True
)
GET_MESSAGE_STATUS_XML: Final = Operation(
    "GetMessageStatusXML",
    (*_CREDENTIALS, "MsgID"),
    ResultKind.STATUS,
    http=True,
    sends=False,
)
LODGE_MMS: Final = Operation(
    "LodgeMMSMessage", (*_MMS, "FileName", "MMSContentBase64"), ResultKind.TEXT, http=True
)
LODGE_MULTI_MMS: Final = Operation(
    "LodgeMultiMMSMessage",
    (
        *_MMS,
        "FileName",
        "MMSContentBase64",
        "FileName2",
        "MMSContent2Base64",
        "FileName3",
        "MMSContent3Base64",
    ),
    ResultKind.TEXT,
    http=True,
)
LODGE_MULTI_MMS_XML: Final = Operation(
    "LodgeMultiMMSMessageXML", ("docXML",), ResultKind.RESULTS, http=False, document="docXML"
)
LODGE_MULTI_MMS_XML_MSGID: Final = Operation(
    "LodgeMultiMMSMessageXMLMSGID",
    ("docXML",),
    ResultKind.RESULTS,
    http=False,
    document="docXML",
)
LODGE_FAX_XML: Final = Operation(
    "LodgeFAXMessageXML",
    (
        *_CREDENTIALS,
        "FaxNumber",
        "FaxSubject",
        "CoverPageText",
        "FileName",
        "objFile",
        "FileName2",
        "objFile2",
        "FileName3",
        "objFile3",
    ),
    ResultKind.RESULT,
    http=True,
    binary=frozenset({"objFile", "objFile2", "objFile3"}),
)
LODGE_MMS_BY_URL: Final = Operation(
    "LodgeMMSMessageByURL", (*_MMS, "URL"), ResultKind.TEXT, http=True
)
LODGE_XML: Final = Operation(
    "LodgeXML", ("docXML",), ResultKind.RESULTS, http=False, document="docXML"
)
LODGE_XML_BY_ARG: Final = Operation("LodgeXMLbyArg", ("strdocXML",), ResultKind.RESULTS, http=True)

OPERATIONS: Final = (
    LODGE_SMS,
    LODGE_WAP_PUSH,
    LODGE_SMS_WITH_REPLY,
    LODGE_SMS_WITH_REPLY_2,
    LODGE_SMS_WITH_REPLY_XML,
    GET_MESSAGE_STATUS_XML,
    LODGE_MMS,
    LODGE_MULTI_MMS,
    LODGE_MULTI_MMS_XML,
    LODGE_MULTI_MMS_XML_MSGID,
    LODGE_FAX_XML,
    LODGE_MMS_BY_URL,
    LODGE_XML,
    LODGE_XML_BY_ARG,
)
