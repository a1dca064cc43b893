"""The webhook time format `dd-MMM-yyyy HH:mm:ss`: rendering, parsing, clock changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gwdesk.domain.webhook_time import WebhookTimeError, format_webhook_time, parse_webhook_time

SYDNEY = ZoneInfo("Australia/Sydney")
NEW_YORK = ZoneInfo("America/New_York")
ZONES = (
    "UTC",
    "Australia/Sydney",
    "Australia/Lord_Howe",  # half-hour daylight saving
    "America/New_York",
    "America/St_Johns",  # a -03:30 offset
    "Europe/London",
    "Asia/Kolkata",
    "Pacific/Chatham",  # +12:45 / +13:45
    "Pacific/Apia",  # skipped 30 December 2011 entirely
)
MONTH_NAMES = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"

zones = st.sampled_from(ZONES).map(ZoneInfo)
#: Any real instant, given in any of the zones (wall times a clock change skips are not real).
moments = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2100, 12, 31),
    timezones=zones,
    allow_imaginary=False,
)
#: Instants within a few hours of the days daylight saving usually changes on.
near_clock_changes = st.builds(
    lambda year, month, day, minutes: (
        datetime(year, month, day, tzinfo=UTC) + timedelta(minutes=minutes)
    ),
    st.integers(1990, 2040),
    st.sampled_from([3, 4, 9, 10, 11]),
    st.integers(1, 28),
    st.integers(0, 24 * 60 - 1),
)


def test_a_time_is_shown_as_the_wall_clock_of_the_zone() -> None:
    moment = datetime(2024, 1, 5, 3, 4, 5, tzinfo=UTC)
    assert format_webhook_time(moment, SYDNEY) == "05-Jan-2024 14:04:05"
    assert format_webhook_time(moment, NEW_YORK) == "04-Jan-2024 22:04:05"
    assert format_webhook_time(moment, ZoneInfo("UTC")) == "05-Jan-2024 03:04:05"


def test_fractions_of_a_second_are_dropped_not_rounded() -> None:
    moment = datetime(2024, 12, 31, 12, 59, 59, 999_999, tzinfo=UTC)
    assert format_webhook_time(moment, ZoneInfo("UTC")) == "31-Dec-2024 12:59:59"


def test_a_naive_time_cannot_be_shown() -> None:
    with pytest.raises(ValueError, match="aware"):
        format_webhook_time(datetime(2024, 1, 1), SYDNEY)


def test_an_instant_beyond_the_calendar_in_that_zone_is_a_webhook_time_error() -> None:
    with pytest.raises(WebhookTimeError):
        format_webhook_time(datetime.max.replace(tzinfo=UTC), SYDNEY)


def test_a_wall_time_is_read_in_the_zone() -> None:
    parsed = parse_webhook_time("05-Jan-2024 14:04:05", SYDNEY)
    assert parsed == datetime(2024, 1, 5, 3, 4, 5, tzinfo=UTC)
    assert parsed.tzinfo is UTC


def test_parsing_forgives_case_padding_and_single_digits() -> None:
    assert parse_webhook_time(" 5-jAN-2024  4:04:05\n", ZoneInfo("UTC")) == datetime(
        2024, 1, 5, 4, 4, 5, tzinfo=UTC
    )


def test_a_repeated_wall_time_reads_as_its_first_occurrence() -> None:
    # Sydney's clocks went from 03:00 AEDT back to 02:00 AEST on 7 April 2024.
    parsed = parse_webhook_time("07-Apr-2024 02:30:00", SYDNEY)
    assert parsed == datetime(2024, 4, 6, 15, 30, tzinfo=UTC)


def test_near_picks_the_occurrence_of_a_repeated_time_closest_to_it() -> None:
    arrived = datetime(2024, 4, 6, 16, 30, 2, tzinfo=UTC)
    parsed = parse_webhook_time("07-Apr-2024 02:30:00", SYDNEY, near=arrived)
    assert parsed == datetime(2024, 4, 6, 16, 30, tzinfo=UTC)


def test_near_must_be_aware() -> None:
    with pytest.raises(ValueError, match="aware"):
        parse_webhook_time("07-Apr-2024 02:30:00", SYDNEY, near=datetime(2024, 4, 6))


def test_a_wall_time_skipped_by_a_clock_change_is_refused() -> None:
    # Sydney's clocks went from 02:00 AEST to 03:00 AEDT on 6 October 2024.
    with pytest.raises(WebhookTimeError, match="does not exist"):
        parse_webhook_time("06-Oct-2024 02:30:00", SYDNEY)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("", "UTC"),
        ("05-Jan-2024", "UTC"),
        ("2024-01-05T00:00:00", "UTC"),
        ("05-Foo-2024 00:00:00", "UTC"),
        ("05-January-2024 00:00:00", "UTC"),
        ("31-Feb-2024 00:00:00", "UTC"),
        ("00-Jan-2024 00:00:00", "UTC"),
        ("05-Jan-2024 24:00:00", "UTC"),
        ("05-Jan-2024 12:60:00", "UTC"),
        ("05-Jan-2024 12:00:60", "UTC"),
        ("05-Jan-2024 12:00:00 +10:00", "UTC"),
        ("٠٥-Jan-2024 12:00:00", "UTC"),
        ("01-Jan-0000 00:00:00", "UTC"),
        ("31-Dec-9999 23:59:59", "America/New_York"),
        ("01-Jan-0001 00:00:00", "Australia/Sydney"),
    ],
)
def test_anything_else_is_a_webhook_time_error(text: str, zone: str) -> None:
    with pytest.raises(WebhookTimeError):
        parse_webhook_time(text, ZoneInfo(zone))


@given(moment=moments | near_clock_changes, zone=zones)
@example(moment=datetime(2024, 4, 6, 16, 30, 59, tzinfo=UTC), zone=SYDNEY)  # repeated hour, 2nd
@example(moment=datetime(2024, 4, 6, 15, 15, tzinfo=UTC), zone=ZoneInfo("Australia/Lord_Howe"))
@example(moment=datetime(2024, 3, 10, 7, 0, tzinfo=UTC), zone=NEW_YORK)  # first instant of EDT
@example(moment=datetime(2011, 12, 30, 10, 0, tzinfo=UTC), zone=ZoneInfo("Pacific/Apia"))
def test_a_formatted_time_parses_back_to_the_same_second(moment: datetime, zone: ZoneInfo) -> None:
    text = format_webhook_time(moment, zone)
    # Compared in UTC: Python never calls two zones' times equal when one is in a repeated hour.
    expected = moment.astimezone(UTC).replace(microsecond=0)
    assert parse_webhook_time(text, zone, near=moment) == expected


@given(moment=moments | near_clock_changes, zone=zones)
@example(moment=datetime(2024, 4, 6, 16, 30, tzinfo=UTC), zone=SYDNEY)
def test_without_near_a_formatted_time_parses_to_its_earliest_reading(
    moment: datetime, zone: ZoneInfo
) -> None:
    text = format_webhook_time(moment, zone)
    parsed = parse_webhook_time(text, zone)
    assert format_webhook_time(parsed, zone) == text
    assert parsed <= moment.astimezone(UTC).replace(microsecond=0)


@given(
    text=st.text(max_size=40)
    | st.from_regex(
        rf"\A[0-9]{{1,2}}-({MONTH_NAMES}|[A-Za-z]{{3}})-[0-9]{{4}} [0-9]{{1,2}}:[0-9]{{2}}:[0-9]{{2}}\Z"
    ),
    zone=zones,
)
@example(text="31-Dec-9999 23:59:59", zone=NEW_YORK)
def test_parsing_garbage_raises_only_webhook_time_error(text: str, zone: ZoneInfo) -> None:
    try:
        parsed = parse_webhook_time(text, zone)
    except WebhookTimeError:
        return
    assert parsed.tzinfo is UTC
    assert parse_webhook_time(format_webhook_time(parsed, zone), zone) == parsed
