"""Request validation shared by the REST and Lodge faces of the sandbox.

Each check raises `FieldError` naming the field, so both faces can report the
same reason in their own shape (a failure envelope, an `Error:` text, a
`LodgeResult`). Limits follow the contract; the few it leaves open are chosen
here and documented in docs/sandbox.md.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

from gwdesk.domain.hidden_chars import describe_hidden, is_hidden
from gwdesk.domain.segments import MAX_PARTS, count_segments

#: ASCII digits only: `\d` would also accept Arabic-Indic, Devanagari, fullwidth... digits.
NUMBER_RE: Final = re.compile(r"\+?([0-9]{8,15})")
#: Digits with an optional `+` and nothing else: a value that must then be a valid number.
NUMBER_LIKE_RE: Final = re.compile(r"\+?[0-9]+")
#: The longest sender name accepted. Handsets show 11 characters (ACMA's rule too), but
#: the gateway takes longer names (a public client sends `AUSGRID Property`, 16), so the
#: bound only stops a pasted paragraph.
MAX_SENDER_NAME: Final = 50
EMAIL_RE: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
REPLY_TYPES: Final = ("EMAIL", "WWW", "HTTP", "HTTPGET", "HTTPPOST", "TCP/IP", "HEADER")
WEBHOOK_REPLY_TYPES: Final = ("HTTP", "HTTPGET", "HTTPPOST")
MAX_EXTERNAL_ID: Final = 100
MAX_TAGS: Final = 255
MAX_RECIPIENTS: Final = 100
SEND_AT_GRACE: Final = timedelta(minutes=5)
#: Later times cannot be shown in every account zone (year 9999 is datetime's last).
LATEST_SEND_AT: Final = datetime(9999, 1, 1, tzinfo=UTC)


class FieldError(ValueError):
    """A request value the gateway refuses; `field` is the request field's name."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def require_string(value: object, field: str, *, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and value == "" and not required):
        if required:
            raise FieldError(field, f"{field} is required.")
        return None
    if not isinstance(value, str):
        raise FieldError(field, f"{field} must be a string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # JSON's "\ud800" escapes decode to lone surrogates, which SQLite cannot store.
        raise FieldError(field, f"{field} holds an unpaired UTF-16 surrogate.") from None
    return value


def phone_number(value: object, field: str) -> str:
    """International digits with an optional leading `+`; returns the digits alone."""
    text = require_string(value, field)
    assert text is not None
    match = NUMBER_RE.fullmatch(text.strip())
    if match is None:
        raise FieldError(
            field,
            f"{field} must be an international number of 8 to 15 digits, "
            f"optionally starting with +: {text[:32]!r}.",
        )
    return match.group(1)


def message_text(value: object, field: str = "Message") -> str:
    text = require_string(value, field)
    assert text is not None
    if not text.strip():
        raise FieldError(field, f"{field} must not be empty.")
    if "\x00" in text:
        raise FieldError(field, f"{field} must not contain NUL characters.")
    info = count_segments(text)
    if info.too_long:
        raise FieldError(
            field,
            f"{field} needs {info.parts} parts ({info.encoding}); at most {MAX_PARTS} are allowed.",
        )
    return text


def sender(value: object, field: str) -> str | None:
    """An optional sender: an international number, or a name kept exactly as given.

    The 11-character limit is the handset's and ACMA's, not the gateway's: longer names
    are accepted. Refused: a value of digits that is not a valid number, a name without
    a letter, longer than `MAX_SENDER_NAME`, or holding a control, format (bidi,
    zero-width) or separator character other than the space.
    """
    text = require_string(value, field, required=False)
    if text is None:
        return None
    number = NUMBER_RE.fullmatch(text)
    if number:
        return number.group(1)
    if NUMBER_LIKE_RE.fullmatch(text):
        raise FieldError(
            field, f"{field} is not a number of 8 to 15 digits, optionally starting with +."
        )
    if len(text) > MAX_SENDER_NAME:
        raise FieldError(field, f"{field} is longer than {MAX_SENDER_NAME} characters.")
    odd = next((c for c in text if c != " " and not c.isprintable()), None)
    if odd is not None:
        what = describe_hidden(odd) if is_hidden(odd) else f"U+{ord(odd):04X}"
        raise FieldError(field, f"{field} holds {what}; a sender name is plain text.")
    if not any(c.isalpha() for c in text):
        raise FieldError(
            field, f"{field} must be a number of 8 to 15 digits or a name with a letter in it."
        )
    return text


def parse_iso_time(value: object, field: str) -> datetime:
    text = require_string(value, field)
    assert text is not None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        hint = " (a '+' in a query string must be sent as %2B)" if " " in text else ""
        raise FieldError(
            field, f"{field} must be an ISO 8601 time with a UTC offset{hint}: {text[:40]!r}."
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise FieldError(field, f"{field} must include a UTC offset: {text[:40]!r}.")
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise FieldError(field, f"{field} is out of range: {text[:40]!r}.") from None


def send_at(value: object, now: datetime, field: str = "SendAt") -> datetime | None:
    if value is None or value == "":
        return None
    moment = parse_iso_time(value, field)
    if moment < now - SEND_AT_GRACE:
        raise FieldError(field, f"{field} is more than 5 minutes in the past.")
    if moment >= LATEST_SEND_AT:
        raise FieldError(field, f"{field} is too far in the future.")
    return moment


def optional_text(value: object, field: str, limit: int) -> str | None:
    text = require_string(value, field, required=False)
    if text is not None and len(text) > limit:
        raise FieldError(field, f"{field} is longer than {limit} characters.")
    return text


def is_http_url(text: str) -> bool:
    # Control characters (NUL, CR, LF...) make a URL that no HTTP client will request.
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def reply_options(reply_type: object, reply_path: object) -> tuple[str, str]:
    """Validate `ReplyType`/`ReplyPath`; returns them normalised (upper-case type)."""
    kind = require_string(reply_type, "ReplyType", required=False)
    path = require_string(reply_path, "ReplyPath", required=False)
    if kind is None:
        if path is not None:
            raise FieldError("ReplyType", "ReplyType is required when ReplyPath is given.")
        return ("", "")
    kind = kind.strip().upper()
    if kind not in REPLY_TYPES:
        raise FieldError("ReplyType", f"ReplyType must be one of {', '.join(REPLY_TYPES)}.")
    if path is None or not path.strip():
        raise FieldError("ReplyPath", f"ReplyPath is required with ReplyType {kind}.")
    path = path.strip()
    if len(path) > 2000:
        raise FieldError("ReplyPath", "ReplyPath is longer than 2000 characters.")
    if kind in WEBHOOK_REPLY_TYPES and not is_http_url(path):
        raise FieldError("ReplyPath", f"ReplyPath must be an http(s) URL with ReplyType {kind}.")
    if kind == "EMAIL" and not EMAIL_RE.fullmatch(path):
        raise FieldError("ReplyPath", "ReplyPath must be an email address with ReplyType EMAIL.")
    if kind == "HEADER":
        # A number is shown as the sender in international digits, like From and Source.
        path = sender(path, "ReplyPath") or path
    return (kind, path)


def recipients(value: object, field: str = "Recipients") -> list[str]:
    if value is None:
        raise FieldError(field, f"{field} is required.")
    if not isinstance(value, list):
        raise FieldError(field, f"{field} must be an array of numbers.")
    if not value:
        raise FieldError(field, f"{field} must hold at least one number.")
    if len(value) > MAX_RECIPIENTS:
        raise FieldError(
            field, f"{field} holds {len(value)} numbers; at most {MAX_RECIPIENTS} are allowed."
        )
    return [phone_number(item, f"{field}[{index}]") for index, item in enumerate(value)]
