"""Replies through the sandbox gateway: a two-way send, a customer's reply, its webhook calls."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.listener_support import Running, running_listener
from tests.sandbox.webhook_receiver import (
    CUSTOMER,
    control,
    lodge,
    make_reply,
    wait_for_attempts,
    wait_until_delivered,
)

SENDER = "61400000000"  # the demo account's default From
AWKWARD = "Fish & chips = $5 #2? 1+1 ok 😀 née\nbye %41"


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(webhook_retry_base=0.05)


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Running]:
    with running_listener(tmp_path / "profile.sqlite3", busy_timeout=0.05) as running:
        yield running


def wait_for_replies(listening: Running, count: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while listening.store.count() < count:
        assert time.monotonic() < deadline, f"{listening.store.count()} of {count} replies stored"
        time.sleep(0.01)


@pytest.mark.parametrize("reply_type", ["HTTP", "HTTPGET", "HTTPPOST"])
def test_a_reply_to_a_two_way_message_is_stored_with_utc_times(
    gateway: SandboxThread, listening: Running, reply_type: str
) -> None:
    message_id = lodge(gateway, reply_type, listening.template.render())
    made = make_reply(
        gateway, message_id=message_id, text=AWKWARD, sent_at="2024-06-01T09:15:30+10:00"
    )
    [attempt] = wait_for_attempts(gateway, made["ReplyId"], 1)
    assert attempt["Ok"], attempt
    [stored] = listening.store.latest()
    assert (stored.from_number, stored.to_number, stored.text) == (CUSTOMER, SENDER, AWKWARD)
    assert stored.sent_at == datetime.fromisoformat("2024-06-01T09:15:30+10:00")
    assert stored.received_at == datetime.fromisoformat(made["ReceivedAt"])
    assert stored.received_at.utcoffset() is not None
    assert stored.received_at.tzname() == "UTC"


def test_the_gateway_is_answered_ok_once_and_calls_no_more(
    gateway: SandboxThread, listening: Running
) -> None:
    made = make_reply(
        gateway, message_id=lodge(gateway, "HTTP", listening.template.render()), text="Y"
    )
    [attempt] = wait_until_delivered(gateway, made["ReplyId"])
    assert (attempt["HttpStatus"], attempt["Response"]) == (200, "OK")


def test_a_reply_that_fails_to_store_is_retried_by_the_gateway_and_stored_once(
    gateway: SandboxThread, listening: Running, tmp_path: Path
) -> None:
    message_id = lodge(gateway, "HTTP", listening.template.render())
    blocker = sqlite3.connect(tmp_path / "profile.sqlite3", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the store is unavailable
    made = make_reply(gateway, message_id=message_id, text="Retry me")
    [failed] = wait_for_attempts(gateway, made["ReplyId"], 1)
    blocker.execute("ROLLBACK")
    blocker.close()
    wait_for_replies(listening, 1)
    tries = wait_for_attempts(gateway, made["ReplyId"], 2)
    assert failed["HttpStatus"] == 503
    assert not failed["Ok"]
    assert tries[-1]["Ok"]
    assert [r.text for r in listening.store.latest()] == ["Retry me"]


def test_a_reply_acknowledged_but_retried_anyway_is_stored_once(
    gateway: SandboxThread, listening: Running
) -> None:
    """The gateway may call again for a reply it was told `OK` about (a lost answer)."""
    message_id = lodge(gateway, "HTTP", listening.template.render())
    made = make_reply(gateway, message_id=message_id, text="Once only")
    [attempt] = wait_for_attempts(gateway, made["ReplyId"], 1)
    with httpx.Client() as http:
        assert http.get(attempt["Url"]).text == "OK"
    assert listening.store.count() == 1


def test_a_keyword_forward_through_the_sandbox_completes_the_stored_reply(
    gateway: SandboxThread, listening: Running
) -> None:
    with control(gateway) as client:
        answer = client.post(
            "/sandbox/keywords", json={"keyword": "stop", "url": listening.template.base_url}
        )
        assert answer.status_code in (200, 201), answer.text
    message_id = lodge(gateway, "HTTP", listening.template.render())
    made = make_reply(gateway, message_id=message_id, text="Stop. No more please")
    calls = wait_for_attempts(gateway, made["ReplyId"], 2)
    assert {c["Kind"] for c in calls} == {"reply", "keyword"}
    assert all(c["Ok"] for c in calls)
    [stored] = listening.store.latest()
    assert (stored.reply_id, stored.keyword) == (made["ReplyId"], "STOP")
    assert stored.message_id == message_id


def test_a_listener_that_is_down_leaves_the_gateway_retrying(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    with running_listener(tmp_path / "p.sqlite3") as running:
        template = running.template.render()
    message_id = lodge(gateway, "HTTP", template)
    made = make_reply(gateway, message_id=message_id, text="Anyone there?")
    tries = wait_for_attempts(gateway, made["ReplyId"], 2)
    assert not any(t["Ok"] for t in tries)
    assert all(t["Error"] for t in tries)
