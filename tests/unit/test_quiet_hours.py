"""Quiet hours on the recipient's clock: waits, day kinds, daylight-saving days, JSON."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.quiet_hours import QuietHours, QuietHoursError, Window
from gwdesk.domain.wall_clock import NaiveMoment, wall_time

SYDNEY = ZoneInfo("Australia/Sydney")
PERTH = ZoneInfo("Australia/Perth")
ADELAIDE = ZoneInfo("Australia/Adelaide")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
BRISBANE = ZoneInfo("Australia/Brisbane")
WEEKENDS_TEN_TO_FOUR = QuietHours(weekends=Window(time(10), time(16)))
#: Sunday windows that open in the small hours, where the clocks change.
EARLY_SUNDAYS = QuietHours(weekends=Window(time(2, 30), time(16)))


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_the_default_window_is_eight_to_eight_on_weekdays_and_weekends() -> None:
    assert QuietHours() == QuietHours(Window(time(8), time(20)), Window(time(8), time(20)))


def test_a_moment_inside_the_window_is_allowed_as_it_is() -> None:
    moment = datetime(2026, 11, 24, 12, 34, 56, 789, tzinfo=PERTH)
    assert QuietHours().allows(moment, PERTH)
    assert QuietHours().next_allowed(moment, PERTH) == moment


def test_the_closing_minute_itself_is_outside_the_window() -> None:
    hours = QuietHours()
    assert hours.allows(datetime(2026, 11, 24, 19, 59, 59, tzinfo=PERTH), PERTH)
    assert not hours.allows(datetime(2026, 11, 24, 20, tzinfo=PERTH), PERTH)


def test_a_21_00_perth_moment_waits_for_08_00_perth_the_next_day() -> None:
    tuesday_night = datetime(2026, 11, 24, 21, tzinfo=PERTH)
    assert QuietHours().next_allowed(tuesday_night, PERTH) == utc(2026, 11, 25, 0)


def test_the_next_opening_is_given_in_utc() -> None:
    opening = QuietHours().next_allowed(datetime(2026, 11, 24, 21, tzinfo=PERTH), PERTH)
    assert opening.utcoffset() == timedelta(0)
    assert opening.tzinfo is UTC


def test_an_early_morning_waits_for_the_same_days_opening() -> None:
    assert QuietHours().next_allowed(datetime(2026, 11, 24, 6, 15, tzinfo=PERTH), PERTH) == utc(
        2026, 11, 24, 0
    )


def test_a_friday_21_00_in_sydney_with_weekends_ten_to_four_waits_for_saturday_10_00() -> None:
    friday_night = datetime(2026, 11, 27, 21, tzinfo=SYDNEY)
    found = WEEKENDS_TEN_TO_FOUR.next_allowed(friday_night, SYDNEY)
    assert found.astimezone(SYDNEY) == datetime(2026, 11, 28, 10, tzinfo=SYDNEY)


def test_the_same_moment_is_a_different_day_on_the_recipients_clock() -> None:
    """Friday 21:00 in Sydney is Friday 18:00 in Perth: inside Perth's window."""
    friday_night = datetime(2026, 11, 27, 21, tzinfo=SYDNEY)
    assert WEEKENDS_TEN_TO_FOUR.allows(friday_night, PERTH)
    assert not WEEKENDS_TEN_TO_FOUR.allows(friday_night, SYDNEY)


def test_no_sending_on_weekends_waits_from_friday_night_to_monday() -> None:
    weekdays_only = QuietHours(weekends=None)
    found = weekdays_only.next_allowed(datetime(2026, 11, 27, 21, tzinfo=SYDNEY), SYDNEY)
    assert found.astimezone(SYDNEY) == datetime(2026, 11, 30, 8, tzinfo=SYDNEY)


def test_adelaide_opens_at_08_00_on_its_own_half_hour_offset() -> None:
    tuesday_night = datetime(2027, 1, 12, 21, tzinfo=ADELAIDE)  # +10:30 in summer
    assert QuietHours().next_allowed(tuesday_night, ADELAIDE) == utc(2027, 1, 12, 21, 30)


