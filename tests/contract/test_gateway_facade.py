"""The facade's calls for the layers above it, which never reach past it (to the REST
client or the retrier): single attempts, the profile's retry loop, the token's expiry
and a raw log page, against a real sandbox over loopback HTTP."""

from __future__ import annotations

import json
import time

import pytest

from gwdesk.domain.errors import TransientError
from gwdesk.domain.models import Secret
from gwdesk.gateway.retry import RetryPolicy
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from tests.contract.rest_support import (
    FAST,
    endpoint_requests,
    profile_for,
    service_for,
    set_faults,
)


async def test_send_once_makes_one_request_and_returns_what_it_lodged(
    sandbox: SandboxThread,
) -> None:
    async with service_for(sandbox) as service:
        envelope = await service.send_once({"Message": "Once", "Recipients": ["61412345678"]})
    assert envelope.data.message is not None
    assert envelope.data.message.phone_number == "61412345678"
    assert endpoint_requests(sandbox, "send") == 1


async def test_send_once_is_not_repeated_after_a_refusal_that_may_pass(
    sandbox: SandboxThread,
) -> None:
    set_faults(sandbox, "send:503=1")
    async with service_for(sandbox) as service:
        with pytest.raises(TransientError):
            await service.send_once({"Message": "Once", "Recipients": ["61412345678"]})
    assert endpoint_requests(sandbox, "send") == 1


async def test_status_once_is_not_repeated_after_a_failure(sandbox: SandboxThread) -> None:
    set_faults(sandbox, "status:503=1")
    async with service_for(sandbox) as service:
        with pytest.raises(TransientError):
            await service.status_once(external_system_id="gwd-none")
    assert endpoint_requests(sandbox, "status") == 1


async def test_status_repeats_within_the_policy_where_status_once_does_not(
    sandbox: SandboxThread,
) -> None:
    set_faults(sandbox, "status:503=1")
    async with service_for(sandbox, retry=RetryPolicy(attempts=3, base_delay=0.01)) as service:
        with pytest.raises(TransientError):
            await service.status(external_system_id="gwd-none")
    assert endpoint_requests(sandbox, "status") == 3


async def test_retry_runs_a_call_under_the_profiles_policy_and_sleep(
    sandbox: SandboxThread,
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    service = GatewayService(
        profile_for(sandbox), Secret("demo"), retry=RetryPolicy(attempts=3), sleep=sleep
    )
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TransientError("down")
        return "up"

    async with service:
        assert service.retry_policy.attempts == 3
        assert await service.retry(flaky, what="test", attempts=3) == "up"
    assert calls == 3
    assert len(waits) == 2


async def test_the_tokens_expiry_is_known_once_a_token_is_held(sandbox: SandboxThread) -> None:
    async with service_for(sandbox, auth="oauth") as service:
        assert service.token_expires_at is None
        await service.status(external_system_id="gwd-none")
        expires = service.token_expires_at
    assert expires is not None
    assert expires > time.time()


async def test_log_page_is_the_page_as_the_gateway_sent_it(sandbox: SandboxThread) -> None:
    async with service_for(sandbox, retry=FAST) as service:
        await service.send_once({"Message": "Logged", "Recipients": ["61412345678"]})
        body = await service.log_page(1)
    page = json.loads(body)
    assert "61412345678" in json.dumps(page)
