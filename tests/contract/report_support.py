"""A list whose recipients come to every end, through a sandbox that delivers: the report's
and the resend's tests share it.

Request 1 (100 recipients) is lodged and delivered but for `UNDELIVERED` (the sandbox
fails their deliveries: `PUT /sandbox/deliveries`); request 2 (50) fails when sent
(the sandbox answers every send 503 while it goes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import httpx

from gwdesk.app.send_report import Fate, SendReport, SendReports
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState, OutboxBatch
from tests.conftest import SandboxFactory
from tests.contract.rest_support import set_faults

NUMBERS = tuple(f"614{i:08d}" for i in range(20_000, 20_150))
UNDELIVERED = (NUMBERS[3], NUMBERS[77])
REFUSED = NUMBERS[100:]
TEXT = "Clinic closed Monday; call 02 9999 0000"
#: Deliveries in a tenth of a second: the tests wait for them, not for a clock.
DELIVERING = {
    "simulate_delivery": True,
    "delivery_delay": (0.05, 0.1),
    "delivery_failure_rate": 0.0,
}


def delivering(sandbox_factory: SandboxFactory, **settings: object) -> SandboxThread:
    """A sandbox whose deliveries end within a tenth of a second, `UNDELIVERED` failing."""
    sandbox = sandbox_factory(**{**DELIVERING, **settings})
    fail_deliveries(sandbox, UNDELIVERED)
    return sandbox


#: Receipts that will not come by themselves during a test (`deliver_now` brings them).
LATE = {"delivery_delay": (600.0, 601.0)}


def deliver_now(sandbox: SandboxThread) -> None:
    """Every receipt the sandbox has planned is due now: its settler applies them."""

    def due(state: object) -> None:
        conn = state.conn  # type: ignore[attr-defined]
        conn.execute("UPDATE messages SET deliver_at_us = 0 WHERE receipt_us IS NULL")

    sandbox.call(due)


def fail_deliveries(sandbox: SandboxThread, numbers: Sequence[str]) -> None:
    response = httpx.put(f"{sandbox.rest_url}/sandbox/deliveries", json={"failing": list(numbers)})
    response.raise_for_status()


async def mixed_list(sending: Sending, sandbox: SandboxThread) -> OutboxBatch:
    """`NUMBERS` recorded as one list: request 1 lodged, request 2 failed when sent."""
    message = SmsMessage(Channel.REST_SMS, TEXT)
    batch, entries = await sending.record_list(message, NUMBERS)
    first = await sending.run_list(batch, entries[:1], message)
    assert first.sent[0].entry.state is EntryState.LODGED
    set_faults(sandbox, "send:503=1")
    try:
        second = await sending.run_list(batch, entries[1:], message)
    finally:
        set_faults(sandbox, "")
    assert second.sent[0].entry.state is EntryState.FAILED
    return batch


async def settled(reports: SendReports, batch_id: int, within: float = 20.0) -> SendReport:
    """The report once no lodged message awaits a final status (asked again until then)."""
    return await until(reports, batch_id, lambda r: r.totals[Fate.AWAITING] == 0, within)


async def until(
    reports: SendReports,
    batch_id: int,
    done: Callable[[SendReport], bool],
    within: float = 20.0,
) -> SendReport:
    report = await reports.refresh(batch_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not done(report):
        assert loop.time() < deadline, f"the report never got there: {report.totals}"
        await asyncio.sleep(0.05)
        report = await reports.refresh(batch_id, report)
    return report


def statuses_at(sandbox: SandboxThread, numbers: Sequence[str]) -> dict[str, int]:
    """The sandbox's own count of these numbers' messages by status."""
    marks = ", ".join("?" for _ in numbers)
    rows: list[tuple[str, int]] = sandbox.query(
        f"SELECT status, COUNT(*) FROM messages WHERE to_number IN ({marks}) GROUP BY status",
        tuple(numbers),
    )
    return dict(rows)
