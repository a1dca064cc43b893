"""A list's pace: requests of a minute's worth, evenly spaced, the clock stopped outside the
sending hours; and the pace as an operator types it."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from gwdesk.app.pacing import MOST_PER_HOUR, Pace, parse_pace
from gwdesk.app.sending_hours import SendingHours
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.quiet_hours import QuietHours, Window

SYDNEY = ZoneInfo("Australia/Sydney")
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_600_an_hour_goes_10_a_minute() -> None:
    pace = Pace(600)
    assert (pace.chunk, pace.interval) == (10, timedelta(minutes=1))


def test_a_slow_pace_goes_one_at_a_time() -> None:
    pace = Pace(20)
    assert (pace.chunk, pace.interval) == (1, timedelta(minutes=3))


def test_a_fast_pace_keeps_requests_of_at_most_100() -> None:
    pace = Pace(30_000)
    assert (pace.chunk, pace.interval) == (100, timedelta(seconds=12))


def test_parts_are_evenly_spaced_from_the_start() -> None:
    times = list(Pace(600).times(START, 4, None))
    assert times == [START + timedelta(minutes=i) for i in range(4)]


def test_the_pace_clock_stops_outside_the_sending_hours_and_goes_on_when_they_open() -> None:
    hours = SendingHours(QuietHours(Window(time(8), time(20)), Window(time(8), time(20))),
                         SYDNEY, {})  # fmt: skip
    before_close = datetime(2026, 12, 1, 19, 58, tzinfo=SYDNEY)
    times = list(Pace(60).times(before_close, 4, hours))
    assert times == [
        before_close,
        before_close + timedelta(minutes=1),
        datetime(2026, 12, 2, 8, 0, tzinfo=SYDNEY),
        datetime(2026, 12, 2, 8, 1, tzinfo=SYDNEY),
    ]


@pytest.mark.parametrize(
    ("typed", "per_hour"),
    [("600/h", 600), ("10/min", 600), (" 25 / hour ", 25), ("1/M", 60), ("3/minute", 180)],
)
def test_a_pace_is_typed_per_hour_or_per_minute(typed: str, per_hour: int) -> None:
    assert parse_pace(typed).per_hour == per_hour


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "fast",
        "600",
        "0/h",
        "-5/h",
        "600/day",
        "1e3/h",
        "６００/h",
        "600/h; rm -rf /",
        f"{MOST_PER_HOUR + 1}/h",
        "99999999/min",
    ],
)
def test_a_pace_that_cannot_be_kept_is_refused_at_its_field(typed: str) -> None:
    with pytest.raises(ValidationError) as refused:
        parse_pace(typed)
    assert refused.value.field == "Pace"
