"""Times inside the sending hours (08:00–20:00 on each day by default), whatever the hour
the tests run: a send scheduled then is held until that very time, never moved to when
the hours open."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo


def inside_sending_hours(zone: tzinfo, lead: timedelta = timedelta(hours=1)) -> datetime:
    """10:00 on `zone`'s clock, on the first day that puts it at least `lead` from now (UTC)."""
    soonest = datetime.now(UTC) + lead
    day = soonest.astimezone(zone).date()
    at = datetime.combine(day, time(10), zone)
    if at < soonest:
        at = datetime.combine(day + timedelta(days=1), time(10), zone)
    return at.astimezone(UTC)
