"""The gateway's webhook time format, `dd-MMM-yyyy HH:mm:ss`, in the account's zone.

The webhook does not say which zone its times are in (contract: the account's
zone, a profile setting), and month names are English whatever the locale of
either machine, so neither `strftime('%b')` nor `strptime` can be trusted here.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final
from zoneinfo import ZoneInfo

MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_NUMBER: Final = {name.lower(): number for number, name in enumerate(MONTHS, start=1)}
_PATTERN: Final = re.compile(r"\s*(\d{1,2})-([A-Za-z]{3})-(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*")


class WebhookTimeError(ValueError):
    """A webhook time that is not `dd-MMM-yyyy HH:mm:ss` or names no real instant."""


def format_webhook_time(moment: datetime, zone: ZoneInfo) -> str:
    """Render an aware `moment` as the gateway does, in `zone`."""
    if moment.tzinfo is None:
        raise ValueError("moment must be timezone-aware")
    local = moment.astimezone(zone)
    return f"{local.day:02d}-{MONTHS[local.month - 1]}-{local.year:04d} {local:%H:%M:%S}"


def parse_webhook_time(text: str, zone: ZoneInfo) -> datetime:
    """Parse a webhook time given in `zone` into an aware UTC datetime.

    An ambiguous wall time (the hour repeated when daylight saving ends) is read
    as its first occurrence, as the gateway cannot say which one it meant.
    """
    match = _PATTERN.fullmatch(text)
    if match is None:
        raise WebhookTimeError(f"not a dd-MMM-yyyy HH:mm:ss time: {text[:40]!r}")
    day, month_name, year, hour, minute, second = match.groups()
    month = _MONTH_NUMBER.get(month_name.lower())
    if month is None:
        raise WebhookTimeError(f"unknown month {month_name!r}")
    try:
        local = datetime(
            int(year), month, int(day), int(hour), int(minute), int(second), tzinfo=zone
        )
    except ValueError as exc:
        raise WebhookTimeError(f"no such time: {text.strip()!r} ({exc})") from None
    return local.astimezone(UTC)
