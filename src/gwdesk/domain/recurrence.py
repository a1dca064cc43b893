"""Recurring sends: daily, every weekday, weekly or monthly, on the operator's clock.

A rule is its first occurrence, an aware instant: that instant's wall time in the
rule's zone (09:00 in Australia/Sydney), its weekday (weekly) and its day of the
month (monthly) say when every later one falls. Each occurrence is found on the
zone's calendar and clock first and only then turned into an instant, so a weekly
09:00 in Sydney stays 09:00 on the clock across the first Sunday of April, when the
offset drops from +11:00 to +10:00. A wall time the clock skips that day goes at the
first instant after the gap, one it shows twice at the earlier (`wall_clock`).

A monthly rule on the 29th, 30th or 31st goes on the last day of a month too short to
have that day (the 31st: 28 or 29 February, 30 April), then back on its own day.
`until` is a date on the rule's clock, included. The standard library is enough
for these four kinds, and generating on the local calendar keeps each step visible;
an RFC 5545 engine (dateutil's rrule) would skip short months instead of clamping.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from itertools import islice
from typing import Any, Final
from zoneinfo import ZoneInfo

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.wall_clock import NaiveMoment, instant_at, require_aware, wall_time
from gwdesk.domain.zones import ZoneError, zone_named

#: The most occurrences one call lists (ten years of a weekday rule is about 2,600).
MAX_OCCURRENCES: Final = 10_000
_FIELDS: Final = ("kind", "first", "zone", "until")
_ISO_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_MAX_ISO_MOMENT: Final = 64
_SATURDAY: Final = 5
#: English whatever the locale (`calendar.day_name` follows LC_TIME).
_DAY_NAMES: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class RecurrenceKind(StrEnum):
    """How often a rule recurs."""

    DAILY = "daily"
    WEEKDAYS = "weekdays"
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class RecurrenceError(InputRefused):
    """A rule that cannot be kept: `field` names the value at fault (`until`)."""


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A recurring send's times: see the module's docstring for the calendar rules."""

    kind: RecurrenceKind
    first: datetime
    zone: str
    until: date | None = None
    _clock: ZoneInfo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            kind = RecurrenceKind(self.kind)
        except ValueError:
            raise RecurrenceError("kind", f"A rule recurs {_kinds_in_words()}.") from None
        try:
            clock = zone_named(self.zone)
        except ZoneError as refused:
            raise RecurrenceError("zone", refused.message) from None
        try:
            first = require_aware(self.first, "first").astimezone(clock)
            first.astimezone(UTC)
        except (NaiveMoment, TypeError) as refused:
            raise RecurrenceError("first", str(refused)) from None
        except OverflowError:
            raise RecurrenceError("first", "The first occurrence is out of range.") from None
        if kind is RecurrenceKind.WEEKDAYS and first.weekday() >= _SATURDAY:
            raise RecurrenceError("first", "A weekday rule's first occurrence is on a weekday.")
        if self.until is not None:
            if type(self.until) is not date:
                raise RecurrenceError(
                    "until", "Until is a date (the last day an occurrence may fall on)."
                )
            if self.until < first.date():
                raise RecurrenceError(
                    "until",
                    f"Until ({self.until}) is before the first occurrence ({first.date()}).",
                )
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "_clock", clock)

    @property
    def at(self) -> time:
        """The wall time every occurrence is due at (the first's, on the rule's clock)."""
        return self.first.time()

    def after(self, moment: datetime) -> datetime | None:
        """The first occurrence strictly after the aware `moment` (UTC), None when none is left."""
        return next(self._occurrences_after(moment), None)

    def occurrences(self, after: datetime, limit: int) -> list[datetime]:
        """Up to `limit` occurrences strictly after the aware `after`, in order (UTC)."""
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 0 <= limit <= MAX_OCCURRENCES
        ):
            raise ValueError(f"limit is a whole number from 0 to {MAX_OCCURRENCES:,}: {limit!r}")
        return list(islice(self._occurrences_after(after), limit))

    def _occurrences_after(self, moment: datetime) -> Iterator[datetime]:
        moment = require_aware(moment, "moment")
        first = self.first.astimezone(UTC)
        start = self.first.date()
        if moment >= first:
            try:
                # Every occurrence of an earlier date is before `moment`: a wall time that
                # occurs twice is its first instant, one skipped is the end of the gap.
                start = max(start, wall_time(moment, self._clock).date())
            except OverflowError:
                return
        for day in self._dates_from(start):
            if self.until is not None and day > self.until:
                return
            try:
                instant = (
                    first if day == self.first.date() else instant_at(day, self.at, self._clock)
                )
            except OverflowError:
                return
            if instant > moment:
                yield instant

    def _dates_from(self, start: date) -> Iterator[date]:
        """The rule's dates on its clock from `start` on (no earlier than the first's)."""
        origin = self.first.date()
        try:
            if self.kind is RecurrenceKind.MONTHLY:
                months = (start.year - origin.year) * 12 + start.month - origin.month
                while True:
                    day = _in_month(origin, months)
                    if day >= start:
                        yield day
                    months += 1
            step = 7 if self.kind is RecurrenceKind.WEEKLY else 1
            weeks = -(-(start - origin).days // 7) if self.kind is RecurrenceKind.WEEKLY else 0
            day = max(start, origin + timedelta(days=7 * weeks))
            while True:
                if self.kind is not RecurrenceKind.WEEKDAYS or day.weekday() < _SATURDAY:
                    yield day
                day += timedelta(days=step)
        except (OverflowError, ValueError):
            return  # past the last date datetime can hold

    def describe(self) -> str:
        """One line: "every weekday at 09:00 Australia/Sydney until 2027-03-01"."""
        when = {
            RecurrenceKind.DAILY: "every day",
            RecurrenceKind.WEEKDAYS: "every weekday",
            RecurrenceKind.WEEKLY: f"every {_DAY_NAMES[self.first.weekday()]}",
            RecurrenceKind.MONTHLY: f"every month on the {_ordinal(self.first.day)}"
            + (" (or the last day of a shorter month)" if self.first.day > 28 else ""),
        }[self.kind]
        clock = f"{self.at:%H:%M:%S}" if self.at.second else f"{self.at:%H:%M}"
        until = f" until {self.until.isoformat()}" if self.until is not None else ""
        return f"{when} at {clock} {self.zone}{until}"

    def to_json(self) -> dict[str, str | None]:
        """A JSON-able dict; `first` on the rule's clock with its offset."""
        return {
            "kind": self.kind.value,
            "first": self.first.isoformat(),
            "zone": self.zone,
            "until": None if self.until is None else self.until.isoformat(),
        }

    @classmethod
    def from_json(cls, data: object) -> Recurrence:
        """A rule from `to_json`'s dict; `RecurrenceError` naming the field at fault."""
        if not isinstance(data, Mapping):
            raise RecurrenceError(
                "recurrence", "A recurrence is an object of kind, first, zone, until."
            )
        unknown = sorted(str(key)[:40] for key in data if key not in _FIELDS)
        if unknown:
            raise RecurrenceError(unknown[0], f"A recurrence has no field {unknown[0]!r}.")
        for name in _FIELDS[:3]:
            if name not in data:
                raise RecurrenceError(name, f"A recurrence needs its {name}.")
        kind = data["kind"]
        if not isinstance(kind, str) or kind not in set(RecurrenceKind):
            raise RecurrenceError("kind", f"A rule recurs {_kinds_in_words()}.")
        return cls(
            kind=RecurrenceKind(kind),
            first=_moment_from_json(data["first"]),
            zone=data["zone"],
            until=_date_from_json(data.get("until")),
        )


def _in_month(origin: date, months: int) -> date:
    """`origin`'s day of the month, `months` later, or that month's last day if shorter."""
    year, month = divmod(origin.month - 1 + months, 12)
    year += origin.year
    return date(year, month + 1, min(origin.day, calendar.monthrange(year, month + 1)[1]))


def _moment_from_json(value: Any) -> datetime:
    if not isinstance(value, str) or len(value) > _MAX_ISO_MOMENT:
        raise RecurrenceError("first", "The first occurrence is an ISO 8601 time with its offset.")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise RecurrenceError("first", f"{value!r} is not an ISO 8601 time.") from None
    return moment  # one without an offset is refused as a naive first occurrence


def _date_from_json(value: Any) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str) or _ISO_DATE.fullmatch(value) is None:
        raise RecurrenceError("until", "Until is a date written YYYY-MM-DD, or null.")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise RecurrenceError("until", f"{value!r} is not a date.") from None


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _kinds_in_words() -> str:
    names = [kind.value for kind in RecurrenceKind]
    return ", ".join(names[:-1]) + f" or {names[-1]}"
