"""The Status tab's rows: REST status messages and Lodge `MessageStatus` answers in one table.

The two interfaces describe a message differently (REST has ExternalSystemId and
tags, Lodge has the lodged and sent times), so each row keeps what its source gave
and the tab shows only the columns the current lookup can fill.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from gwdesk.domain.models import Message, MessageStatus
from gwdesk.ui.formatting import local_time, status_colour
from gwdesk.ui.models.rows import Column

REST: Final = "REST"
LODGE: Final = "Lodge"
NO_STATUS: Final = "(no status)"


@dataclass(frozen=True, slots=True)
class StatusRow:
    phone_number: str
    message_id: str
    status: str
    source: str = REST
    external_system_id: str | None = None
    tags: str | None = None
    date_lodged: datetime | str | None = None
    date_sent: datetime | str | None = None

    @classmethod
    def from_message(cls, message: Message) -> StatusRow:
        return cls(
            phone_number=message.phone_number,
            message_id=message.message_id,
            status=message.status,
            external_system_id=message.external_system_id,
            tags=message.tags,
        )

    @classmethod
    def from_lodge(cls, answer: MessageStatus, asked: str) -> StatusRow:
        """A Lodge answer; its MsgID falls back to the id asked for when the service omits it."""
        return cls(
            phone_number=answer.phone_number or "",
            message_id=answer.msg_id or asked,
            status=answer.status or "",
            source=LODGE,
            date_lodged=answer.date_lodged,
            date_sent=answer.date_sent,
        )


def shown_time(value: datetime | str | None) -> str:
    """A time in the operator's zone; a time the client could not read stays as sent."""
    if value is None:
        return ""
    return local_time(value) if isinstance(value, datetime) else value


def _time_key(value: datetime | str | None) -> str:
    return value.isoformat() if isinstance(value, datetime) else (value or "")


COLUMNS: Final[list[Column[StatusRow]]] = [
    Column("Phone number", lambda r: r.phone_number),
    Column("Message ID", lambda r: r.message_id, "MessageId (REST) or MsgID (Lodge)"),
    Column("Status", lambda r: r.status, colour=lambda r: status_colour(r.status)),
    Column(
        "Lodged",
        lambda r: shown_time(r.date_lodged),
        "DateLodged, in your time zone",
        lambda r: _time_key(r.date_lodged),
    ),
    Column(
        "Sent",
        lambda r: shown_time(r.date_sent),
        "DateSent, in your time zone (empty until the gateway sends it)",
        lambda r: _time_key(r.date_sent),
    ),
    Column("External ID", lambda r: r.external_system_id, "ExternalSystemId of the send"),
    Column("Tags", lambda r: r.tags, "Tags the send carried"),
]
COLUMN: Final = {column.title: index for index, column in enumerate(COLUMNS)}
#: Columns each source fills, and the one that takes the spare width.
REST_COLUMNS: Final = ("Phone number", "Message ID", "Status", "External ID", "Tags")
LODGE_COLUMNS: Final = ("Phone number", "Message ID", "Status", "Lodged", "Sent")
STRETCH: Final = {REST: "External ID", LODGE: "Sent"}
WIDTHS: Final = {
    "Phone number": 150,
    "Message ID": 200,
    "Status": 110,
    "Lodged": 170,
    "Sent": 170,
    "External ID": 300,
    "Tags": 240,
}


def summarise(rows: list[StatusRow]) -> str:
    if not rows:
        return "No messages found."
    counts = Counter(r.status or NO_STATUS for r in rows)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    noun = "message" if len(rows) == 1 else "messages"
    return f"{len(rows)} {noun}: {parts}"
