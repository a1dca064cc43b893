"""The `<Lodge>` document operations: LodgeXML, LodgeXMLbyArg and the two multi-MMS ones.

The document (contract shape)::

    <Lodge><Username/><Pwd/><Messages>
      <Message Type="SMS|MMS|WAP|FAX"><PhoneNumber/><Text/><Subject/>
        <Attachment FileName="...">base64</Attachment>...
      </Message>...
    </Messages></Lodge>

The result is `<LodgeResults>` holding one `LodgeResult` per `<Message>`, in document
order; each message succeeds or fails on its own. A failure of the document as a whole
(credentials, no document, no messages) is a single `LodgeResult` with `Result` > 0.
Element names are matched without their namespace, so a document written in the
service's namespace reads the same as a bare one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from lxml import etree

from gwdesk.sandbox import validation as v
from gwdesk.sandbox.engine import Attachment, Draft
from gwdesk.sandbox.lodge import attachments, drafts
from gwdesk.sandbox.lodge.params import Params, decode_base64
from gwdesk.sandbox.lodge.results import (
    RESULT_INVALID,
    RESULT_OK,
    LodgeFailure,
    Result,
    XmlResult,
    lodge_result,
    lodge_results,
)
from gwdesk.sandbox.lodge.xmlsafe import elements, local_name, text_of
from gwdesk.sandbox.state import SandboxState
from gwdesk.sandbox.validation import FieldError

MAX_MESSAGES: Final = 100
"""Messages in one document, like the REST interface's 100 recipients."""


@dataclass(frozen=True, slots=True)
class DocumentKind:
    default_type: str
    """The `Type` of a `<Message>` that has none."""
    types: tuple[str, ...]


ANY_DOCUMENT: Final = DocumentKind("SMS", ("SMS", "MMS", "WAP", "FAX"))
MMS_DOCUMENT: Final = DocumentKind("MMS", ("MMS",))


def _child(parent: etree._Element, name: str) -> etree._Element | None:
    for child in elements(parent):
        if local_name(child) == name:
            return child
    return None


def _child_text(parent: etree._Element, name: str) -> str | None:
    child = _child(parent, name)
    return None if child is None else text_of(child)


def _messages(document: etree._Element, field: str) -> list[etree._Element]:
    container = _child(document, "Messages")
    found = [] if container is None else elements(container)
    messages = [m for m in found if local_name(m) == "Message"]
    if not messages:
        raise FieldError(field, f"{field} holds no <Messages><Message> elements.")
    if len(messages) > MAX_MESSAGES:
        raise FieldError(
            field,
            f"{field} holds {len(messages)} messages; at most {MAX_MESSAGES} are allowed.",
        )
    return messages


def _files(message: etree._Element, limits: attachments.Limits) -> list[Attachment]:
    found = [e for e in elements(message) if local_name(e) == "Attachment"]
    attachments.check_count(len(found), limits, "Attachment")
    inputs = (
        (e.get("FileName"), decode_base64(text_of(e), f"Attachment {n}"), f"Attachment {n}")
        for n, e in enumerate(found, 1)
    )
    return drafts.collect_files(inputs, limits, "Attachment")


def _draft(message: etree._Element, kind: DocumentKind) -> tuple[Draft, str]:
    kind_name = (message.get("Type") or kind.default_type).strip().upper()
    if kind_name not in kind.types:
        raise FieldError(
            "Type",
            f"Type {kind_name[:20]!r} cannot be lodged by this operation; "
            f"use {', '.join(kind.types)}.",
        )
    recipient = v.phone_number(_child_text(message, "PhoneNumber"), "PhoneNumber")
    text = _child_text(message, "Text")
    subject = _child_text(message, "Subject")
    if kind_name in ("SMS", "WAP") and _child(message, "Attachment") is not None:
        shown = "An SMS" if kind_name == "SMS" else "A WAP push"
        raise FieldError("Attachment", f"{shown} cannot carry attachments.")
    if kind_name == "SMS":
        return drafts.sms(text, "Text"), recipient
    if kind_name == "WAP":
        return drafts.wap(subject, text, "Subject", "Text"), recipient
    if kind_name == "MMS":
        files = _files(message, attachments.MMS)
        draft = drafts.mms(
            subject,
            text,
            files,
            subject_field="Subject",
            text_field="Text",
            files_field="Attachment",
        )
        return draft, recipient
    files = _files(message, attachments.FAX)
    draft = drafts.fax(
        subject, text, files, subject_field="Subject", cover_field="Text", files_field="Attachment"
    )
    return draft, recipient


def lodge_document(
    state: SandboxState, params: Params, field: str, kind: DocumentKind, *, with_ids: bool
) -> XmlResult:
    def failed(code: int, message: str) -> XmlResult:
        return XmlResult(lodge_results([lodge_result(code, message, with_id=with_ids)]))

    try:
        document = params.document(field)
        if document is None:
            raise FieldError(field, f"{field} is required: send a <Lodge> document.")
        if local_name(document) != "Lodge":
            raise FieldError(
                field, f"{field} must hold a <Lodge> document, not <{local_name(document)[:40]}>."
            )
        account = drafts.authenticate(
            state.conn, _child_text(document, "Username"), _child_text(document, "Pwd")
        )
        messages = _messages(document, field)
    except LodgeFailure as exc:
        return failed(exc.code, exc.message)
    except FieldError as exc:
        return failed(RESULT_INVALID, exc.message)
    results = []
    for index, message in enumerate(messages, 1):
        try:
            draft, recipient = _draft(message, kind)
        except FieldError as exc:
            error = f"Message {index}: {exc.message}"
            results.append(lodge_result(RESULT_INVALID, error, with_id=with_ids))
            continue
        row = state.engine.lodge(account, draft, recipient)
        results.append(lodge_result(RESULT_OK, "", row["message_id"], with_id=with_ids))
    return XmlResult(lodge_results(results))


def operation(
    field: str, kind: DocumentKind, *, with_ids: bool
) -> Callable[[SandboxState, Params], Result]:
    """A document operation reading its `<Lodge>` document from parameter `field`."""

    def run(state: SandboxState, params: Params) -> Result:
        return lodge_document(state, params, field, kind, with_ids=with_ids)

    return run
