"""Scheduled sends gwdesk holds, against a real sandbox: nothing leaves before its time,
an edit is what goes, a cancel sends nothing, a due send goes once however many desks
look, and a send whose time passed while nothing ran waits to be asked about.

The clock is the test's (`Clock`): time moves by assignment, never by sleeping."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gwdesk.app.list_send import SendFacts, question_for
from gwdesk.app.optouts import OptedOutError, OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.personal import PersonalPlan, Recipient, Recipients
from gwdesk.app.profile_data import ProfileData, account_key, compliance_of, open_profile
from gwdesk.app.questions import Concern
from gwdesk.app.scheduled import MISSED_AFTER, Later, ScheduledSends
from gwdesk.app.sending import Sending
from gwdesk.app.sending_hours import sending_hours
from gwdesk.app.single_send import SingleSend
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.recurrence import Recurrence, RecurrenceKind
from gwdesk.domain.settings import QUIET_HOURS_ON
from gwdesk.domain.templates import parse_template
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import OutboxError
from tests.contract.rest_support import service_for

START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
DUE = START + timedelta(hours=1)
NUMBERS = ("61412000101", "61412000102", "61412000103")


@dataclass
class Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Desk:
    store: LocalStore
    scheduled: ScheduledSends


@pytest.fixture
async def service(sandbox: SandboxThread) -> AsyncIterator[GatewayService]:
    async with service_for(sandbox) as service:
        yield service


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def open_desk(service: GatewayService, path: Path, clock: Clock) -> Desk:
    data = ProfileData(path, account_key(service.profile), service.profile.region)
    store = await asyncio.to_thread(open_profile, data)
    runner = OutboxRunner(service, store.outbox, data.account, guard=OptOutGuard(store.optouts))
    sending = Sending(
        runner, store.history, service.profile.region, compliance=compliance_of(store), now=clock
    )
    return Desk(store, ScheduledSends(sending))


@pytest.fixture
async def desk(service: GatewayService, tmp_path: Path, clock: Clock) -> AsyncIterator[Desk]:
    made = await open_desk(service, tmp_path / "profile.sqlite3", clock)
    yield made
    await asyncio.to_thread(made.store.close)


def lodged(sandbox: SandboxThread, text: str) -> list[str]:
    """The numbers the sandbox was asked to text `text`, in order."""
    rows = sandbox.query("SELECT to_number FROM messages WHERE message = ? ORDER BY id", (text,))
    return [str(row[0]) for row in rows]


def message(text: str) -> SmsMessage:
    return SmsMessage(Channel.REST_SMS, text)


async def test_a_scheduled_send_is_not_lodged_before_its_time(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    await desk.scheduled.schedule(message("Clinic opens at ten"), NUMBERS, DUE)
    clock.now = DUE - timedelta(seconds=1)
    assert await desk.scheduled.run_due() == []
    clock.now = DUE
    [outcome] = await desk.scheduled.run_due()
    assert not outcome.failed
    assert lodged(sandbox, "Clinic opens at ten") == list(NUMBERS)


async def test_an_edited_send_lodges_the_edited_text_once_at_its_time(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Clinic opens at ten"), NUMBERS, DUE)
    await desk.scheduled.rewrite_text(held.batch_id, "Clinic opens at eleven")
    clock.now = DUE + timedelta(seconds=5)
    await desk.scheduled.run_due()
    assert await desk.scheduled.run_due() == []
    assert lodged(sandbox, "Clinic opens at eleven") == list(NUMBERS)
    assert lodged(sandbox, "Clinic opens at ten") == []


async def test_a_cancelled_send_lodges_nothing(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Sale starts Friday"), NUMBERS, DUE)
    assert await desk.scheduled.cancel(held.batch_id, "alex") == 1
    clock.now = DUE + timedelta(days=1)
    assert await desk.scheduled.run_due() == []
    assert await desk.scheduled.listed() == []
    assert lodged(sandbox, "Sale starts Friday") == []


async def test_a_send_moved_later_waits_for_its_new_time(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Moved"), NUMBERS, DUE)
    moved = await desk.scheduled.retime(held.batch_id, DUE + timedelta(hours=2))
    assert moved.due == DUE + timedelta(hours=2)
    clock.now = DUE + timedelta(hours=1)
    assert await desk.scheduled.run_due() == []
    clock.now = DUE + timedelta(hours=2)
    assert len(await desk.scheduled.run_due()) == 1
    assert lodged(sandbox, "Moved") == list(NUMBERS)


async def test_a_send_given_other_recipients_goes_to_those_only(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Recipients changed"), NUMBERS, DUE)
    changed = await desk.scheduled.rewrite_recipients(held.batch_id, ["61412000199"])
    assert changed.recipients == ("61412000199",)
    clock.now = DUE
    await desk.scheduled.run_due()
    assert lodged(sandbox, "Recipients changed") == ["61412000199"]


async def test_send_now_lodges_at_once_and_the_send_is_no_longer_scheduled(
    desk: Desk, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Right away"), NUMBERS, DUE)
    outcome = await desk.scheduled.send_now(held.batch_id)
    assert not outcome.failed
    assert lodged(sandbox, "Right away") == list(NUMBERS)
    assert await desk.scheduled.listed() == []
    with pytest.raises(OutboxError, match="no longer waiting"):
        await desk.scheduled.send_now(held.batch_id)


async def test_two_desks_looking_at_once_send_a_due_send_once(
    desk: Desk, service: GatewayService, tmp_path: Path, clock: Clock, sandbox: SandboxThread
) -> None:
    other = await open_desk(service, tmp_path / "profile.sqlite3", clock)
    try:
        await desk.scheduled.schedule(message("Only once"), NUMBERS, DUE)
        clock.now = DUE
        ours, theirs = await asyncio.gather(desk.scheduled.run_due(), other.scheduled.run_due())
    finally:
        await asyncio.to_thread(other.store.close)
    assert len(ours) + len(theirs) == 1
    assert lodged(sandbox, "Only once") == list(NUMBERS)


async def test_a_number_that_opts_out_before_the_time_is_left_out_when_it_goes(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    await desk.scheduled.schedule(message("Opted out meanwhile"), NUMBERS, DUE)
    await asyncio.to_thread(desk.store.optouts.set, NUMBERS[1], True, reason="asked by phone")
    clock.now = DUE
    [outcome] = await desk.scheduled.run_due()
    assert not outcome.failed
    assert lodged(sandbox, "Opted out meanwhile") == [NUMBERS[0], NUMBERS[2]]


async def test_a_send_late_by_more_than_the_grace_is_missed_and_waits_to_be_asked(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Missed"), NUMBERS, DUE)
    clock.now = DUE + MISSED_AFTER
    assert [s.batch_id for s in await desk.scheduled.missed()] == [held.batch_id]
    assert await desk.scheduled.run_due(since=DUE + timedelta(minutes=1)) == []
    assert lodged(sandbox, "Missed") == []


async def test_serving_sends_a_due_send_and_tells_its_outcome(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    await desk.scheduled.schedule(message("Served"), NUMBERS, DUE)
    clock.now = DUE
    stop, told = asyncio.Event(), asyncio.Queue[object]()
    serving = asyncio.create_task(desk.scheduled.serve(stop, told=told.put_nowait))
    try:
        await asyncio.wait_for(told.get(), 30)
    finally:
        stop.set()
        await serving
    assert lodged(sandbox, "Served") == list(NUMBERS)


@pytest.mark.parametrize(
    ("at", "why"),
    [
        (START - timedelta(minutes=1), "has passed"),
        (START, "has passed"),
        (START + timedelta(days=400), "a year ahead"),
        (datetime(2026, 12, 1, 9, 0), "zone"),
    ],
)
async def test_a_time_that_cannot_be_kept_is_refused_and_nothing_is_recorded(
    desk: Desk, at: datetime, why: str
) -> None:
    with pytest.raises(ValidationError, match=why) as refused:
        await desk.scheduled.schedule(message("Never"), NUMBERS, at)
    assert refused.value.field == "SendAt"
    assert await desk.scheduled.listed() == []


async def test_an_edit_with_an_empty_text_is_refused_and_the_send_keeps_its_text(
    desk: Desk,
) -> None:
    held = await desk.scheduled.schedule(message("Keep me"), NUMBERS, DUE)
    with pytest.raises(ValidationError):
        await desk.scheduled.rewrite_text(held.batch_id, "   ")
    [kept] = await desk.scheduled.listed()
    assert kept.text == "Keep me"


async def test_hostile_text_is_kept_as_data(desk: Desk) -> None:
    hostile = "<b>Hi</b> \x1b[31mred\x1b[0m ‮evil"
    held = await desk.scheduled.schedule(message(hostile), NUMBERS, DUE)
    assert (await desk.scheduled.show(held.batch_id)).text == hostile


async def personal_plan(desk: Desk) -> PersonalPlan:
    template = parse_template("Hi {name}, your table is booked.")
    people = Recipients(
        (
            Recipient(2, NUMBERS[0], {"name": "Zoë"}),
            Recipient(3, NUMBERS[1], {"name": "Sam"}),
        ),
        offered=frozenset({"name"}),
    )
    return await desk.scheduled.sending.plan_personal(SmsForm(), template, people)


async def test_a_personal_send_goes_at_its_time_with_each_recipients_own_text(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule_personal(await personal_plan(desk), DUE)
    assert held.personal
    clock.now = DUE
    [outcome] = await desk.scheduled.run_due()
    assert not outcome.failed
    assert lodged(sandbox, "Hi Zoë, your table is booked.") == [NUMBERS[0]]
    assert lodged(sandbox, "Hi Sam, your table is booked.") == [NUMBERS[1]]


async def test_a_personal_sends_text_and_recipients_cannot_change_but_its_time_can(
    desk: Desk,
) -> None:
    held = await desk.scheduled.schedule_personal(await personal_plan(desk), DUE)
    with pytest.raises(OutboxError, match="only its time can change"):
        await desk.scheduled.rewrite_text(held.batch_id, "Hi all")
    with pytest.raises(OutboxError, match="only its time can change"):
        await desk.scheduled.rewrite_recipients(held.batch_id, [NUMBERS[2]])
    moved = await desk.scheduled.retime(held.batch_id, DUE + timedelta(hours=1))
    assert moved.due == DUE + timedelta(hours=1)


async def test_a_single_send_for_later_is_held_and_reported_scheduled(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    flow = SingleSend(desk.scheduled.sending)
    checked = flow.check(SmsForm(recipient="0412000101", text="Held single", hold_until=DUE))
    result = await flow.send(await flow.prepare(checked), answered=True)
    assert result.ok
    assert result.scheduled is not None
    assert result.scheduled.due == DUE
    assert lodged(sandbox, "Held single") == []
    clock.now = DUE
    await desk.scheduled.run_due()
    assert lodged(sandbox, "Held single") == ["61412000101"]


async def test_a_single_send_for_later_to_an_opted_out_number_is_refused_now(
    desk: Desk,
) -> None:
    await asyncio.to_thread(desk.store.optouts.set, "61412000101", True, reason="STOP")
    flow = SingleSend(desk.scheduled.sending)
    checked = flow.check(SmsForm(recipient="0412000101", text="Never held", hold_until=DUE))
    with pytest.raises(OptedOutError):
        await flow.send(await flow.prepare(checked), answered=True)
    assert await desk.scheduled.listed() == []


def test_a_single_send_kept_by_both_gwdesk_and_the_gateway_is_refused(desk: Desk) -> None:
    flow = SingleSend(desk.scheduled.sending)
    form = SmsForm(recipient="0412000101", text="Both", hold_until=DUE, send_at=DUE)
    with pytest.raises(ValidationError, match="not both") as refused:
        flow.check(form)
    assert refused.value.field == "SendAt"


def test_a_list_for_later_asks_to_schedule_and_says_when_it_goes() -> None:
    asked = question_for(SendFacts(12, 12, text="Hi", later=Later(DUE)), START)
    assert asked is not None
    assert (asked.title, asked.yes) == ("Schedule the batch?", "Schedule for 12 recipients")
    [when] = [a.text for a in asked.asks if a.concern is Concern.SCHEDULED]
    assert when.startswith(f"It goes at {DUE.astimezone():%a %d %b %Y %H:%M}")


SYDNEY = ZoneInfo("Australia/Sydney")


async def test_a_weekly_send_goes_at_nine_sydney_time_both_sides_of_the_april_change(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    first = datetime(2027, 3, 29, 9, 0, tzinfo=SYDNEY)  # Monday, daylight time (+11)
    clock.now = first - timedelta(days=1)
    every = Recurrence(RecurrenceKind.WEEKLY, first, "Australia/Sydney")
    await desk.scheduled.schedule(message("Weekly clinic notice"), NUMBERS[:1], first, every)
    clock.now = first
    assert len(await desk.scheduled.run_due()) == 1
    [following] = await desk.scheduled.listed()
    local = following.due.astimezone(SYDNEY) if following.due is not None else None
    assert local is not None
    assert (local.date().isoformat(), local.hour, local.minute) == ("2027-04-05", 9, 0)
    assert local.utcoffset() == timedelta(hours=10)  # standard time since Sunday
    assert following.every == every
    clock.now = following.due
    assert len(await desk.scheduled.run_due()) == 1
    assert lodged(sandbox, "Weekly clinic notice") == [NUMBERS[0], NUMBERS[0]]


async def test_two_desks_taking_a_recurring_send_at_once_record_its_next_occurrence_once(
    desk: Desk, service: GatewayService, tmp_path: Path, clock: Clock
) -> None:
    other = await open_desk(service, tmp_path / "profile.sqlite3", clock)
    first = START + timedelta(hours=1)
    every = Recurrence(RecurrenceKind.DAILY, first, "UTC")
    try:
        await desk.scheduled.schedule(message("Daily"), NUMBERS[:1], first, every)
        clock.now = first
        await asyncio.gather(desk.scheduled.run_due(), other.scheduled.run_due())
    finally:
        await asyncio.to_thread(other.store.close)
    [following] = await desk.scheduled.listed()
    assert following.due == first + timedelta(days=1)


async def test_cancelling_the_waiting_occurrence_ends_the_series(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    first = START + timedelta(hours=1)
    every = Recurrence(RecurrenceKind.DAILY, first, "UTC")
    held = await desk.scheduled.schedule(message("Ended"), NUMBERS[:1], first, every)
    await desk.scheduled.cancel(held.batch_id)
    clock.now = first + timedelta(days=3)
    assert await desk.scheduled.run_due() == []
    assert await desk.scheduled.listed() == []
    assert lodged(sandbox, "Ended") == []


async def test_a_rule_whose_first_occurrence_is_not_the_sends_time_is_refused(
    desk: Desk,
) -> None:
    every = Recurrence(RecurrenceKind.DAILY, DUE + timedelta(hours=1), "UTC")
    with pytest.raises(ValidationError, match="first occurrence"):
        await desk.scheduled.schedule(message("Mismatch"), NUMBERS, DUE, every)
    assert await desk.scheduled.listed() == []


PERTH = ZoneInfo("Australia/Perth")


async def with_hours(desk: Desk, *, on: bool = True) -> None:
    """The desk keeps to the office's sending hours (08:00–20:00), the profile in Sydney."""
    store = desk.store
    await asyncio.to_thread(store.settings.set, QUIET_HOURS_ON, on)
    desk.scheduled.sending.hours_source = functools.partial(
        sending_hours, store.settings, store.contacts, SYDNEY
    )


