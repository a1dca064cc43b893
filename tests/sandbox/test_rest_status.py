"""`GET /v2/message/status`: exactly one of message_id, batch_code, external_system_id."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    JSON_UTF8,
    NUMBER,
    assert_failure,
    assert_success,
    rest_client,
    send,
    wait_until,
)

STATUS = "/v2/message/status"


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def sent_id(client: httpx.Client, **fields: object) -> str:
    message_id: str = assert_success(send(client, **fields))["Message"]["MessageId"]
    return message_id


def test_a_message_id_gives_an_array_of_that_message(api: httpx.Client) -> None:
    message_id = sent_id(api)
    response = api.get(STATUS, params={"message_id": message_id})
    assert response.status_code == 200
    assert response.headers["content-type"] == JSON_UTF8
    assert response.json() == [{"PhoneNumber": NUMBER, "MessageId": message_id, "Status": "ACTIVE"}]


def test_external_system_id_and_tags_appear_when_set(api: httpx.Client) -> None:
    message_id = sent_id(api, ExternalSystemId="order-5", Tags="a,b")
    [message] = api.get(STATUS, params={"message_id": message_id}).json()
    assert message == {
        "PhoneNumber": NUMBER,
        "MessageId": message_id,
        "Status": "ACTIVE",
        "ExternalSystemId": "order-5",
        "Tags": "a,b",
    }


def test_a_batch_code_gives_every_message_of_the_batch(api: httpx.Client) -> None:
    recipients = ["61411111111", "61422222222", "61433333333"]
    code = assert_success(send(api, Recipients=recipients))["BatchCode"]
    messages = wait_until(
        lambda: m if len(m := api.get(STATUS, params={"batch_code": code}).json()) == 3 else None
    )
    assert [m["PhoneNumber"] for m in messages] == recipients
    assert all(set(m) == {"PhoneNumber", "MessageId", "Status"} for m in messages)


def test_an_external_system_id_gives_every_message_carrying_it(api: httpx.Client) -> None:
    first = sent_id(api, ExternalSystemId="order-7")
    sent_id(api, ExternalSystemId="order-8")
    second = sent_id(api, ExternalSystemId="order-7")
    messages = api.get(STATUS, params={"external_system_id": "order-7"}).json()
    assert [m["MessageId"] for m in messages] == [first, second]
    assert {m["ExternalSystemId"] for m in messages} == {"order-7"}


def test_an_external_system_id_without_messages_gives_an_empty_array(api: httpx.Client) -> None:
    response = api.get(STATUS, params={"external_system_id": "nothing-here"})
    assert response.status_code == 200
    assert response.json() == []


def test_an_unknown_message_id_is_not_found(api: httpx.Client) -> None:
    response = api.get(STATUS, params={"message_id": "20200101000000123456"})
    assert_failure(response, 404, "message_id")


def test_an_unknown_batch_code_is_not_found(api: httpx.Client) -> None:
    assert_failure(api.get(STATUS, params={"batch_code": "NOPE"}), 404, "batch_code")


def test_another_accounts_message_is_not_found(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "pw")])
    with rest_client(sandbox) as demo, rest_client(sandbox, ("other", "pw")) as other:
        message_id = sent_id(demo, ExternalSystemId="mine")
        code = assert_success(send(demo, Recipients=[NUMBER, NUMBER]))["BatchCode"]
        assert_failure(other.get(STATUS, params={"message_id": message_id}), 404, "message_id")
        assert_failure(other.get(STATUS, params={"batch_code": code}), 404, "batch_code")
        assert other.get(STATUS, params={"external_system_id": "mine"}).json() == []
        assert demo.get(STATUS, params={"message_id": message_id}).status_code == 200


def test_no_parameter_is_refused(api: httpx.Client) -> None:
    assert_failure(api.get(STATUS), 400)


@pytest.mark.parametrize(
    "query",
    [
        "message_id=1&batch_code=2",
        "message_id=1&external_system_id=2",
        "batch_code=1&external_system_id=2",
        "message_id=1&message_id=1",
        "external_system_id=a&external_system_id=b",
        "message_id=1&page=1",
    ],
)
def test_several_parameters_are_refused(api: httpx.Client, query: str) -> None:
    assert "one" in assert_failure(api.get(f"{STATUS}?{query}"), 400).lower()


@pytest.mark.parametrize("name", ["messageId", "MessageId", "id", "page"])
def test_an_unknown_parameter_is_named(api: httpx.Client, name: str) -> None:
    assert_failure(api.get(STATUS, params={name: "1"}), 400, name)


@pytest.mark.parametrize("name", ["message_id", "batch_code", "external_system_id"])
def test_an_empty_value_is_refused(api: httpx.Client, name: str) -> None:
    assert_failure(api.get(f"{STATUS}?{name}="), 400, name)


def test_status_refuses_post_with_the_envelope(api: httpx.Client) -> None:
    response = api.post(STATUS, json={"message_id": "1"})
    assert_failure(response, 405)
    assert "GET" in response.headers["allow"]
