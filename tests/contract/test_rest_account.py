"""The console's balance: Account/Info first, the balance endpoint when a gateway lacks it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from gwdesk.gateway.errors import NotFoundError, ProtocolError, TransientError
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests, send_one, sending_with, service_for


async def test_a_prepaid_account_shows_its_credits_from_account_info(
    sandbox: SandboxThread,
) -> None:
    async with service_for(sandbox) as service:
        funds = await service.funds()
    assert funds.source == "account_info"
    assert funds.summary() == "Credits 10,000 (Account/Info, prepaid)"
    assert endpoint_requests(sandbox, "balance") == 0


async def test_account_info_is_typed_and_read_for_oauth_and_basic_profiles(
    sandbox: SandboxThread,
) -> None:
    async with service_for(sandbox) as oauth, service_for(sandbox, auth="basic") as basic:
        first = await oauth.rest.account_info()
        second = await basic.rest.account_info()
    assert (first.account_name, first.account_status, first.account_type) == (
        "demo",
        "Active",
        "Prepaid",
    )
    assert first == second
    assert basic.token_requests == 0


async def test_a_postpaid_account_says_it_has_no_credits(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(account_type="postpaid")
    async with service_for(sandbox) as service:
        funds = await service.funds()
    assert funds.credits is None
    assert funds.summary() == "Postpaid: no credits to show (Account/Info)"


async def test_a_send_shows_in_the_credits(sandbox: SandboxThread, tmp_path: Path) -> None:
    async with service_for(sandbox) as service, sending_with(service, tmp_path) as sending:
        before = (await service.funds()).credits
        assert (await send_one(sending, "Hello", "0412 345 678")).ok
        after = (await service.funds()).credits
    assert before is not None
    assert after == before - 1


async def test_an_account_turned_postpaid_at_run_time_is_shown_so(sandbox: SandboxThread) -> None:
    async with service_for(sandbox) as service:
        assert (await service.funds()).credits == 10_000
        url = f"{sandbox.rest_url}/sandbox/account"
        await asyncio.to_thread(httpx.put, url, json={"type": "postpaid"})
        assert (await service.funds()).summary().startswith("Postpaid")


async def test_without_account_info_the_balance_endpoint_is_shown_and_named(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="account_info:404=1")
    async with service_for(sandbox) as service:
        funds = await service.funds()
    assert funds.source == "balance"
    assert funds.summary() == "Balance 1,000.00 AUD, 10,000 credits (account balance)"
    assert funds.note == "This gateway has no GET /v2/Account/Info (HTTP 404)."
    assert endpoint_requests(sandbox, "account_info") == 1


async def test_without_the_balance_endpoint_account_info_is_enough(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="balance:404=1", account_type="postpaid")
    async with service_for(sandbox) as service:
        funds = await service.funds()
    assert funds.source == "account_info"
    assert endpoint_requests(sandbox, "balance") == 0


async def test_a_gateway_with_neither_resource_says_so(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="account_info+balance:404=1")
    async with service_for(sandbox) as service:
        with pytest.raises(NotFoundError) as caught:
            await service.funds()
    assert caught.value.message.startswith(
        "The gateway answers neither GET /v2/Account/Info nor POST /v2/account/balance"
    )


async def test_a_passing_503_is_retried_and_not_taken_for_an_absent_endpoint(
    sandbox_factory: SandboxFactory,
) -> None:
    # Seed 1's first roll (0.134) hits a rate of 0.5, its second (0.847) misses.
    sandbox = sandbox_factory(faults="account_info:503=0.5", seed=1)
    async with service_for(sandbox) as service:
        funds = await service.funds()
    assert funds.source == "account_info"
    assert endpoint_requests(sandbox, "account_info") == 2
    assert endpoint_requests(sandbox, "balance") == 0


@pytest.mark.parametrize(
    ("faults", "error"),
    [("account_info:503=1", TransientError), ("account_info:malformed=1", ProtocolError)],
    ids=["down", "mangled"],
)
async def test_other_failures_are_reported_without_trying_the_other_resource(
    sandbox_factory: SandboxFactory, faults: str, error: type[Exception]
) -> None:
    sandbox = sandbox_factory(faults=faults)
    async with service_for(sandbox) as service:
        with pytest.raises(error):
            await service.funds()
    assert endpoint_requests(sandbox, "balance") == 0
