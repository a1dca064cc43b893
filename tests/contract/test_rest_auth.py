"""OAuth tokens (cached, refreshed, single flight) and Basic auth against the sandbox."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import AuthenticationError
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import (
    FAST,
    endpoint_requests,
    send_list,
    send_one,
    sending_with,
    service_for,
)

PASSWORD = "Tr0ub4dor&3-secret"


async def test_one_token_serves_many_calls(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        for _ in range(5):
            await service.status(external_system_id="none")
    assert endpoint_requests(sandbox, "token") == 1


async def test_a_hundred_concurrent_calls_make_one_token_request(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        await asyncio.gather(*(service.status(external_system_id=f"x{i}") for i in range(100)))
        assert service.token_requests == 1
    assert endpoint_requests(sandbox, "token") == 1


TOKEN_TTL = 6


async def test_calls_keep_working_across_expiry_with_one_token_request_each_time(
    sandbox_factory: SandboxFactory,
) -> None:
    # A life the first round ends well within, even on a loaded machine (it took over two
    # seconds there with four test workers on two cores).
    sandbox = sandbox_factory(token_ttl=TOKEN_TTL)
    async with service_for(sandbox) as service:
        started = time.monotonic()
        for round_ in range(2):
            if round_:
                # Past the token's life: the next round must refresh it, once, without a 401.
                await asyncio.sleep(max(0.0, started + TOKEN_TTL + 0.05 - time.monotonic()))
            results = await asyncio.gather(
                *(service.status(external_system_id=f"r{i}") for i in range(50))
            )
            assert results == [[]] * 50
    assert endpoint_requests(sandbox, "token") == 2
    assert endpoint_requests(sandbox, "status") == 100


async def test_a_token_the_gateway_refuses_is_replaced_and_the_call_repeated_once(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        await service.status(external_system_id="warm-up")
        sandbox.call(lambda state: state.conn.execute("DELETE FROM tokens"))
        outcome = await send_one(sending, "After revoke", "0412345678")
    assert outcome.ok
    assert endpoint_requests(sandbox, "token") == 2
    assert endpoint_requests(sandbox, "send") == 2
    assert sandbox.query("SELECT COUNT(*) FROM messages") == [(1,)]


async def test_a_wrong_password_is_an_authentication_error_that_does_not_show_it(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("ops", PASSWORD)])
    async with service_for(sandbox, "wrong-" + PASSWORD, username="ops") as service:
        with pytest.raises(AuthenticationError) as caught:
            await service.balance()
    assert "user name or password" in caught.value.message
    assert PASSWORD not in f"{caught.value} {caught.value!r} {service!r} {service.credentials!r}"


async def test_basic_auth_profiles_never_ask_for_a_token(
    sandbox_factory: SandboxFactory, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("ops", PASSWORD)])
    async with (
        service_for(sandbox, PASSWORD, username="ops", auth="basic") as service,
        sending_with(service, tmp_path) as sending,
    ):
        outcome = await send_one(sending, "Basic", "0412345678")
        listing = await service.logs()
        await service.balance()
    assert outcome.ok
    assert listing.total_records == 1
    assert endpoint_requests(sandbox, "token") == 0


async def test_a_wrong_basic_password_is_an_authentication_error(
    sandbox: SandboxThread,
) -> None:
    async with service_for(sandbox, "nope", auth="basic") as service:
        with pytest.raises(AuthenticationError, match="user name or password is incorrect"):
            await service.status(external_system_id="x")


def test_secrets_never_show_in_reprs_or_dumps(sandbox: SandboxThread) -> None:
    service = service_for(sandbox, PASSWORD)
    shown = f"{service!r} {service.credentials!r} {service.credentials} {service.rest!r}"
    assert PASSWORD not in shown
    assert str(Secret(PASSWORD)) == "********"
    assert PASSWORD not in repr(Secret(PASSWORD))
    assert f"{Secret(PASSWORD)}" == "********"


def test_plain_http_is_refused_for_a_gateway_on_another_machine() -> None:
    with pytest.raises(ValueError, match="must use https"):
        Profile(name="x", rest_url="http://gateway.example.com", username="u")
    assert Profile(name="x", rest_url="http://127.0.0.1:8080/", username="u").rest_url == (
        "http://127.0.0.1:8080"
    )


async def test_a_refused_password_stops_a_many_request_send_with_nothing_lodged(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    numbers = [f"614{i:08d}" for i in range(900)]
    async with service_for(sandbox, "wrong") as service, sending_with(service, tmp_path) as sending:
        outcome = await send_list(sending, "Never", numbers, lanes=2)
    assert len(outcome.sent) == 9
    assert all(isinstance(s.error, AuthenticationError) for s in outcome.sent)
    assert outcome.halted  # the lanes stopped: the rest stay pending, with why
    assert [s.entry.state.value for s in outcome.sent] == ["failed"] * 2 + ["pending"] * 7
    assert endpoint_requests(sandbox, "send") == 0
    assert endpoint_requests(sandbox, "token") <= 2 * FAST.attempts
