"""Resend to the failed against a sandbox that delivers: a new batch of exactly the
recipients that failed (when sent or on delivery), the same message, asked about as
every list send is; nobody delivered, awaiting or unknown is texted again."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.app.list_send import ListSend
from gwdesk.app.questions import Concern
from gwdesk.app.resend import NOBODY, prepare_resend, record_resend
from gwdesk.app.send_report import RESENT, Fate, SendReports, compose
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.errors import ValidationError
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState
from tests.conftest import SandboxFactory
from tests.contract.report_support import (
    LATE,
    NUMBERS,
    REFUSED,
    TEXT,
    UNDELIVERED,
    delivering,
    fail_deliveries,
    mixed_list,
    settled,
)
from tests.contract.rest_support import sending_with, service_for


def texted(sandbox: SandboxThread) -> Counter[str]:
    """How many messages the sandbox holds for each number."""
    return Counter(n for (n,) in sandbox.query("SELECT to_number FROM messages"))


async def written(sending: Sending, sends: int) -> None:
    """Wait until the history holds `sends` sends of `TEXT` (its writer thread's)."""
    history = sending.history
    assert history is not None
    since = datetime.now(UTC) - timedelta(hours=1)
    for _ in range(400):
        if len(await asyncio.to_thread(history.reached_with, TEXT, since)) >= sends:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the history never held {sends} sends")


async def resent(sending: Sending, batch_id: int) -> int:
    """Resend to the failed of `batch_id`, asked and answered yes; the new batch's id."""
    flow = ListSend(sending)
    report = await settled(SendReports(sending), batch_id)
    resend = await prepare_resend(flow, report)
    assert resend.prepared.question is not None  # asked, as every list send is
    run = await record_resend(flow, resend)
    end = await flow.run_due()
    assert end.ok, end.text
    return run.batch.id


async def test_resend_to_the_failed_lodges_exactly_the_failed_ones(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        before = texted(sandbox)
        second = await resent(sending, batch.id)
        report = await settled(SendReports(sending), second)
    after = texted(sandbox)
    failed = set(REFUSED) | set(UNDELIVERED)
    assert after - before == Counter(failed)  # each failed one once more, nobody else
    assert {row.number for row in report.rows} == failed
    assert sandbox.query("SELECT DISTINCT message FROM messages") == [(TEXT,)]


async def test_nothing_goes_to_a_delivered_recipient(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        await resent(sending, batch.id)
    delivered = set(NUMBERS[:100]) - set(UNDELIVERED)
    assert all(texted(sandbox)[n] == 1 for n in delivered)


async def test_recipients_awaiting_a_status_or_unknown_are_not_resent(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory, **LATE)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        report = await SendReports(sending).refresh(batch.id)
        lodged = report.entries[0]
        unknown = replace(lodged, state=EntryState.UNKNOWN, reason="its answer was lost")
        doubtful = compose(report.batch, (unknown, report.entries[1]), {})
        resend = await prepare_resend(ListSend(sending), doubtful)
    assert report.totals[Fate.AWAITING] == 100
    assert set(resend.numbers) == set(REFUSED)
    assert doubtful.totals[Fate.UNKNOWN] == 100


async def test_the_requests_that_failed_when_sent_are_retired_once_resent(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        second = await resent(sending, batch.id)
        report = await settled(SendReports(sending), batch.id)
        await written(sending, 2)  # the list and its resend, in the send history
        resend = await prepare_resend(ListSend(sending), report)
    [retired] = [e for e in report.entries if e.state is EntryState.FAILED]
    assert retired.reason.startswith(f"{RESENT}{second}")
    assert not retired.retryable
    assert report.totals[Fate.RESENT] == 50
    assert set(resend.numbers) == set(UNDELIVERED)  # a second resend: only those,
    assert resend.prepared.question is not None  # and it names the first
    assert Concern.DUPLICATE in {ask.concern for ask in resend.prepared.question.asks}


async def test_a_list_where_nobody_failed_has_nothing_to_resend(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    fail_deliveries(sandbox, ())
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await sending.send_list(SmsMessage(Channel.REST_SMS, TEXT), NUMBERS[:10])
        report = await settled(SendReports(sending), outcome.batch.id)
        with pytest.raises(ValidationError) as refused:
            await prepare_resend(ListSend(sending), report)
    assert report.totals[Fate.DELIVERED] == 10
    assert refused.value.message == NOBODY
    assert refused.value.field == "Recipients"
