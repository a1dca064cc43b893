"""`POST /v2/account/balance`: form-encoded with Basic authentication, per the spec."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    assert_failure,
    assert_success,
    rest_client,
    send,
    simple_send,
    wait_until,
)

BALANCE = "/v2/account/balance"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def balance(client: httpx.Client) -> float:
    data = assert_success(client.post(BALANCE, content=b"", headers=FORM))
    amount: float = data["Balance"]
    return amount


def test_the_balance_is_an_envelope_of_amount_currency_and_credits(api: httpx.Client) -> None:
    data = assert_success(api.post(BALANCE, data={"account": "demo"}))
    assert set(data) == {"Balance", "Currency", "MessageCredits"}
    assert type(data["Balance"]) in (int, float)
    assert data["Balance"] > 0
    assert data["Currency"] == "AUD"
    assert data["MessageCredits"] is None or type(data["MessageCredits"]) is int


def test_a_post_without_a_body_is_answered(api: httpx.Client) -> None:
    assert_success(api.post(BALANCE))


def test_the_balance_drops_after_a_send(api: httpx.Client) -> None:
    before = balance(api)
    assert_success(simple_send(api))
    after_one = balance(api)
    assert after_one < before
    assert_success(simple_send(api, Message="x" * 400))
    assert before - balance(api) > 2 * (before - after_one), "three parts cost more than one"


def test_a_batch_is_charged_as_its_messages_are_created(api: httpx.Client) -> None:
    before = balance(api)
    assert_success(simple_send(api))
    one = before - balance(api)
    assert_success(send(api, Recipients=["61411111111", "61422222222", "61433333333"]))
    wait_until(lambda: True if before - balance(api) >= 4 * one - 1e-9 else None)
    assert before - balance(api) == pytest.approx(4 * one)


def test_a_json_body_is_an_unsupported_media_type(api: httpx.Client) -> None:
    assert_failure(api.post(BALANCE, json={"account": "demo"}), 415)


def test_get_is_not_allowed(api: httpx.Client) -> None:
    response = api.get(BALANCE)
    assert_failure(response, 405)
    assert "POST" in response.headers["allow"]


def test_an_oversized_form_is_refused(sandbox_factory: SandboxFactory) -> None:
    with rest_client(sandbox_factory(rest_body_limit=1024)) as client:
        assert_failure(client.post(BALANCE, data={"pad": "x" * 2000}), 413)
