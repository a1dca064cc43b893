"""Log records as rows of the local cache: the fields, and the conversion from the wire.

The conversion is the hot path of a first sync (a million records), so it works on
the plain JSON values of a page (`pydantic_core.from_json`, ~3 ms a page) rather than
on validated models (~12 ms a page), and it is tolerant the way the wire models are:
a field of an unexpected type is kept (as JSON text) rather than failing the page,
unknown fields are kept as one JSON object, and only a record without a `messageId`
or a readable `dateLodged` is dropped (counted, never fatal). Times become UTC
microseconds, which sort and compare as integers; a time without an offset is read
in the gateway account's zone, as the wire models do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any, Final, Literal

from pydantic_core import from_json

from gwdesk.domain.wire_time import epoch_us, from_epoch_us

Kind = Literal["text", "int", "time", "receipt", "json"]


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a log record: its cache column, wire name, header and how it reads."""

    column: str
    wire: str
    title: str
    kind: Kind
    tip: str = ""


#: Every field of the spec's log record, in the order the Logs tab shows them, plus
#: the fields the spec does not list ("Other fields").
FIELDS: Final[tuple[Field, ...]] = (
    Field("date_lodged", "dateLodged", "Lodged", "time", "When the gateway accepted the message"),
    Field("status", "status", "Status", "text"),
    Field("to_number", "to", "Recipient", "text"),
    Field("type", "type", "Type", "text", "Channel: SMS, MMS, WAP, FAX…"),
    Field("parts", "parts", "Parts", "int", "Number of message parts (segments)"),
    Field("message", "message", "Message", "text"),
    Field("from_number", "from", "From", "text", "Sending number or name"),
    Field("date_sent", "dateSent", "Sent", "time"),
    Field("receipt", "deliveryReceiptReceived", "Receipt", "receipt", "Delivery receipt"),
    Field("message_id", "messageId", "Message ID", "text"),
    Field("subject", "subject", "Subject", "text"),
    Field("sender", "sender", "Sender", "text"),
    Field("costcentre", "costcentre", "Cost centre", "text"),
    Field("senderid", "senderid", "Sender ID", "int"),
    Field("senderserviceid", "senderserviceid", "Sender service ID", "int"),
    Field("replytype", "replytype", "Reply type", "text"),
    Field("replypath", "replypath", "Reply path", "text"),
    Field("tracking_id", "trackingId", "Tracking ID", "text"),
    Field("batch_tracking_id", "batchTrackingId", "Batch tracking ID", "text"),
    Field(
        "extra", "", "Other fields", "json", "Fields the gateway sent that the spec does not list"
    ),
)
FIELD_BY_COLUMN: Final = {f.column: f for f in FIELDS}
WIRE_NAMES: Final = frozenset(f.wire for f in FIELDS if f.wire)

#: Storage order of a row (what `to_row` returns and `UPSERT` takes).
ROW_COLUMNS: Final = (
    "message_id", "status", "date_sent", "date_lodged", "receipt", "receipt_raw", "sender",
    "costcentre", "from_number", "to_number", "subject", "message", "parts", "type",
    "senderid", "senderserviceid", "replytype", "replypath", "tracking_id",
    "batch_tracking_id", "extra", "synced",
)  # fmt: skip
#: Read order of a row (`SELECT_COLUMNS`): the fields in display order, then the rowid.
SELECT_COLUMNS: Final = (*(f.column for f in FIELDS), "receipt_raw", "id")
RECEIPT_RAW_INDEX: Final = len(FIELDS)
ID_INDEX: Final = len(FIELDS) + 1


class PageError(ValueError):
    """A log page that is not the listing object the contract describes."""


