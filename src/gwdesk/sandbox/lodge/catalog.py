"""The Lodge operations as data: names, parameters, result kinds and ports.

The spec's 13, and `LodgeSMSMessageWithReply2`, which the real service also offers and
deployed clients call: the twin of `LodgeSMSMessageWithReply` under its own name. SOAP
parsing, the HTTP ports and the tests all read this one table, so a parameter
cannot be known to one port and missing from another. The WSDL template in
`resources/wsdl/` describes the same table; a test keeps the two in step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final


class Kind(enum.Enum):
    STRING = "string"
    BINARY = "base64Binary"
    """`s:base64Binary` in SOAP (the port decodes it); a string array over HTTP."""
    DOCUMENT = "any"
    """Mixed `s:any` content in SOAP: an XML document inline (or as escaped text)."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: Kind = Kind.STRING


@dataclass(frozen=True, slots=True)
class OperationSpec:
    name: str
    params: tuple[Param, ...]
    xml_result: bool
    """True: the result is an XML document; False: a text string."""
    http: bool
    """Offered on the HTTP GET and HTTP POST ports as well as SOAP 1.1 and 1.2."""

    def param(self, name: str) -> Param | None:
        for param in self.params:
            if param.name == name:
                return param
        return None


def _strings(*names: str) -> tuple[Param, ...]:
    return tuple(Param(name) for name in names)


_CREDENTIALS = _strings("Username", "Pwd")
_REPLY = (*_CREDENTIALS, *_strings("PhoneNumber", "PhoneMessage", "ReplyType", "ReplyPath"))
_MMS = (*_CREDENTIALS, *_strings("PhoneNumber", "MMSSubject", "MMSMessageText"))
_DOC = (Param("docXML", Kind.DOCUMENT),)
_WITH_REPLY = OperationSpec("LodgeSMSMessageWithReply", _REPLY, xml_result=False, http=True)

_SPECS: Final = (
    OperationSpec(
        "LodgeSMSMessage",
        (*_CREDENTIALS, *_strings("PhoneNumber", "PhoneMessage")),
        xml_result=False,
        http=True,
    ),
    OperationSpec(
        "LodgeWAPPush",
        (*_CREDENTIALS, *_strings("PhoneNumber", "ApplicationName", "URL")),
        xml_result=False,
        http=True,
    ),
    _WITH_REPLY,
    replace(_WITH_REPLY, name="LodgeSMSMessageWithReply2"),
    OperationSpec("LodgeSMSMessageWithReplyXML", _REPLY, xml_result=True, http=True),
    OperationSpec(
        "GetMessageStatusXML", (*_CREDENTIALS, Param("MsgID")), xml_result=True, http=True
    ),
    OperationSpec(
        "LodgeMMSMessage",
        (*_MMS, *_strings("FileName", "MMSContentBase64")),
        xml_result=False,
        http=True,
    ),
    OperationSpec(
        "LodgeMultiMMSMessage",
        (
            *_MMS,
            *_strings(
                "FileName",
                "MMSContentBase64",
                "FileName2",
                "MMSContent2Base64",
                "FileName3",
                "MMSContent3Base64",
            ),
        ),
        xml_result=False,
        http=True,
    ),
    OperationSpec("LodgeMultiMMSMessageXML", _DOC, xml_result=True, http=False),
    OperationSpec("LodgeMultiMMSMessageXMLMSGID", _DOC, xml_result=True, http=False),
    OperationSpec(
        "LodgeFAXMessageXML",
        (
            *_CREDENTIALS,
            *_strings("FaxNumber", "FaxSubject", "CoverPageText", "FileName"),
            Param("objFile", Kind.BINARY),
            Param("FileName2"),
            Param("objFile2", Kind.BINARY),
            Param("FileName3"),
            Param("objFile3", Kind.BINARY),
        ),
        xml_result=True,
        http=True,
    ),
    OperationSpec("LodgeMMSMessageByURL", (*_MMS, Param("URL")), xml_result=False, http=True),
    OperationSpec("LodgeXML", _DOC, xml_result=True, http=False),
    OperationSpec("LodgeXMLbyArg", (Param("strdocXML"),), xml_result=True, http=True),
)

CATALOG: Final = MappingProxyType({spec.name: spec for spec in _SPECS})
"""Every operation by name, in the order the WSDL lists them."""

MAX_PARAMETERS: Final = 100
"""Parameters (HTTP) or parameter elements (SOAP) in one request; the widest takes 11."""
