"""Customers' replies as values: as a channel delivers one (`IncomingReply`), as it is
stored (`StoredReply`), and the rules of their times (whole UTC seconds; a time no
gateway can mean is not believed: `plausible`, `believable`). `replies.ReplyStore`
writes them and `reply_reads.ReplyReads` reads them back; see `replies` for why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.optout_words import Keywords

ReplySource = Literal["webhook", "keyword", "backfill"]
EARLIEST: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""No reply reaching gwdesk was received before this; an earlier time is a gateway's error."""
FUTURE_TOLERANCE: Final = timedelta(days=1)
"""How far ahead of this machine's clock a reply's time may be and still be believed."""
COLUMNS: Final = (
    "id, from_number, to_number, text, received_at, sent_at, message_id, reply_id, keyword, "
    "source, stored_at, received_claimed"
)
SELECT_REPLIES: Final = f"SELECT {COLUMNS} FROM replies "  # noqa: S608 - constant columns
NUL_STAND_IN: Final = "\ufffd"
"""What a NUL in a reply is stored as on a server (PostgreSQL's text cannot hold one)."""


def utc_seconds(moment: datetime) -> datetime:
    """An aware time in UTC, whole seconds: the resolution every reply channel shares.

    A time beyond what UTC can hold (the first or last hours of years 1 and 9999
    with an offset) is held at that edge, which `plausible` then refuses to believe.
    """
    if moment.tzinfo is UTC and not moment.microsecond:
        return moment
    if moment.tzinfo is None:
        raise ValueError("reply times must be timezone-aware")
    try:
        return moment.astimezone(UTC).replace(microsecond=0)
    except OverflowError:
        edge = datetime.max if moment.year == datetime.max.year else datetime.min
        return edge.replace(microsecond=0, tzinfo=UTC)


def plausible(moment: datetime, now: datetime) -> bool:
    """Whether a reply can have been received (or sent) at `moment`, as seen at `now`.

    Not before `EARLIEST`, and not more than `FUTURE_TOLERANCE` ahead: a gateway's
    clock or zone may be off by hours, never by days.
    """
    return EARLIEST <= moment <= now + FUTURE_TOLERANCE


def time_text(moment: datetime | None) -> str | None:
    return None if moment is None else utc_seconds(moment).isoformat()


def time_of(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


@dataclass(frozen=True, slots=True)
class IncomingReply:
    """A reply as one channel delivered it, before it is stored."""

    from_number: str
    to_number: str
    text: str
    received_at: datetime
    """When the gateway received it; normalised to UTC whole seconds."""
    sent_at: datetime | None = None
    message_id: str | None = None
    """The message it answers (backfill `MessageId`, keyword `OriginalMessageId`)."""
    reply_id: str | None = None
    """The gateway's id of the reply, when the channel gives one (keyword forwards)."""
    keyword: str | None = None
    source: ReplySource = "webhook"
    received_claimed: str | None = None
    """Set by the store when `received_at` was not believable: the time the reply claimed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "received_at", utc_seconds(self.received_at))
        if self.sent_at is not None:
            object.__setattr__(self, "sent_at", utc_seconds(self.sent_at))


@dataclass(frozen=True, slots=True)
class ReplyPage:
    """One read of the replies stored after an id (`ReplyStore.page_after`)."""

    replies: list[StoredReply]
    unreadable: int
    """Rows of the page that could not be read (passed over)."""
    last_id: int
    """The id the page ends at, unreadable rows included: where the next page starts."""
    full: bool
    """The page held as many rows as asked for: more may follow."""


@dataclass(frozen=True, slots=True)
class StoredReply:
    """A stored reply; `id` grows with storing order."""

    id: int
    from_number: str
    to_number: str
    text: str
    received_at: datetime
    sent_at: datetime | None
    message_id: str | None
    reply_id: str | None
    keyword: str | None
    source: ReplySource
    stored_at: datetime
    received_claimed: str | None = None
    """The received time the reply claimed, when it was not believable (`plausible`):
    `received_at` is then when it was stored."""

    def as_json(self) -> dict[str, object]:
        """Plain JSON fields (times ISO 8601 UTC), as `gwdesk listen --json` prints them."""
        return {
            "id": self.id,
            "from": self.from_number,
            "to": self.to_number,
            "text": self.text,
            "received_at": self.received_at.isoformat(),
            "sent_at": time_text(self.sent_at),
            "message_id": self.message_id,
            "reply_id": self.reply_id,
            "keyword": self.keyword,
            "source": self.source,
            "stored_at": self.stored_at.isoformat(),
            "received_claimed": self.received_claimed,
        }


@dataclass(frozen=True, slots=True)
class AddResult:
    reply: StoredReply
    new: bool
    """False: the reply was already stored (a retry, or the same reply by another channel)."""
    updated: bool = False
    """An already stored reply gained a field it lacked (its MessageId, say)."""


@dataclass(frozen=True, slots=True)
class OptOutRules:
    """Whose opt-out list keyword replies change, and the keywords that change it."""

    account: str
    keywords: Keywords
    region: str = DEFAULT_REGION
    """How a reply's sender number is read when it is not international."""


def believable(reply: IncomingReply, stored_at: datetime) -> IncomingReply:
    """`reply` as it is stored: a received time that is not `plausible` becomes the time
    it was stored (the claim kept), and such a sent time is dropped."""
    received_ok = plausible(reply.received_at, stored_at)
    sent_ok = reply.sent_at is None or plausible(reply.sent_at, stored_at)
    if received_ok and sent_ok:
        return reply
    return dataclasses.replace(
        reply,
        received_at=reply.received_at if received_ok else stored_at,
        received_claimed=None if received_ok else reply.received_at.isoformat(),
        sent_at=reply.sent_at if sent_ok else None,
    )


def believable_all(replies: Sequence[IncomingReply], stored_at: datetime) -> list[IncomingReply]:
    """`believable` of a whole group: the bounds worked out once, not once a reply."""
    latest = stored_at + FUTURE_TOLERANCE
    return [
        reply
        if EARLIEST <= reply.received_at <= latest
        and (reply.sent_at is None or EARLIEST <= reply.sent_at <= latest)
        else believable(reply, stored_at)
        for reply in replies
    ]


def without_nul(reply: IncomingReply) -> IncomingReply:
    """`reply` with each NUL of its texts as `NUL_STAND_IN` (a server cannot store a NUL)."""
    fields = ("from_number", "to_number", "text", "message_id", "reply_id", "keyword")
    values = {name: getattr(reply, name) for name in fields}
    changed = {k: v.replace("\0", NUL_STAND_IN) for k, v in values.items() if v and "\0" in v}
    return dataclasses.replace(reply, **changed) if changed else reply


def reply_from_row(row: Any) -> StoredReply:
    return StoredReply(
        id=row[0],
        from_number=row[1],
        to_number=row[2],
        text=row[3],
        received_at=datetime.fromisoformat(row[4]),
        sent_at=time_of(row[5]),
        message_id=row[6],
        reply_id=row[7],
        keyword=row[8],
        source=_source(row[9]),
        stored_at=datetime.fromisoformat(row[10]),
        received_claimed=row[11],
    )


def _source(value: str) -> ReplySource:
    if value == "keyword":
        return "keyword"
    if value == "backfill":
        return "backfill"
    return "webhook"
