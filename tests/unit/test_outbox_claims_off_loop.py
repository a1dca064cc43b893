"""Batch claims wait for a busy file on a worker thread, never on the event loop.

Another connection holds the profile file's write lock (as `gwdesk send` recording a
batch does) while a claim is asked for: the loop keeps running, the claim lands
once the lock is let go, and a claim whose waiter was cancelled is not left behind.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.profile_data import account_key
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService
from gwdesk.store.outbox import SMS, NewEntry, OutboxStore

HOLD = 1.0
"""Seconds the other connection keeps the write lock (SQLite's busy timeout is 5)."""


@pytest.fixture
async def sender(tmp_path: Path) -> AsyncIterator[OutboxRunner]:
    # Nothing is sent: the service is only what the runner is built with.
    profile = Profile(name="claims", rest_url="http://127.0.0.1:9", username="ops")
    outbox = OutboxStore(tmp_path / "profile.sqlite3")
    try:
        async with GatewayService(profile, Secret("unused")) as service:
            yield OutboxRunner(service, outbox, account_key(profile))
    finally:
        outbox.close()


def recorded(sender: OutboxRunner) -> int:
    batch, _entries = sender.outbox.record(
        gateway=sender.account,
        channel=SMS,
        label="Claimed",
        send_id="gwd-20250101T000000Z-cccccccccccc",
        entries=[NewEntry(1, ("61412345678",), {"text": "Hi"}, "gwd-x-0001")],
    )
    return batch.id


@contextmanager
def write_locked(path: Path | str) -> Iterator[sqlite3.Connection]:
    """The file's write lock, held by a connection of its own until the block ends
    (or until the caller rolls back)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def claim_started(owners: Path) -> bool:
    """A claim makes its owner's lock file before it asks SQLite for the write lock."""
    return owners.is_dir() and any(owners.iterdir())


async def longest_stall(until: asyncio.Future[None]) -> float:
    """The longest the loop went without running this coroutine, until `until` is done."""
    longest, last = 0.0, time.monotonic()
    while not until.done():
        await asyncio.sleep(0.01)
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    return longest


async def test_a_claim_waits_for_a_locked_file_without_stalling_the_loop(
    sender: OutboxRunner,
) -> None:
    batch_id = recorded(sender)
    loop = asyncio.get_running_loop()
    with write_locked(sender.outbox.path) as other:
        loop.call_later(HOLD, other.execute, "ROLLBACK")
        started = time.monotonic()

        async def claim_and_release() -> float:
            async with sender.claimed(batch_id):
                return time.monotonic() - started

        claiming = asyncio.ensure_future(claim_and_release())
        stall = await longest_stall(claiming)
        waited = await claiming
    assert waited >= HOLD * 0.9  # the claim really waited for the lock...
    assert stall < HOLD / 2  # ...and the loop went on meanwhile
    assert not await asyncio.to_thread(sender.outbox.busy, batch_id)


async def test_a_claim_cancelled_while_it_waits_is_let_go_when_it_lands(
    sender: OutboxRunner,
) -> None:
    batch_id = recorded(sender)
    owners = Path(f"{sender.outbox.path}.owners")
    entered = asyncio.Event()

    async def hold() -> None:
        async with sender.claimed(batch_id):
            entered.set()
            await asyncio.Event().wait()

    with write_locked(sender.outbox.path):
        waiting = asyncio.ensure_future(hold())
        # The claim has begun on its worker (its owner file is made first) and now waits.
        for _ in range(500):
            if claim_started(owners):
                break
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    assert not entered.is_set()
    # The claim lands once the lock is gone; it must then be let go by itself.
    for _ in range(500):
        if not await asyncio.to_thread(sender.outbox.busy, batch_id):
            break
        await asyncio.sleep(0.01)
    assert not await asyncio.to_thread(sender.outbox.busy, batch_id)
    async with sender.claimed(batch_id):  # free for the next runner
        pass