def test_lord_howe_opens_at_08_00_after_its_half_hour_change() -> None:
    """Lord Howe leaves daylight saving on 4 April 2027, +11:00 to +10:30."""
    saturday_night = datetime(2027, 4, 3, 21, tzinfo=LORD_HOWE)
    found = QuietHours().next_allowed(saturday_night, LORD_HOWE)
    assert found == utc(2027, 4, 3, 21, 30)
    assert found.astimezone(LORD_HOWE).utcoffset() == timedelta(hours=10, minutes=30)


def test_an_opening_skipped_by_the_october_change_is_the_first_instant_after_the_gap() -> None:
    """4 October 2026: Sydney's clock jumps from 02:00 to 03:00; 02:30 never shows."""
    found = EARLY_SUNDAYS.next_allowed(datetime(2026, 10, 4, 1, tzinfo=SYDNEY), SYDNEY)
    assert found == utc(2026, 10, 3, 16)
    assert wall_time(found, SYDNEY) == datetime(2026, 10, 4, 3)


def test_an_opening_in_lord_howes_half_hour_gap_is_the_first_instant_after_it() -> None:
    """4 October 2026: Lord Howe's clock jumps from 02:00 to 02:30."""
    hours = QuietHours(weekends=Window(time(2, 15), time(16)))
    found = hours.next_allowed(datetime(2026, 10, 4, 1, tzinfo=LORD_HOWE), LORD_HOWE)
    assert wall_time(found, LORD_HOWE) == datetime(2026, 10, 4, 2, 30)


def test_an_opening_the_april_change_shows_twice_is_the_earlier_instant() -> None:
    """4 April 2027: Sydney's clock goes back from 03:00 to 02:00; 02:30 shows twice."""
    found = EARLY_SUNDAYS.next_allowed(datetime(2027, 4, 4, 1, tzinfo=SYDNEY), SYDNEY)
    assert found == utc(2027, 4, 3, 15, 30)


def test_a_window_the_october_change_skips_entirely_is_not_open_that_day() -> None:
    hours = QuietHours(weekends=Window(time(2, 10), time(2, 50)))
    sunday_before_the_gap = datetime(2026, 10, 4, 1, tzinfo=SYDNEY)
    found = hours.next_allowed(sunday_before_the_gap, SYDNEY)
    assert wall_time(found, SYDNEY) == datetime(2026, 10, 5, 8)
    assert hours.allows(found, SYDNEY)


def test_a_window_once_open_stays_open_through_the_repeated_hour() -> None:
    second_02_10 = utc(2027, 4, 3, 16, 10)  # 02:10 at +10:00, after 02:30 at +11:00
    assert wall_time(second_02_10, SYDNEY) == datetime(2027, 4, 4, 2, 10)
    assert EARLY_SUNDAYS.allows(second_02_10, SYDNEY)


def test_a_naive_moment_is_refused() -> None:
    with pytest.raises(NaiveMoment):
        QuietHours().next_allowed(datetime(2026, 11, 24, 21), PERTH)


def test_quiet_hours_that_never_allow_sending_are_refused() -> None:
    with pytest.raises(QuietHoursError, match="weekdays or weekends"):
        QuietHours(weekdays=None, weekends=None)


def test_a_window_that_ends_before_it_starts_is_refused_at_its_end() -> None:
    with pytest.raises(QuietHoursError) as refused:
        Window(time(20), time(8))
    assert refused.value.field == "end"


def test_a_window_of_seconds_is_refused() -> None:
    with pytest.raises(QuietHoursError, match="whole minute"):
        Window(time(8, 0, 30), time(20))


def test_the_description_names_both_windows_in_one_line() -> None:
    assert WEEKENDS_TEN_TO_FOUR.describe() == "weekdays 08:00–20:00, weekends 10:00–16:00"


def test_the_description_says_when_a_day_kind_has_no_sending() -> None:
    assert QuietHours(weekends=None).describe() == "weekdays 08:00–20:00, weekends no sending"


@pytest.mark.parametrize(
    "hours", [QuietHours(), WEEKENDS_TEN_TO_FOUR, QuietHours(Window(time(0), time(23, 59)), None)]
)
def test_quiet_hours_come_back_from_their_json_as_they_were(hours: QuietHours) -> None:
    assert QuietHours.from_json(hours.to_json()) == hours


