"""Typed Lodge messages, their checks, and the `<Lodge>` documents built from them.

The document operations take an XML document (contract shape)::

    <Lodge><Username/><Pwd/><Messages>
      <Message Type="SMS|MMS|WAP|FAX"><PhoneNumber/><Text/><Subject/>
        <Attachment FileName="...">base64</Attachment>...
      </Message>...
    </Messages></Lodge>

It is built element by element with lxml, never by joining strings, so an
operator's text (`<`, `&`, quotes) is always data and never markup. The value
checks here are also used by the parameter operations, so a number or a text is
judged the same whichever way it is lodged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from lxml import etree

from gwdesk.domain.models import Secret
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.segments import MAX_PARTS, count_segments
from gwdesk.gateway.errors import ValidationError
from gwdesk.gateway.lodge.files import (
    FAX_RULES,
    MMS_RULES,
    CheckedFile,
    FileSource,
    document_fields,
    read_files,
)
from gwdesk.gateway.lodge.xml import clean_text

#: Messages in one `<Lodge>` document, like the REST interface's 100 recipients a request.
MAX_DOCUMENT_MESSAGES: Final = 100
MAX_URL: Final = 2000


def _refuse(message: str, field: str) -> ValidationError:
    return ValidationError(message, field=field, status=None)


# ---- values --------------------------------------------------------------------------------


def number(text: str, region: str, field: str) -> str:
    """International digits, read from the profile's region when typed nationally."""
    try:
        return normalise(text, region)
    except NumberError as exc:
        raise _refuse(f"{field}: {exc}", field) from None


def sms_text(text: str, field: str) -> str:
    if not text or not text.strip():
        raise _refuse(f"{field}: the message is empty.", field)
    clean_text(text, field)
    info = count_segments(text)
    if info.too_long:
        raise _refuse(
            f"{field}: the message needs {info.parts} SMS parts ({info.encoding}); "
            f"the gateway allows at most {MAX_PARTS}.",
            field,
        )
    return text


def optional_text(text: str | None, field: str) -> str:
    return clean_text(text or "", field)


def required_text(text: str | None, field: str) -> str:
    if text is None or not text.strip():
        raise _refuse(f"{field} is required.", field)
    return clean_text(text, field)


def http_url(text: str | None, field: str) -> str:
    url = required_text(text, field).strip()
    if len(url) > MAX_URL:
        raise _refuse(f"{field} is longer than {MAX_URL} characters.", field)
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url)
    ):
        raise _refuse(f"{field} must be an http(s) address, not {url[:60]!r}.", field)
    return url


# ---- messages ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LodgeSms:
    phone_number: str
    text: str


@dataclass(frozen=True, slots=True)
class LodgeWap:
    """A WAP push: the application name travels as the subject, the URL as the text."""

    phone_number: str
    application_name: str
    url: str


@dataclass(frozen=True, slots=True)
class LodgeMms:
    phone_number: str
    files: Sequence[FileSource]
    subject: str = ""
    text: str = ""


@dataclass(frozen=True, slots=True)
class LodgeFax:
    """A fax: the cover page travels as the text; a cover page alone will do."""

    phone_number: str
    files: Sequence[FileSource] = ()
    subject: str = ""
    cover_page: str = ""


LodgeMessage = LodgeSms | LodgeWap | LodgeMms | LodgeFax


@dataclass(frozen=True, slots=True)
class _Checked:
    kind: str
    phone_number: str
    text: str
    subject: str
    files: tuple[CheckedFile, ...]


async def _check(message: LodgeMessage, index: int, region: str) -> _Checked:
    where = f"Message {index}"
    phone = number(message.phone_number, region, f"{where} PhoneNumber")
    if isinstance(message, LodgeSms):
        return _Checked("SMS", phone, sms_text(message.text, f"{where} Text"), "", ())
    if isinstance(message, LodgeWap):
        name = optional_text(message.application_name, f"{where} Subject")
        return _Checked("WAP", phone, http_url(message.url, f"{where} Text"), name, ())
    fields = document_fields(index)
    if isinstance(message, LodgeMms):
        if not message.files:
            raise _refuse(f"{where}: an MMS needs at least one attachment.", fields.content)
        files = await read_files(message.files, MMS_RULES, fields)
        subject = optional_text(message.subject, f"{where} Subject")
        return _Checked(
            "MMS", phone, optional_text(message.text, f"{where} Text"), subject, tuple(files)
        )
    files = await read_files(message.files, FAX_RULES, fields)
    cover = optional_text(message.cover_page, f"{where} Text")
    if not files and not cover.strip():
        raise _refuse(f"{where}: a fax needs at least one file or a cover page.", fields.content)
    subject = optional_text(message.subject, f"{where} Subject")
    return _Checked("FAX", phone, cover, subject, tuple(files))


def _add(parent: etree._Element, name: str, text: str) -> etree._Element:
    element = etree.SubElement(parent, name)
    if text:
        element.text = text
    return element


async def build_document(
    messages: Sequence[LodgeMessage],
    username: str,
    password: Secret,
    region: str,
    *,
    only: type[LodgeMms] | None = None,
) -> etree._Element:
    """A `<Lodge>` document; every message is checked first, so a bad one sends nothing.

    `only` restricts the kinds (the multi-MMS operations take MMS only).
    """
    if not messages:
        raise _refuse("A <Lodge> document needs at least one message.", "Messages")
    if len(messages) > MAX_DOCUMENT_MESSAGES:
        raise _refuse(
            f"A <Lodge> document holds at most {MAX_DOCUMENT_MESSAGES} messages; "
            f"{len(messages)} were given.",
            "Messages",
        )
    checked = []
    for index, message in enumerate(messages, 1):
        if only is not None and not isinstance(message, only):
            raise _refuse(
                f"Message {index}: this operation lodges MMS messages only.", f"Message {index}"
            )
        checked.append(await _check(message, index, region))
    root = etree.Element("Lodge")
    _add(root, "Username", clean_text(username, "Username"))
    _add(root, "Pwd", clean_text(password.reveal(), "Pwd"))
    container = etree.SubElement(root, "Messages")
    for item in checked:
        element = etree.SubElement(container, "Message", Type=item.kind)
        _add(element, "PhoneNumber", item.phone_number)
        _add(element, "Text", item.text)
        if item.subject:
            _add(element, "Subject", item.subject)
        for file in item.files:
            attachment = etree.SubElement(element, "Attachment", FileName=file.file_name)
            attachment.text = file.base64()
    return root


def document_text(document: etree._Element) -> str:
    """The document as the string `LodgeXMLbyArg` takes."""
    return etree.tostring(document, encoding="unicode")
