"""The replies backfill fills the gap a stopped listener left, without duplicating anything."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.gateway.errors import GatewayError
from gwdesk.replies import ReplyBatch, backfill, suggested_start
from gwdesk.replies.inbox import ReplyInbox
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.replies import IncomingReply, ReplyStore
from tests.conftest import SandboxFactory
from tests.contract.listener_support import running_listener
from tests.contract.rest_support import service_for
from tests.sandbox.webhook_receiver import lodge, make_reply, wait_for_attempts


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    # Retries far apart: a reply missed while the listener is down stays missed.
    return sandbox_factory(webhook_retry_base=60)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ReplyStore]:
    opened = ReplyStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


def an_hour_ago() -> datetime:
    return datetime.now(UTC) - timedelta(hours=1)


async def test_backfill_adds_the_replies_missed_while_down_and_nothing_twice(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    path = tmp_path / "profile.sqlite3"
    with running_listener(path, port=0) as up:
        port = up.info.port
        template = up.template.render()
        message_id = lodge(gateway, "HTTP", template)
        heard = make_reply(gateway, message_id=message_id, text="Heard live")
        assert wait_for_attempts(gateway, heard["ReplyId"], 1)[0]["Ok"]
    for text in ("Missed one", "Missed two"):
        missed = make_reply(gateway, message_id=message_id, text=text)
        assert not wait_for_attempts(gateway, missed["ReplyId"], 1)[0]["Ok"]
    with running_listener(path, port=port) as back:
        assert back.template.render() == template
        async with service_for(gateway) as service:
            result = await backfill(service, back.inbox, an_hour_ago())
            again = await backfill(service, back.inbox, an_hour_ago())
        texts = sorted(r.text for r in back.store.latest())
        stored = back.store.latest()
    assert (result.fetched, result.added, result.completed) == (3, 2, 1)
    assert (again.fetched, again.added, again.completed) == (3, 0, 0)
    assert texts == ["Heard live", "Missed one", "Missed two"]
    assert {r.message_id for r in stored} == {message_id}


async def test_backfilled_replies_reach_subscribers(
    gateway: SandboxThread, store: ReplyStore
) -> None:
    make_reply(gateway, message_id=lodge(gateway), text="One-way reply")
    batches: list[ReplyBatch] = []
    with ReplyInbox(store) as inbox:
        inbox.subscribe(batches.append)
        async with service_for(gateway) as service:
            result = await backfill(service, inbox, an_hour_ago())
    assert result.added == 1
    assert [r.text for b in batches for r in b.new] == ["One-way reply"]
    assert batches[0].new[0].source == "backfill"


async def test_a_backfill_the_gateway_refuses_raises_its_error(
    gateway: SandboxThread, store: ReplyStore
) -> None:
    with ReplyInbox(store) as inbox:
        async with service_for(gateway, password="wrong") as service:
            with pytest.raises(GatewayError):
                await backfill(service, inbox, an_hour_ago())
    assert store.count() == 0


def test_a_first_backfill_covers_a_day_and_later_ones_start_before_the_newest_reply(
    store: ReplyStore,
) -> None:
    now = datetime(2024, 6, 1, 12, tzinfo=UTC)
    assert suggested_start(store, now) == now - timedelta(days=1)
    newest = datetime(2024, 5, 28, 9, tzinfo=UTC)
    store.add([IncomingReply("614", "615", "hi", newest)])
    assert suggested_start(store, now) == newest - timedelta(hours=1)
