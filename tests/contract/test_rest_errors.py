"""Each error class from the sandbox's real answers, and sends that never double up."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gwdesk.gateway.errors import (
    AmbiguousSendError,
    ProtocolError,
    RateLimitedError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.http import HttpSettings
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import (
    FAST,
    endpoint_requests,
    send_list,
    send_one,
    sending_with,
    service_for,
    set_faults,
)

NUMBERS = [f"614{i:08d}" for i in range(5000, 5300)]


def seed_where_first_roll_hits_and_second_misses(rate: float) -> int:
    """A fault seed under which the first request is hit and the second is not."""
    return next(
        s for s in range(1000) if (r := random.Random(s)).random() < rate and r.random() >= rate
    )


def lodged(sandbox: SandboxThread, external_id: str | None) -> int:
    rows = sandbox.query(
        "SELECT COUNT(*) FROM messages WHERE external_system_id = ?", (external_id,)
    )
    return int(rows[0][0])


async def test_a_refused_field_is_a_validation_error_naming_it(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        # Digits, but no number: past the client's own checks (as a stale record would be).
        outcome = await send_list(sending, "Hi", ["61412345678"], source="12345")
    [sent] = outcome.failed
    assert isinstance(sent.error, ValidationError)
    assert sent.error.field == "Source"
    assert sent.error.status == 400


async def test_an_oversized_request_is_a_validation_error_with_status_413(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(rest_body_limit=2000)
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_list(sending, "é" * 600, NUMBERS[:100])
    [sent] = outcome.failed
    assert isinstance(sent.error, ValidationError)
    assert sent.error.status == 413
    assert "too large" in sent.error.message


async def test_429_is_retried_then_reported_with_retry_after(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="status:429=1@0")
    async with service_for(sandbox) as service:
        with pytest.raises(RateLimitedError) as caught:
            await service.status(external_system_id="x")
    assert caught.value.retry_after == 0
    assert endpoint_requests(sandbox, "status") == FAST.attempts


async def test_a_long_retry_after_is_reported_at_once(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="status:429=1@60")
    async with service_for(sandbox) as service:
        with pytest.raises(RateLimitedError, match="Try again in 60 s") as caught:
            await service.status(external_system_id="x")
    assert caught.value.retry_after == 60
    assert endpoint_requests(sandbox, "status") == 1


@pytest.mark.parametrize("status", [500, 503])
async def test_server_trouble_is_transient_after_retries(
    sandbox_factory: SandboxFactory, status: int
) -> None:
    sandbox = sandbox_factory(faults=f"logs:{status}=1")
    async with service_for(sandbox) as service:
        with pytest.raises(TransientError) as caught:
            await service.logs()
    assert caught.value.status == status
    assert endpoint_requests(sandbox, "logs") == FAST.attempts


async def test_an_html_error_page_is_a_protocol_error(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="balance:html=1@502")
    async with service_for(sandbox) as service:
        with pytest.raises(ProtocolError, match=r"web page \(HTTP 502\)"):
            await service.balance()


async def test_a_cut_off_body_is_a_protocol_error(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="logs:malformed=1")
    async with service_for(sandbox) as service:
        with pytest.raises(ProtocolError, match="not valid JSON"):
            await service.logs()


async def test_an_answer_over_the_size_cap_is_refused_unread(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        assert (await send_list(sending, "Fill", NUMBERS[:100])).ok
    async with service_for(sandbox, http=HttpSettings(max_response_bytes=4096)) as small:
        assert await small.status(external_system_id="nothing") == []
        with pytest.raises(ProtocolError, match="larger than 4 KB"):
            await small.logs()


async def test_an_unreachable_gateway_is_transient(sandbox: SandboxThread) -> None:
    async with service_for(sandbox, rest_url="http://127.0.0.1:9") as service:
        with pytest.raises(TransientError, match=r"Could not connect to 127\.0\.0\.1:9"):
            await service.balance()


async def test_a_503_send_is_retried_and_lodged_once(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(
        faults="send:503=0.5", seed=seed_where_first_roll_hits_and_second_misses(0.5)
    )
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Retry", "0412345678")
    [sent] = outcome.sent
    assert sent.lodged
    assert sent.attempts == 2
    assert not sent.resolved
    assert endpoint_requests(sandbox, "send") == 2
    assert endpoint_requests(sandbox, "status") == 0
    assert lodged(sandbox, sent.entry.external_system_id) == 1


async def test_a_send_that_always_meets_503_fails_with_nothing_lodged(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults="send:503=1")
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Never", "0412345678")
    [sent] = outcome.failed
    assert isinstance(sent.error, TransientError)
    assert sent.error.status == 503
    assert endpoint_requests(sandbox, "send") == FAST.send_attempts
    assert sandbox.query("SELECT COUNT(*) FROM messages") == [(0,)]


async def test_a_send_whose_answer_is_lost_is_found_by_status_not_resent(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults="send:drop_after=1")
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Lost answer", "0412345678")
    [sent] = outcome.sent
    assert sent.lodged
    assert sent.resolved  # the messages are the status query's, not an answer's
    assert [m.phone_number for m in sent.messages] == ["61412345678"]
    assert endpoint_requests(sandbox, "send") == 1
    assert lodged(sandbox, sent.entry.external_system_id) == 1


async def test_a_batch_whose_answer_is_lost_is_found_while_it_loads(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults="send:drop_after=1")
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_list(sending, "Lost batch", NUMBERS[:150])
    assert outcome.ok
    assert len(outcome.sent) == 2
    assert all(s.resolved and s.messages for s in outcome.sent)
    assert endpoint_requests(sandbox, "send") == 2
    assert sandbox.query("SELECT COUNT(*) FROM batches") == [(2,)]


async def test_a_slow_answer_past_the_read_timeout_is_settled_by_status(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults="send:slow=1@2")
    async with (
        service_for(sandbox, http=HttpSettings(read=0.2)) as service,
        sending_with(service, tmp_path) as sending,
    ):
        outcome = await send_one(sending, "Slow", "0412345678")
    [sent] = outcome.sent
    assert sent.resolved
    assert len(sent.messages) == 1
    assert endpoint_requests(sandbox, "send") == 1


async def test_a_send_dropped_before_processing_is_resent_once_status_shows_nothing(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(
        faults="send:drop_before=0.5", seed=seed_where_first_roll_hits_and_second_misses(0.5)
    )
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Dropped", "0412345678")
    [sent] = outcome.sent
    assert sent.lodged
    assert sent.attempts == 2
    assert sent.message is not None
    assert not sent.resolved  # the second request's own answer named it
    assert endpoint_requests(sandbox, "status") >= 1
    assert lodged(sandbox, sent.entry.external_system_id) == 1


async def test_a_reused_operator_id_is_not_taken_for_this_send(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory()
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        await send_one(sending, "Yesterday", "0412345678", external_id="ORDER-1")
        set_faults(
            sandbox, "send:drop_before=0.5", seed_where_first_roll_hits_and_second_misses(0.5)
        )
        outcome = await send_one(sending, "Today", "0412345678", external_id="ORDER-1")
    [sent] = outcome.sent
    assert sent.message is not None
    assert not sent.resolved  # yesterday's message was not taken for today's
    assert sandbox.query(
        "SELECT message FROM messages WHERE external_system_id = 'ORDER-1' ORDER BY rank"
    ) == [("Yesterday",), ("Today",)]


async def test_an_unsettled_send_is_ambiguous_and_never_resent(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(faults="send:drop_after=1;status:503=1")
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        outcome = await send_one(sending, "Unknown", "0412345678")
    [sent] = outcome.failed
    external_id = sent.entry.external_system_id
    assert external_id is not None
    assert isinstance(sent.error, AmbiguousSendError)
    assert external_id in sent.error.message
    assert endpoint_requests(sandbox, "send") == 1
    assert lodged(sandbox, external_id) == 1
