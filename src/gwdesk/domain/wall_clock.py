"""A zone's wall clock turned into instants, across daylight-saving changes.

Quiet hours and recurring sends are stated on the customer's clock ("08:00", "every
Monday at 09:00") and acted on as instants. A wall time names no instant on the
morning a clock springs forward (Sydney's 02:00 jumps to 03:00, Lord Howe's 02:00 to
02:30) and two on the night it falls back; `instant_at` settles both the one way
every rule here uses: a skipped time means the first instant after the gap (the
moment the clock shows a later time), a repeated one its first, earlier occurrence.
A moment without a zone is refused (`require_aware`): it would be read on whichever
clock the machine has.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo

_ONE_MICROSECOND = timedelta(microseconds=1)


class NaiveMoment(ValueError):
    """A datetime without a time zone where a real instant is needed."""


def require_aware(moment: datetime, what: str) -> datetime:
    """`moment` itself when it is an aware datetime; `NaiveMoment` naming `what` if not."""
    if not isinstance(moment, datetime):
        raise TypeError(f"{what} must be a datetime, not {type(moment).__name__}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise NaiveMoment(f"{what} needs a time zone (an aware datetime): {moment.isoformat()}")
    return moment


def wall_time(moment: datetime, zone: tzinfo) -> datetime:
    """What the clock in `zone` shows at the aware `moment`, without a zone attached."""
    return require_aware(moment, "moment").astimezone(zone).replace(tzinfo=None, fold=0)


def instant_at(day: date, at: time, zone: tzinfo) -> datetime:
    """The UTC instant `zone`'s clock shows `at` on `day`.

    A wall time that occurs twice (the repeated hour when daylight saving ends) is its
    earlier occurrence; one the clock skips is the first instant after the gap. Raises
    `OverflowError` for a day at the very edge of what datetime can hold.
    """
    wall = datetime.combine(day, at.replace(tzinfo=None, fold=0))
    candidates = sorted({wall.replace(tzinfo=zone, fold=fold).astimezone(UTC) for fold in (0, 1)})
    real = [c for c in candidates if _shown(c, zone) == wall]
    if real:
        return real[0]
    # In a gap the two readings straddle it: the earlier shows a time before the gap,
    # the later one after. The change itself lies between; find it to the microsecond.
    before, after = candidates[0], candidates[-1]
    while after - before > _ONE_MICROSECOND:
        middle = before + (after - before) / 2
        if _shown(middle, zone) > wall:
            after = middle
        else:
            before = middle
    return after


def _shown(instant: datetime, zone: tzinfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None, fold=0)
