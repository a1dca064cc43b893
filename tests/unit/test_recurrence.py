"""Recurring sends on the operator's clock: kinds, daylight-saving changes, until, JSON."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.recurrence import (
    MAX_OCCURRENCES,
    Recurrence,
    RecurrenceError,
    RecurrenceKind,
)
from gwdesk.domain.wall_clock import NaiveMoment, wall_time

SYDNEY = ZoneInfo("Australia/Sydney")
ADELAIDE = ZoneInfo("Australia/Adelaide")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
DAILY, WEEKDAYS, WEEKLY, MONTHLY = (
    RecurrenceKind.DAILY,
    RecurrenceKind.WEEKDAYS,
    RecurrenceKind.WEEKLY,
    RecurrenceKind.MONTHLY,
)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def rule(kind: RecurrenceKind, first: datetime, until: date | None = None) -> Recurrence:
    zone = first.tzinfo
    assert isinstance(zone, ZoneInfo)
    return Recurrence(kind, first, zone.key, until)


def test_weekly_monday_09_00_in_sydney_stays_09_00_across_the_april_change() -> None:
    """Sydney leaves daylight saving on Sunday 4 April 2027: +11:00, then +10:00."""
    weekly = rule(WEEKLY, datetime(2027, 3, 29, 9, tzinfo=SYDNEY))
    before, after = weekly.occurrences(LONG_AGO, 2)
    assert (before, after) == (utc(2027, 3, 28, 22), utc(2027, 4, 4, 23))
    assert [wall_time(o, SYDNEY) for o in (before, after)] == [
        datetime(2027, 3, 29, 9),
        datetime(2027, 4, 5, 9),
    ]
    offsets = [o.astimezone(SYDNEY).utcoffset() for o in (before, after)]
    assert offsets == [timedelta(hours=11), timedelta(hours=10)]


def test_daily_in_adelaide_keeps_09_00_on_its_half_hour_offsets() -> None:
    daily = rule(DAILY, datetime(2027, 4, 3, 9, tzinfo=ADELAIDE))
    assert daily.occurrences(LONG_AGO, 2) == [utc(2027, 4, 2, 22, 30), utc(2027, 4, 3, 23, 30)]


def test_weekly_at_lord_howe_keeps_09_00_across_its_half_hour_change() -> None:
    """Lord Howe goes from +11:00 to +10:30 on 4 April 2027."""
    weekly = rule(WEEKLY, datetime(2027, 3, 29, 9, tzinfo=LORD_HOWE))
    assert weekly.occurrences(LONG_AGO, 2) == [utc(2027, 3, 28, 22), utc(2027, 4, 4, 22, 30)]


def test_a_wall_time_the_october_change_skips_goes_at_the_first_instant_after_the_gap() -> None:
    """4 October 2026: Sydney's 02:00 jumps to 03:00, so 02:30 goes at 03:00."""
    daily = rule(DAILY, datetime(2026, 10, 2, 2, 30, tzinfo=SYDNEY))
    found = daily.occurrences(LONG_AGO, 4)
    assert found[2] == utc(2026, 10, 3, 16)
    assert [wall_time(o, SYDNEY).time() for o in found] == [
        time(2, 30),
        time(2, 30),
        time(3, 0),
        time(2, 30),
    ]


def test_a_wall_time_the_april_change_shows_twice_goes_at_the_earlier_instant() -> None:
    daily = rule(DAILY, datetime(2027, 4, 3, 2, 30, tzinfo=SYDNEY))
    assert daily.occurrences(LONG_AGO, 2)[1] == utc(2027, 4, 3, 15, 30)


def test_the_first_occurrence_is_the_instant_given_even_the_second_of_a_repeated_hour() -> None:
    second_02_30 = utc(2027, 4, 3, 16, 30)  # 02:30 at +10:00, an hour after 02:30 at +11:00
    daily = Recurrence(DAILY, second_02_30, "Australia/Sydney")
    assert daily.after(LONG_AGO) == second_02_30


def test_monthly_on_the_31st_goes_on_the_last_day_of_february() -> None:
    monthly = rule(MONTHLY, datetime(2027, 1, 31, 9, tzinfo=SYDNEY))
    days = [wall_time(o, SYDNEY).date() for o in monthly.occurrences(LONG_AGO, 15)]
    assert days[1] == date(2027, 2, 28)
    assert days[13] == date(2028, 2, 29)


