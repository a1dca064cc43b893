"""Every facade call against a real sandbox over loopback HTTP."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from gwdesk.domain.numbers import normalise
from gwdesk.gateway.errors import NotFoundError, ValidationError
from gwdesk.sandbox.db import account_by_id, renumber_ranks
from gwdesk.sandbox.engine import SERVICE_REST, Draft
from gwdesk.sandbox.server import SandboxThread
from tests.contract.rest_support import (
    endpoint_requests,
    send_list,
    send_one,
    sending_with,
    service_for,
)

NUMBERS = [f"614{i:08d}" for i in range(1000, 4000)]


def lodge_directly(sandbox: SandboxThread, count: int, text: str = "seeded") -> None:
    """Fill the account quickly through the sandbox's engine (not under test here)."""

    def fill(state: object) -> None:
        engine = state.engine  # type: ignore[attr-defined]
        account = account_by_id(state.conn, 1)  # type: ignore[attr-defined]
        for number in NUMBERS[:count]:
            engine.lodge(account, Draft(type="SMS", text=text, service_id=SERVICE_REST), number)

    sandbox.call(fill)


async def wait_for_messages(sandbox: SandboxThread, count: int) -> None:
    for _ in range(200):
        if sandbox.query("SELECT COUNT(*) FROM messages")[0][0] >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the sandbox never held {count} messages")


