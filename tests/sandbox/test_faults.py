"""Each injected fault, as a real httpx client sees it over loopback."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.faults_support import (
    SEND,
    client,
    eventually,
    lodged,
    set_faults,
    simple_send,
)

DISCONNECTED = (httpx.RemoteProtocolError, httpx.ReadError)


def test_a_503_is_the_failure_envelope_and_nothing_is_lodged(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:503=1")
    with client(sandbox) as http:
        response = simple_send(http)
    assert response.status_code == 503
    assert response.headers["X-Sandbox-Fault"] == "503"
    assert "Retry-After" not in response.headers
    body = response.json()
    assert body["Status"] == "Failed"
    assert body["StatusCode"] == 503
    assert body["Data"] is None
    assert body["Errors"][0]["Message"]
    assert lodged(sandbox) == 0


def test_a_503_can_carry_retry_after(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="status:503=1@30")
    with client(sandbox) as http:
        response = http.get("/v2/message/status", params={"message_id": "1"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"


def test_a_500_is_the_failure_envelope(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="logs:500=1")
    with client(sandbox) as http:
        response = http.get("/v2/message/logs")
    assert response.status_code == 500
    assert response.json()["StatusCode"] == 500


def test_a_429_says_when_to_retry(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="balance:429=1@7")
    with client(sandbox) as http:
        response = http.post("/v2/account/balance")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.json()["StatusCode"] == 429


def test_a_429_without_seconds_retries_after_one(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="send:429=1")
    with client(sandbox) as http:
        response = http.post(
            "/v2/message/send", json={"Message": "x", "Recipients": ["61412345678"]}
        )
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"


def test_a_lodge_500_is_a_plain_text_body(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="lodge:500=1")
    response = httpx.get(
        f"{sandbox.lodge_url}/LodgeSMSMessage",
        params={
            "Username": "demo",
            "Pwd": "demo",
            "PhoneNumber": "61412345678",
            "PhoneMessage": "hi",
        },
    )
    assert response.status_code == 500
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Server was unable to process request."
    assert lodged(sandbox) == 0


def test_a_lodge_503_is_a_plain_text_body(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="lodge:503=1")
    response = httpx.post(f"{sandbox.lodge_url}/LodgeSMSMessage", data={"Username": "demo"})
    assert response.status_code == 503
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Service Unavailable"


def test_an_html_fault_is_a_proxy_error_page(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="simple_send:html=1")
    with client(sandbox) as http:
        response = simple_send(http)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/html")
    assert "<title>502 Bad Gateway</title>" in response.text
    with pytest.raises(ValueError, match="Expecting value"):
        response.json()
    assert lodged(sandbox) == 0


def test_an_html_fault_takes_its_status(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="logs:html=1@504")
    with client(sandbox) as http:
        response = http.get("/v2/message/logs")
    assert response.status_code == 504
    assert "Gateway Time-out" in response.text


def test_a_malformed_answer_is_truncated_json_with_200_and_the_message_is_lodged(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:malformed=1")
    with client(sandbox) as http:
        response = simple_send(http)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.text.startswith('{"Data":')
    with pytest.raises(ValueError, match=r"Unterminated|Expecting"):
        response.json()
    assert lodged(sandbox) == 1


def test_latency_delays_the_answer(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="status:latency=0.3")
    with client(sandbox) as http:
        started = time.monotonic()
        response = http.get("/v2/message/status", params={"batch_code": "X"})
        elapsed = time.monotonic() - started
    assert response.status_code == 404
    assert "X-Sandbox-Fault" not in response.headers
    assert elapsed >= 0.3


def test_a_range_of_latency_stays_within_its_bounds(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="balance:latency=0.05-0.15")
    with client(sandbox) as http:
        for _ in range(3):
            started = time.monotonic()
            http.post("/v2/account/balance")
            assert 0.05 <= time.monotonic() - started < 1.0


def test_a_slow_answer_outlasts_the_read_timeout_yet_the_message_is_lodged(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:slow=1@2")
    with client(sandbox, timeout=0.4) as http, pytest.raises(httpx.ReadTimeout):
        simple_send(http)
    assert eventually(lambda: lodged(sandbox) == 1)


def test_a_slow_answer_arrives_whole_for_a_patient_client(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="simple_send:slow=1@0.3")
    with client(sandbox) as http:
        started = time.monotonic()
        response = simple_send(http)
    assert time.monotonic() - started >= 0.3
    assert response.status_code == 200
    assert response.headers["X-Sandbox-Fault"] == "slow"
    assert response.json()["Data"]["Message"]["Status"] == "ACTIVE"


def test_drop_after_lodges_the_message_but_never_answers(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="simple_send:drop_after=1")
    with client(sandbox) as http, pytest.raises(DISCONNECTED):
        simple_send(http)
    assert lodged(sandbox) == 1


def test_drop_before_lodges_nothing(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="simple_send:drop_before=1")
    with client(sandbox) as http, pytest.raises(DISCONNECTED):
        simple_send(http)
    assert lodged(sandbox) == 0


def test_a_client_that_gives_up_during_latency_finds_nothing_lodged(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:latency=0.6")
    with client(sandbox, timeout=0.2) as http, pytest.raises(httpx.ReadTimeout):
        simple_send(http)
    # A patient send made after it waits out the same latency later: once it is lodged,
    # the abandoned one has been decided too.
    with client(sandbox) as http:
        response = http.post("/v2/message/simple_send", json={**SEND, "Message": "Patient"})
    assert response.status_code == 200, response.text
    assert sandbox.query("SELECT message FROM messages") == [("Patient",)]


def test_dropped_connections_log_no_traceback_and_leave_no_connection_open(
    sandbox_factory: SandboxFactory, caplog: pytest.LogCaptureFixture
) -> None:
    sandbox = sandbox_factory(faults="simple_send:drop_after=0.5,drop_before=0.5")
    caplog.set_level(logging.DEBUG, logger="aiohttp")
    with client(sandbox) as http:
        for _ in range(10):
            with pytest.raises(DISCONNECTED):
                simple_send(http)
        server = sandbox.sandbox.runner.server if sandbox.sandbox else None
        assert server is not None
        assert eventually(lambda: not server.connections)
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert noisy == []


def test_a_kept_alive_client_recovers_after_a_drop(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="simple_send:drop_after=0.5", seed=3)
    outcomes = []
    with client(sandbox) as http:
        for _ in range(12):
            try:
                outcomes.append(simple_send(http).status_code)
            except DISCONNECTED:
                outcomes.append(0)
    assert 0 in outcomes
    assert 200 in outcomes
    assert lodged(sandbox) == 12


def test_sandbox_control_routes_are_never_faulted(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="*:503=1")
    with client(sandbox) as http:
        assert simple_send(http).status_code == 503
        control = http.get("/sandbox/faults")
    assert control.status_code == 200
    assert "X-Sandbox-Fault" not in control.headers


def test_the_wildcard_spares_the_wsdl_unless_it_is_named(sandbox_factory: SandboxFactory) -> None:
    spared = sandbox_factory(faults="*:503=1")
    response = httpx.get(f"{spared.lodge_url}?WSDL")
    assert response.status_code != 503
    assert "X-Sandbox-Fault" not in response.headers
    named = sandbox_factory(faults="wsdl:503=1")
    assert httpx.get(f"{named.lodge_url}?wsdl").status_code == 503


def test_an_endpoint_rule_overrides_the_wildcard(sandbox: SandboxThread) -> None:
    assert set_faults(sandbox, "*:503=1;token:503=0").status_code == 200
    with httpx.Client(base_url=sandbox.rest_url) as http:
        token = http.post(
            "/v2/oauth/access_token",
            data={"grant_type": "password", "username": "demo", "password": "demo"},
        )
        assert token.status_code == 200
        assert http.post("/v2/message/simple_send", json=SEND).status_code == 503
