"""An MMS (attachments, by URL, multi-MMS) or an eFax, as composed and as checked.

The form's values become a checked `MediaMessage` only when everything the gateway
layer would refuse has been refused here, naming the Lodge field (`PhoneNumber`,
`MMSSubject`, `FileName2`, `objFile`, ...), so the Fax / MMS tab can point at the
input or the attachment to fix and no request is made. The value and file checks
are the Lodge client's own (`lodge.documents`, `lodge.files`), called, not copied;
the file rules, `check_file` and `http_url` are named here for the Fax / MMS tab,
which checks a file as it is dropped and a URL as it is typed.
`lodge_call` is the Lodge request itself (the outbox runner makes it); its results
become history entries like every other send's. Qt-free.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final

from gwdesk.app.sms import refuse
from gwdesk.domain.errors import AmbiguousSendError, GatewayError
from gwdesk.domain.models import LodgeResult, LodgeText
from gwdesk.domain.numbers import NumberError, check_recipients, display, normalise
from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.lodge.documents import MAX_DOCUMENT_MESSAGES, LodgeMms, optional_text
from gwdesk.gateway.lodge.documents import http_url as http_url
from gwdesk.gateway.lodge.files import FAX_RULES as FAX_RULES
from gwdesk.gateway.lodge.files import MMS_RULES as MMS_RULES
from gwdesk.gateway.lodge.files import FileRules as FileRules
from gwdesk.gateway.lodge.files import LodgeFile
from gwdesk.gateway.lodge.files import check_file as check_file
from gwdesk.gateway.service import LodgeClient
from gwdesk.store.history import HistoryEntry


class Mode(StrEnum):
    MMS = "mms"
    MMS_URL = "mms_url"
    MULTI_MMS = "multi_mms"
    FAX = "fax"

    @property
    def label(self) -> str:
        return MODE_LABELS[self]

    @property
    def channel(self) -> str:
        """The history's channel: what the message is, however it was lodged."""
        return "FAX" if self is Mode.FAX else "MMS"

    @property
    def rules(self) -> FileRules:
        return FAX_RULES if self is Mode.FAX else MMS_RULES


MODE_LABELS: Final = {
    Mode.MMS: "MMS",
    Mode.MMS_URL: "MMS by URL",
    Mode.MULTI_MMS: "Multi-MMS",
    Mode.FAX: "Fax",
}
MODE_TIPS: Final = {
    Mode.MMS: "One MMS with up to three attachments (LodgeMMSMessage / LodgeMultiMMSMessage)",
    Mode.MMS_URL: "One MMS whose content the gateway fetches from a web address "
    "(LodgeMMSMessageByURL)",
    Mode.MULTI_MMS: "The same MMS to several recipients in one document, with a MsgID each "
    "(LodgeMultiMMSMessageXMLMSGID)",
    Mode.FAX: "An eFax of up to three PDF, TIFF or text files and a cover page "
    "(LodgeFAXMessageXML)",
}
PORT_LABELS: Final[dict[LodgePort, str]] = {
    "soap11": "SOAP 1.1",
    "soap12": "SOAP 1.2",
    "http_get": "HTTP GET",
    "http_post": "HTTP POST",
}
#: Lodge's answer to a text operation that lodged its message.
SENT_TEXT: Final = "Message sent successfully."
_SPLIT: Final = re.compile(r"[\n,;]+")


@dataclass(frozen=True, slots=True)
class Attached:
    """One listed file as the form holds it."""

    name: str
    content: bytes | None = None
    """None while it is still being read, or when it was refused unread."""
    error: str = ""
    reading: bool = False


@dataclass(frozen=True, slots=True)
class MediaForm:
    """Everything the tab's current view holds, as typed."""

    mode: Mode
    recipient: str = ""
    recipients: str = ""
    """Multi-MMS: numbers one a line (commas and semicolons also separate)."""
    subject: str = ""
    text: str = ""
    """The MMS text, or the fax's cover page."""
    url: str = ""
    files: tuple[Attached, ...] = ()


