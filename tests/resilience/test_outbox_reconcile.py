"""Settling and resuming the outbox against a real sandbox: never a second copy.

Each test leaves an outbox the way a crash would (an entry in flight whose request
did or did not reach the gateway, a status endpoint that fails, a damaged row) and
counts what the sandbox holds after `Recovery.reconcile` and `Recovery.resume`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.profile_data import account_key
from gwdesk.app.recovery import LODGE_MANUAL, Recovery
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.models import LodgeResult
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState, NewEntry, OutboxEntry, OutboxStore
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests, service_for, set_faults

NUMBERS = [f"614{i:08d}" for i in range(250)]


@pytest.fixture
async def outbox(tmp_path: Path) -> AsyncIterator[OutboxStore]:
    store = OutboxStore(tmp_path / "profile.sqlite3")
    yield store
    store.close()


@pytest.fixture
async def service(sandbox: SandboxThread) -> AsyncIterator[GatewayService]:
    async with service_for(sandbox) as made:
        yield made


def sending_for(service: GatewayService, outbox: OutboxStore) -> Sending:
    """The application core's sends over `outbox` (no history: not under test here)."""
    runner = OutboxRunner(service, outbox, account_key(service.profile))
    return Sending(runner, None, service.profile.region)


def recovery_for(service: GatewayService, outbox: OutboxStore) -> Recovery:
    return sending_for(service, outbox).recovery


def messages(sandbox: SandboxThread) -> list[tuple[str, int]]:
    return sandbox.query("SELECT to_number, COUNT(*) FROM messages GROUP BY to_number")


async def loaded(sandbox: SandboxThread, count: int) -> None:
    for _ in range(500):
        if sum(n for _, n in messages(sandbox)) >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the sandbox did not create the messages")


async def interrupted(
    sending: Sending,
    recipients: list[str],
    *,
    reached: set[int],
    external_id: str | None = None,
) -> list[OutboxEntry]:
    """A batch as a kill leaves it: every entry in flight, those in `reached` really sent."""
    message = SmsMessage(Channel.REST_SMS, "Crash-time message", external_id=external_id)
    _batch, entries = await sending.record_list(message, recipients)
    runner = sending.runner
    for entry in entries:
        runner.outbox.begin(entry.id)
        if entry.seq in reached:
            body = message.rest_body(entry.recipients, entry.external_system_id or "")
            await runner.gateway.rest.send_once(body)
    return entries


