"""The list flow's decisions over a real profile store (Qt-free, no request on the wire).

Who the opt-out list leaves out (and a factual message keeps), what the send asks
(credits short, rows that cannot be sent to, a list the last run already reached,
a big list, a duplicate of a recent send found in the history), that the team's
store away records nothing, and what a run and its following come to in words.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from gwdesk.app.list_send import (
    ListRun,
    PlanInputs,
    StoreAwayError,
    follow_end,
    run_end,
)
from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.personal import number_recipients, plan_personal
from gwdesk.app.questions import Concern
from gwdesk.app.sms import Channel, SmsForm
from gwdesk.domain.settings import OWN_NUMBER, REPEAT_WINDOW_HOURS
from gwdesk.domain.templates import parse_template
from gwdesk.importing.recipients import InvalidRow
from gwdesk.store.database import StoreUnavailable
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.outbox import EntryState
from tests.unit.list_send_support import (
    NOW,
    Desk,
    desk,
    listing,
    lodge,
    lodged_list,
    message,
    numbers,
    sent_before,
)

TEXT = "The clinic is closed on Monday."


@pytest.fixture
def office(tmp_path: Path) -> Iterator[Desk]:
    opened = desk(tmp_path / "profile.sqlite3")
    try:
        yield opened
    finally:
        opened.store.close()


def concerns(prepared: object) -> frozenset[Concern]:
    question = getattr(prepared, "question", None)
    return question.concerns if question is not None else frozenset()


# ---- opted-out numbers ----------------------------------------------------------------------


async def test_opted_out_numbers_are_left_out_of_the_totals_and_the_recorded_list(
    office: Desk,
) -> None:
    office.store.optouts.set(numbers(1, start=3)[0], True, reason="asked by phone")
    prepared = await office.flow.prepare_list(message(office), listing(numbers(10)))
    assert (prepared.recipients, prepared.totals.figures["excluded"]) == (9, "1")
    run = await office.flow.record(prepared)
    recorded = {n for e in run.entries for n in e.recipients}
    assert recorded == set(numbers(10)) - set(numbers(1, start=3))
    assert run.batch.excluded == numbers(1, start=3)


async def test_a_factual_message_keeps_the_opted_out_numbers(office: Desk) -> None:
    office.store.optouts.set(numbers(1, start=3)[0], True, reason="asked by phone")
    factual = message(office, TEXT, factual=True)
    prepared = await office.flow.prepare_list(factual, listing(numbers(10)))
    assert (prepared.recipients, prepared.totals.figures["excluded"]) == (10, "0")
    run = await office.flow.record(prepared)
    assert {n for e in run.entries for n in e.recipients} == set(numbers(10))


# ---- what a send asks -----------------------------------------------------------------------


async def test_a_clean_list_of_200_is_asked_about_with_its_figures(office: Desk) -> None:
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST}
    assert prepared.question is not None
    assert prepared.question.text() == (
        f"Message: “{TEXT}”\nRecipients: 200\nSMS parts: 200\n"
        "Cost: 200 credits; 9,800 credits left of 10,000"
    )


async def test_credits_that_do_not_cover_the_list_are_asked_about(office: Desk) -> None:
    office.gateway.credits = 150
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST, Concern.CREDITS_SHORT}
    assert prepared.cost is not None
    assert prepared.cost.credits == 200


async def test_rows_that_cannot_be_sent_to_are_asked_about(office: Desk) -> None:
    bad = (InvalidRow(3, "n/a", "not a phone number"),)
    prepared = await office.flow.prepare_list(message(office), listing(numbers(5), bad))
    assert concerns(prepared) == {Concern.LIST, Concern.INVALID_ROWS}
    assert [r.index for r in prepared.rejected] == [2]


async def test_a_list_the_last_run_already_reached_is_asked_about(office: Desk) -> None:
    first = await office.flow.prepare_list(message(office), listing(numbers(250)))
    run = await office.flow.record(first)
    for entry in lodge(office, run.entries[:1]):
        run.put(entry)
    again = await office.flow.prepare_list(message(office, "Another text"), listing(numbers(250)))
    assert concerns(again) == {Concern.LIST, Concern.ALREADY_LODGED}


async def test_a_personal_send_is_asked_about_with_its_template(office: Desk) -> None:
    template = parse_template("Hi {name|there}, the clinic is closed on Monday.")
    plan = plan_personal(
        SmsForm(Channel.REST_SMS), template, number_recipients(numbers(3), template), "AU"
    )
    prepared = await office.flow.prepare_personal(plan)
    assert concerns(prepared) == {Concern.LIST}
    assert prepared.question is not None
    assert prepared.question.text().startswith(
        "Message: “Hi there, the clinic is closed on Monday.”\nRecipients: 3\n"
    )


# ---- a duplicate of a recent send -----------------------------------------------------------


async def test_the_same_text_to_most_of_the_list_two_hours_ago_is_named(office: Desk) -> None:
    await sent_before(office, TEXT, numbers(198), NOW - timedelta(hours=2))
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST, Concern.DUPLICATE}
    assert prepared.question is not None
    assert prepared.question.asks[-1].text == (
        "This text was sent 2 hours ago to 198 of these 200 recipients. Send it to them again?"
    )


async def test_a_send_older_than_the_window_is_no_duplicate(office: Desk) -> None:
    await sent_before(office, TEXT, numbers(200), NOW - timedelta(hours=25))
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST}


async def test_a_send_within_the_profiles_window_is_named(office: Desk) -> None:
    office.store.settings.set(REPEAT_WINDOW_HOURS, 48)
    await sent_before(office, TEXT, numbers(200), NOW - timedelta(hours=25))
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST, Concern.DUPLICATE}
    assert prepared.question is not None
    assert "sent 25 hours ago to all 200 of these recipients" in prepared.question.text()


async def test_a_send_older_than_the_profiles_window_is_no_duplicate(office: Desk) -> None:
    office.store.settings.set(REPEAT_WINDOW_HOURS, 1)
    await sent_before(office, TEXT, numbers(200), NOW - timedelta(hours=2))
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST}


async def test_another_text_to_the_same_list_is_no_duplicate(office: Desk) -> None:
    await sent_before(office, "Open late on Thursday.", numbers(200), NOW - timedelta(hours=1))
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST}


async def test_only_the_requests_that_were_lodged_count_as_sent(office: Desk) -> None:
    await sent_before(office, TEXT, numbers(200), NOW - timedelta(hours=1), lodged=1)
    prepared = await office.flow.prepare_list(message(office), listing(numbers(200)))
    assert concerns(prepared) == {Concern.LIST}  # 100 of 200 reached: not most of the list


async def test_a_personal_send_of_the_same_template_is_named(office: Desk) -> None:
    template = parse_template("Hi {name|there}, the clinic is closed on Monday.")
    form = SmsForm(Channel.REST_SMS)
    plan = plan_personal(form, template, number_recipients(numbers(3), template), "AU")
    await sent_before(office, plan.history_message().text, numbers(3), NOW - timedelta(hours=1))
    prepared = await office.flow.prepare_personal(plan)
    assert concerns(prepared) == {Concern.LIST, Concern.DUPLICATE}


async def test_a_duplicate_whose_history_row_is_not_written_yet_is_named(office: Desk) -> None:
    """The history row of a run just ended may still wait for the file's write lock."""
    row = await lodged_list(office, TEXT, numbers(3), NOW - timedelta(minutes=1))
    with write_locked(office.store.path):
        office.store.history.queue(row)
        assert office.store.history.since(NOW - timedelta(hours=1))  # queued, not written
        prepared = await office.flow.prepare_list(message(office), listing(numbers(3)))
    assert concerns(prepared) == {Concern.LIST, Concern.DUPLICATE}