@dataclass(frozen=True, slots=True)
class MediaMessage:
    """A checked MMS or fax, with its recipients (a Lodge request names them)."""

    mode: Mode
    recipients: tuple[str, ...]
    subject: str = ""
    text: str = ""
    url: str | None = None
    files: tuple[LodgeFile, ...] = field(default=(), repr=False)

    def shown_text(self) -> str:
        """What the history keeps as the message: one line of subject and content, then
        the text (or cover page)."""
        head = [f"Subject: {self.subject}"] if self.subject else []
        if self.url:
            head.append(f"content from {self.url}")
        if self.files:
            listed = ", ".join(f"{f.file_name} ({len(f.content):,} bytes)" for f in self.files)
            head.append(f"{'files' if self.mode is Mode.FAX else 'attachments'}: {listed}")
        first = " · ".join(head)
        lines = [first[:1].upper() + first[1:]] if first else []
        if self.text:
            lines.append(self.text if self.mode is not Mode.FAX else f"Cover page: {self.text}")
        return "\n".join(lines)

    def describe(self) -> str:
        """`MMS to +61 412 345 678`, `Multi-MMS to 3 recipients`, for state lines."""
        to = (
            display(self.recipients[0])
            if len(self.recipients) == 1
            else f"{len(self.recipients)} recipients"
        )
        return f"{self.mode.label} to {to}"


@dataclass(frozen=True, slots=True)
class Lodged:
    """The gateway's answer for one message."""

    recipient: str
    ok: bool
    message_id: str | None = None
    detail: str = ""
    answer: LodgeText | LodgeResult | None = field(default=None, repr=False, compare=False)
    """Lodge's own answer (its operation, text or result), for whoever shows it as such."""


# ---- checks ------------------------------------------------------------------------------


def check_number(text: str, region: str, wire_field: str, what: str) -> str:
    if not text.strip():
        raise refuse(f"Type the {what}.", wire_field)
    try:
        return normalise(text, region)
    except NumberError as exc:
        raise refuse(f"The {what} is not usable: {exc.reason}.", wire_field) from None


def split_numbers(text: str) -> list[str]:
    return [part.strip() for part in _SPLIT.split(text) if part.strip()]


def check_numbers(text: str, region: str) -> tuple[str, ...]:
    """Multi-MMS recipients: all usable, deduplicated, at most one document's worth."""
    entries = split_numbers(text)
    if not entries:
        raise refuse("Add the recipients, one number a line.", "Messages")
    checked = check_recipients(entries, region)
    if checked.rejected:
        shown = "; ".join(f"{r.text!r}: {r.reason}" for r in checked.rejected[:3])
        more = f" (and {len(checked.rejected) - 3} more)" if len(checked.rejected) > 3 else ""
        raise refuse(f"Not usable: {shown}{more}. Fix or remove them.", "Messages")
    if len(checked.numbers) > MAX_DOCUMENT_MESSAGES:
        raise refuse(
            f"{len(checked.numbers)} recipients: one multi-MMS document holds at most "
            f"{MAX_DOCUMENT_MESSAGES}. Use the Batch tab for more.",
            "Messages",
        )
    return checked.numbers