async def test_a_request_the_gateway_lodged_is_settled_as_lodged_and_never_resent(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    await interrupted(sending, NUMBERS, reached={1, 2})
    await loaded(sandbox, 200)

    report = await sending.recovery.resume()
    outcomes = sorted((r.entry.seq, r.outcome) for r in report.reconcile.settled)
    assert outcomes == [(1, "lodged"), (2, "lodged"), (3, "not lodged")]
    assert [s.entry.seq for s in report.sent] == [3]
    await loaded(sandbox, 250)
    assert sorted(messages(sandbox)) == [(n, 1) for n in NUMBERS]
    assert endpoint_requests(sandbox, "send") == 3
    assert await sending.recovery.open_batches() == []


async def test_a_request_that_never_left_is_sent_once_the_window_has_passed(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    [entry] = await interrupted(sending, NUMBERS[:1], reached=set())
    started = asyncio.get_running_loop().time()
    report = await sending.recovery.reconcile()
    waited = asyncio.get_running_loop().time() - started
    [settled] = report.settled
    assert settled.outcome == "not lodged"
    assert waited >= service.retrier.policy.resolve_window * 0.8  # it looked for a while first
    assert messages(sandbox) == []
    assert outbox.entry(entry.id).state is EntryState.PENDING  # type: ignore[union-attr]

    resumed = await sending.recovery.resume()
    assert [s.lodged for s in resumed.sent] == [True]
    assert messages(sandbox) == [(NUMBERS[0], 1)]


async def test_a_request_whose_status_cannot_be_asked_stays_unknown_and_unsent(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    [entry] = await interrupted(sending, NUMBERS[:100], reached=set())
    await asyncio.to_thread(set_faults, sandbox, "status:503=1")
    sends_before = endpoint_requests(sandbox, "send")

    report = await sending.recovery.resume()
    [settled] = report.reconcile.settled
    assert settled.outcome == "still unknown"
    assert "could not be asked" in settled.detail
    assert report.sent == ()
    assert endpoint_requests(sandbox, "send") == sends_before  # nothing resent blindly
    stored = outbox.entry(entry.id)
    assert stored is not None
    assert stored.state is EntryState.UNKNOWN

    await asyncio.to_thread(set_faults, sandbox, "")
    again = await sending.recovery.resume()
    assert [r.outcome for r in again.reconcile.settled] == ["not lodged"]
    assert [s.lodged for s in again.sent] == [True]
    await loaded(sandbox, 100)
    assert sorted(messages(sandbox)) == [(n, 1) for n in NUMBERS[:100]]


async def test_entries_sharing_an_external_id_in_a_damaged_file_are_never_resent(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    entries = await interrupted(sending, NUMBERS[:200], reached=set())
    outbox.conn.execute("DROP INDEX outbox_entries_own_id")  # what a damaged file may lack
    outbox.conn.execute(
        "UPDATE outbox_entries SET external_system_id = ? WHERE id = ?",
        (entries[0].external_system_id, entries[1].id),
    )
    report = await sending.recovery.resume()
    assert [r.outcome for r in report.reconcile.settled] == ["still unknown"] * 2
    assert all("held by 2 outbox records" in r.detail for r in report.reconcile.settled)
    assert report.sent == ()
    assert endpoint_requests(sandbox, "send") == 0


async def test_a_damaged_pending_row_is_given_up_and_the_others_are_sent(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    _batch, entries = await sending.record_list(SmsMessage(Channel.REST_SMS, "Resume me"), NUMBERS)
    outbox.conn.execute(
        "UPDATE outbox_entries SET recipients = 'garbage' WHERE id = ?", (entries[1].id,)
    )
    report = await sending.recovery.resume()
    assert sorted(s.entry.seq for s in report.sent) == [1, 3]
    assert report.given_up == 1
    damaged = outbox.entry(entries[1].id)
    assert damaged is not None
    assert damaged.state is EntryState.FAILED
    assert "cannot be read" in damaged.reason
    await loaded(sandbox, 150)
    assert sum(n for _, n in messages(sandbox)) == 150


async def test_an_operators_reused_external_id_is_settled_by_its_own_recipients(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    sending = sending_for(service, outbox)
    message = SmsMessage(Channel.REST_SMS, "Earlier", external_id="JOB-7")
    earlier = await sending.send_list(message, NUMBERS[:1])
    assert earlier.ok
    # The same reference again, to another recipient: the kill came before it left.
    await interrupted(sending, NUMBERS[1:2], reached=set(), external_id="JOB-7")
    report = await sending.recovery.resume()
    assert [r.outcome for r in report.reconcile.settled] == ["not lodged"]
    assert [s.lodged for s in report.sent] == [True]
    assert sorted(messages(sandbox)) == [(NUMBERS[0], 1), (NUMBERS[1], 1)]


async def test_a_batch_another_live_outbox_holds_is_left_alone(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore, tmp_path: Path
) -> None:
    sending = sending_for(service, outbox)
    entries = await interrupted(sending, NUMBERS[:100], reached=set())
    other = OutboxStore(tmp_path / "profile.sqlite3")
    try:
        other.claim(entries[0].batch_id)
        report = await sending.recovery.resume()
        assert report.busy == (entries[0].batch_id,)
        assert report.reconcile.settled == ()
        assert report.sent == ()
    finally:
        other.close()
    assert endpoint_requests(sandbox, "send") == 0


async def test_an_interrupted_lodge_request_is_left_for_the_operator(
    sandbox: SandboxThread, service: GatewayService, outbox: OutboxStore
) -> None:
    recovery = recovery_for(service, outbox)
    batch, [entry] = outbox.record(
        gateway=recovery.runner.account, channel="mms", label="MMS: photo", send_id="gwd-x-mms",
        entries=[NewEntry(1, ("61412345678",), {"files": ["a.jpg"]}, None, own_id=False)],
    )  # fmt: skip
    outbox.begin(entry.id)
    report = await recovery.resume()
    assert [(r.outcome, r.detail) for r in report.reconcile.settled] == [
        ("check by hand", LODGE_MANUAL)
    ]
    assert report.sent == ()
    assert [b.id for b in await recovery.open_batches()] == [batch.id]
    assert await recovery.discard(batch.id) == 1
    assert await recovery.open_batches() == []


async def test_a_lodge_send_is_recorded_with_its_msg_id(
    sandbox: SandboxThread, outbox: OutboxStore
) -> None:
    async with service_for(sandbox, soap_namespace=sandbox.config.namespace) as service:
        sending = sending_for(service, outbox)
        form = SmsForm(
            Channel.LODGE_SMS,
            recipient="0412345678",
            text="Reply YES",
            reply=("HTTP", "http://example.com/r"),
        )
        outcome = await sending.send_message(form)
    [sent] = outcome.sent
    assert isinstance(sent.answer, LodgeResult)
    [batch] = outbox.batches(open_only=False)
    [entry] = outbox.entries(batch.id)
    assert entry.state is EntryState.LODGED
    assert entry.message_id is not None
    assert entry.message_id == sent.answer.msg_id
    assert entry.external_system_id is None
    assert batch.closed


def test_a_message_survives_its_trip_through_the_outbox() -> None:
    sent = SmsMessage(
        Channel.REST_SMS, "Hi €", source="Shop", send_at=datetime(2030, 1, 2, 3, 4, tzinfo=UTC),
        reply_type="HTTP", reply_path="https://x/#FROM#", external_id="J-1", tags="a,b",
    )  # fmt: skip
    assert SmsMessage.from_json(sent.to_json()) == sent
    for bad in (
        {},
        {"text": 5},
        {"text": "x", "source": 3},
        {"text": "x", "send_at": "2030-01-01"},
    ):
        with pytest.raises(ValueError, match=r"^it"):
            SmsMessage.from_json(bad)


async def test_faults_during_a_batch_leave_nothing_sent_twice(
    sandbox_factory: SandboxFactory, outbox: OutboxStore
) -> None:
    sandbox = sandbox_factory(faults="send:503=0.2,drop_after=0.1", seed=3)
    async with service_for(sandbox) as faulty:
        sending = sending_for(faulty, outbox)
        outcome = await sending.send_list(SmsMessage(Channel.REST_SMS, "Under faults"), NUMBERS)
        for _ in range(3):
            if not await sending.recovery.open_batches():
                break
            await sending.recovery.resume()
    assert await sending.recovery.open_batches() == []
    await loaded(sandbox, 250)
    assert sorted(messages(sandbox)) == [(n, 1) for n in NUMBERS]
    [done] = outbox.batches(open_only=False)
    assert (done.id, done.count(EntryState.LODGED)) == (outcome.batch.id, 3)
    assert outcome.sent
