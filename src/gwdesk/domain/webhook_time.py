"""The gateway's webhook time format, `dd-MMM-yyyy HH:mm:ss`, in the account's zone.

The webhook does not say which zone its times are in (contract: the account's
zone, a profile setting), and month names are English whatever the locale of
either machine, so neither `strftime('%b')` nor `strptime` can be trusted here.
The format carries no offset, so the hour repeated when daylight saving ends is
ambiguous; `parse_webhook_time(..., near=)` resolves it against a known instant
such as the moment the webhook arrived.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final
from zoneinfo import ZoneInfo

MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_NUMBER: Final = {name.lower(): number for number, name in enumerate(MONTHS, start=1)}
_PATTERN: Final = re.compile(
    r"\s*(\d{1,2})-([A-Za-z]{3})-(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*", re.ASCII
)


class WebhookTimeError(ValueError):
    """A webhook time that is not `dd-MMM-yyyy HH:mm:ss` or names no real instant."""


def format_webhook_time(moment: datetime, zone: ZoneInfo) -> str:
    """Render an aware `moment` as the gateway does, in `zone` (whole seconds, truncated)."""
    if moment.tzinfo is None:
        raise ValueError("moment must be timezone-aware")
    try:
        local = moment.astimezone(zone)
    except OverflowError:
        raise WebhookTimeError(f"{moment.isoformat()} cannot be shown in {zone.key}") from None
    return f"{local.day:02d}-{MONTHS[local.month - 1]}-{local.year:04d} {local:%H:%M:%S}"


def parse_webhook_time(text: str, zone: ZoneInfo, *, near: datetime | None = None) -> datetime:
    """Parse a webhook time given in `zone` into an aware UTC datetime.

    A wall time that occurs twice (the hour repeated when daylight saving ends)
    is read as the occurrence closest to `near` when given, else as the first
    one. A wall time skipped when daylight saving starts names no instant and
    is refused, as is anything that is not the gateway's format.
    """
    match = _PATTERN.fullmatch(text)
    if match is None:
        raise WebhookTimeError(f"not a dd-MMM-yyyy HH:mm:ss time: {text[:40]!r}")
    day, month_name, year, hour, minute, second = match.groups()
    month = _MONTH_NUMBER.get(month_name.lower())
    if month is None:
        raise WebhookTimeError(f"unknown month {month_name!r}")
    try:
        wall = datetime(int(year), month, int(day), int(hour), int(minute), int(second))
        candidates = [wall.replace(tzinfo=zone, fold=fold).astimezone(UTC) for fold in (0, 1)]
        real = [c for c in candidates if c.astimezone(zone).replace(tzinfo=None) == wall]
    except (ValueError, OverflowError) as exc:
        raise WebhookTimeError(f"no such time: {text.strip()!r} ({exc})") from None
    if not real:
        raise WebhookTimeError(f"{text.strip()!r} does not exist in {zone.key} (a clock change)")
    if near is None:
        return min(real)
    if near.tzinfo is None:
        raise ValueError("near must be timezone-aware")
    return min(real, key=lambda c: (abs(c - near), c))