def check_files(files: Sequence[Attached], rules: FileRules, *, required: bool) -> list[LodgeFile]:
    """Every listed file readable and accepted, within count and total: else the field to fix
    (`FileName`, `FileName2`, `FileName3` for one file; the content field for the set)."""
    content_field = "objFile" if rules is FAX_RULES else "MMSContentBase64"
    if required and not files:
        raise refuse(
            f"{rules.kind[0].upper()}{rules.kind[1:]} needs at least one attachment: "
            "drop a file here or use Add files….",
            content_field,
        )
    if len(files) > rules.max_files:
        raise refuse(f"At most {rules.max_files} files; remove one.", content_field)
    for index, attached in enumerate(files):
        if attached.reading:
            raise refuse(
                f"{attached.name} is still being read; send again in a moment.",
                file_field(index),
            )
        if attached.error or attached.content is None:
            raise refuse(attached.error or f"{attached.name} cannot be sent.", file_field(index))
    total = sum(len(a.content or b"") for a in files)
    if total > rules.max_bytes:
        raise refuse(
            f"The files come to {total:,} bytes; {rules.kind} may carry {rules.max_bytes:,} "
            f"({rules.size_label}) in all. Remove or shrink a file.",
            content_field,
        )
    checked = []
    for index, attached in enumerate(files):
        assert attached.content is not None
        ok = check_file(attached.name, attached.content, rules, file_field(index))
        checked.append(LodgeFile(ok.file_name, ok.content))
    return checked


def file_field(index: int) -> str:
    return "FileName" if index == 0 else f"FileName{index + 1}"


def check_media(values: MediaForm, region: str) -> MediaMessage:
    """A checked request, or the `ValidationError` of the first thing to fix."""
    mode = values.mode
    if mode is Mode.FAX:
        to = check_number(values.recipient, region, "FaxNumber", "fax number")
        subject = optional_text(values.subject, "FaxSubject")
        cover = optional_text(values.text, "CoverPageText")
        files = check_files(values.files, FAX_RULES, required=False)
        if not files and not cover.strip():
            raise refuse(
                "A fax needs at least one file or a cover page: add a PDF, TIFF or text "
                "file, or type the cover page.",
                "objFile",
            )
        return MediaMessage(mode, (to,), subject, cover, files=tuple(files))
    if mode is Mode.MULTI_MMS:
        recipients = check_numbers(values.recipients, region)
    else:
        recipients = (check_number(values.recipient, region, "PhoneNumber", "recipient's number"),)
    subject = optional_text(values.subject, "MMSSubject")
    text = optional_text(values.text, "MMSMessageText")
    if mode is Mode.MMS_URL:
        if not values.url.strip():
            raise refuse("Type the web address of the MMS content.", "URL")
        return MediaMessage(mode, recipients, subject, text, url=http_url(values.url, "URL"))
    files = check_files(values.files, MMS_RULES, required=True)
    return MediaMessage(mode, recipients, subject, text, files=tuple(files))


# ---- delivering --------------------------------------------------------------------------


def outbox_description(request: MediaMessage) -> dict[str, object]:
    """What the outbox keeps of a request: its text and the files' names and sizes (the
    files themselves are not copied)."""
    return {
        "label": f"{request.mode.label}: {request.subject or request.text or request.url or ''}",
        "mode": request.mode.value,
        "subject": request.subject,
        "text": request.text,
        "url": request.url,
        "files": [{"name": f.file_name, "bytes": len(f.content)} for f in request.files],
    }


async def lodge_call(lodge: LodgeClient, request: MediaMessage) -> list[Lodged]:
    """The Lodge request for `request`: one `Lodged` per message (a multi-MMS names each)."""
    if request.mode is Mode.FAX:
        result = await lodge.send_fax(
            request.recipients[0], request.files, subject=request.subject, cover_page=request.text
        )
        return [from_result(request.recipients[0], result)]
    if request.mode is Mode.MULTI_MMS:
        messages = [
            LodgeMms(to, request.files, request.subject, request.text) for to in request.recipients
        ]
        answer = await lodge.send_mms_document(messages)
        pairs = itertools.zip_longest(request.recipients, answer.results)
        return [
            from_result(to, found) if found is not None else missing(to)
            for to, found in pairs
            if to is not None
        ]
    text = await lodge.send_mms(
        request.recipients[0],
        files=request.files,
        url=request.url,
        subject=request.subject,
        text=request.text,
    )
    return [from_text(request.recipients[0], text)]


def from_text(recipient: str, answer: LodgeText) -> Lodged:
    return Lodged(
        recipient,
        True,
        detail=f"Lodge answered {answer.text!r} (a text operation returns no MessageId).",
        answer=answer,
    )


