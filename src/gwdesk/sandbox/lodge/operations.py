"""The Lodge operations as plain functions over `Params`, shared by all four ports.

Each returns a `TextResult` or an `XmlResult` and never raises for a caller's mistake:
a refused value becomes the operation's own failure shape (`Error: <reason>` or a
`LodgeResult` with `Result` > 0). Ports only translate wire formats around `run`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Final

from gwdesk.sandbox import validation as v
from gwdesk.sandbox.engine import Draft, iso
from gwdesk.sandbox.lodge import attachments, documents, drafts
from gwdesk.sandbox.lodge.params import Params
from gwdesk.sandbox.lodge.results import (
    RESULT_INVALID,
    RESULT_NOT_FOUND,
    RESULT_OK,
    SUCCESS_TEXT,
    LodgeFailure,
    Result,
    TextResult,
    XmlResult,
    failure_text,
    lodge_result,
    message_status,
)
from gwdesk.sandbox.state import SandboxState
from gwdesk.sandbox.validation import FieldError

Operation = Callable[[SandboxState, Params], Result]
Build = Callable[[Params], tuple[Draft, str]]
"""Turns checked parameters into a draft and its recipient; raises FieldError."""

MMS_SLOTS: Final = (
    ("FileName", "MMSContentBase64"),
    ("FileName2", "MMSContent2Base64"),
    ("FileName3", "MMSContent3Base64"),
)
FAX_SLOTS: Final = (("FileName", "objFile"), ("FileName2", "objFile2"), ("FileName3", "objFile3"))


def _lodge(state: SandboxState, params: Params, build: Build) -> sqlite3.Row:
    """Authenticate first (a stranger learns nothing from validation), then lodge."""
    account = drafts.authenticate(state.conn, params.text("Username"), params.text("Pwd"))
    draft, recipient = build(params)
    return state.engine.lodge(account, draft, recipient)


def _text_operation(build: Build) -> Operation:
    def operation(state: SandboxState, params: Params) -> Result:
        try:
            _lodge(state, params, build)
        except (LodgeFailure, FieldError) as exc:
            return failure_text(exc.message)
        return TextResult(SUCCESS_TEXT)

    return operation


def _xml_operation(build: Build) -> Operation:
    def operation(state: SandboxState, params: Params) -> Result:
        try:
            row = _lodge(state, params, build)
        except LodgeFailure as exc:
            return XmlResult(lodge_result(exc.code, exc.message))
        except FieldError as exc:
            return XmlResult(lodge_result(RESULT_INVALID, exc.message))
        return XmlResult(lodge_result(RESULT_OK, "", row["message_id"]))

    return operation


# ---- drafts from parameters ----------------------------------------------------------------


def _recipient(params: Params, field: str = "PhoneNumber") -> str:
    return v.phone_number(params.text(field), field)


def _sms(params: Params) -> tuple[Draft, str]:
    recipient = _recipient(params)
    return drafts.sms(params.text("PhoneMessage"), "PhoneMessage"), recipient


def _two_way_sms(params: Params) -> tuple[Draft, str]:
    recipient = _recipient(params)
    reply = drafts.two_way_reply(params.text("ReplyType"), params.text("ReplyPath"))
    return drafts.sms(params.text("PhoneMessage"), "PhoneMessage", reply), recipient


def _wap(params: Params) -> tuple[Draft, str]:
    recipient = _recipient(params)
    draft = drafts.wap(params.text("ApplicationName"), params.text("URL"), "ApplicationName", "URL")
    return draft, recipient


def _slots(params: Params, slots: tuple[tuple[str, str], ...]) -> Iterator[drafts.FileInput]:
    """Each file slot, decoded only when reached (so a refusal stops further decoding)."""
    for name_field, content_field in slots:
        yield (params.text(name_field), params.binary(content_field), name_field)


def _mms_slots(count: int) -> Build:
    def build(params: Params) -> tuple[Draft, str]:
        recipient = _recipient(params)
        files = drafts.collect_files(
            _slots(params, MMS_SLOTS[:count]), attachments.MMS, "MMSContentBase64"
        )
        draft = drafts.mms(
            params.text("MMSSubject"),
            params.text("MMSMessageText"),
            files,
            subject_field="MMSSubject",
            text_field="MMSMessageText",
            files_field="MMSContentBase64",
        )
        return draft, recipient

    return build


def _mms_by_url(params: Params) -> tuple[Draft, str]:
    recipient = _recipient(params)
    draft = drafts.mms_by_url(
        params.text("MMSSubject"), params.text("MMSMessageText"), params.text("URL")
    )
    return draft, recipient


def _fax(params: Params) -> tuple[Draft, str]:
    recipient = _recipient(params, "FaxNumber")
    files = drafts.collect_files(_slots(params, FAX_SLOTS), attachments.FAX, "objFile")
    draft = drafts.fax(
        params.text("FaxSubject"),
        params.text("CoverPageText"),
        files,
        subject_field="FaxSubject",
        cover_field="CoverPageText",
        files_field="objFile",
    )
    return draft, recipient


# ---- status --------------------------------------------------------------------------------


def get_message_status_xml(state: SandboxState, params: Params) -> Result:
    """The status of one of the account's messages; another account's id reads as unknown."""
    msg_id = (params.text("MsgID") or "").strip()[:100]
    try:
        account = drafts.authenticate(state.conn, params.text("Username"), params.text("Pwd"))
    except LodgeFailure as exc:
        return XmlResult(message_status(exc.code, exc.message, msg_id))
    if not msg_id:
        return XmlResult(message_status(RESULT_INVALID, "MsgID is required.", msg_id))
    rows = state.engine.status_by_message_id(account, msg_id)
    if not rows:
        return XmlResult(
            message_status(RESULT_NOT_FOUND, f"No message has MsgID {msg_id!r}.", msg_id)
        )
    row = rows[0]
    return XmlResult(
        message_status(
            RESULT_OK,
            "",
            row["message_id"],
            phone_number=row["to_number"],
            status=row["status"],
            date_lodged=iso(row["lodged_us"], state.zone, "seconds") or "",
            date_sent=iso(row["sent_us"], state.zone, "seconds") or "",
        )
    )


# ---- the table -----------------------------------------------------------------------------

_TWO_WAY_TEXT: Final = _text_operation(_two_way_sms)
"""`LodgeSMSMessageWithReply`, and `LodgeSMSMessageWithReply2` (the real service's twin a
deployed client calls): one operation under two names, so the two cannot drift apart."""

OPERATIONS: Final[Mapping[str, Operation]] = MappingProxyType(
    {
        "LodgeSMSMessage": _text_operation(_sms),
        "LodgeWAPPush": _text_operation(_wap),
        "LodgeSMSMessageWithReply": _TWO_WAY_TEXT,
        "LodgeSMSMessageWithReply2": _TWO_WAY_TEXT,
        "LodgeSMSMessageWithReplyXML": _xml_operation(_two_way_sms),
        "GetMessageStatusXML": get_message_status_xml,
        "LodgeMMSMessage": _text_operation(_mms_slots(1)),
        "LodgeMultiMMSMessage": _text_operation(_mms_slots(3)),
        "LodgeMultiMMSMessageXML": documents.operation(
            "docXML", documents.MMS_DOCUMENT, with_ids=False
        ),
        "LodgeMultiMMSMessageXMLMSGID": documents.operation(
            "docXML", documents.MMS_DOCUMENT, with_ids=True
        ),
        "LodgeFAXMessageXML": _xml_operation(_fax),
        "LodgeMMSMessageByURL": _text_operation(_mms_by_url),
        "LodgeXML": documents.operation("docXML", documents.ANY_DOCUMENT, with_ids=True),
        "LodgeXMLbyArg": documents.operation("strdocXML", documents.ANY_DOCUMENT, with_ids=True),
    }
)


def run(state: SandboxState, name: str, params: Params) -> Result:
    """Run operation `name` (a key of `catalog.CATALOG`) with the port's parameters."""
    return OPERATIONS[name](state, params)