@contextlib.contextmanager
def write_locked(path: Path | str) -> Iterator[None]:
    """Another connection holds the file's write lock (readers go on: WAL)."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


# ---- the team's store away ------------------------------------------------------------------


class AwayOptOuts(OptOutStore):
    """The opt-out list on a server that cannot be reached."""

    def opted_out(self, *_args: object, **_kwargs: object) -> dict[str, object]:
        raise StoreUnavailable("the team's server is away")


async def test_the_opt_out_list_away_refuses_the_send_and_records_nothing(
    office: Desk, tmp_path: Path
) -> None:
    away = AwayOptOuts(tmp_path / "away.sqlite3", "sandbox:demo")
    office.sending.runner.guard = OptOutGuard(away)
    try:
        with pytest.raises(StoreAwayError, match="opt-out list cannot be read"):
            await office.flow.prepare_list(message(office), listing(numbers(5)))
    finally:
        away.close()
    assert office.store.outbox.batches(open_only=False) == []


async def test_the_opt_out_list_away_at_a_requests_turn_keeps_it_unsent_with_why(
    office: Desk, tmp_path: Path
) -> None:
    sent = message(office)
    batch, entries = await office.sending.record_list(sent, numbers(150))
    away = AwayOptOuts(tmp_path / "away.sqlite3", "sandbox:demo")
    office.sending.runner.guard = OptOutGuard(away)
    try:  # the gateway here cannot send: a request that left would fail the run
        outcome = await office.sending.run_list(batch, entries, sent)
    finally:
        away.close()
    reasons = [s.error.message if s.error else "" for s in outcome.sent]
    assert len(reasons) == 2
    assert all(r.startswith("The opt-out list could not be read (") for r in reasons)
    left = office.store.outbox.entries(batch.id)
    assert [e.state for e in left] == [EntryState.PENDING, EntryState.PENDING]


async def test_the_history_away_refuses_the_send_and_records_nothing(office: Desk) -> None:
    def away(*_args: object) -> list[object]:
        raise StoreUnavailable("the team's server is away")

    office.store.history.reached_with = away  # type: ignore[method-assign]
    with pytest.raises(StoreAwayError, match="send history cannot be read"):
        await office.flow.prepare_list(message(office), listing(numbers(5)))
    assert office.store.outbox.batches(open_only=False) == []


# ---- what a run and its following come to ---------------------------------------------------


async def recorded(office: Desk, count: int = 250) -> ListRun:
    return await office.flow.record(
        await office.flow.prepare_list(message(office), listing(numbers(count)))
    )


async def test_a_run_with_every_request_lodged_says_so(office: Desk) -> None:
    run = await recorded(office)
    for entry in lodge(office, run.entries):
        run.put(entry)
    end = run_end(run, None)
    assert (end.text, end.tone, end.ok) == ("All 3 requests lodged: 250 recipients.", "ok", True)


async def test_a_cancelled_run_says_what_send_remaining_sends(office: Desk) -> None:
    run = await recorded(office)
    for entry in lodge(office, run.entries[:1]):
        run.put(entry)
    end = run_end(run, None)
    assert end.text == (
        "1 of 3 requests lodged (cancelled); 150 recipients not sent yet: "
        "Send remaining sends only to them."
    )
    assert (end.tone, end.ok) == ("hint", False)


async def test_a_halted_run_says_why(office: Desk) -> None:
    run = await recorded(office)
    run.halted = "The gateway refused the login."
    end = run_end(run, None)
    assert end.text == "Stopped: The gateway refused the login. 250 recipients not sent."
    assert end.tone == "error"


async def test_following_that_stopped_early_offers_to_follow_again(office: Desk) -> None:
    run = await recorded(office)
    for entry in lodge(office, run.entries):
        run.put(entry)
    end = follow_end(run, stopped=True)
    assert (end.text, end.again) == ("Not following.", True)
    assert run.entries[0].state is EntryState.LODGED


# ---- planning and the test to oneself -------------------------------------------------------


def inputs(text: str, count: int = 3) -> PlanInputs:
    return PlanInputs(
        template=parse_template(text),
        mapping=(),
        table=None,
        column=0,
        file_name="",
        pasted=listing(numbers(count)),
        groups=(),
        marketing=False,
        factual=False,
        instruction="",
    )


async def test_a_plan_says_why_it_cannot_be_made_at_the_field_at_fault(office: Desk) -> None:
    planned = await office.flow.plan(inputs("Hi {first name}, see you."))
    assert planned.plan is None
    assert planned.failure is not None
    assert planned.failure.field == "Message"
    assert "{first name}" in planned.failure.message


async def test_a_plan_is_made_for_every_recipient(office: Desk) -> None:
    planned = await office.flow.plan(inputs("Hi {name|there}, see you."))
    assert planned.plan is not None
    assert [m.text for m in planned.plan.messages] == ["Hi there, see you."] * 3


async def test_a_test_of_a_plan_nobody_can_be_sent_is_not_sent(office: Desk) -> None:
    for opted in numbers(3):
        office.store.optouts.set(opted, True, reason="asked by phone")
    planned = await office.flow.plan(inputs("Hi {name|there}, see you."))
    assert planned.plan is not None
    assert planned.plan.messages == ()
    end = await office.flow.send_to_own_number(
        SmsForm(Channel.REST_SMS), "61499888777", planned.plan
    )
    assert (end.ok, end.text) == (False, "No recipient's message can be made, so there is no test.")
    assert office.store.outbox.batches(open_only=False) == []


async def test_the_own_number_is_read_from_the_profiles_settings(office: Desk) -> None:
    assert await office.flow.own_number() == ""
    office.store.settings.set(OWN_NUMBER, "61499888777")
    assert await office.flow.own_number() == "61499888777"