def test_monthly_on_the_31st_is_back_on_the_31st_after_a_short_month() -> None:
    monthly = rule(MONTHLY, datetime(2027, 1, 31, 9, tzinfo=SYDNEY))
    days = [wall_time(o, SYDNEY).date() for o in monthly.occurrences(LONG_AGO, 5)]
    assert days == [
        date(2027, 1, 31),
        date(2027, 2, 28),
        date(2027, 3, 31),
        date(2027, 4, 30),
        date(2027, 5, 31),
    ]


def test_a_weekday_rule_goes_from_friday_to_monday() -> None:
    weekdays = rule(WEEKDAYS, datetime(2026, 11, 27, 9, tzinfo=SYDNEY))
    friday = weekdays.after(LONG_AGO)
    assert friday is not None
    assert wall_time(weekdays.after(friday), SYDNEY) == datetime(2026, 11, 30, 9)  # type: ignore[arg-type]


def test_until_is_the_last_day_an_occurrence_may_fall_on() -> None:
    weekly = rule(WEEKLY, datetime(2027, 3, 29, 9, tzinfo=SYDNEY), until=date(2027, 4, 12))
    found = weekly.occurrences(LONG_AGO, 10)
    assert [wall_time(o, SYDNEY).date() for o in found] == [
        date(2027, 3, 29),
        date(2027, 4, 5),
        date(2027, 4, 12),
    ]
    assert weekly.after(found[-1]) is None


def test_until_is_a_date_on_the_rules_clock_not_in_utc() -> None:
    """Monday 12 April 09:00 in Sydney is still Sunday 11 April in UTC: until the 11th
    (Sydney's Sunday) leaves it out."""
    weekly = rule(WEEKLY, datetime(2027, 3, 29, 9, tzinfo=SYDNEY), until=date(2027, 4, 11))
    assert len(weekly.occurrences(LONG_AGO, 10)) == 2


def test_the_next_occurrence_is_strictly_after_the_moment() -> None:
    daily = rule(DAILY, datetime(2026, 11, 24, 9, tzinfo=SYDNEY))
    assert daily.after(utc(2026, 11, 23, 22)) == utc(2026, 11, 24, 22)


def test_the_next_occurrence_may_be_later_the_same_day() -> None:
    daily = rule(DAILY, datetime(2026, 11, 24, 9, tzinfo=SYDNEY))
    eight_on_the_30th = datetime(2026, 11, 30, 8, tzinfo=SYDNEY)
    assert daily.after(eight_on_the_30th) == datetime(2026, 11, 30, 9, tzinfo=SYDNEY)


def test_before_the_first_occurrence_the_first_is_next() -> None:
    monthly = rule(MONTHLY, datetime(2027, 1, 31, 9, tzinfo=SYDNEY))
    assert monthly.after(LONG_AGO) == utc(2027, 1, 30, 22)


def test_years_later_the_next_occurrence_is_still_found_on_the_clock() -> None:
    daily = rule(DAILY, datetime(2026, 11, 24, 9, tzinfo=SYDNEY))
    assert daily.after(utc(2046, 6, 15, 12)) == utc(2046, 6, 15, 23)


@pytest.mark.parametrize("zone", ["Australia/Sydney", "Pacific/Honolulu"])
def test_a_rule_runs_out_at_the_last_date_a_datetime_can_hold(zone: str) -> None:
    """Honolulu's 20:00 on 31 December 9999 would be in the year 10000 in UTC."""
    daily = rule(DAILY, datetime(2026, 11, 24, 20, tzinfo=ZoneInfo(zone)))
    assert daily.after(datetime.max.replace(tzinfo=UTC)) is None
    assert daily.after(utc(9999, 12, 31, 12)) is None


