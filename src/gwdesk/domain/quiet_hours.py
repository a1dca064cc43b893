"""Quiet hours: when a message may reach a customer, on the customer's own clock.

A profile keeps one sending window for weekdays (Monday to Friday) and one for
weekends, 08:00 to 20:00 both unless changed; either day kind may have none ("no
sending on weekends"), but not both. The caller passes the recipient's zone (a
contact's own, else the profile's) and the moment it reasons about: nothing here
reads a clock.

A window is the span of instants from its opening to its closing on that day's
clock, the closing excluded (08:00–20:00 lets 19:59:59 through, not 20:00). Across
a daylight-saving change the times stay those on the clock: an opening the clock
skips (02:30 on the morning Sydney jumps from 02:00 to 03:00) is the first instant
after the gap, and one it shows twice is the earlier; once open, a window stays open
until its closing, even through a repeated hour.

Public holidays are not known here: they count as the day of the week they fall on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.wall_clock import instant_at, require_aware, wall_time

DAY_KINDS: Final = ("weekdays", "weekends")
_CLOCK: Final = re.compile(r"(\d{1,2}):(\d{2})", re.ASCII)
_WEEK: Final = 7


class QuietHoursError(InputRefused):
    """Quiet hours that cannot be kept: `field` names the value (`weekends.start`)."""


def clock_text(at: time) -> str:
    """`HH:MM`, the form the JSON and the descriptions use."""
    return f"{at.hour:02d}:{at.minute:02d}"


def parse_clock(text: object, field: str) -> time:
    """A time of day written `HH:MM` (24-hour; `8:00` is read as 08:00); `QuietHoursError`
    naming `field` for anything else ("25:00", "8:00pm", "-1:00", a number)."""
    if not isinstance(text, str):
        raise QuietHoursError(field, f"A time of day is text like 08:00, not {_kind(text)}.")
    match = _CLOCK.fullmatch(text)
    if match is None:
        raise QuietHoursError(field, f"{text[:20]!r} is not a 24-hour time like 08:00.")
    hour, minute = int(match[1]), int(match[2])
    if hour > 23 or minute > 59:
        raise QuietHoursError(field, f"{text!r} is not a time of day (00:00 to 23:59).")
    return time(hour, minute)


@dataclass(frozen=True, slots=True)
class Window:
    """One day kind's sending window: from `start` until `end` on the same day, `end`
    excluded; whole minutes, no zone (the recipient's clock gives it one)."""

    start: time
    end: time

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            at = getattr(self, name)
            if not isinstance(at, time):
                raise QuietHoursError(name, f"The window's {name} must be a time of day.")
            if at.tzinfo is not None or at.second or at.microsecond:
                raise QuietHoursError(name, f"The window's {name} is a whole minute, no zone.")
        if self.start >= self.end:
            raise QuietHoursError(
                "end",
                f"The window must end after it starts on the same day "
                f"({clock_text(self.start)} to {clock_text(self.end)}).",
            )

    def describe(self) -> str:
        return f"{clock_text(self.start)}–{clock_text(self.end)}"

    def to_json(self) -> dict[str, str]:
        return {"start": clock_text(self.start), "end": clock_text(self.end)}


DEFAULT_WINDOW: Final = Window(time(8), time(20))


@dataclass(frozen=True, slots=True)
class QuietHours:
    """When sending is allowed: a `Window` per day kind, or None for no sending then."""

    weekdays: Window | None = DEFAULT_WINDOW
    weekends: Window | None = DEFAULT_WINDOW

    def __post_init__(self) -> None:
        for kind in DAY_KINDS:
            if not isinstance(getattr(self, kind), Window | None):
                raise QuietHoursError(kind, f"The {kind} window must be a Window or None.")
        if self.weekdays is None and self.weekends is None:
            raise QuietHoursError(
                "weekdays", "Quiet hours must allow sending on weekdays or weekends."
            )

    def window_on(self, day: date) -> Window | None:
        """The window of `day`'s kind (Saturday and Sunday are the weekend)."""
        return self.weekends if day.weekday() >= 5 else self.weekdays

    def allows(self, moment: datetime, zone: ZoneInfo) -> bool:
        """Whether a message may reach a recipient in `zone` at the aware `moment`."""
        return self.next_allowed(moment, zone) == moment

    def next_allowed(self, moment: datetime, zone: ZoneInfo) -> datetime:
        """`moment` itself (in UTC) when it is inside a window, else the next opening."""
        moment = require_aware(moment, "moment").astimezone(UTC)
        try:
            today = wall_time(moment, zone).date()
            # A window closes on its own date's clock, so none of an earlier date is
            # still open; a week and a day ahead there is always one (not both day
            # kinds are closed, and a clock change empties a window for one day only).
            for offset in range(_WEEK + 1):
                day = today + timedelta(days=offset)
                span = self._span(day, zone)
                if span is not None and moment < span[1]:
                    return max(span[0], moment)
        except OverflowError:
            pass
        raise QuietHoursError("moment", f"No sending window follows {moment.isoformat()}.")

    def _span(self, day: date, zone: ZoneInfo) -> tuple[datetime, datetime] | None:
        """The instants `day`'s window opens and closes, or None for no (or an empty) one."""
        window = self.window_on(day)
        if window is None:
            return None
        opens, closes = instant_at(day, window.start, zone), instant_at(day, window.end, zone)
        return (opens, closes) if opens < closes else None

    def describe(self) -> str:
        """One line: "weekdays 08:00–20:00, weekends 10:00–16:00"."""
        return ", ".join(
            f"{kind} {window.describe() if window else 'no sending'}"
            for kind, window in ((kind, getattr(self, kind)) for kind in DAY_KINDS)
        )

    def to_json(self) -> dict[str, dict[str, str] | None]:
        """A JSON-able dict: each day kind's `{"start": "08:00", "end": "20:00"}` or null."""
        return {kind: _window_json(getattr(self, kind)) for kind in DAY_KINDS}

    @classmethod
    def from_json(cls, data: object) -> QuietHours:
        """Quiet hours from `to_json`'s dict; `QuietHoursError` naming the field at fault."""
        if not isinstance(data, Mapping):
            raise QuietHoursError("quiet_hours", f"Quiet hours are an object, not {_kind(data)}.")
        unknown = sorted(str(key)[:40] for key in data if key not in DAY_KINDS)
        if unknown:
            raise QuietHoursError(unknown[0], f"Quiet hours have no field {unknown[0]!r}.")
        windows = {kind: _window_from_json(data, kind) for kind in DAY_KINDS}
        return cls(weekdays=windows["weekdays"], weekends=windows["weekends"])


def _window_json(window: Window | None) -> dict[str, str] | None:
    return None if window is None else window.to_json()


def _window_from_json(data: Mapping[Any, Any], kind: str) -> Window | None:
    if kind not in data:
        raise QuietHoursError(kind, f"Quiet hours need {kind!r} (a window, or null for none).")
    value = data[kind]
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise QuietHoursError(
            kind, f"{kind.capitalize()} are a window or null, not {_kind(value)}."
        )
    unknown = sorted(str(key)[:40] for key in value if key not in ("start", "end"))
    if unknown:
        raise QuietHoursError(f"{kind}.{unknown[0]}", f"A window has no field {unknown[0]!r}.")
    for part in ("start", "end"):
        if part not in value:
            raise QuietHoursError(f"{kind}.{part}", f"The {kind} window needs its {part}.")
    start = parse_clock(value["start"], f"{kind}.start")
    end = parse_clock(value["end"], f"{kind}.end")
    try:
        return Window(start, end)
    except QuietHoursError as refused:
        raise QuietHoursError(f"{kind}.{refused.field}", refused.message) from None


def _kind(value: object) -> str:
    """A JSON value's kind in words, for an error message (never the value itself)."""
    if value is None:
        return "null"
    names = {bool: "true/false", int: "a number", float: "a number", list: "a list"}
    return names.get(type(value), type(value).__name__)
