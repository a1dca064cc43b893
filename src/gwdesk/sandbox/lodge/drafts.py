"""From checked values to engine `Draft`s: one place for every Lodge message kind.

Both the parameter operations (`operations.py`) and the `<Lodge>` document
operations (`documents.py`) build their messages here, so a WAP push or a fax means
the same thing whichever way it was lodged. Field names are passed in because the two
spell them differently (`PhoneMessage` versus `<Text>`), and errors must name the
caller's field.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Final

from gwdesk.sandbox import validation as v
from gwdesk.sandbox.db import Account, verify_password
from gwdesk.sandbox.engine import SERVICE_LODGE, Attachment, Draft
from gwdesk.sandbox.lodge import attachments
from gwdesk.sandbox.lodge.results import AUTH_FAILURE, RESULT_AUTH, LodgeFailure
from gwdesk.sandbox.validation import FieldError

MAX_SUBJECT: Final = 100
MAX_LONG_TEXT: Final = 5000
"""MMS text and fax cover pages; SMS text follows the contract's 10-part limit instead."""
MAX_URL: Final = 2000

FileInput = tuple[str | None, bytes | None, str]
"""(file name, decoded content, the name field to blame) of one file slot."""


def authenticate(conn: sqlite3.Connection, username: str | None, pwd: str | None) -> Account:
    """The account, or a `Result` 1 failure that never says which half was wrong."""
    if not username or pwd is None:
        raise LodgeFailure(RESULT_AUTH, AUTH_FAILURE)
    account = verify_password(conn, username.strip(), pwd)
    if account is None:
        raise LodgeFailure(RESULT_AUTH, AUTH_FAILURE)
    return account


def _required_text(value: str | None, field: str, limit: int) -> str:
    text = v.optional_text(value, field, limit)
    if text is None or not text.strip():
        raise FieldError(field, f"{field} is required.")
    return text


def _http_url(value: str | None, field: str) -> str:
    url = _required_text(value, field, MAX_URL).strip()
    if not v.is_http_url(url):
        raise FieldError(field, f"{field} must be an http(s) URL: {url[:60]!r}.")
    return url


def sms(text: str | None, text_field: str, reply: tuple[str, str] = ("", "")) -> Draft:
    return Draft(
        type="SMS",
        text=v.message_text(text, text_field),
        service_id=SERVICE_LODGE,
        reply_type=reply[0],
        reply_path=reply[1],
    )


def two_way_reply(reply_type: str | None, reply_path: str | None) -> tuple[str, str]:
    """A two-way SMS must say where replies go; the contract's reply types apply."""
    if reply_type is None or not reply_type.strip():
        raise FieldError(
            "ReplyType",
            "ReplyType is required for a two-way SMS: EMAIL, WWW, HTTP, TCP/IP or HEADER.",
        )
    return v.reply_options(reply_type, reply_path)


def wap(application_name: str | None, url: str | None, name_field: str, url_field: str) -> Draft:
    """A WAP push: the URL is both the text shown in logs and the `url`; the name is the subject."""
    link = _http_url(url, url_field)
    return Draft(
        type="WAP",
        text=link,
        service_id=SERVICE_LODGE,
        subject=v.optional_text(application_name, name_field, MAX_SUBJECT),
        url=link,
    )


def collect_files(
    inputs: Iterable[FileInput], limits: attachments.Limits, content_field: str
) -> list[Attachment]:
    """Check each filled slot, stopping as soon as the count or total size is exceeded.

    A slot with neither a name nor content is unused; a name without content (or the
    reverse) is an error naming the slot.
    """
    files: list[Attachment] = []
    for name, data, name_field in inputs:
        if not (name or "").strip() and not data:
            continue
        files.append(attachments.attachment(name, data or b"", limits, name_field))
        attachments.check_total(files, limits, content_field)
    return files


def mms(
    subject: str | None,
    text: str | None,
    files: list[Attachment],
    *,
    subject_field: str,
    text_field: str,
    files_field: str,
) -> Draft:
    if not files:
        raise FieldError(files_field, "An MMS needs at least one attachment.")
    return Draft(
        type="MMS",
        text=v.optional_text(text, text_field, MAX_LONG_TEXT) or "",
        service_id=SERVICE_LODGE,
        subject=v.optional_text(subject, subject_field, MAX_SUBJECT),
        attachments=files,
    )


def mms_by_url(subject: str | None, text: str | None, url: str | None) -> Draft:
    link = _http_url(url, "URL")
    return Draft(
        type="MMS",
        text=v.optional_text(text, "MMSMessageText", MAX_LONG_TEXT) or "",
        service_id=SERVICE_LODGE,
        subject=v.optional_text(subject, "MMSSubject", MAX_SUBJECT),
        url=link,
    )


def fax(
    subject: str | None,
    cover_page: str | None,
    files: list[Attachment],
    *,
    subject_field: str,
    cover_field: str,
    files_field: str,
) -> Draft:
    """A fax: the subject, the cover page as its text, and its files (a cover page alone will do)."""
    cover = v.optional_text(cover_page, cover_field, MAX_LONG_TEXT) or ""
    if not files and not cover.strip():
        raise FieldError(files_field, f"A fax needs at least one file or a {cover_field}.")
    return Draft(
        type="FAX",
        text=cover,
        service_id=SERVICE_LODGE,
        subject=v.optional_text(subject, subject_field, MAX_SUBJECT),
        attachments=files,
    )