def test_a_naive_moment_is_refused() -> None:
    with pytest.raises(NaiveMoment):
        rule(DAILY, datetime(2026, 11, 24, 9, tzinfo=SYDNEY)).after(datetime(2026, 11, 25))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"first": datetime(2026, 11, 24, 9)}, "first"),
        ({"kind": "fortnightly"}, "kind"),
        ({"zone": "Australia/../../etc/passwd"}, "zone"),
        ({"kind": WEEKDAYS, "first": datetime(2026, 11, 28, 9, tzinfo=SYDNEY)}, "first"),
        ({"until": date(2026, 11, 23)}, "until"),
        ({"until": datetime(2027, 1, 1, tzinfo=UTC)}, "until"),
    ],
)
def test_a_rule_that_cannot_be_kept_is_refused_naming_its_field(
    kwargs: dict[str, Any], field: str
) -> None:
    values: dict[str, Any] = {"kind": DAILY, "first": datetime(2026, 11, 24, 9, tzinfo=SYDNEY)}
    values |= {"zone": "Australia/Sydney", "until": None} | kwargs
    with pytest.raises(RecurrenceError) as refused:
        Recurrence(**values)
    assert refused.value.field == field


def test_the_number_of_occurrences_asked_is_bounded() -> None:
    daily = rule(DAILY, datetime(2026, 11, 24, 9, tzinfo=SYDNEY))
    assert daily.occurrences(LONG_AGO, 0) == []
    with pytest.raises(ValueError, match="limit"):
        daily.occurrences(LONG_AGO, MAX_OCCURRENCES + 1)


def test_a_weekday_rule_with_an_end_is_described_in_one_line() -> None:
    weekdays = rule(WEEKDAYS, datetime(2026, 11, 30, 9, tzinfo=SYDNEY), until=date(2027, 3, 1))
    assert weekdays.describe() == "every weekday at 09:00 Australia/Sydney until 2027-03-01"


@pytest.mark.parametrize(
    ("kind", "first", "text"),
    [
        (DAILY, datetime(2026, 11, 24, 7, 5, tzinfo=SYDNEY), "every day at 07:05 Australia/Sydney"),
        (WEEKLY, datetime(2027, 3, 29, 9, tzinfo=SYDNEY), "every Monday at 09:00 Australia/Sydney"),
        (
            MONTHLY,
            datetime(2027, 1, 2, 9, tzinfo=SYDNEY),
            "every month on the 2nd at 09:00 Australia/Sydney",
        ),
        (
            MONTHLY,
            datetime(2027, 1, 29, 9, tzinfo=SYDNEY),
            "every month on the 29th (or the last day of a shorter month) at 09:00 Australia/Sydney",
        ),
        (
            MONTHLY,
            datetime(2027, 1, 31, 9, tzinfo=SYDNEY),
            "every month on the 31st (or the last day of a shorter month) at 09:00 Australia/Sydney",
        ),
    ],
)
def test_each_kind_is_described_on_the_rules_clock(
    kind: RecurrenceKind, first: datetime, text: str
) -> None:
    assert Recurrence(kind, first.astimezone(UTC), "Australia/Sydney").describe() == text


def test_the_json_holds_the_first_occurrence_on_the_rules_clock() -> None:
    weekly = Recurrence(WEEKLY, utc(2027, 3, 28, 22), "Australia/Sydney", date(2027, 5, 1))
    assert weekly.to_json() == {
        "kind": "weekly",
        "first": "2027-03-29T09:00:00+11:00",
        "zone": "Australia/Sydney",
        "until": "2027-05-01",
    }


@pytest.mark.parametrize("kind", list(RecurrenceKind))
@pytest.mark.parametrize("until", [None, date(2027, 5, 1)])
def test_a_rule_comes_back_from_its_json_as_it_was(
    kind: RecurrenceKind, until: date | None
) -> None:
    original = rule(kind, datetime(2027, 3, 29, 9, 15, 30, tzinfo=LORD_HOWE), until)
    again = Recurrence.from_json(original.to_json())
    assert again == original
    assert again.occurrences(LONG_AGO, 20) == original.occurrences(LONG_AGO, 20)


