"""A thousand sends through a misbehaving gateway: each message lodged exactly once.

Each goes as the Send tab's does: checked, recorded in the outbox, sent by its runner.

The sandbox answers 10% of requests (sends, status queries and token requests alike)
with 503, drops the connection after doing the work for 5%, and holds 5% past the
client's read time-out after doing the work. Seeded, so a failure can be replayed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from gwdesk.app.send_values import RequestOutcome
from gwdesk.gateway.http import HttpSettings
from gwdesk.gateway.retry import RetryPolicy
from tests.conftest import SandboxFactory
from tests.contract.rest_support import fault_snapshot, send_one, sending_with, service_for

SENDS = 1000
CONCURRENCY = 16
FAULTS = "*:503=0.1,drop_after=0.05,slow=0.05@2"
POLICY = RetryPolicy(
    attempts=6,
    base_delay=0.01,
    max_delay=0.1,
    send_attempts=6,
    resolve_window=2.0,
    resolve_first_delay=0.02,
    resolve_max_delay=0.2,
)


async def test_a_thousand_sends_under_faults_are_each_lodged_exactly_once(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults=FAULTS, seed=20240601)
    gate = asyncio.Semaphore(CONCURRENCY)
    numbers = [f"614{i:08d}" for i in range(SENDS)]

    async with (
        service_for(sandbox, retry=POLICY, http=HttpSettings(read=0.4)) as service,
        sending_with(service, tmp_path) as sending,
    ):

        async def one(number: str) -> RequestOutcome:
            async with gate:
                outcome = await send_one(sending, f"Message to {number}", number)
            [sent] = outcome.sent
            return sent

        chunks = await asyncio.gather(*(one(n) for n in numbers))

    failures = [(c.entry.recipients, c.error) for c in chunks if not c.lodged]
    assert failures == []
    rows = sandbox.query("SELECT external_system_id, to_number FROM messages")
    per_id = Counter(external_id for external_id, _ in rows)
    assert len(rows) == SENDS
    assert set(per_id) == {c.entry.external_system_id for c in chunks}
    assert set(per_id.values()) == {1}
    assert sorted(to for _, to in rows) == numbers

    injected = fault_snapshot(sandbox)["by_endpoint"]["send"]
    assert injected["503"] > 50
    assert injected["drop_after"] > 20
    assert injected["slow"] > 20
    resolved = sum(c.resolved for c in chunks)
    # Every send whose answer was lost was settled by a status query, none resent blindly.
    assert resolved >= injected["drop_after"] + injected["slow"]
    assert all(len(c.messages) == 1 for c in chunks if c.resolved)
