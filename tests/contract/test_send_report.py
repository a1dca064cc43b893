"""A list's report against a sandbox that delivers: each recipient's fate and the totals,
as the sandbox itself counts them, kept current by asking again."""

from __future__ import annotations

from pathlib import Path

import pytest

from gwdesk.app.send_report import Fate, SendReports, totals_line
from gwdesk.gateway.errors import GatewayError
from tests.conftest import SandboxFactory
from tests.contract.report_support import (
    LATE,
    NUMBERS,
    REFUSED,
    UNDELIVERED,
    deliver_now,
    delivering,
    mixed_list,
    settled,
    statuses_at,
)
from tests.contract.rest_support import endpoint_requests, sending_with, service_for, set_faults


async def test_the_reports_totals_match_the_sandboxs_own_count(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        report = await settled(SendReports(sending), batch.id)
    counted = statuses_at(sandbox, NUMBERS)
    totals = report.totals
    assert counted == {"DELIVERED": 98, "FAILED": 2}
    assert totals[Fate.DELIVERED] == counted["DELIVERED"]
    assert totals[Fate.DELIVERY_FAILED] == counted["FAILED"]
    assert totals[Fate.REFUSED] == len(REFUSED) == 50
    assert (totals.recipients, totals.lodged, totals.failed) == (150, 100, 52)
    assert totals_line(totals) == (
        "150 recipients: 98 delivered, 52 failed (50 when sent, 2 on delivery)"
    )


async def test_each_recipient_has_its_own_status_and_message_id(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        report = await settled(SendReports(sending), batch.id)
    rows = {row.number: row for row in report.rows}
    held = dict(sandbox.query("SELECT to_number, message_id FROM messages"))
    assert {n for n, row in rows.items() if row.fate is Fate.DELIVERY_FAILED} == set(UNDELIVERED)
    assert all(rows[n].message_id == held[n] for n in NUMBERS[:100])
    assert {rows[n].request for n in REFUSED} == {2}
    assert all(rows[n].why and not rows[n].message_id for n in REFUSED)
    assert report.tally(report.entries[0]) == {Fate.DELIVERED: 98, Fate.DELIVERY_FAILED: 2}


async def test_a_request_whose_messages_all_ended_is_not_asked_again(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        reports = SendReports(sending)
        report = await settled(reports, batch.id)
        asked = endpoint_requests(sandbox, "status")
        again = await reports.refresh(batch.id, report)
    assert endpoint_requests(sandbox, "status") == asked
    assert again.totals == report.totals


async def test_statuses_change_on_refresh_while_deliveries_are_under_way(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory, **LATE)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        reports = SendReports(sending)
        first = await reports.refresh(batch.id)
        deliver_now(sandbox)
        later = await settled(reports, batch.id)
    assert first.totals[Fate.AWAITING] == 100  # lodged, no receipt yet
    assert first.asked_at is not None
    assert later.asked_at is not None
    assert later.asked_at > first.asked_at
    assert later.totals[Fate.DELIVERED] == 98


async def test_a_status_that_cannot_be_asked_is_named_and_keeps_what_was_learnt(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory, **LATE)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = await mixed_list(sending, sandbox)
        reports = SendReports(sending)
        first = await reports.refresh(batch.id)
        set_faults(sandbox, "status:500=1")
        second = await reports.refresh(batch.id, first)
    assert second.problems
    assert second.problems[0].startswith("request 1: ")
    assert second.learnt == first.learnt
    assert second.totals == first.totals


async def test_a_batch_that_does_not_exist_is_refused_by_its_number(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = delivering(sandbox_factory)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        with pytest.raises(GatewayError) as refused:
            await SendReports(sending).refresh(404)
    assert refused.value.message == "There is no outbox batch 404."