def time_us(value: Any, zone: tzinfo) -> int | None:
    """An ISO 8601 text (or datetime) as UTC microseconds; None when it is not a time."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    elif isinstance(value, datetime):
        moment = value
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    try:
        return epoch_us(moment)
    except (OverflowError, ValueError):
        return None


class TimeReader:
    """`time_us` for a page's worth of times, faster on the gateway's own format.

    `2025-11-22T09:05:01.123456+11:00` (microseconds and an offset, 32 characters) is
    read as its minute (parsed once per minute and offset, then cached) plus the
    seconds and microseconds as one integer (`01123456`); anything else takes `time_us`.
    """

    def __init__(self, zone: tzinfo) -> None:
        self.zone = zone
        self._minutes: dict[str, int] = {}

    def __call__(self, value: Any) -> int | None:
        if type(value) is str and len(value) == 32 and value[19] == "." and value[26] in "+-":
            tail = value[17:19] + value[20:26]
            if tail.isdigit() and value[17] < "6" and value[16] == ":":
                key = value[:16] + value[26:]
                minute = self._minutes.get(key)
                if minute is None:
                    minute = time_us(value[:16] + ":00" + value[26:], self.zone)
                    if minute is None:
                        return None
                    if len(self._minutes) > 100_000:
                        self._minutes.clear()
                    self._minutes[key] = minute
                return minute + int(tail)
        return time_us(value, self.zone)


from_us: Final = from_epoch_us
"""UTC microseconds back to an aware datetime, exactly (the stores' one way)."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _text(value: Any) -> str | None:
    return value if value is None or type(value) is str else _json(value)


def _int(value: Any) -> int | str | None:
    if value is None or type(value) is int:
        return value
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.lstrip("-").isdigit() and len(stripped) < 19:
            return int(stripped)
        return value
    return _json(value)


#: Positions in a row of the values that must be integers (the rest are text).
_INT_POSITIONS: Final = frozenset(
    ROW_COLUMNS.index(c) for c in ("parts", "senderid", "senderserviceid")
)
_TEXT_POSITIONS: Final = frozenset(
    ROW_COLUMNS.index(c)
    for c in ROW_COLUMNS
    if c not in ("date_sent", "date_lodged", "receipt", "receipt_raw", "extra", "synced")
    and ROW_COLUMNS.index(c) not in _INT_POSITIONS
)


def mend(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row whose values SQLite cannot bind (objects, lists): integers as such, the rest as
    text. Scalars of an unexpected type need nothing: column affinity converts them."""
    return tuple(
        _int(v) if i in _INT_POSITIONS else _text(v) if i in _TEXT_POSITIONS else v
        for i, v in enumerate(row)
    )


def to_row(record: Any, times: TimeReader, synced: int) -> tuple[Any, ...] | None:
    """The cache row of one log record (`ROW_COLUMNS` order), or None if it has no identity.

    Values are taken as they come (the writer `mend`s a batch SQLite cannot bind).
    """
    if not isinstance(record, Mapping):
        return None
    get = record.get
    message_id = get("messageId")
    lodged = times(get("dateLodged"))
    if type(message_id) is not str or not message_id.strip() or lodged is None:
        return None
    receipt_value = get("deliveryReceiptReceived")
    receipt = times(receipt_value)
    receipt_raw = None if receipt is not None or receipt_value is None else _json(receipt_value)
    extra = None
    if len(record) != len(WIRE_NAMES) or not WIRE_NAMES.issuperset(record):
        unknown = record.keys() - WIRE_NAMES
        extra = _json({k: record[k] for k in sorted(unknown)}) if unknown else None
    status = get("status")
    return (
        message_id.strip(), "" if status is None else status, times(get("dateSent")), lodged,
        receipt, receipt_raw, get("sender"), get("costcentre"), get("from"), get("to"),
        get("subject"), get("message"), get("parts"), get("type"), get("senderid"),
        get("senderserviceid"), get("replytype"), get("replypath"), get("trackingId"),
        get("batchTrackingId"), extra, synced,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Page:
    """One log page: the listing's `totalRecords` and its records as plain JSON values."""

    total: int
    records: list[Any]


def parse_page(body: bytes) -> Page:
    """A log listing's JSON, fast; `PageError` when it is not a listing object."""
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    try:
        payload = from_json(body, cache_strings="keys")
    except ValueError:
        raise PageError(
            "The gateway's log page is not valid JSON; it may have been cut off."
        ) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
        raise PageError("The gateway's log page has no list of messages.")
    records: list[Any] = payload["messages"]
    total = payload.get("totalRecords")
    if type(total) is not int or total < 0:
        raise PageError("The gateway's log page has no usable totalRecords.")
    return Page(total, records)