def test_the_json_holds_times_as_text() -> None:
    assert QuietHours(weekends=None).to_json() == {
        "weekdays": {"start": "08:00", "end": "20:00"},
        "weekends": None,
    }


WINDOW = {"start": "08:00", "end": "20:00"}
HOSTILE_JSON: list[tuple[Any, str]] = [
    ({"weekdays": {"start": "25:00", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "24:00", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "8:00pm", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "-1:00", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "08:60", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "08:00\n", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": "٠٨:٠٠", "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": {"start": 800, "end": "20:00"}, "weekends": WINDOW}, "weekdays.start"),
    ({"weekdays": WINDOW, "weekends": {"start": "16:00", "end": "10:00"}}, "weekends.end"),
    ({"weekdays": WINDOW, "weekends": {"start": "10:00", "end": "10:00"}}, "weekends.end"),
    ({"weekdays": WINDOW, "weekends": {"start": "10:00"}}, "weekends.end"),
    ({"weekdays": WINDOW, "weekends": {"start": "10:00", "end": "9" * 10_000}}, "weekends.end"),
    ({"weekdays": WINDOW, "weekends": {"start": "10:00", "end": "16:00", "x": 1}}, "weekends.x"),
    ({"weekdays": WINDOW, "weekends": "10:00-16:00"}, "weekends"),
    ({"weekdays": WINDOW, "weekends": [WINDOW]}, "weekends"),
    ({"weekdays": WINDOW}, "weekends"),
    ({"weekends": WINDOW}, "weekdays"),
    ({"weekdays": None, "weekends": None}, "weekdays"),
    ({"weekdays": WINDOW, "weekends": WINDOW, "holidays": WINDOW}, "holidays"),
    ([WINDOW, WINDOW], "quiet_hours"),
    (None, "quiet_hours"),
]


@pytest.mark.parametrize(("data", "field"), HOSTILE_JSON)
def test_hostile_json_is_refused_naming_the_field(data: Any, field: str) -> None:
    with pytest.raises(QuietHoursError) as refused:
        QuietHours.from_json(data)
    assert refused.value.field == field
    assert len(refused.value.message) < 200


windows = st.tuples(
    st.integers(min_value=0, max_value=24 * 60 - 2), st.integers(min_value=1, max_value=24 * 60 - 1)
).map(lambda pair: (min(pair[0], pair[1] - 1), pair[1]))
maybe_windows = st.one_of(
    st.none(), windows.map(lambda w: Window(time(*divmod(w[0], 60)), time(*divmod(w[1], 60))))
)
quiet_hours = st.tuples(maybe_windows, maybe_windows).filter(lambda pair: pair != (None, None))
moments = st.datetimes(
    min_value=datetime(2026, 1, 1), max_value=datetime(2028, 12, 31), timezones=st.just(UTC)
)
zones = st.sampled_from(
    ["Australia/Sydney", "Australia/Lord_Howe", "Australia/Adelaide", "Australia/Perth"]
).map(ZoneInfo)


@given(pair=quiet_hours, moment=moments, zone=zones)
def test_the_next_allowed_moment_is_allowed_and_nothing_just_before_it_is(
    pair: tuple[Window | None, Window | None], moment: datetime, zone: ZoneInfo
) -> None:
    hours = QuietHours(*pair)
    found = hours.next_allowed(moment, zone)
    assert found >= moment
    assert hours.allows(found, zone)
    if found > moment:
        assert not hours.allows(found - timedelta(microseconds=1), zone)


@given(pair=quiet_hours, moment=moments)
def test_on_a_clock_without_daylight_saving_allowed_means_inside_the_days_window(
    pair: tuple[Window | None, Window | None], moment: datetime
) -> None:
    hours = QuietHours(*pair)
    local = moment.astimezone(BRISBANE)
    window = pair[1] if local.weekday() >= 5 else pair[0]
    inside = window is not None and window.start <= local.time() < window.end
    assert hours.allows(moment, BRISBANE) == inside
