"""Helpers for the REST face's tests: a plain httpx client and the contract's envelopes.

The tests talk to the sandbox with `httpx` alone, never gwdesk's client code, so a
mistake shared by both ends of the wire cannot hide.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import httpx

from gwdesk.sandbox.db import Account, verify_password
from gwdesk.sandbox.engine import SERVICE_REST, Draft
from gwdesk.sandbox.server import SandboxThread
from gwdesk.sandbox.state import SandboxState

DEMO = ("demo", "demo")
JSON_UTF8 = "application/json; charset=utf-8"
NUMBER = "61412345678"
T = TypeVar("T")


def rest_client(sandbox: SandboxThread, auth: tuple[str, str] | None = DEMO) -> httpx.Client:
    """A client with Basic credentials (or none), talking to the sandbox over loopback.

    The sandbox speaks plain HTTP, so no TLS context is needed; building httpx's default
    one (loading the CA bundle) would cost ~30 ms a test.
    """
    return httpx.Client(base_url=sandbox.rest_url, auth=auth, timeout=10, verify=False)  # noqa: S501


def bearer_token(client: httpx.Client, credentials: tuple[str, str] = DEMO) -> str:
    username, password = credentials
    response = client.post(
        "/v2/oauth/access_token",
        data={"grant_type": "password", "username": username, "password": password},
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


def assert_failure(response: httpx.Response, status: int, field: str | None = None) -> str:
    """Assert the contract's failure envelope; returns its message for further checks."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body = response.json()
    assert set(body) == {"Data", "Status", "StatusCode", "Errors"}
    assert body["Data"] is None
    assert body["Status"] == "Failed"
    assert body["StatusCode"] == status
    [error] = body["Errors"]
    assert set(error) == {"Field", "Message"}
    assert error["Field"] == field, error
    assert isinstance(error["Message"], str)
    assert error["Message"]
    assert "Traceback" not in error["Message"]
    message: str = error["Message"]
    return message


def assert_success(response: httpx.Response) -> Any:
    """Assert the success envelope; returns its `Data`."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body = response.json()
    assert set(body) == {"Data", "Status", "StatusCode"}
    assert body["Status"] == "Success"
    assert body["StatusCode"] == 200
    return body["Data"]


def simple_send(client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"Message": "Hello", "Recipient": NUMBER, **fields}
    return client.post("/v2/message/simple_send", json=body)


def send(client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"Message": "Hello", "Recipients": [NUMBER], **fields}
    return client.post("/v2/message/send", json=body)


def log_of(client: httpx.Client, message_id: str) -> dict[str, Any]:
    """The one log record of a message."""
    response = client.get("/v2/message/logs", params={"message_id": message_id})
    assert response.status_code == 200, response.text
    [record] = response.json()["messages"]
    assert isinstance(record, dict)
    return record


def wait_until(probe: Callable[[], T | None], timeout: float = 5.0, step: float = 0.01) -> T:
    """Poll `probe` until it returns something other than None (or fail at the deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    assert moment.utcoffset() is not None, text
    return moment


def demo_account(state: SandboxState) -> Account:
    account = verify_password(state.conn, "demo", "demo")
    assert account is not None
    return account


def lodge_directly(sandbox: SandboxThread, count: int, text: str = "Seeded") -> list[str]:
    """Lodge `count` messages through the engine (fast set-up); returns their MessageIds."""

    def lodge(state: SandboxState) -> list[str]:
        account = demo_account(state)
        draft = Draft(type="SMS", text=text, service_id=SERVICE_REST)
        return [
            state.engine.lodge(account, draft, f"614{index:08d}")["message_id"]
            for index in range(count)
        ]

    return sandbox.call(lodge)
