"""The Scheduled view's words, without a window: how soon a send goes, the question about
missed sends, a row's recipients, and numbers as typed refused at Recipients."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from gwdesk.app.scheduled import ScheduledSend
from gwdesk.app.scheduled_view import (
    RECIPIENTS,
    ScheduledRow,
    checked_numbers,
    day_and_time,
    missed_question,
    overdue,
    review_since,
    until,
)
from gwdesk.domain.errors import ValidationError

NOW = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)  # 13:00 in Sydney (AEDT, UTC+11)
SYDNEY = ZoneInfo("Australia/Sydney")


def held(due: datetime | None, recipients: tuple[str, ...] = ("61412000101",)) -> ScheduledSend:
    return ScheduledSend(1, due, "Hi", recipients, "", NOW, None)


@pytest.mark.parametrize(
    ("ahead", "said"),
    [
        (timedelta(minutes=40), "in 40 min"),
        (timedelta(hours=2, minutes=5), "in 2 h 5 min"),
        (timedelta(hours=2), "in 2 h"),
        (timedelta(hours=9, minutes=20), "in 9 h"),
        (timedelta(days=3, hours=1), "in 3 days"),
        (timedelta(seconds=20), "due now"),
        (-timedelta(seconds=50), "due now"),
        (-timedelta(hours=3), "3 h late, not sent"),
    ],
)
def test_how_soon_a_send_goes_is_said_as_a_glance_takes_it(ahead: timedelta, said: str) -> None:
    assert until(NOW + ahead, NOW) == said


def test_a_send_is_overdue_only_once_its_time_is_well_past() -> None:
    assert not overdue(NOW - timedelta(minutes=1), NOW)
    assert overdue(NOW - timedelta(minutes=2), NOW)
    assert not overdue(None, NOW)


def test_a_time_is_named_by_its_day_in_the_zone_given() -> None:
    assert day_and_time(NOW - timedelta(hours=4), NOW, SYDNEY) == "09:00 today"
    assert day_and_time(NOW - timedelta(days=1), NOW, SYDNEY) == "13:00 yesterday"
    assert day_and_time(NOW + timedelta(days=6), NOW, SYDNEY) == "13:00 Mon 7 Dec"
    assert day_and_time(NOW + timedelta(days=40), NOW, SYDNEY) == "13:00 Sun 10 Jan 2027"


def test_the_missed_question_counts_the_sends_and_names_the_earliest() -> None:
    missed = [held(NOW - timedelta(hours=2)), held(NOW - timedelta(hours=4)), held(None)]

    asked = missed_question(missed, NOW, SYDNEY)

    assert asked == "3 scheduled sends were due while gwdesk was closed (earliest 09:00 today)."
    assert missed_question(missed[:1], NOW, SYDNEY) == (
        "1 scheduled send was due while gwdesk was closed (11:00 today)."
    )


def test_after_review_serving_starts_just_after_the_last_missed_send() -> None:
    last = NOW - timedelta(minutes=5)
    since = review_since([held(NOW - timedelta(hours=1)), held(last), held(None)])

    assert since is not None
    assert last < since <= last + timedelta(milliseconds=1)
    assert review_since([held(None)]) is None


def test_a_row_names_the_first_numbers_with_their_contacts_and_counts_the_rest() -> None:
    numbers = ("61412000101", "61412000102", "61412000103", "61412000104")
    row = ScheduledRow(held(NOW, numbers), {"61412000102": "Zoë <b>Ng</b>"})

    assert row.recipients_text() == (
        "4 · +61 412 000 101, Zoë <b>Ng</b> (+61 412 000 102), +2 more"
    )


def test_numbers_as_typed_become_international_digits_each_once() -> None:
    typed = "0412 000 101\n+61 412 000 102; 0412000101"

    assert checked_numbers(typed, "AU") == ("61412000101", "61412000102")


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("0412 000 101\nabc\n12", "line 2"),
        ("   \n", "at least one number"),
        ("\x1b[31m0412", "line 1"),
    ],
)
def test_numbers_that_cannot_be_used_are_refused_at_recipients(typed: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why) as refused:
        checked_numbers(typed, "AU")
    assert refused.value.field == RECIPIENTS