async def test_a_single_recipient_is_lodged_at_once_under_a_generated_external_id(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Hello", "0412 345 678")
    [sent] = outcome.sent
    external_id = sent.entry.external_system_id
    assert outcome.ok
    assert sent.message is not None
    assert sent.message.phone_number == "61412345678"
    assert external_id is not None
    assert sent.message.external_system_id == external_id
    assert external_id.startswith("gwd-")
    assert external_id.endswith("-0001")
    assert sandbox.query("SELECT to_number, external_system_id FROM messages") == [
        ("61412345678", external_id)
    ]


async def test_250_recipients_go_in_three_requests_of_at_most_100(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_list(sending, "Batch", NUMBERS[:250])
    assert [len(s.entry.recipients) for s in outcome.sent] == [100, 100, 50]
    assert all(s.entry.batch_code for s in outcome.sent)
    ids = [s.entry.external_system_id or "" for s in outcome.sent]
    assert len(set(ids)) == 3
    assert [i[-4:] for i in ids] == ["0001", "0002", "0003"]
    await wait_for_messages(sandbox, 250)
    rows = sandbox.query("SELECT external_system_id, COUNT(*) FROM messages GROUP BY 1 ORDER BY 1")
    assert rows == [(ids[0], 100), (ids[1], 100), (ids[2], 50)]


async def test_the_operators_external_id_is_carried_by_every_request(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_list(sending, "Batch", NUMBERS[:150], external_id="ORDER-7")
    assert [s.entry.external_system_id for s in outcome.sent] == ["ORDER-7", "ORDER-7"]
    await wait_for_messages(sandbox, 150)
    assert sandbox.query("SELECT DISTINCT external_system_id FROM messages") == [("ORDER-7",)]


async def test_a_message_over_ten_parts_is_refused_before_any_request(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        with pytest.raises(ValidationError) as caught:
            await send_one(sending, "x" * 1531, "0412345678")
    assert caught.value.field == "Message"
    assert "11 SMS parts" in caught.value.message
    assert endpoint_requests(sandbox, "send") == 0


async def test_send_options_reach_the_gateway(sandbox: SandboxThread, tmp_path: Path) -> None:
    later = datetime.now(UTC) + timedelta(hours=2)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        await send_one(
            sending, "Options", "0412345678", send_at=later, reply=("HEADER", "ACME"), tags="a,b"
        )
    [(from_number, tags, reply_type, sent_us)] = sandbox.query(
        "SELECT from_number, tags, reply_type, sent_us FROM messages"
    )
    assert (from_number, tags, reply_type) == ("ACME", "a,b", "HEADER")
    assert abs(sent_us / 1e6 - later.timestamp()) < 1


async def test_simple_send_returns_the_lodged_message(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        answer = await service.rest.simple_send_once(
            {"Message": "Simple", "Recipient": "61412345678", "From": "61400000001"}
        )
    message = answer.data.message
    assert message is not None
    assert message.status == "ACTIVE"
    assert message.phone_number == "61412345678"
    assert sandbox.query("SELECT message_id, from_number FROM messages") == [
        (message.message_id, "61400000001")
    ]


async def test_status_by_message_id_batch_code_and_external_id(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        single = (await send_one(sending, "One", "0412345678")).sent[0]
        batch = (await send_list(sending, "Two", NUMBERS[:3])).sent[0].entry
        await wait_for_messages(sandbox, 4)
        assert single.message is not None
        assert batch.batch_code is not None
        by_id = await service.status(message_id=single.message.message_id)
        by_batch = await service.status(batch_code=batch.batch_code)
        by_external = await service.status(external_system_id=batch.external_system_id)
    assert [m.message_id for m in by_id] == [single.message.message_id]
    assert sorted(m.phone_number for m in by_batch) == NUMBERS[:3]
    assert by_external == by_batch


async def test_status_takes_exactly_one_parameter(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        with pytest.raises(ValidationError, match="only one"):
            await service.status(message_id="1", batch_code="2")
        with pytest.raises(ValidationError, match="Give one of"):
            await service.status()
    assert endpoint_requests(sandbox, "status") == 0


async def test_logs_by_page_recipient_message_id_and_batch_code(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        batch = (await send_list(sending, "Two", NUMBERS[:2])).sent[0].entry
        single = (await send_one(sending, "One", "0412345678")).sent[0]
        await wait_for_messages(sandbox, 3)
        assert single.message is not None
        assert batch.batch_code is not None
        page = await service.logs(page=1)
        by_recipient = await service.logs(recipient="0412 345 678")
        by_id = await service.logs(message_id=single.message.message_id)
        by_batch = await service.logs(batch_code=batch.batch_code)
    assert page.total_records == 3
    assert page.messages[0].message == "One"
    assert [r.to for r in by_recipient.messages] == ["61412345678"]
    assert [r.message_id for r in by_id.messages] == [single.message.message_id]
    assert sorted(r.to or "" for r in by_batch.messages) == NUMBERS[:2]
    assert page.messages[0].date_lodged.tzinfo is not None


async def test_logs_since_sends_a_plus_offset_intact(sandbox: SandboxThread) -> None:
    lodge_directly(sandbox, 3)
    since = datetime.now(UTC).astimezone(sandbox.state.zone) - timedelta(minutes=5)
    assert "+" in since.isoformat()
    async with service_for(sandbox) as service:
        listing = await service.logs(since=since)
    assert listing.total_records == 3


async def test_log_sync_reads_a_whole_account_across_pages_once(sandbox: SandboxThread) -> None:
    lodge_directly(sandbox, 2300)
    async with service_for(sandbox) as service:
        sync = service.sync_logs()
        ids = [record.message_id async for record in sync]
    assert len(ids) == len(set(ids)) == 2300
    assert sync.pages == 3
    assert not sync.stalled


async def test_a_sync_resumed_from_the_cursor_yields_only_newer_records(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    lodge_directly(sandbox, 5)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        first = service.sync_logs()
        assert len([r async for r in first]) == 5
        await send_one(sending, "Newer", "0412345678")
        second = service.sync_logs(first.cursor, first.at_cursor)
        newer = [r.message async for r in second]
    assert newer == ["Newer"]


async def test_log_sync_keeps_records_that_share_the_boundary_time(
    sandbox: SandboxThread,
) -> None:
    lodge_directly(sandbox, 1200)

    def tie(state: object) -> None:
        conn = state.conn  # type: ignore[attr-defined]
        boundary = conn.execute("SELECT lodged_us FROM messages WHERE rank = 1000").fetchone()[0]
        conn.execute(
            "UPDATE messages SET lodged_us = ? WHERE rank IN (999, 1001, 1002)", (boundary,)
        )
        renumber_ranks(conn, 1)

    sandbox.call(tie)
    async with service_for(sandbox) as service:
        ids = [record.message_id async for record in service.sync_logs()]
    assert len(ids) == len(set(ids)) == 1200


async def test_balance_for_oauth_and_basic_profiles(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as oauth, service_for(sandbox, auth="basic") as basic:
        first = await oauth.balance()
        second = await basic.balance()
    assert first.currency == "AUD"
    assert isinstance(first.balance, Decimal)
    assert first.balance == second.balance
    assert basic.token_requests == 0


async def test_reply_backfill_reads_every_page(sandbox: SandboxThread) -> None:
    def replies(state: object) -> None:
        engine = state.engine  # type: ignore[attr-defined]
        for i in range(230):
            engine.create_reply(
                text=f"reply {i}",
                message=None,
                account_id=1,
                from_number=NUMBERS[i],
                to_number="61400000000",
            )

    sandbox.call(replies)
    async with service_for(sandbox) as service:
        start = datetime.now(UTC) - timedelta(minutes=5)
        got = [reply async for reply in service.replies(start, page_size=100)]
    assert [r.message_text for r in got] == [f"reply {i}" for i in range(230)]
    assert all(r.date_received.tzinfo is not None for r in got)


async def test_an_unknown_message_id_is_not_found(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        with pytest.raises(NotFoundError, match="No message has MessageId"):
            await service.status(message_id="20200101000000000000")


async def test_a_profile_region_reads_national_numbers(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with (
        service_for(sandbox, region="NZ") as service,
        sending_with(service, tmp_path) as sending,
    ):
        outcome = await send_one(sending, "Kia ora", "021 234 5678")
    assert outcome.sent[0].entry.recipients == ("64212345678",)
    assert normalise("021 234 5678", "AU") == "61212345678"  # a Sydney number there