def from_result(recipient: str, result: LodgeResult) -> Lodged:
    if result.ok:
        return Lodged(recipient, True, result.msg_id, detail="Lodge: result 0", answer=result)
    reason = result.error_msg or f"result {result.result}"
    return Lodged(
        recipient, False, detail=f"The gateway refused this message: {reason}", answer=result
    )


def missing(recipient: str) -> Lodged:
    return Lodged(
        recipient,
        False,
        detail="The gateway's answer has no result for this message: check the Logs tab "
        "before sending it again.",
    )


def summary(request: MediaMessage, lodged: Sequence[Lodged]) -> tuple[str, bool]:
    """(one line about the outcome, all lodged?)."""
    good = [item for item in lodged if item.ok]
    if len(lodged) == 1:
        item = lodged[0]
        if item.ok:
            said = f"MsgID {item.message_id}" if item.message_id else SENT_TEXT
            return (f"{request.describe()}: {said}", True)
        return (f"{request.describe()} was not lodged. {item.detail}", False)
    text = f"{request.mode.label}: {len(good)} of {len(lodged)} messages lodged"
    bad = [item for item in lodged if not item.ok]
    if bad:
        first = bad[0]
        text += f"; {display(first.recipient)}: {first.detail}"
        if len(bad) > 1:
            text += f" (and {len(bad) - 1} more failed)"
    return (text + ".", not bad)


def history_entries(
    request: MediaMessage, lodged: Sequence[Lodged], at: datetime
) -> list[HistoryEntry]:
    return [
        HistoryEntry(
            at=at,
            channel=request.mode.channel,
            recipients=item.recipient,
            text=request.shown_text(),
            ok=item.ok,
            message_id=item.message_id,
            status="Lodged" if item.ok else None,
            detail=f"{request.mode.label} · {item.detail}",
        )
        for item in lodged
    ]


def failure_entry(request: MediaMessage, error: GatewayError, at: datetime) -> HistoryEntry:
    """A send the gateway refused, or whose fate is unknown (an answer lost)."""
    to = request.recipients[0] if len(request.recipients) == 1 else ", ".join(request.recipients)
    return HistoryEntry(
        at=at,
        channel=request.mode.channel,
        recipients=to,
        text=request.shown_text(),
        ok=False,
        status="Unknown" if isinstance(error, AmbiguousSendError) else "Failed",
        detail=f"{request.mode.label} · {error.message}",
    )


# ---- where an error belongs --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """The input an error points at: `recipient`, `subject`, `text`, `url`, `file` (with
    `index`), `files` (the set), or `None` (the tab's error line)."""

    kind: str | None
    index: int = 0


_FIELD_TARGETS: Final = {
    "PhoneNumber": "recipient",
    "FaxNumber": "recipient",
    "Messages": "recipient",
    "Recipients": "recipient",
    "MMSSubject": "subject",
    "FaxSubject": "subject",
    "Subject": "subject",
    "MMSMessageText": "text",
    "CoverPageText": "text",
    "Text": "text",
    "URL": "url",
    "MMSContentBase64": "files",
    "objFile": "files",
    "Attachment": "files",
}
_FILE_FIELD: Final = re.compile(
    r"(?:FileName|objFile|MMSContent|Attachment ?)(\d?)(?:Base64)?", re.IGNORECASE
)
_MESSAGE_PREFIX: Final = re.compile(r"Message \d+ ")


def target_of(wire_field: str | None) -> Target:
    """Where an error naming `wire_field` belongs (document fields read as Message N X)."""
    if not wire_field:
        return Target(None)
    name = _MESSAGE_PREFIX.sub("", wire_field.strip(), count=1)
    kind = _FIELD_TARGETS.get(name)
    if kind is not None:
        return Target(kind)
    matched = _FILE_FIELD.fullmatch(name)
    if matched is not None:
        number = int(matched.group(1) or 1)
        return Target("file", number - 1)
    return Target(None)
