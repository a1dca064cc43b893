"""A zone's wall clock turned into instants: skipped times, repeated times, naive moments."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.wall_clock import NaiveMoment, instant_at, require_aware, wall_time

SYDNEY = ZoneInfo("Australia/Sydney")
ZONES = ("Australia/Sydney", "Australia/Lord_Howe", "Australia/Adelaide", "Pacific/Apia", "UTC")


def test_an_ordinary_wall_time_is_its_one_instant() -> None:
    assert instant_at(date(2026, 11, 24), time(9), SYDNEY) == datetime(2026, 11, 23, 22, tzinfo=UTC)


def test_a_time_the_clock_skips_is_the_first_instant_after_the_gap() -> None:
    # 4 October 2026: Sydney's 02:00 (+10:00) becomes 03:00 (+11:00) at 16:00 UTC.
    assert instant_at(date(2026, 10, 4), time(2, 30), SYDNEY) == datetime(
        2026, 10, 3, 16, tzinfo=UTC
    )


def test_a_time_the_clock_shows_twice_is_the_earlier_instant() -> None:
    # 4 April 2027: Sydney's 03:00 (+11:00) goes back to 02:00 (+10:00).
    assert instant_at(date(2027, 4, 4), time(2, 30), SYDNEY) == datetime(
        2027, 4, 3, 15, 30, tzinfo=UTC
    )


def test_a_whole_day_skipped_goes_at_the_first_instant_of_the_next() -> None:
    """Samoa skipped 30 December 2011 (-10:00 to +14:00 at its midnight)."""
    apia = ZoneInfo("Pacific/Apia")
    found = instant_at(date(2011, 12, 30), time(9), apia)
    assert found.astimezone(apia).replace(tzinfo=None) == datetime(2011, 12, 31)


def test_a_naive_moment_is_refused() -> None:
    with pytest.raises(NaiveMoment, match="needs a time zone"):
        require_aware(datetime(2026, 11, 24, 9), "moment")


def test_a_date_is_refused_where_a_moment_is_needed() -> None:
    with pytest.raises(TypeError, match="must be a datetime"):
        wall_time(date(2026, 11, 24), SYDNEY)  # type: ignore[arg-type]


@given(
    zone=st.sampled_from(ZONES).map(ZoneInfo),
    day=st.dates(min_value=date(1990, 1, 1), max_value=date(2037, 12, 31)),
    minutes=st.integers(min_value=0, max_value=24 * 60 - 1),
)
def test_the_instant_shows_the_wall_time_asked_or_the_first_after_a_gap(
    zone: ZoneInfo, day: date, minutes: int
) -> None:
    at = time(minutes // 60, minutes % 60)
    found = instant_at(day, at, zone)
    shown = wall_time(found, zone)
    wall = datetime.combine(day, at)
    if shown != wall:
        # Skipped: the instant a microsecond earlier shows a time before the one asked.
        assert shown > wall
        assert wall_time(found - timedelta(microseconds=1), zone) < wall
    else:
        # Never the later instant when the clock shows the time twice (an hour apart in
        # Sydney, half an hour at Lord Howe).
        for back in (timedelta(minutes=30), timedelta(hours=1)):
            assert wall_time(found - back, zone) != wall
