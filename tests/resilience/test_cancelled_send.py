"""A single send cancelled while the gateway does not answer (`app/cancelled_send.py`), Qt-free.

The flow (`SingleSend`) runs against a real sandbox whose send endpoint is held by
its fault plan (`latency`: the request waits, and is dropped unprocessed when the
client hangs up; `slow`: the message is lodged and the answer held back). Each test
cancels, then counts what the sandbox holds for the send's ExternalSystemId and how
many send requests reached it, also after the outbox's own resume and reconcile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gwdesk.app.cancelled_send import NOT_STARTED, TOO_LATE, settle_cancelled
from gwdesk.app.send_values import CANCELLED_NOT_SENT, OPERATOR_CANCELLED
from gwdesk.app.sending import Sending
from gwdesk.app.single_send import NOTHING_RECORDED, SingleResult, SingleSend
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.errors import AmbiguousSendError, GatewayError
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState, OutboxEntry
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests, sending_with, service_for, set_faults

CUSTOMER = "0412345678"


@dataclass
class Desk:
    sandbox: SandboxThread
    flow: SingleSend
    sending: Sending


@pytest.fixture
async def desk(sandbox_factory: SandboxFactory, tmp_path: Path) -> AsyncIterator[Desk]:
    sandbox = sandbox_factory()
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        yield Desk(sandbox, SingleSend(sending, settle_limit=3.0), sending)


async def until(predicate: object, within: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {predicate}")
        await asyncio.sleep(0.02)


async def cancelled_send(desk: Desk, *, once: object) -> SingleResult:
    """A send started, cancelled once `once()` holds, and what the flow made of it."""
    checked = desk.flow.check(SmsForm(Channel.REST_SMS, recipient=CUSTOMER, text="Hung?"))
    prepared = await desk.flow.prepare(checked)
    cancel = asyncio.Event()
    sending = asyncio.ensure_future(desk.flow.send(prepared, cancel=cancel))
    try:
        await until(once)
    finally:
        cancel.set()
    return await asyncio.wait_for(sending, 30)


def held(sandbox: SandboxThread, external_id: str | None) -> int:
    """Messages the sandbox holds for one ExternalSystemId."""
    rows = sandbox.query(
        "SELECT COUNT(*) FROM messages WHERE external_system_id = ?", (external_id,)
    )
    return int(rows[0][0])


async def entry_of(desk: Desk, result: SingleResult) -> OutboxEntry:
    runner = desk.sending.runner
    found = await asyncio.to_thread(runner.outbox.entry, result.outcome.sent[0].entry.id)
    assert found is not None
    return found


async def nothing_resent(desk: Desk, external_id: str | None, copies: int) -> None:
    """The fault plan cleared (its counters too): resume and reconcile send nothing."""
    await asyncio.to_thread(set_faults, desk.sandbox, "")
    await desk.sending.recovery.resume()
    await desk.sending.recovery.reconcile()
    assert await asyncio.to_thread(endpoint_requests, desk.sandbox, "send") == 0
    assert held(desk.sandbox, external_id) == copies


def on_the_wire(sandbox: SandboxThread) -> bool:
    return endpoint_requests(sandbox, "send") == 1


async def test_a_send_cancelled_before_the_gateway_took_it_fails_and_is_never_sent_again(
    desk: Desk,
) -> None:
    await asyncio.to_thread(set_faults, desk.sandbox, "send:latency=60")
    result = await cancelled_send(desk, once=lambda: on_the_wire(desk.sandbox))
    assert result.cancelled
    assert result.cancel_text == CANCELLED_NOT_SENT
    entry = await entry_of(desk, result)
    assert (entry.state, entry.error_kind, entry.retryable) == (
        EntryState.FAILED,
        OPERATOR_CANCELLED,
        False,
    )
    assert held(desk.sandbox, entry.external_system_id) == 0
    [row] = result.refresh.history
    assert not row.ok
    assert row.detail == CANCELLED_NOT_SENT
    await nothing_resent(desk, entry.external_system_id, copies=0)


async def test_a_send_the_gateway_took_before_the_cancel_is_recorded_lodged(desk: Desk) -> None:
    await asyncio.to_thread(set_faults, desk.sandbox, "send:slow=1@60")
    result = await cancelled_send(desk, once=lambda: held_any(desk.sandbox))
    assert result.cancelled
    assert result.ok
    assert result.cancel_text == TOO_LATE
    entry = await entry_of(desk, result)
    assert entry.state is EntryState.LODGED
    assert entry.message_id
    [row] = result.refresh.history
    assert row.ok
    assert row.message_id == entry.message_id
    assert held(desk.sandbox, entry.external_system_id) == 1
    await nothing_resent(desk, entry.external_system_id, copies=1)


def held_any(sandbox: SandboxThread) -> bool:
    return bool(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


async def test_a_cancelled_send_whose_status_cannot_be_asked_stays_unknown_and_is_not_resent(
    desk: Desk,
) -> None:
    await asyncio.to_thread(set_faults, desk.sandbox, "send:latency=60;status:latency=60")
    result = await cancelled_send(desk, once=lambda: on_the_wire(desk.sandbox))
    assert result.cancelled
    assert isinstance(result.error, AmbiguousSendError)
    assert "never sent again" in result.cancel_text
    entry = await entry_of(desk, result)
    assert (entry.state, entry.error_kind) == (EntryState.UNKNOWN, OPERATOR_CANCELLED)
    # Once the gateway answers, the outbox settles it by status: not found, it fails.
    await nothing_resent(desk, entry.external_system_id, copies=0)
    settled = await entry_of(desk, result)
    assert (settled.state, settled.reason) == (EntryState.FAILED, CANCELLED_NOT_SENT)


async def test_a_cancel_before_the_send_was_recorded_sends_nothing(desk: Desk) -> None:
    checked = desk.flow.check(SmsForm(Channel.REST_SMS, recipient=CUSTOMER, text="Never"))
    prepared = await desk.flow.prepare(checked)
    cancel = asyncio.Event()
    cancel.set()
    with pytest.raises(GatewayError, match=NOTHING_RECORDED):
        await desk.flow.send(prepared, cancel=cancel)
    assert await desk.sending.recovery.open_batches() == []
    assert endpoint_requests(desk.sandbox, "send") == 0


async def test_a_send_that_ends_before_the_cancel_is_its_own_result(desk: Desk) -> None:
    checked = desk.flow.check(SmsForm(Channel.REST_SMS, recipient=CUSTOMER, text="Quick"))
    prepared = await desk.flow.prepare(checked)
    cancel = asyncio.Event()
    result = await desk.flow.send(prepared, cancel=cancel)
    cancel.set()
    assert result.ok
    assert not result.cancelled
    assert result.cancel_text == ""
    assert held(desk.sandbox, result.outcome.sent[0].entry.external_system_id) == 1


async def test_a_recorded_request_that_never_left_fails_for_good_when_cancelled(
    desk: Desk,
) -> None:
    message = SmsMessage(Channel.REST_SMS, "Recorded, then cancelled")
    batch, _entries = await desk.sending.runner.record_sms([(message, ("61412345678",))], label="x")
    report = await settle_cancelled(desk.sending.runner, batch)
    [sent] = report.sent
    assert (sent.entry.state, sent.entry.reason, sent.entry.error_kind) == (
        EntryState.FAILED,
        NOT_STARTED,
        OPERATOR_CANCELLED,
    )
    assert report.cancelled
    await nothing_resent(desk, sent.entry.external_system_id, copies=0)
