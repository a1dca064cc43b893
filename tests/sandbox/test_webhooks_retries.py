"""The contract's success rule and retries: 2xx + `OK`, else up to 5 more tries, doubling."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import datetime
from itertools import pairwise

import pytest

from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import (
    Answer,
    Receiver,
    delivering,
    lodge,
    make_reply,
    wait_for_attempts,
    wait_until_delivered,
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def test_retries_until_the_answer_is_ok(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(Answer(500, "boom"), Answer(200, "NOT OK"), Answer(200, "OK"))
    message_id = lodge(sandbox, "HTTPPOST", f"{receiver.url}/r?m=#MSG#")
    reply = make_reply(sandbox, message_id=message_id, text="yes")
    found = wait_for_attempts(sandbox, reply["ReplyId"], 3)
    assert [(a["Attempt"], a["HttpStatus"], a["Response"], a["Ok"]) for a in found] == [
        (1, 500, "boom", False),
        (2, 200, "NOT OK", False),
        (3, 200, "OK", True),
    ]
    assert {(a["Kind"], a["Method"], a["Url"], a["Body"]) for a in found} == {
        ("reply", "POST", f"{receiver.url}/r", "m=yes")
    }
    assert all(a["Error"] is None for a in found)
    assert len(wait_until_delivered(sandbox, reply["ReplyId"])) == 3
    assert len(receiver.requests) == 3


def test_retry_intervals_double(sandbox_factory: SandboxFactory, receiver: Receiver) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.05)
    receiver.script(*[Answer(503, "busy")] * 3)
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/r")
    reply = make_reply(sandbox, message_id=message_id, text="yes")
    found = wait_for_attempts(sandbox, reply["ReplyId"], 4)
    starts = [datetime.fromisoformat(a["At"]) for a in found]
    gaps = [(later - earlier).total_seconds() for earlier, later in pairwise(starts)]
    assert gaps[0] >= 0.05
    assert gaps[1] >= 0.10
    assert gaps[2] >= 0.20
    assert found[-1]["Ok"] is True


def test_gives_up_after_six_attempts(sandbox_factory: SandboxFactory, receiver: Receiver) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(*[Answer(500, "down")] * 10)
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/down")
    reply = make_reply(sandbox, message_id=message_id, text="anyone?")
    found = wait_for_attempts(sandbox, reply["ReplyId"], 6)
    assert [a["Attempt"] for a in found] == [1, 2, 3, 4, 5, 6]
    assert not any(a["Ok"] for a in found)
    assert len(wait_until_delivered(sandbox, reply["ReplyId"])) == 6
    assert len(receiver.requests) == 6


def test_a_call_under_way_is_seen_as_delivering_until_it_is_answered(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    """What `wait_until_delivered` waits on: it must see a delivery, or it waits for none."""
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(Answer(hang=True))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/held")
    reply = make_reply(sandbox, message_id=message_id, text="hello?")
    receiver.wait_for(1)
    assert delivering(sandbox, reply["ReplyId"])
    receiver.release()
    [attempt] = wait_until_delivered(sandbox, reply["ReplyId"])
    assert attempt["Ok"] is True
    assert not delivering(sandbox, reply["ReplyId"])


def test_a_hanging_receiver_times_out_and_is_retried(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01, webhook_timeout=0.3)
    receiver.script(Answer(hang=True))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/hang")
    reply = make_reply(sandbox, message_id=message_id, text="hello?")
    first, second = wait_for_attempts(sandbox, reply["ReplyId"], 2)
    assert first["Ok"] is False
    assert first["HttpStatus"] is None
    assert first["Error"] == "no answer within 0.3 s"
    assert second["Ok"] is True


def test_a_refused_connection_is_recorded_and_retried(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    message_id = lodge(sandbox, "HTTP", f"http://127.0.0.1:{closed_port}/nobody")
    reply = make_reply(sandbox, message_id=message_id, text="hello?")
    found = wait_for_attempts(sandbox, reply["ReplyId"], 6)
    assert len(found) == 6
    assert all(a["HttpStatus"] is None and not a["Ok"] for a in found)
    assert all(a["Error"] and a["Error"].startswith("ClientConnectorError") for a in found)


@pytest.mark.parametrize(
    "failure",
    [
        Answer(200, "ok"),
        Answer(200, "OK!"),
        Answer(200, ""),
        Answer(204, ""),
        Answer(500, "OK"),
        Answer(302, "OK", headers={"Location": "/elsewhere"}),
    ],
    ids=["lower-case", "extra-text", "empty", "no-content", "error-status", "redirect"],
)
def test_anything_but_2xx_and_ok_is_a_failure(
    sandbox_factory: SandboxFactory, receiver: Receiver, failure: Answer
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(failure, Answer(200, "OK"))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/strict")
    reply = make_reply(sandbox, message_id=message_id, text="yes")
    first, second = wait_for_attempts(sandbox, reply["ReplyId"], 2)
    assert (first["HttpStatus"], first["Ok"]) == (failure.status, False)
    assert second["Ok"] is True
    assert [r.path for r in receiver.requests] == ["/strict", "/strict"]


@pytest.mark.parametrize("body", ["OK", "  OK\r\n", "\ufeffOK"], ids=["plain", "padded", "bom"])
def test_a_2xx_answer_of_ok_with_whitespace_is_a_success(
    sandbox_factory: SandboxFactory, receiver: Receiver, body: str
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(Answer(202, body))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/fine")
    reply = make_reply(sandbox, message_id=message_id, text="yes")
    [attempt] = wait_for_attempts(sandbox, reply["ReplyId"], 1)
    assert (attempt["HttpStatus"], attempt["Ok"]) == (202, True)


def test_a_long_answer_is_recorded_as_a_bounded_excerpt(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(Answer(200, "x" * 100_000))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/chatty")
    reply = make_reply(sandbox, message_id=message_id, text="yes")
    first, second = wait_for_attempts(sandbox, reply["ReplyId"], 2)
    assert first["Response"] == "x" * 500
    assert first["Ok"] is False
    assert second["Ok"] is True
