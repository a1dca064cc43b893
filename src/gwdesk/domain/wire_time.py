"""A moment as the gateway's wire carries it: ISO 8601 with its offset; and as gwdesk's
stores keep it: whole microseconds since 1970 UTC.

A time without a zone would be read in the gateway's, so it is refused before any
request (the core checks a scheduled send with it, the REST client every time it sends).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from gwdesk.domain.errors import ValidationError


def iso(moment: datetime, what: str) -> str:
    """ISO 8601 with an offset; `ValidationError` naming `what` for a time without a zone."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValidationError(f"{what} needs a time zone.", field=what, status=None)
    return moment.isoformat()


EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_us(moment: datetime) -> int:
    """A time as the stores keep it: µs since 1970 UTC, exact (no float rounding)."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def from_epoch_us(us: int) -> datetime:
    """A kept time back as an aware datetime, exactly."""
    return EPOCH + timedelta(microseconds=us)
