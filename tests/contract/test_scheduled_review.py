"""Serving after the operator chose to review the sends a closed console missed: the
missed ones stay held, however many, and serving waits for the next send not missed
instead of for theirs (which has passed: waiting for it would be no wait at all).

The clock is the test's, moved by assignment; a real sandbox and profile file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.profile_data import ProfileData, account_key, open_profile
from gwdesk.app.scheduled import ScheduledSends
from gwdesk.app.scheduled_view import review_since
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.wire_time import epoch_us
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from tests.contract.rest_support import service_for

START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
NUMBERS = ("61412000101", "61412000102")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def desk(
    sandbox: SandboxThread, tmp_path: Path
) -> AsyncIterator[tuple[ScheduledSends, LocalStore, Clock]]:
    clock = Clock()
    async with service_for(sandbox) as service:
        made = await _open(service, tmp_path, clock)
        yield made
        await asyncio.to_thread(made[1].close)


async def _open(
    service: GatewayService, tmp_path: Path, clock: Clock
) -> tuple[ScheduledSends, LocalStore, Clock]:
    data = ProfileData(tmp_path / "p.sqlite3", account_key(service.profile), "AU")
    store = await asyncio.to_thread(open_profile, data)
    runner = OutboxRunner(service, store.outbox, data.account, guard=OptOutGuard(store.optouts))
    return ScheduledSends(Sending(runner, store.history, "AU", now=clock)), store, clock


def lodged(sandbox: SandboxThread, text: str) -> list[str]:
    rows = sandbox.query("SELECT to_number FROM messages WHERE message = ? ORDER BY id", (text,))
    return [str(row[0]) for row in rows]


async def test_after_review_the_next_due_is_the_first_send_not_missed(
    desk: tuple[ScheduledSends, LocalStore, Clock],
) -> None:
    scheduled, _store, clock = desk
    await scheduled.schedule(
        SmsMessage(Channel.REST_SMS, "Missed"), NUMBERS, START + timedelta(hours=1)
    )
    later = START + timedelta(hours=5)
    await scheduled.schedule(SmsMessage(Channel.REST_SMS, "Later"), NUMBERS, later)
    clock.now = START + timedelta(hours=3)  # the console opens two hours after the first

    missed = await scheduled.missed()

    assert [s.text for s in missed] == ["Missed"]
    assert await scheduled.next_due() == START + timedelta(hours=1)  # passed: no wait at all
    assert await scheduled.next_due(review_since(missed)) == later


async def test_after_review_more_missed_sends_than_one_look_takes_keep_none_from_going(
    desk: tuple[ScheduledSends, LocalStore, Clock], sandbox: SandboxThread
) -> None:
    scheduled, store, clock = desk
    for minute in range(3):
        at = START + timedelta(hours=1, minutes=minute)
        await scheduled.schedule(SmsMessage(Channel.REST_SMS, f"Missed {minute}"), NUMBERS, at)
    clock.now = START + timedelta(hours=3)
    since = review_since(await scheduled.missed())
    assert since is not None
    due = START + timedelta(hours=4)
    await scheduled.schedule(SmsMessage(Channel.REST_SMS, "Due after"), NUMBERS, due)
    clock.now = due
    account = scheduled.runner.account

    # A look that takes one batch at a time still finds the send due after the missed ones.
    [found] = store.outbox.due(account, epoch_us(due), limit=1, since_us=epoch_us(since))
    [outcome] = await scheduled.run_due(since)

    assert found.id == outcome.batch.id
    assert lodged(sandbox, "Due after") == list(NUMBERS)
    assert [s.text for s in await scheduled.listed()] == ["Missed 0", "Missed 1", "Missed 2"]


async def test_serving_after_review_sends_the_later_send_and_leaves_the_missed_held(
    desk: tuple[ScheduledSends, LocalStore, Clock], sandbox: SandboxThread
) -> None:
    scheduled, _store, clock = desk
    await scheduled.schedule(
        SmsMessage(Channel.REST_SMS, "Held for review"), NUMBERS, START + timedelta(hours=1)
    )
    clock.now = START + timedelta(hours=3)
    since = review_since(await scheduled.missed())
    due = START + timedelta(hours=3, minutes=1)
    await scheduled.schedule(SmsMessage(Channel.REST_SMS, "Goes"), NUMBERS, due)
    clock.now = due
    stop, told = asyncio.Event(), asyncio.Queue[object]()

    serving = asyncio.create_task(scheduled.serve(stop, since=since, told=told.put_nowait))
    try:
        await asyncio.wait_for(told.get(), 30)
    finally:
        stop.set()
        await serving

    assert lodged(sandbox, "Goes") == list(NUMBERS)
    assert lodged(sandbox, "Held for review") == []
    assert [s.text for s in await scheduled.listed()] == ["Held for review"]
