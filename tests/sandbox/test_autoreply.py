"""Auto-reply mode: simulated customers answer two-way sends, at a bounded rate."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from gwdesk.domain.segments import non_gsm_characters
from gwdesk.sandbox.autoreply import CANNED_REPLIES, OPTING_IN, OPTING_OUT, AutoReplier
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import CUSTOMER, DEMO, TLS, Receiver, control, lodge


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def reply_rows(sandbox: SandboxThread) -> list[tuple[str | None, str, int]]:
    return sandbox.query("SELECT message_id, text, received_us FROM replies ORDER BY id")


def settings(sandbox: SandboxThread, **changes: object) -> dict[str, object]:
    with control(sandbox) as client:
        response = client.put("/sandbox/auto-reply", json=changes) if changes else None
        if response is not None:
            assert response.status_code == 200, response.text
        current: dict[str, object] = client.get("/sandbox/auto-reply").json()
    return current


def test_a_two_way_send_gets_a_customer_reply_after_the_delay(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.2)
    started = time.monotonic()
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/auto?m=#MSG#&f=#FROM#")
    [request] = receiver.wait_for(1)
    assert request.at - started >= 0.2
    assert request.params["f"] == [CUSTOMER]
    assert request.params["m"][0] in CANNED_REPLIES
    [(replied_to, text, _)] = reply_rows(sandbox)
    assert (replied_to, text) == (message_id, request.params["m"][0])


def test_one_way_and_header_sends_get_no_auto_reply(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.05)
    lodge(sandbox)
    lodge(sandbox, "HEADER", "Clinic")
    two_way = lodge(sandbox, "HTTP", f"{receiver.url}/two-way")
    receiver.wait_for(1)
    assert [row[0] for row in reply_rows(sandbox)] == [two_way]


def test_other_reply_routes_get_an_auto_reply_without_a_webhook(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.05)
    by_email = lodge(sandbox, "EMAIL", "desk@example.com")
    by_http = lodge(sandbox, "HTTP", f"{receiver.url}/after")
    receiver.wait_for(1)
    assert [row[0] for row in reply_rows(sandbox)] == [by_email, by_http]
    assert [r.path for r in receiver.requests] == ["/after"]


def test_a_message_whose_delivery_will_fail_gets_no_auto_reply(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(
        auto_reply=True,
        auto_reply_delay=0.05,
        simulate_delivery=True,
        delivery_failure_rate=1.0,
    )
    lodge(sandbox, "HTTP", f"{receiver.url}/undelivered")
    assert settings(sandbox)["pending"] == 0
    # A message lodged later is answered later: once its reply is in, the first one's is due.
    sandbox.call(lambda state: setattr(state.engine, "delivery_failure_rate", 0.0))
    delivered = lodge(sandbox, "HTTP", f"{receiver.url}/delivered")
    [request] = receiver.wait_for(1)
    assert request.path == "/delivered"
    assert [row[0] for row in reply_rows(sandbox)] == [delivered]


def test_auto_reply_switched_on_through_the_api_answers_later_sends(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    lodge(sandbox, "HTTP", f"{receiver.url}/before")
    assert settings(sandbox, enabled=True, delay=0.05)["enabled"] is True
    after = lodge(sandbox, "HTTP", f"{receiver.url}/after")
    # Replies are made in the order they fall due, each slot after the one before: once a
    # message lodged last is answered, any reply due for an earlier one has been made.
    last = lodge(sandbox, "HTTP", f"{receiver.url}/last")
    assert [r.path for r in receiver.wait_for(2)] == ["/after", "/last"]
    assert [row[0] for row in reply_rows(sandbox)] == [after, last]


def test_switching_auto_reply_off_drops_the_replies_not_yet_made(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.4)
    lodge(sandbox, "HTTP", f"{receiver.url}/never")
    assert settings(sandbox)["pending"] == 1
    assert settings(sandbox, enabled=False)["pending"] == 0
    # Switched on again with a delay past the dropped reply's latest due time (0.4 s times
    # the jitter, at most 1.5): a message lodged now is answered after it would have been.
    assert settings(sandbox, enabled=True, delay=0.6)["enabled"] is True
    later = lodge(sandbox, "HTTP", f"{receiver.url}/later")
    assert [r.path for r in receiver.wait_for(1)] == ["/later"]
    assert [row[0] for row in reply_rows(sandbox)] == [later]


def test_a_scheduled_send_is_answered_only_after_it_is_sent(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.05)
    send_at = datetime.now(UTC) + timedelta(seconds=0.6)
    started = time.monotonic()
    with httpx.Client(base_url=sandbox.rest_url, auth=DEMO, verify=TLS) as client:
        response = client.post(
            "/v2/message/send",
            json={
                "Message": "Reminder",
                "Recipients": [CUSTOMER],
                "SendAt": send_at.isoformat(),
                "ReplyType": "HTTP",
                "ReplyPath": f"{receiver.url}/later",
            },
        )
    assert response.status_code == 200, response.text
    [request] = receiver.wait_for(1)
    assert request.at - started >= 0.6


def test_a_batch_is_answered_in_part_and_at_a_capped_rate(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(auto_reply=True, auto_reply_delay=0.0)
    settings(sandbox, rate=20)
    recipients = tuple(f"614{n:08d}" for n in range(100))
    lodge(sandbox, "HTTP", f"{receiver.url}/batch", recipients=recipients)
    deadline = time.monotonic() + 10
    while True:
        [(created,)] = sandbox.query("SELECT COUNT(*) FROM messages")
        if created == 100 and settings(sandbox)["pending"] == 0:
            break
        assert time.monotonic() < deadline, f"{created} messages, {settings(sandbox)}"
        time.sleep(0.05)
    rows = reply_rows(sandbox)
    answered = len(rows)
    assert 5 <= answered <= 45  # a fifth of the batch, give or take a seeded draw
    received = sorted(row[2] for row in rows)
    span = (received[-1] - received[0]) / 1e6
    assert span >= (answered - 1) / 20 - 0.1  # timestamps taken at receipt: a little jitter


def test_canned_replies_include_a_stop_and_texts_beyond_gsm_7() -> None:
    assert "STOP" in CANNED_REPLIES
    assert any(non_gsm_characters(text) for text in CANNED_REPLIES)
    assert any(not non_gsm_characters(text) for text in CANNED_REPLIES)


def test_a_simulated_customer_who_said_stop_answers_start_next() -> None:
    replier = AutoReplier(None, random.Random(3), enabled=True, delay=0)  # type: ignore[arg-type]
    answers = [replier.answer("61412345678") for _ in range(200)]
    stops = [i for i, text in enumerate(answers) if text in OPTING_OUT]
    assert stops, "the canned mix opts out now and then"
    assert all(answers[i + 1] == OPTING_IN for i in stops if i + 1 < len(answers))
    assert answers.count(OPTING_IN) >= len(stops) - 1


def test_the_canned_mix_has_a_stop_that_is_only_a_mention() -> None:
    assert "Please don't stop my deliveries" in CANNED_REPLIES
