"""`/sandbox/deliveries`: who a simulated delivery fails for, said over the control API."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.test_control import assert_error
from tests.sandbox.webhook_receiver import control

DELIVERING = {
    "simulate_delivery": True,
    "delivery_delay": (0.0, 0.05),
    "delivery_failure_rate": 0.0,
}


def finals(sandbox: SandboxThread) -> dict[str, str]:
    return dict(sandbox.query("SELECT to_number, final_status FROM messages"))


def test_a_named_number_fails_and_the_others_are_delivered(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    with control(sandbox) as client:
        changed = client.put("/sandbox/deliveries", json={"failing": ["+61412000001"]})
        sent = client.post(
            "/v2/message/send",
            json={"Message": "Hi", "Recipients": ["61412000001", "61412000002"]},
            auth=("demo", "demo"),
        )
    assert changed.json() == {"simulate": True, "failure_rate": 0.0, "failing": ["61412000001"]}
    assert sent.status_code == 200
    deadline = time.monotonic() + 10
    while len(finals(sandbox)) < 2:  # the batch is created in the background
        assert time.monotonic() < deadline, "the batch was never created"
        time.sleep(0.02)
    assert finals(sandbox) == {"61412000001": "FAILED", "61412000002": "DELIVERED"}


def test_the_failure_rate_can_be_changed(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    with control(sandbox) as client:
        client.put("/sandbox/deliveries", json={"failure_rate": 1})
        read = client.get("/sandbox/deliveries").json()
    assert read == {"simulate": True, "failure_rate": 1.0, "failing": []}


@pytest.mark.parametrize(
    "body",
    [{}, {"failing": "61412000001"}, {"failing": ["12"]}, {"failing": [7]},
     {"failure_rate": 2}, {"failure_rate": "0.5"}, {"colour": "blue"}],
    ids=["empty", "not-a-list", "short", "not-text", "rate-above-1", "string-rate", "unknown"],
)  # fmt: skip
def test_bad_delivery_settings_are_refused_and_change_nothing(
    sandbox_factory: SandboxFactory, body: dict[str, Any]
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    with control(sandbox) as client:
        response = client.put("/sandbox/deliveries", json=body)
        read = client.get("/sandbox/deliveries").json()
    assert_error(response, 400)
    assert read == {"simulate": True, "failure_rate": 0.0, "failing": []}


def test_without_delivery_simulation_failing_numbers_are_refused(sandbox: SandboxThread) -> None:
    with control(sandbox) as client:
        response = client.put("/sandbox/deliveries", json={"failing": ["61412000001"]})
    assert_error(response, 409, "Delivery simulation is off")