GOOD = {"kind": "weekly", "first": "2027-03-29T09:00:00+11:00", "zone": "Australia/Sydney"}
HOSTILE_JSON: list[tuple[Any, str]] = [
    (GOOD | {"kind": "hourly"}, "kind"),
    (GOOD | {"kind": ["weekly"]}, "kind"),
    (GOOD | {"kind": None}, "kind"),
    (GOOD | {"first": "2027-03-29T09:00:00"}, "first"),
    (GOOD | {"first": "next monday"}, "first"),
    (GOOD | {"first": "2027-13-29T09:00:00+11:00"}, "first"),
    (GOOD | {"first": "0001-01-01T00:00:00+14:00"}, "first"),
    (GOOD | {"first": 1_800_000_000}, "first"),
    (GOOD | {"first": "2" * 10_000}, "first"),
    (GOOD | {"zone": "../../etc/passwd"}, "zone"),
    (GOOD | {"zone": "UTC\x00"}, "zone"),
    (GOOD | {"zone": ""}, "zone"),
    (GOOD | {"zone": 10}, "zone"),
    (GOOD | {"until": "2027-02-30"}, "until"),
    (GOOD | {"until": "1 May 2027"}, "until"),
    (GOOD | {"until": "2027-05-01T00:00:00"}, "until"),
    (GOOD | {"until": "2027-03-28"}, "until"),
    (GOOD | {"until": 20270501}, "until"),
    (GOOD | {"until": "20270501"}, "until"),
    (GOOD | {"until": "2027-W18-6"}, "until"),
    (GOOD | {"every": "week"}, "every"),
    ({"first": GOOD["first"], "zone": GOOD["zone"]}, "kind"),
    ({"kind": "daily", "zone": GOOD["zone"]}, "first"),
    ({"kind": "daily", "first": GOOD["first"]}, "zone"),
    ([GOOD], "recurrence"),
    ("weekly", "recurrence"),
]


@pytest.mark.parametrize(("data", "field"), HOSTILE_JSON)
def test_hostile_json_is_refused_naming_the_field(data: Any, field: str) -> None:
    with pytest.raises(RecurrenceError) as refused:
        Recurrence.from_json(data)
    assert refused.value.field == field
    assert len(refused.value.message) < 200


rules = st.builds(
    lambda kind, zone, day, minutes: Recurrence(
        kind,
        datetime.combine(day, time(*divmod(minutes, 60)), ZoneInfo(zone)),
        zone,
    ),
    st.sampled_from([DAILY, WEEKLY, MONTHLY]),
    st.sampled_from(["Australia/Sydney", "Australia/Lord_Howe", "Australia/Adelaide"]),
    st.dates(min_value=date(2026, 1, 1), max_value=date(2028, 12, 31)),
    st.integers(min_value=0, max_value=24 * 60 - 1),
)


@given(recurrence=rules)
def test_occurrences_rise_and_each_shows_the_rules_time_or_the_first_after_a_gap(
    recurrence: Recurrence,
) -> None:
    found = recurrence.occurrences(LONG_AGO, 40)
    assert found == sorted(set(found))
    zone = ZoneInfo(recurrence.zone)
    for occurrence in found[1:]:
        shown = wall_time(occurrence, zone)
        if shown.time() != recurrence.at:
            wall = datetime.combine(shown.date(), recurrence.at)
            assert shown > wall
            assert wall_time(occurrence - timedelta(microseconds=1), zone) < wall


@given(recurrence=rules)
def test_occurrences_fall_on_the_days_the_kind_says(recurrence: Recurrence) -> None:
    zone = ZoneInfo(recurrence.zone)
    days = [wall_time(o, zone).date() for o in recurrence.occurrences(LONG_AGO, 30)]
    first = recurrence.first.date()
    for index, day in enumerate(days):
        if recurrence.kind is DAILY:
            assert day == first + timedelta(days=index)
        elif recurrence.kind is WEEKLY:
            assert day == first + timedelta(weeks=index)
        else:
            length = calendar.monthrange(day.year, day.month)[1]
            assert day.day == min(first.day, length)
            assert (day.year * 12 + day.month) - (first.year * 12 + first.month) == index


@given(recurrence=rules, hours=st.integers(min_value=0, max_value=24 * 400))
def test_after_an_occurrence_comes_the_one_listed_next(recurrence: Recurrence, hours: int) -> None:
    moment = recurrence.first.astimezone(UTC) + timedelta(hours=hours)
    following = recurrence.occurrences(moment, 2)
    assert recurrence.after(moment) == following[0]
    assert recurrence.after(following[0]) == following[1]