async def perth_contact(desk: Desk, number: str) -> None:
    card = ContactCard("Jo in Perth", (number,), (("Zone", "Australia/Perth"),))
    await asyncio.to_thread(desk.store.contacts.add, card)


async def test_a_21_00_send_to_a_perth_contact_waits_until_08_00_perth_time(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    await with_hours(desk)
    await perth_contact(desk, NUMBERS[0])
    nine_pm = datetime(2026, 12, 1, 21, 0, tzinfo=PERTH)  # 00:00 in Sydney: outside too
    [held] = await desk.scheduled.schedule_in_hours(message("Perth hours"), NUMBERS[:1], nine_pm)
    assert held.due == datetime(2026, 12, 2, 8, 0, tzinfo=PERTH)
    clock.now = nine_pm
    assert await desk.scheduled.run_due() == []
    clock.now = datetime(2026, 12, 2, 7, 59, tzinfo=PERTH)
    assert await desk.scheduled.run_due() == []
    assert lodged(sandbox, "Perth hours") == []
    clock.now = datetime(2026, 12, 2, 8, 0, tzinfo=PERTH)
    assert len(await desk.scheduled.run_due()) == 1
    assert lodged(sandbox, "Perth hours") == [NUMBERS[0]]


async def test_a_send_for_later_is_split_by_each_recipients_hours(desk: Desk) -> None:
    await with_hours(desk)
    await perth_contact(desk, NUMBERS[0])
    seven_pm_perth = datetime(2026, 12, 1, 19, 0, tzinfo=PERTH)  # 22:00 in Sydney
    helds = await desk.scheduled.schedule_in_hours(message("Split"), NUMBERS[:2], seven_pm_perth)
    assert [(h.due, h.recipients) for h in helds] == [
        (seven_pm_perth, (NUMBERS[0],)),
        (datetime(2026, 12, 2, 8, 0, tzinfo=SYDNEY), (NUMBERS[1],)),
    ]


async def test_sending_hours_turned_off_hold_nothing_back(desk: Desk) -> None:
    await with_hours(desk, on=False)
    late = datetime(2026, 12, 1, 23, 0, tzinfo=SYDNEY)
    [held] = await desk.scheduled.schedule_in_hours(message("Any hour"), NUMBERS, late)
    assert held.due == late


async def test_a_contact_zone_that_is_not_a_zone_leaves_the_profiles_clock(desk: Desk) -> None:
    await with_hours(desk)
    card = ContactCard("Hostile", (NUMBERS[0],), (("zone", "../../etc/passwd"),))
    await asyncio.to_thread(desk.store.contacts.add, card)
    late = datetime(2026, 12, 1, 23, 0, tzinfo=SYDNEY)
    [held] = await desk.scheduled.schedule_in_hours(message("Hostile zone"), NUMBERS[:1], late)
    assert held.due == datetime(2026, 12, 2, 8, 0, tzinfo=SYDNEY)


async def test_a_send_no_longer_waiting_is_told_apart_from_an_unknown_one(desk: Desk) -> None:
    held = await desk.scheduled.schedule(message("Gone"), NUMBERS, DUE)
    await desk.scheduled.cancel(held.batch_id)
    with pytest.raises(OutboxError, match=f"#{held.batch_id} is no longer waiting"):
        await desk.scheduled.show(held.batch_id)
    with pytest.raises(OutboxError, match="No send #999 is scheduled"):
        await desk.scheduled.show(999)


async def test_an_edit_changes_text_time_and_recipients_together(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    held = await desk.scheduled.schedule(message("Before"), NUMBERS, DUE)
    later = DUE + timedelta(hours=1)
    edited = await desk.scheduled.edit(
        held.batch_id, text="After", at=later, numbers=["61412000199"]
    )
    assert (edited.text, edited.due, edited.recipients) == ("After", later, ("61412000199",))
    clock.now = later
    await desk.scheduled.run_due()
    assert lodged(sandbox, "After") == ["61412000199"]


@pytest.mark.parametrize(
    ("text", "at"),
    [("   ", DUE + timedelta(hours=1)), ("Fine text", START - timedelta(minutes=1))],
    ids=["empty-text", "time-passed"],
)
async def test_an_edit_refused_in_any_part_changes_nothing(
    desk: Desk, text: str, at: datetime
) -> None:
    held = await desk.scheduled.schedule(message("Keep all"), NUMBERS, DUE)
    with pytest.raises(ValidationError):
        await desk.scheduled.edit(held.batch_id, text=text, at=at, numbers=["61412000199"])
    assert await desk.scheduled.listed() == [held]


async def test_running_on_time_sends_the_due_and_leaves_the_missed_held(
    desk: Desk, clock: Clock, sandbox: SandboxThread
) -> None:
    missed = await desk.scheduled.schedule(message("Missed one"), NUMBERS, DUE)
    await desk.scheduled.schedule(message("On time"), NUMBERS, DUE + MISSED_AFTER)
    clock.now = DUE + MISSED_AFTER + timedelta(seconds=1)
    outcomes, left = await desk.scheduled.run_on_time()
    assert [o.ok for o in outcomes] == [True]
    assert [s.batch_id for s in left] == [missed.batch_id]
    assert lodged(sandbox, "On time") == list(NUMBERS)
    assert lodged(sandbox, "Missed one") == []
    assert [s.batch_id for s in await desk.scheduled.listed()] == [missed.batch_id]


async def test_a_recurring_send_outside_some_recipients_hours_is_refused(desk: Desk) -> None:
    await with_hours(desk)
    late = datetime(2026, 12, 1, 23, 0, tzinfo=SYDNEY)
    every = Recurrence(RecurrenceKind.DAILY, late, "Australia/Sydney")
    with pytest.raises(ValidationError, match="outside some recipients' sending hours"):
        await desk.scheduled.schedule_in_hours(message("Nightly"), NUMBERS, late, every)
    assert await desk.scheduled.listed() == []
