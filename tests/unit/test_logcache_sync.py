"""The background sync fills the cache from a real sandbox, then keeps it current."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import ProtocolError
from gwdesk.gateway.service import GatewayService
from gwdesk.logs.sync import LogCacheSync, SyncProgress, SyncReport
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from tests.conftest import SandboxFactory
from tests.sandbox.seed_support import seed

Service = Callable[[SandboxThread], GatewayService]


@pytest.fixture
async def service_for() -> AsyncIterator[Service]:
    made: list[GatewayService] = []

    def make(sandbox: SandboxThread) -> GatewayService:
        profile = Profile(name="t", rest_url=sandbox.rest_url, username="demo", auth="oauth")
        made.append(GatewayService(profile, Secret("demo")))
        return made[-1]

    yield make
    for service in made:
        await service.aclose()


async def simple_send(service: GatewayService, text: str, recipient: str) -> None:
    """A message in the account's log (one `simple_send` request: how it got there is
    not under test here)."""
    await service.rest.simple_send_once({"Message": text, "Recipient": recipient})


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "profile.sqlite3"
    LocalStore(path).close()
    return path


def held_ids(path: Path) -> list[str]:
    store = LocalStore(path)
    try:
        return [r[0] for r in store.conn.execute("SELECT message_id FROM log_records")]
    finally:
        store.close()


def sandbox_ids(sandbox: SandboxThread) -> list[str]:
    return [r[0] for r in sandbox.query("SELECT message_id FROM messages")]


def statuses(path: Path) -> dict[str, str]:
    store = LocalStore(path)
    try:
        return dict(store.conn.execute("SELECT message_id, status FROM log_records").fetchall())
    finally:
        store.close()


async def test_a_first_sync_holds_every_record_of_the_account_once(
    tmp_path: Path, sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    seed(tmp_path / "gw.sqlite3", 2345)
    sandbox = sandbox_factory(db=str(tmp_path / "gw.sqlite3"))
    report = await LogCacheSync(service_for(sandbox), store_path).run()
    held = held_ids(store_path)
    assert sorted(held) == sorted(sandbox_ids(sandbox))
    assert len(held) == len(set(held)) == 2345
    assert report.first
    assert report.new == 2345


async def test_an_incremental_sync_adds_only_what_is_new(
    tmp_path: Path, sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    seed(tmp_path / "gw.sqlite3", 1500)
    sandbox = sandbox_factory(db=str(tmp_path / "gw.sqlite3"))
    service = service_for(sandbox)
    await LogCacheSync(service, store_path).run()
    for n in range(3):
        await simple_send(service, f"New message {n}", f"6141234567{n}")
    report = await LogCacheSync(service, store_path).run()
    assert not report.first
    assert report.new == 3
    assert sorted(held_ids(store_path)) == sorted(sandbox_ids(sandbox))


async def test_a_sync_of_an_empty_account_then_of_its_first_message(
    sandbox: SandboxThread, service_for: Service, store_path: Path
) -> None:
    service = service_for(sandbox)
    assert (await LogCacheSync(service, store_path).run()).new == 0
    await simple_send(service, "Hello", "61412345678")
    assert (await LogCacheSync(service, store_path).run()).new == 1
    assert (await LogCacheSync(service, store_path).run()).new == 0


async def wait_delivered(sandbox: SandboxThread, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while sandbox.query("SELECT COUNT(*) FROM messages WHERE status = 'ACTIVE'")[0][0]:
        assert time.monotonic() < deadline, "the sandbox never delivered"
        await asyncio.sleep(0.05)


async def test_a_status_change_of_a_recent_record_reaches_the_cache(
    sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    sandbox = sandbox_factory(simulate_delivery=True, delivery_delay=(0.2, 0.3))
    service = service_for(sandbox)
    for n in range(2):
        await simple_send(service, "Deliver me", f"6141234500{n}")
    await LogCacheSync(service, store_path).run()
    assert set(statuses(store_path).values()) == {"ACTIVE"}
    await wait_delivered(sandbox)
    report = await LogCacheSync(service, store_path).run()
    assert report.updated == 2
    assert "ACTIVE" not in set(statuses(store_path).values())


async def test_a_sync_says_whether_a_recent_record_is_still_active(
    sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    sandbox = sandbox_factory(simulate_delivery=True, delivery_delay=(0.2, 0.3))
    service = service_for(sandbox)
    await simple_send(service, "Deliver me", "61412345000")
    assert (await LogCacheSync(service, store_path).run()).active_left
    await wait_delivered(sandbox)
    assert not (await LogCacheSync(service, store_path).run()).active_left


async def test_old_active_records_are_checked_one_by_one(
    sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    sandbox = sandbox_factory(simulate_delivery=True, delivery_delay=(0.2, 0.3))
    service = service_for(sandbox)
    for n in range(3):
        await simple_send(service, "Deliver me", f"6141234500{n}")
    await LogCacheSync(service, store_path).run()
    await wait_delivered(sandbox)
    # Only the newest record is re-read with `since`; the two before it are looked up.
    report = await LogCacheSync(service, store_path, refresh_window=1, lookups=5).run()
    assert report.checked == 2
    assert "ACTIVE" not in set(statuses(store_path).values())


class Stop(Exception):
    pass


async def test_an_interrupted_first_sync_resumes_without_missing_a_record(
    tmp_path: Path, sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    seed(tmp_path / "gw.sqlite3", 3500)
    sandbox = sandbox_factory(db=str(tmp_path / "gw.sqlite3"))
    service = service_for(sandbox)

    def stop_after_two_pages(step: SyncProgress, _report: SyncReport) -> None:
        if step.phase == "first sync" and step.done >= 2000:
            raise Stop

    with pytest.raises(Stop):  # one page in flight: the pages come one write at a time
        await LogCacheSync(service, store_path, progress=stop_after_two_pages, concurrency=1).run()
    assert len(held_ids(store_path)) == 2000
    # Newer lodgings push the old records onto later pages meanwhile.
    for n in range(5):
        await simple_send(service, f"Meanwhile {n}", f"6141230000{n}")
    report = await LogCacheSync(service, store_path).run()
    assert report.first
    held = held_ids(store_path)
    assert sorted(held) == sorted(sandbox_ids(sandbox))
    assert len(held) == 3505


def indexes(path: Path) -> set[str]:
    store = LocalStore(path)
    try:
        rows = store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        return {r[0] for r in rows if r[0].startswith("log_records_")}
    finally:
        store.close()


async def test_a_big_first_sync_builds_its_indexes_once_at_the_end(
    tmp_path: Path, sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    seed(tmp_path / "gw.sqlite3", 2500)
    sandbox = sandbox_factory(db=str(tmp_path / "gw.sqlite3"))
    service = service_for(sandbox)
    wanted = indexes(store_path)
    seen: list[set[str]] = []

    def stop_in_the_middle(step: SyncProgress, _report: SyncReport) -> None:
        if step.phase == "first sync" and step.done >= 2000:
            seen.append(indexes(store_path))
            raise Stop

    with pytest.raises(Stop):
        await LogCacheSync(
            service, store_path, bulk_from=1000, progress=stop_in_the_middle, concurrency=1
        ).run()
    assert seen == [wanted - {f"log_records_{n}" for n in ("status", "type", "to")}]
    report = await LogCacheSync(service, store_path, bulk_from=1000).run()
    assert report.first
    assert indexes(store_path) == wanted
    assert sorted(held_ids(store_path)) == sorted(sandbox_ids(sandbox))


async def test_a_cut_off_page_stops_the_sync_with_a_plain_error(
    sandbox_factory: SandboxFactory, service_for: Service, store_path: Path
) -> None:
    sandbox = sandbox_factory(faults="logs:malformed=1")
    service = service_for(sandbox)
    await simple_send(service, "Hello", "61412345678")
    with pytest.raises(ProtocolError, match="not valid JSON"):
        await LogCacheSync(service, store_path).run()
    assert held_ids(store_path) == []
